/**
 * Who leases what and when (`/dashboard/schedule`): a Gantt view with one row per node of the
 * signed-in project (`GET /baremetal/v1/nodes?owner=<mine>`), its offers as bars on the upper
 * lane (`GET /lease/v1/offers?project_id=<mine>&status=any`) and its leases, labelled with the
 * lessee project's name, on the lower lane (`GET /lease/v1/leases?owner_id=<mine>&status=any`);
 * cancelled ones are left out, ended ones are drawn faded. The range starts one day back and
 * spans 15 days; zoom and pan buttons change it (kept in the URL: `?days=&from=`). Each bar's
 * title gives its exact times (local and UTC); choosing one shows its details below the chart.
 * Below the chart, my nodes with their provision and power state, lessee and current (or next)
 * lease. Lists stay current through the live channel (../../lib/live.ts patches the `nodes`,
 * `offers` and `leases` caches).
 */
import { useQuery } from '@tanstack/react-query';
import { useEffect, useState, type ReactNode } from 'react';
import { Link, useSearchParams } from 'react-router';
import { get } from '../../lib/api.ts';
import { useSession } from '../../lib/session.tsx';
import { parseUtc } from '../../lib/times.ts';
import { Badge, countdown, ErrorNote, PageHeader, Time } from '../../ui/common.tsx';
import { bothZones, Gantt, type GanttBar, type GanttRow } from '../../ui/gantt.tsx';
import { nodeLabel, ownedNodesPath, type Lease, type Offer, type OwnedNode } from './model.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** Zoom levels: the range's length in days. */
const ZOOMS: ReadonlyArray<{ days: number; label: string }> = [
  { days: 1, label: 'Day' },
  { days: 7, label: 'Week' },
  { days: 15, label: '2 weeks' },
  { days: 30, label: 'Month' },
  { days: 90, label: 'Quarter' },
];

/** Statuses not drawn (withdrawn before they mattered). */
const HIDDEN = new Set(['deleted']);
/** Statuses drawn faded (over). */
const ENDED = new Set(['expired', 'wait expire', 'error']);

/** What a chosen bar stands for. */
type Chosen = { kind: 'offer'; offer: Offer } | { kind: 'lease'; lease: Lease };

/** The schedule page. */
export function Schedule(): ReactNode {
  const { session } = useSession();
  const projectId = session?.project?.id ?? null;
  const [params, setParams] = useSearchParams();
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 60_000);
    return () => clearInterval(t);
  }, []);
  const days = Number(params.get('days')) || 15;
  const fromParam = Number(params.get('from'));
  const from = fromParam > 0 ? fromParam : Math.floor((now - DAY) / HOUR) * HOUR;
  const to = from + days * DAY;
  const [chosen, setChosen] = useState<string | null>(null);

  const nodes = useQuery({
    queryKey: ['nodes', 'owned', projectId],
    queryFn: async ({ signal }) => (await get<{ nodes: OwnedNode[] }>(ownedNodesPath(projectId), signal)).nodes,
  });
  const offerQuery = new URLSearchParams({ status: 'any' });
  if (projectId !== null) offerQuery.set('project_id', projectId);
  const offers = useQuery({
    queryKey: ['offers', 'mine', projectId, true],
    queryFn: async ({ signal }) => (await get<{ offers: Offer[] }>(`/lease/v1/offers?${offerQuery.toString()}`, signal)).offers,
  });
  const leaseQuery = new URLSearchParams({ status: 'any' });
  if (projectId !== null) leaseQuery.set('owner_id', projectId);
  else leaseQuery.set('view', 'all');
  const leases = useQuery({
    queryKey: ['leases', 'owner', projectId],
    queryFn: async ({ signal }) => (await get<{ leases: Lease[] }>(`/lease/v1/leases?${leaseQuery.toString()}`, signal)).leases,
  });

  const byId = new Map<string, Chosen>();
  const rows: GanttRow[] = (nodes.data ?? [])
    .slice()
    .sort((a, b) => nodeLabel(a).localeCompare(nodeLabel(b)))
    .map((n) => {
      const bars: GanttBar[] = [];
      for (const o of offers.data ?? []) {
        if (o.resource_uuid !== n.uuid || HIDDEN.has(o.status)) continue;
        byId.set(o.uuid, { kind: 'offer', offer: o });
        bars.push({
          id: o.uuid,
          lane: 0,
          start: parseUtc(o.start_time),
          end: parseUtc(o.end_time),
          kind: ENDED.has(o.status) ? 'offer ended' : 'offer',
          label: `Offer${o.name ? ` ${o.name}` : ''}${o.lessee ? ` for ${o.lessee}` : ''}`,
        });
      }
      for (const l of leases.data ?? []) {
        if (l.resource_uuid !== n.uuid || HIDDEN.has(l.status)) continue;
        byId.set(l.uuid, { kind: 'lease', lease: l });
        bars.push({
          id: l.uuid,
          lane: 1,
          start: parseUtc(l.start_time),
          end: parseUtc(l.end_time),
          kind: ENDED.has(l.status) ? 'lease ended' : `lease ${l.status.replace(' ', '-')}`,
          label: `${l.project ?? l.project_id} (${l.status})`,
        });
      }
      return {
        id: nodeLabel(n),
        label: (
          <>
            <Link to={`/dashboard/nodes/${n.uuid}`}>{nodeLabel(n)}</Link>
            <span className="gantt-sub">
              <Badge value={n.provision_state} />
              {n.lessee ? <span className="muted">leased</span> : null}
            </span>
          </>
        ),
        bars,
      };
    });

  const move = (next: { days?: number; from?: number | null }): void => {
    const p = new URLSearchParams(params);
    if (next.days !== undefined) p.set('days', String(next.days));
    if (next.from === null) p.delete('from');
    else if (next.from !== undefined) p.set('from', String(next.from));
    setParams(p, { replace: true });
  };
  const step = Math.max(HOUR, Math.round((days * DAY) / 3 / HOUR) * HOUR);
  const pick = chosen !== null ? byId.get(chosen) : undefined;

  return (
    <main>
      <PageHeader title="Schedule">
        <div className="o-segmented" role="group" aria-label="Zoom">
          {ZOOMS.map((z) => (
            <button
              key={z.days}
              type="button"
              className={z.days === days ? '' : 'ghost'}
              aria-pressed={z.days === days}
              onClick={() => move({ days: z.days })}
            >
              {z.label}
            </button>
          ))}
        </div>
        <div className="o-segmented" role="group" aria-label="Move">
          <button type="button" className="ghost" onClick={() => move({ from: from - step })}>
            ◀ Earlier
          </button>
          <button type="button" className="ghost" onClick={() => move({ from: null })}>
            Now
          </button>
          <button type="button" className="ghost" onClick={() => move({ from: from + step })}>
            Later ▶
          </button>
        </div>
      </PageHeader>
      <p className="muted">
        {bothZones(from)} → {bothZones(to)} · <span className="o-key offer">offer</span> <span className="o-key lease">lease</span>{' '}
        <span className="o-key ended">ended</span>
      </p>
      <ErrorNote error={nodes.error ?? offers.error ?? leases.error} />
      {nodes.isPending ? (
        <p aria-busy="true">Loading the schedule…</p>
      ) : (
        <Gantt
          from={from}
          to={to}
          now={now}
          rows={rows}
          selected={chosen}
          onSelect={(b) => setChosen(b.id === chosen ? null : b.id)}
          empty={
            <>
              No nodes of yours to show. <Link to="/dashboard/nodes/new">Enrol a node</Link>
            </>
          }
        />
      )}
      {pick ? (
        <section className="o-panel" aria-live="polite" aria-label="Chosen bar">
          {pick.kind === 'offer' ? (
            <p>
              <strong>Offer</strong> {pick.offer.name ?? pick.offer.uuid} on {pick.offer.resource ?? pick.offer.resource_uuid}:{' '}
              {bothZones(parseUtc(pick.offer.start_time))} → {bothZones(parseUtc(pick.offer.end_time))} ·{' '}
              <Badge value={pick.offer.status} />
              {pick.offer.lessee ? ` only for ${pick.offer.lessee}` : ' for anyone'} · <Link to="/dashboard/offers/mine">My offers</Link>
            </p>
          ) : (
            <p>
              <strong>Lease</strong> by <strong>{pick.lease.project ?? pick.lease.project_id}</strong> on{' '}
              {pick.lease.resource ?? pick.lease.resource_uuid}: {bothZones(parseUtc(pick.lease.start_time))} →{' '}
              {bothZones(parseUtc(pick.lease.end_time))} · <Badge value={pick.lease.status} />
              {pick.lease.purpose ? ` · ${pick.lease.purpose}` : ''} · <Link to="/dashboard/leases">Leases</Link>
            </p>
          )}
        </section>
      ) : null}
      <NodeTable nodes={nodes.data ?? []} leases={leases.data ?? []} now={now} />
    </main>
  );
}

/** The lease that holds a node now (active), else the next one to start. */
function currentLease(leases: readonly Lease[], node: string): Lease | undefined {
  const mine = leases.filter((l) => l.resource_uuid === node);
  return (
    mine.find((l) => l.status === 'active') ??
    mine.filter((l) => l.status === 'created').sort((a, b) => a.start_time.localeCompare(b.start_time))[0]
  );
}

/** My nodes with their state, lessee and current or next lease, beside the chart. */
function NodeTable({ nodes, leases, now }: { nodes: readonly OwnedNode[]; leases: readonly Lease[]; now: number }): ReactNode {
  if (nodes.length === 0) return null;
  return (
    <section aria-labelledby="my-nodes">
      <h2 id="my-nodes">My nodes</h2>
      <table className="grid" data-testid="my-nodes">
        <thead>
          <tr>
            <th scope="col">Node</th>
            <th scope="col">Provision state</th>
            <th scope="col">Power</th>
            <th scope="col">Lessee</th>
            <th scope="col">Lease</th>
          </tr>
        </thead>
        <tbody>
          {[...nodes]
            .sort((a, b) => nodeLabel(a).localeCompare(nodeLabel(b)))
            .map((n) => {
              const l = currentLease(leases, n.uuid);
              return (
                <tr key={n.uuid} data-my-node={nodeLabel(n)}>
                  <td>
                    <Link to={`/dashboard/nodes/${n.uuid}`}>{nodeLabel(n)}</Link>
                  </td>
                  <td>
                    <Badge value={n.provision_state} />
                    {n.target_provision_state ? <span className="muted"> → {n.target_provision_state}</span> : null}
                  </td>
                  <td>
                    <Badge value={n.power_state} />
                  </td>
                  <td>
                    {n.lessee === null ? (
                      '—'
                    ) : l?.status === 'active' && l.project_id === n.lessee ? (
                      l.project
                    ) : (
                      <span className="mono">{n.lessee}</span>
                    )}
                  </td>
                  <td>
                    {l === undefined ? (
                      <span className="muted">none</span>
                    ) : l.status === 'active' ? (
                      <>
                        {l.project ?? l.project_id}, {countdown(l.end_time, now)} left (until <Time value={l.end_time} />)
                      </>
                    ) : (
                      <>
                        next: {l.project ?? l.project_id} from <Time value={l.start_time} />
                      </>
                    )}
                  </td>
                </tr>
              );
            })}
        </tbody>
      </table>
    </section>
  );
}
