/**
 * Operator view of quotas per project (`/dashboard/admin/quotas`): for every project
 * (`GET /identity/v3/projects`) its lease quota — nodes at once, node-hours in a rolling window
 * and the usage (`GET /lease/v1/quotas`, esi's addition to esi-leap) — and its network quota —
 * routers and floating IPs (`GET /network/v2.0/quotas`, Neutron's defaults from
 * `GET /network/v2.0/quotas/{project}/default` where none is set). "Edit" opens both for one
 * project: the lease quota (`GET`/`PUT`/`DELETE /lease/v1/quotas/{project}`) and the network
 * quota with its use (`GET /network/v2.0/quotas/{project}/details`, `PUT`/`DELETE
 * /network/v2.0/quotas/{project}`); each form shows its refusal beside it in the API's words.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Fragment, useState, type FormEvent, type ReactNode } from 'react';
import { call, get } from '../../lib/api.ts';
import { ErrorNote, LoadingRows, PageHeader } from '../../ui/common.tsx';
import { useProjects, type Project } from './shared.tsx';

/** A lease quota (`/lease/v1/quotas`). */
interface LeaseQuota {
  project_id: string;
  max_nodes: number | null;
  max_node_hours: number | null;
  window_hours: number;
  usage: { nodes_now: number; peak_nodes: number; node_hours_in_window: number };
}

/** A network quota (`/network/v2.0/quotas` entries, `quota` bodies). */
interface NetworkQuota {
  floatingip: number;
  router: number;
}

/** Network quota details: limit and use of each resource. */
type NetworkDetails = Record<keyof NetworkQuota, { limit: number; used: number; reserved: number }>;

/** A blank field as null (no limit), else an integer. */
function limitOf(value: string): number | null {
  return value.trim() === '' ? null : Number(value);
}

/** The lease quota form of one project. */
function LeaseQuotaForm({ project, onSaved }: { project: Project; onSaved: () => Promise<void> }): ReactNode {
  const quota = useQuery({
    queryKey: ['admin', 'lease-quota', project.id],
    queryFn: async ({ signal }) => get<LeaseQuota>(`/lease/v1/quotas/${project.id}`, signal),
  });
  if (quota.isPending) return <p aria-busy="true">Loading the lease quota…</p>;
  if (quota.data === undefined) return <ErrorNote error={quota.error} />;
  return <LeaseQuotaFields project={project} quota={quota.data} onSaved={onSaved} />;
}

function LeaseQuotaFields({ project, quota, onSaved }: { project: Project; quota: LeaseQuota; onSaved: () => Promise<void> }): ReactNode {
  const qc = useQueryClient();
  const [maxNodes, setMaxNodes] = useState(quota.max_nodes === null ? '' : String(quota.max_nodes));
  const [maxHours, setMaxHours] = useState(quota.max_node_hours === null ? '' : String(quota.max_node_hours));
  const [window, setWindow] = useState(String(quota.window_hours));
  const done = async (): Promise<void> => {
    await qc.invalidateQueries({ queryKey: ['admin', 'lease-quota', project.id] });
    await onSaved();
  };
  const save = useMutation({
    mutationFn: async () =>
      call('PUT', `/lease/v1/quotas/${project.id}`, {
        body: { max_nodes: limitOf(maxNodes), max_node_hours: limitOf(maxHours), window_hours: Number(window) },
      }),
    onSuccess: done,
  });
  const reset = useMutation({ mutationFn: async () => call('DELETE', `/lease/v1/quotas/${project.id}`), onSuccess: done });
  const errorId = `lease-quota-error-${project.id}`;
  return (
    <form
      className="inline-form"
      aria-label={`Lease quota of ${project.name}`}
      aria-describedby={save.error || reset.error ? errorId : undefined}
      onSubmit={(e: FormEvent) => {
        e.preventDefault();
        save.mutate();
      }}
    >
      <label>
        Max nodes at once
        <input
          type="number"
          min="0"
          name="max_nodes"
          placeholder="no limit"
          value={maxNodes}
          onChange={(e) => setMaxNodes(e.target.value)}
        />
      </label>
      <label>
        Max node-hours
        <input
          type="number"
          min="0"
          name="max_node_hours"
          placeholder="no limit"
          value={maxHours}
          onChange={(e) => setMaxHours(e.target.value)}
        />
      </label>
      <label>
        Window (hours)
        <input type="number" min="1" name="window_hours" required value={window} onChange={(e) => setWindow(e.target.value)} />
      </label>
      <button type="submit" disabled={save.isPending}>
        Save lease quota
      </button>
      <button type="button" className="ghost" disabled={reset.isPending} onClick={() => reset.mutate()}>
        Remove limits
      </button>
      <p className="muted">
        In use: {quota.usage.nodes_now} node(s) now, {quota.usage.node_hours_in_window} node-hours in the window.
      </p>
      <ErrorNote error={save.error ?? reset.error} id={errorId} />
    </form>
  );
}

/** The network quota form of one project. */
function NetworkQuotaForm({ project, onSaved }: { project: Project; onSaved: () => Promise<void> }): ReactNode {
  const details = useQuery({
    queryKey: ['admin', 'network-quota', project.id],
    queryFn: async ({ signal }) => (await get<{ quota: NetworkDetails }>(`/network/v2.0/quotas/${project.id}/details`, signal)).quota,
  });
  if (details.isPending) return <p aria-busy="true">Loading the network quota…</p>;
  if (details.data === undefined) return <ErrorNote error={details.error} />;
  return <NetworkQuotaFields project={project} details={details.data} onSaved={onSaved} />;
}

function NetworkQuotaFields({
  project,
  details,
  onSaved,
}: {
  project: Project;
  details: NetworkDetails;
  onSaved: () => Promise<void>;
}): ReactNode {
  const qc = useQueryClient();
  const [routers, setRouters] = useState(String(details.router.limit));
  const [fips, setFips] = useState(String(details.floatingip.limit));
  const done = async (): Promise<void> => {
    await qc.invalidateQueries({ queryKey: ['admin', 'network-quota', project.id] });
    await onSaved();
  };
  const save = useMutation({
    mutationFn: async () =>
      call('PUT', `/network/v2.0/quotas/${project.id}`, { body: { quota: { router: Number(routers), floatingip: Number(fips) } } }),
    onSuccess: done,
  });
  const reset = useMutation({ mutationFn: async () => call('DELETE', `/network/v2.0/quotas/${project.id}`), onSuccess: done });
  const errorId = `network-quota-error-${project.id}`;
  return (
    <form
      className="inline-form"
      aria-label={`Network quota of ${project.name}`}
      aria-describedby={save.error || reset.error ? errorId : undefined}
      onSubmit={(e: FormEvent) => {
        e.preventDefault();
        save.mutate();
      }}
    >
      <label>
        Routers
        <input type="number" min="-1" name="router" required value={routers} onChange={(e) => setRouters(e.target.value)} />
      </label>
      <label>
        Floating IPs
        <input type="number" min="-1" name="floatingip" required value={fips} onChange={(e) => setFips(e.target.value)} />
      </label>
      <button type="submit" disabled={save.isPending}>
        Save network quota
      </button>
      <button type="button" className="ghost" disabled={reset.isPending} onClick={() => reset.mutate()}>
        Back to defaults
      </button>
      <p className="muted">
        In use: {details.router.used} router(s), {details.floatingip.used} floating IP(s).
      </p>
      <ErrorNote error={save.error ?? reset.error} id={errorId} />
    </form>
  );
}

/** The quotas page. */
export function Quotas(): ReactNode {
  const qc = useQueryClient();
  const projects = useProjects();
  const [editing, setEditing] = useState<string | null>(null);
  const lease = useQuery({
    queryKey: ['admin', 'lease-quotas'],
    queryFn: async ({ signal }) => (await get<{ quotas: LeaseQuota[] }>('/lease/v1/quotas', signal)).quotas,
  });
  const network = useQuery({
    queryKey: ['admin', 'network-quotas'],
    queryFn: async ({ signal }) =>
      (await get<{ quotas: Array<NetworkQuota & { project_id: string }> }>('/network/v2.0/quotas', signal)).quotas,
  });
  const anyProject = projects.data?.[0]?.id;
  const defaults = useQuery({
    queryKey: ['admin', 'network-quota-defaults'],
    queryFn: async ({ signal }) => (await get<{ quota: NetworkQuota }>(`/network/v2.0/quotas/${anyProject}/default`, signal)).quota,
    enabled: anyProject !== undefined,
  });
  const refresh = async (): Promise<void> => {
    await qc.invalidateQueries({ queryKey: ['admin', 'lease-quotas'] });
    await qc.invalidateQueries({ queryKey: ['admin', 'network-quotas'] });
  };
  const leaseOf = new Map((lease.data ?? []).map((q) => [q.project_id, q]));
  const networkOf = new Map((network.data ?? []).map((q) => [q.project_id, q]));
  const pending = projects.isPending || lease.isPending || network.isPending;
  const limit = (v: number | null | undefined): ReactNode => (v === null || v === undefined ? <span className="muted">no limit</span> : v);
  return (
    <main className="admin">
      <PageHeader title="Quotas" />
      <p className="muted">
        Lease quotas bound what a project may lease (nodes at once, node-hours in a rolling window); network quotas bound its routers and
        floating IPs. A blank lease limit means none.
      </p>
      <ErrorNote error={projects.error ?? lease.error ?? network.error} />
      <table className="grid" aria-busy={pending}>
        <thead>
          <tr>
            <th scope="col">Project</th>
            <th scope="col">Max nodes</th>
            <th scope="col">Max node-hours</th>
            <th scope="col">Window</th>
            <th scope="col">Leased now</th>
            <th scope="col">Routers</th>
            <th scope="col">Floating IPs</th>
            <th scope="col">
              <span className="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {pending ? (
            <LoadingRows columns={8} />
          ) : (
            (projects.data ?? []).map((p) => {
              const l = leaseOf.get(p.id);
              const n = networkOf.get(p.id) ?? defaults.data;
              const open = editing === p.id;
              return (
                <Fragment key={p.id}>
                  <tr data-quota={p.name}>
                    <th scope="row">{p.name}</th>
                    <td data-label="Max nodes">{limit(l?.max_nodes)}</td>
                    <td data-label="Max node-hours">{limit(l?.max_node_hours)}</td>
                    <td data-label="Window">{l ? `${l.window_hours} h` : <span className="muted">default</span>}</td>
                    <td data-label="Leased now">{l?.usage.nodes_now ?? <span className="muted">—</span>}</td>
                    <td data-label="Routers">
                      {n?.router ?? '…'}
                      {networkOf.has(p.id) ? null : <span className="muted"> (default)</span>}
                    </td>
                    <td data-label="Floating IPs">{n?.floatingip ?? '…'}</td>
                    <td>
                      <button
                        type="button"
                        className="ghost"
                        aria-expanded={open}
                        aria-label={`${open ? 'Close' : 'Edit'} quotas of ${p.name}`}
                        onClick={() => setEditing(open ? null : p.id)}
                      >
                        {open ? 'Close' : 'Edit'}
                      </button>
                    </td>
                  </tr>
                  {open ? (
                    <tr className="editor">
                      <td colSpan={8}>
                        <h2 className="sub">Lease quota of {p.name}</h2>
                        <LeaseQuotaForm project={p} onSaved={refresh} />
                        <h2 className="sub">Network quota of {p.name}</h2>
                        <NetworkQuotaForm project={p} onSaved={refresh} />
                      </td>
                    </tr>
                  ) : null}
                </Fragment>
              );
            })
          )}
        </tbody>
      </table>
    </main>
  );
}
