/**
 * My offers (`/dashboard/offers/mine`): the offers of the signed-in project
 * (`GET /lease/v1/offers?project_id=<mine>`, live ones — or every status on request), a form to
 * offer one of my nodes (`GET /baremetal/v1/nodes?owner=<mine>`) for a window picked with
 * calendar inputs or a preset (`POST /lease/v1/offers` with `resource_uuid`, `start_time`,
 * `end_time`, optional `name` and `lessee_id`), and the way to withdraw one
 * (`DELETE /lease/v1/offers/{id}`, which cancels its leases too). Below them, the lease policies
 * and quotas that bound the leases (./Limits.tsx). Refusals show in esi-leap's words.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent, type ReactNode } from 'react';
import { Link } from 'react-router';
import { call, get } from '../../lib/api.ts';
import { useSession } from '../../lib/session.tsx';
import { localInputToUtc, toLocalInput } from '../../lib/times.ts';
import { Badge, ErrorNote, PageHeader, Time, Rows } from '../../ui/common.tsx';
import { Limits } from './Limits.tsx';
import { nodeLabel, ownedNodesPath, type Offer, type OwnedNode } from './model.ts';

const DAY = 86_400_000;

/** The create form. */
function CreateOffer({ nodes, projectId }: { nodes: readonly OwnedNode[]; projectId: string | null }): ReactNode {
  const qc = useQueryClient();
  const [node, setNode] = useState('');
  const [start, setStart] = useState(() => toLocalInput(Math.ceil(Date.now() / 60_000) * 60_000));
  const [end, setEnd] = useState(() => toLocalInput(Math.ceil(Date.now() / 60_000) * 60_000 + 14 * DAY));
  const [name, setName] = useState('');
  const [lessee, setLessee] = useState('');
  const chosen = node || nodes[0]?.uuid || '';
  const create = useMutation({
    mutationFn: async () => {
      const body: Record<string, unknown> = {
        resource_uuid: chosen,
        start_time: localInputToUtc(start),
        end_time: localInputToUtc(end),
      };
      if (name) body.name = name;
      if (lessee) body.lessee_id = lessee;
      return (await call<Offer>('POST', '/lease/v1/offers', { body })).body;
    },
    onSuccess: async () => {
      setName('');
      await qc.invalidateQueries({ queryKey: ['offers'] });
    },
  });
  const preset = (days: number): void => {
    const from = Math.ceil(Date.now() / 60_000) * 60_000;
    setStart(toLocalInput(from));
    setEnd(toLocalInput(from + days * DAY));
  };
  return (
    <section aria-labelledby="new-offer" className="o-panel">
      <h2 id="new-offer">Offer a node</h2>
      {nodes.length === 0 ? (
        <p className="muted">
          {projectId === null ? 'Sign in to a project to offer its nodes.' : 'Your project owns no nodes yet. '}
          <Link to="/dashboard/nodes/new">Enrol a node</Link>
        </p>
      ) : (
        <form
          className="o-offer-form"
          aria-describedby={create.error ? 'offer-error' : undefined}
          onSubmit={(e: FormEvent) => {
            e.preventDefault();
            create.mutate();
          }}
        >
          <div className="o-row">
            <label>
              Node
              <select value={chosen} onChange={(e) => setNode(e.target.value)}>
                {nodes.map((n) => (
                  <option key={n.uuid} value={n.uuid}>
                    {nodeLabel(n)} ({n.provision_state})
                  </option>
                ))}
              </select>
            </label>
            <label>
              From
              <input type="datetime-local" step="60" required value={start} onChange={(e) => setStart(e.target.value)} />
            </label>
            <label>
              Until
              <input type="datetime-local" step="60" required value={end} onChange={(e) => setEnd(e.target.value)} />
            </label>
            <div className="o-presets" role="group" aria-label="Window presets">
              {[
                [1, 'a day'],
                [7, 'a week'],
                [14, '2 weeks'],
                [30, '30 days'],
              ].map(([d, label]) => (
                <button key={d} type="button" className="ghost" onClick={() => preset(Number(d))}>
                  {label}
                </button>
              ))}
            </div>
          </div>
          <div className="o-row">
            <label>
              Name
              <input value={name} onChange={(e) => setName(e.target.value)} placeholder="optional" />
            </label>
            <label>
              Only for project
              <input value={lessee} onChange={(e) => setLessee(e.target.value)} placeholder="anyone (name or ID)" />
            </label>
            <button type="submit" disabled={create.isPending || chosen === ''}>
              {create.isPending ? 'Offering…' : 'Create offer'}
            </button>
          </div>
          <ErrorNote error={create.error} id="offer-error" />
        </form>
      )}
      <p className="muted">Times are in your zone ({Intl.DateTimeFormat().resolvedOptions().timeZone}); esi stores them in UTC.</p>
    </section>
  );
}

/** The page. */
export function MyOffers(): ReactNode {
  const { session } = useSession();
  const qc = useQueryClient();
  const projectId = session?.project?.id ?? null;
  const [all, setAll] = useState(false);
  const q = new URLSearchParams();
  if (projectId !== null) q.set('project_id', projectId);
  if (all) q.set('status', 'any');
  const offers = useQuery({
    queryKey: ['offers', 'mine', projectId, all],
    queryFn: async ({ signal }) => (await get<{ offers: Offer[] }>(`/lease/v1/offers?${q.toString()}`, signal)).offers,
  });
  const nodes = useQuery({
    queryKey: ['nodes', 'owned', projectId],
    queryFn: async ({ signal }) => (await get<{ nodes: OwnedNode[] }>(ownedNodesPath(projectId), signal)).nodes,
  });
  const withdraw = useMutation({
    mutationFn: async (id: string) => call('DELETE', `/lease/v1/offers/${id}`),
    onSuccess: async () => qc.invalidateQueries({ queryKey: ['offers'] }),
  });
  const rows = [...(offers.data ?? [])].sort((a, b) => a.start_time.localeCompare(b.start_time));
  return (
    <main>
      <PageHeader title="My offers">
        <label className="inline">
          <input type="checkbox" checked={all} onChange={(e) => setAll(e.target.checked)} />
          Include ended and cancelled
        </label>
        <Link to="/dashboard/schedule">Schedule</Link>
      </PageHeader>
      <ErrorNote error={nodes.error} />
      <CreateOffer nodes={nodes.data ?? []} projectId={projectId} />
      <ErrorNote error={offers.error ?? withdraw.error} />
      <table className="grid" aria-busy={offers.isPending}>
        <thead>
          <tr>
            <th scope="col">Node</th>
            <th scope="col">Name</th>
            <th scope="col">Window</th>
            <th scope="col">Free windows</th>
            <th scope="col">For</th>
            <th scope="col">Status</th>
            <th scope="col">
              <span className="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          <Rows
            pending={offers.isPending}
            items={rows}
            columns={7}
            empty="No offers."
            row={(o) => (
              <tr key={o.uuid} data-my-offer={o.resource ?? o.resource_uuid}>
                <td>{o.resource ?? o.resource_uuid}</td>
                <td>{o.name ?? '—'}</td>
                <td>
                  <Time value={o.start_time} /> – <Time value={o.end_time} />
                </td>
                <td>
                  {o.availabilities.length === 0 ? (
                    <span className="muted">fully leased</span>
                  ) : (
                    <span>
                      {o.availabilities.length} window{o.availabilities.length === 1 ? '' : 's'}
                    </span>
                  )}
                </td>
                <td>{o.lessee ?? o.lessee_id ?? 'anyone'}</td>
                <td>
                  <Badge value={o.status} />
                </td>
                <td>
                  {['available', 'error'].includes(o.status) ? (
                    <button
                      type="button"
                      className="danger"
                      aria-label={`Withdraw the offer of ${o.resource ?? o.resource_uuid}`}
                      onClick={() => {
                        if (confirm('Withdraw this offer? Leases made from it are cancelled too.')) withdraw.mutate(o.uuid);
                      }}
                      disabled={withdraw.isPending}
                    >
                      Withdraw
                    </button>
                  ) : null}
                </td>
              </tr>
            )}
          />
        </tbody>
      </table>
      <Limits />
    </main>
  );
}
