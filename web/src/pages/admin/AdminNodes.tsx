/**
 * Operator view of every node's health (`/dashboard/admin/nodes`): all nodes (an admin sees
 * all; `GET /baremetal/v1/nodes?fields=…`) with fault, maintenance and its reason, last error
 * and conductor; a filter to the troubled ones; maintenance set with a reason
 * (`PUT /baremetal/v1/nodes/{id}/maintenance {reason}`) and unset
 * (`DELETE /baremetal/v1/nodes/{id}/maintenance`); a link to each node's history
 * (./NodeHistory.tsx). Kept live by the change stream (the rows sit under the `nodes` key that
 * ../../lib/live.ts patches).
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent, type ReactNode } from 'react';
import { Link } from 'react-router';
import { call, getAll } from '../../lib/api.ts';
import { Badge, ErrorNote, PageHeader, Rows } from '../../ui/common.tsx';
import { projectNamer, useProjects } from './shared.tsx';

const FIELDS = 'uuid,name,owner,lessee,provision_state,power_state,maintenance,maintenance_reason,fault,last_error,conductor';

/** A node as this view reads it. */
interface HealthRow {
  uuid: string;
  name: string | null;
  owner: string | null;
  lessee: string | null;
  provision_state: string;
  power_state: string | null;
  maintenance: boolean;
  maintenance_reason: string | null;
  fault: string | null;
  last_error: string | null;
  conductor: string | null;
}

/** Set (with a reason) or unset one node's maintenance. */
function MaintenanceControl({ node, label }: { node: HealthRow; label: string }): ReactNode {
  const qc = useQueryClient();
  const [open, setOpen] = useState(false);
  const [reason, setReason] = useState('');
  const done = async (): Promise<void> => {
    setOpen(false);
    setReason('');
    await qc.invalidateQueries({ queryKey: ['nodes'] });
  };
  const set = useMutation({
    mutationFn: async () => call('PUT', `/baremetal/v1/nodes/${node.uuid}/maintenance`, { body: reason ? { reason } : {} }),
    onSuccess: done,
  });
  const unset = useMutation({ mutationFn: async () => call('DELETE', `/baremetal/v1/nodes/${node.uuid}/maintenance`), onSuccess: done });
  const errorId = `maintenance-error-${node.uuid}`;
  if (node.maintenance)
    return (
      <>
        <button
          type="button"
          className="ghost"
          disabled={unset.isPending}
          onClick={() => unset.mutate()}
          aria-label={`End maintenance of ${label}`}
        >
          End maintenance
        </button>
        <ErrorNote error={unset.error} />
      </>
    );
  if (!open)
    return (
      <button type="button" className="ghost" onClick={() => setOpen(true)}>
        Set maintenance…<span className="sr-only"> of {label}</span>
      </button>
    );
  return (
    <form
      className="inline-form"
      aria-label={`Maintenance of ${label}`}
      aria-describedby={set.error ? errorId : undefined}
      onSubmit={(e: FormEvent) => {
        e.preventDefault();
        set.mutate();
      }}
    >
      <label>
        Reason
        <input name="reason" value={reason} onChange={(e) => setReason(e.target.value)} autoFocus />
      </label>
      <button type="submit" disabled={set.isPending}>
        Set maintenance
      </button>
      <button type="button" className="ghost" onClick={() => setOpen(false)}>
        Cancel
      </button>
      <ErrorNote error={set.error} id={errorId} />
    </form>
  );
}

/** The node health page. */
export function AdminNodes(): ReactNode {
  const [troubled, setTroubled] = useState(false);
  const projects = useProjects();
  const project = projectNamer(projects.data);
  const nodes = useQuery({
    queryKey: ['nodes', 'admin-health'],
    queryFn: async ({ signal }) => getAll<HealthRow>(`/baremetal/v1/nodes?fields=${FIELDS}`, 'nodes', signal),
  });
  const all = nodes.data ?? [];
  const shown = troubled ? all.filter((n) => n.maintenance || n.fault || n.last_error) : all;
  const counts = {
    maintenance: all.filter((n) => n.maintenance).length,
    fault: all.filter((n) => n.fault).length,
    error: all.filter((n) => n.last_error).length,
  };
  return (
    <main className="admin">
      <PageHeader title="All nodes">
        <label className="inline">
          <input type="checkbox" checked={troubled} onChange={(e) => setTroubled(e.target.checked)} />
          Only nodes in maintenance, with a fault or an error
        </label>
      </PageHeader>
      <p className="muted" aria-live="polite">
        {all.length} node(s): {counts.maintenance} in maintenance, {counts.fault} with a fault, {counts.error} with a last error.
      </p>
      <ErrorNote error={nodes.error} />
      <table className="grid" aria-busy={nodes.isPending}>
        <thead>
          <tr>
            <th scope="col">Node</th>
            <th scope="col">State</th>
            <th scope="col">Maintenance</th>
            <th scope="col">Fault</th>
            <th scope="col">Last error</th>
            <th scope="col">Conductor</th>
            <th scope="col">Owner / lessee</th>
            <th scope="col">
              <span className="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          <Rows
            pending={nodes.isPending}
            items={shown}
            columns={8}
            empty="No nodes to show."
            row={(n) => {
              const label = n.name ?? n.uuid;
              return (
                <tr key={n.uuid} data-node={label}>
                  <td>
                    <Link to={`/dashboard/nodes/${n.uuid}`}>{label}</Link>
                  </td>
                  <td data-label="State">
                    <Badge value={n.provision_state} /> <Badge value={n.power_state} />
                  </td>
                  <td data-testid="maintenance" data-label="Maintenance">
                    {n.maintenance ? (
                      <>
                        <span className="badge bad">maintenance</span>{' '}
                        {n.maintenance_reason ?? <span className="muted">no reason given</span>}
                      </>
                    ) : (
                      <span className="muted">no</span>
                    )}
                  </td>
                  <td data-label="Fault">{n.fault ? <span className="badge bad">{n.fault}</span> : <span className="muted">—</span>}</td>
                  <td className="wrap" data-label="Last error">
                    {n.last_error ?? <span className="muted">—</span>}
                  </td>
                  <td className="mono" data-label="Conductor">
                    {n.conductor ?? '—'}
                  </td>
                  <td data-label="Owner / lessee">
                    {project(n.owner)} / {project(n.lessee)}
                  </td>
                  <td>
                    <div className="row-actions">
                      <MaintenanceControl node={n} label={label} />
                      <Link to={`/dashboard/admin/nodes/${n.uuid}/history`} aria-label={`History of ${label}`}>
                        History
                      </Link>
                    </div>
                  </td>
                </tr>
              );
            }}
          />
        </tbody>
      </table>
    </main>
  );
}
