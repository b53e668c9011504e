/**
 * Events and webhook deliveries (`/dashboard/events`), read-only: the leasing events the caller
 * may see (`GET /lease/v1/events`, optionally one `event_type`; newest first), with node names
 * from the caller's node list (`GET /baremetal/v1/nodes`); the project's webhooks
 * (`GET /lease/v1/webhooks`) and, for one of them on request, its recent deliveries
 * (`GET /lease/v1/webhooks/{id}/deliveries?limit=50`: status, attempts, the receiver's answer).
 * These are not on the live channel: each visit reads them again. Refusals show in esi-leap's
 * words.
 */
import { useQuery } from '@tanstack/react-query';
import { useState, type ReactNode } from 'react';
import { get } from '../../lib/api.ts';
import { useSession } from '../../lib/session.tsx';
import { Badge, ErrorNote, PageHeader, Time, Rows } from '../../ui/common.tsx';
import { nodeLabel, ownedNodesPath, type OwnedNode } from './model.ts';

/** A leasing event (esi-leap's Event). */
interface LeaseEvent {
  id: number;
  event_type: string;
  event_time: string;
  object_type: string;
  object_uuid: string;
  resource_type: string;
  resource_uuid: string;
  lessee_id: string | null;
  owner_id: string | null;
}

/** A webhook (the secret is never shown). */
interface Webhook {
  uuid: string;
  name: string | null;
  url: string;
  event_types: string[];
  enabled: boolean;
  created_at: string;
}

/** One delivery of an event to a webhook. */
interface Delivery {
  id: number;
  event_id: number;
  event_type: string;
  status: string;
  attempts: number;
  next_attempt_at: string | null;
  last_attempt_at: string | null;
  last_status_code: number | null;
  last_error: string | null;
  delivered_at: string | null;
}

/** The event types esi-leap records, for the filter. */
const EVENT_TYPES = [
  'esi_leap.offer.create',
  'esi_leap.offer.delete',
  'esi_leap.offer.expire',
  'esi_leap.lease.create',
  'esi_leap.lease.update',
  'esi_leap.lease.fulfill.end',
  'esi_leap.lease.fulfill.error',
  'esi_leap.lease.ending_soon',
  'esi_leap.lease.expire.end',
  'esi_leap.lease.expire.error',
  'esi_leap.lease.delete.start',
  'esi_leap.lease.delete.end',
  'esi_leap.lease.delete.error',
];

/** How many events the table shows (the newest). */
const SHOWN = 200;

/** The deliveries of one webhook. */
function Deliveries({ webhook }: { webhook: string }): ReactNode {
  const deliveries = useQuery({
    queryKey: ['webhook-deliveries', webhook],
    // History and limits are not on the live channel: read again on each visit.
    staleTime: 0,
    queryFn: async ({ signal }) =>
      (await get<{ deliveries: Delivery[] }>(`/lease/v1/webhooks/${webhook}/deliveries?limit=50`, signal)).deliveries,
  });
  return (
    <>
      <ErrorNote error={deliveries.error} />
      <table className="grid compact" aria-busy={deliveries.isPending} data-testid="deliveries">
        <thead>
          <tr>
            <th scope="col">Event</th>
            <th scope="col">Status</th>
            <th scope="col">Attempts</th>
            <th scope="col">Last attempt</th>
            <th scope="col">Answer</th>
          </tr>
        </thead>
        <tbody>
          <Rows
            pending={deliveries.isPending}
            items={deliveries.data ?? []}
            columns={5}
            loadingRows={2}
            empty="Nothing delivered yet."
            row={(d) => (
              <tr key={d.id}>
                <td>
                  {d.event_type} <span className="muted">#{d.event_id}</span>
                </td>
                <td>
                  <Badge value={d.status} />
                  {d.status === 'pending' && d.next_attempt_at ? (
                    <span className="muted">
                      {' '}
                      next <Time value={d.next_attempt_at} />
                    </span>
                  ) : null}
                </td>
                <td>{d.attempts}</td>
                <td>
                  <Time value={d.last_attempt_at} />
                </td>
                <td>{d.last_status_code !== null ? `HTTP ${d.last_status_code}` : (d.last_error ?? '—')}</td>
              </tr>
            )}
          />
        </tbody>
      </table>
    </>
  );
}

/** The page. */
export function Activity(): ReactNode {
  const { session } = useSession();
  const projectId = session?.project?.id ?? null;
  const [type, setType] = useState('');
  const [open, setOpen] = useState<string | null>(null);
  const events = useQuery({
    queryKey: ['lease-events', type],
    // History and limits are not on the live channel: read again on each visit.
    staleTime: 0,
    queryFn: async ({ signal }) =>
      (await get<{ events: LeaseEvent[] }>(`/lease/v1/events${type ? `?event_type=${encodeURIComponent(type)}` : ''}`, signal)).events,
  });
  const nodes = useQuery({
    queryKey: ['nodes', 'owned', projectId],
    queryFn: async ({ signal }) => (await get<{ nodes: OwnedNode[] }>(ownedNodesPath(projectId), signal)).nodes,
  });
  const webhooks = useQuery({
    queryKey: ['webhooks'],
    // History and limits are not on the live channel: read again on each visit.
    staleTime: 0,
    queryFn: async ({ signal }) => (await get<{ webhooks: Webhook[] }>('/lease/v1/webhooks', signal)).webhooks,
  });
  const names = new Map((nodes.data ?? []).map((n) => [n.uuid, nodeLabel(n)]));
  const shown = [...(events.data ?? [])].sort((a, b) => b.id - a.id).slice(0, SHOWN);
  return (
    <main>
      <PageHeader title="Events">
        <label>
          Type
          <select value={type} onChange={(e) => setType(e.target.value)}>
            <option value="">all</option>
            {EVENT_TYPES.map((t) => (
              <option key={t} value={t}>
                {t.replace('esi_leap.', '')}
              </option>
            ))}
          </select>
        </label>
      </PageHeader>
      <ErrorNote error={events.error} />
      <table className="grid compact" aria-busy={events.isPending} data-testid="events">
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Event</th>
            <th scope="col">Object</th>
            <th scope="col">Node</th>
          </tr>
        </thead>
        <tbody>
          <Rows
            pending={events.isPending}
            items={shown}
            columns={4}
            empty="No events."
            row={(e) => (
              <tr key={e.id}>
                <td>
                  <Time value={e.event_time} />
                </td>
                <td>{e.event_type.replace('esi_leap.', '')}</td>
                <td>
                  {e.object_type} <span className="mono muted">{e.object_uuid.slice(0, 8)}</span>
                </td>
                <td>{names.get(e.resource_uuid) ?? <span className="mono">{e.resource_uuid}</span>}</td>
              </tr>
            )}
          />
        </tbody>
      </table>
      {(events.data ?? []).length > SHOWN ? (
        <p className="muted">
          The newest {SHOWN} of {events.data?.length} events.
        </p>
      ) : null}

      <h2>Webhooks</h2>
      <p className="muted">
        Where esi posts your project’s events (register them with the API or <code>esi webhook create</code>).
      </p>
      <ErrorNote error={webhooks.error} />
      {webhooks.isPending ? (
        <p aria-busy="true">Loading webhooks…</p>
      ) : (webhooks.data ?? []).length === 0 ? (
        <p className="muted">No webhooks.</p>
      ) : (
        <ul className="o-webhooks">
          {(webhooks.data ?? []).map((w) => (
            <li key={w.uuid}>
              <div className="o-webhook-head">
                <span>
                  <strong>{w.name ?? w.uuid.slice(0, 8)}</strong> <span className="mono">{w.url}</span>{' '}
                  <Badge value={w.enabled ? 'enabled' : 'disabled'} />
                  <span className="muted">{w.event_types.length === 0 ? 'every event' : w.event_types.join(', ')}</span>
                </span>
                <button
                  type="button"
                  className="ghost"
                  aria-expanded={open === w.uuid}
                  onClick={() => setOpen(open === w.uuid ? null : w.uuid)}
                >
                  {open === w.uuid ? 'Hide deliveries' : 'Deliveries'}
                </button>
              </div>
              {open === w.uuid ? <Deliveries webhook={w.uuid} /> : null}
            </li>
          ))}
        </ul>
      )}
    </main>
  );
}
