/**
 * The limits on leases: the owner's lease policies (made and removed with ./PolicyForm.tsx) (`GET /lease/v1/lease_policies`:
 * longest lease, gap between leases, which projects may lease, whether devices are erased) and
 * the leasing quotas the caller may see (`GET /lease/v1/quotas`: the caller's own, every one for
 * admins, with current usage; set by operators), read again on each visit; a refusal shows in
 * esi-leap's words.
 */
import { useQuery } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { get } from '../../lib/api.ts';
import { ErrorNote, Time, Rows } from '../../ui/common.tsx';
import { PolicyForm, RemovePolicy } from './PolicyForm.tsx';

/** An owner lease policy (esi's addition to esi-leap). */
interface LeasePolicy {
  uuid: string;
  project: string | null;
  project_id: string;
  resource_uuid: string | null;
  resource: string | null;
  max_lease_seconds: number | null;
  min_gap_seconds: number | null;
  allowed_projects: string[] | null;
  erase_devices: boolean;
  updated_at: string;
}

/** A leasing quota with its usage. */
interface Quota {
  project_id: string;
  project: string | null;
  max_nodes: number | null;
  max_node_hours: number | null;
  window_hours: number;
  usage: { nodes_now: number; peak_nodes: number; node_hours_in_window: number };
}

/** Seconds in words: `3 d 4 h`, `2 h 30 min`, `45 s`; `no limit` for null. */
export function duration(seconds: number | null): string {
  if (seconds === null) return 'no limit';
  const d = Math.floor(seconds / 86400);
  const h = Math.floor((seconds % 86400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const parts = [d ? `${d} d` : '', h ? `${h} h` : '', m ? `${m} min` : '', !d && !h && !m ? `${seconds} s` : ''];
  return parts.filter(Boolean).join(' ');
}

/** Lease policies and quotas, as two tables. */
export function Limits(): ReactNode {
  const policies = useQuery({
    queryKey: ['lease-policies'],
    // History and limits are not on the live channel: read again on each visit.
    staleTime: 0,
    queryFn: async ({ signal }) => (await get<{ lease_policies: LeasePolicy[] }>('/lease/v1/lease_policies', signal)).lease_policies,
  });
  const quotas = useQuery({
    queryKey: ['quotas'],
    // History and limits are not on the live channel: read again on each visit.
    staleTime: 0,
    queryFn: async ({ signal }) => (await get<{ quotas: Quota[] }>('/lease/v1/quotas', signal)).quotas,
  });
  return (
    <>
      <section aria-labelledby="policies-title">
        <h2 id="policies-title">Lease policies</h2>
        <p className="muted">Limits every lease of your nodes must keep, whoever makes it.</p>
        <PolicyForm />
        <ErrorNote error={policies.error} />
        <table className="grid" aria-busy={policies.isPending}>
          <thead>
            <tr>
              <th scope="col">Applies to</th>
              <th scope="col">Longest lease</th>
              <th scope="col">Gap between leases</th>
              <th scope="col">Who may lease</th>
              <th scope="col">Erase disks</th>
              <th scope="col">Updated</th>
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            <Rows
              pending={policies.isPending}
              items={policies.data ?? []}
              columns={7}
              loadingRows={2}
              empty="No lease policies: leases are bounded by the offers alone."
              row={(p) => (
                <tr key={p.uuid}>
                  <td>{p.resource_uuid === null ? `every node of ${p.project ?? p.project_id}` : (p.resource ?? p.resource_uuid)}</td>
                  <td>{duration(p.max_lease_seconds)}</td>
                  <td>{p.min_gap_seconds === null ? 'none' : duration(p.min_gap_seconds)}</td>
                  <td>{p.allowed_projects === null ? 'anyone' : p.allowed_projects.join(', ') || 'nobody'}</td>
                  <td>{p.erase_devices ? 'yes' : 'no'}</td>
                  <td>
                    <Time value={p.updated_at} />
                  </td>
                  <td>
                    <RemovePolicy uuid={p.uuid} label={p.resource ?? p.resource_uuid ?? 'every node'} />
                  </td>
                </tr>
              )}
            />
          </tbody>
        </table>
      </section>
      <section aria-labelledby="quotas-title">
        <h2 id="quotas-title">Quotas</h2>
        <p className="muted">How much a project may lease at once and over a rolling window (set by operators).</p>
        <ErrorNote error={quotas.error} />
        <table className="grid" aria-busy={quotas.isPending}>
          <thead>
            <tr>
              <th scope="col">Project</th>
              <th scope="col">Nodes at once</th>
              <th scope="col">Node-hours</th>
              <th scope="col">Window</th>
            </tr>
          </thead>
          <tbody>
            <Rows
              pending={quotas.isPending}
              items={quotas.data ?? []}
              columns={4}
              loadingRows={1}
              empty="No quotas."
              row={(q) => (
                <tr key={q.project_id}>
                  <td>{q.project ?? q.project_id}</td>
                  <td>
                    {q.usage.nodes_now} of {q.max_nodes ?? 'no limit'}
                  </td>
                  <td>
                    {q.usage.node_hours_in_window} of {q.max_node_hours ?? 'no limit'}
                  </td>
                  <td>{q.window_hours} h</td>
                </tr>
              )}
            />
          </tbody>
        </table>
      </section>
    </>
  );
}
