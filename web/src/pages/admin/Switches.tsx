/**
 * Operator view of the switches esi programs (`/dashboard/admin/switches`): each switch
 * (`GET /network/v2.0/switches`: name, switch id, driver, flat VLAN) and the state of its ports
 * (`GET /network/v2.0/switches/{id}/ports`): the node cabled to it, the VIF, what esi wants on
 * it (quarantine, an access VLAN, a trunk), what was last applied, the reconciliation status
 * and its last error; "Resync" re-applies every port of a switch
 * (`POST /network/v2.0/switches/{id}/resync`). Node names come from
 * `GET /baremetal/v1/nodes?fields=uuid,name`.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { Link } from 'react-router';
import { call, get } from '../../lib/api.ts';
import { ErrorNote, PageHeader, Time, Rows } from '../../ui/common.tsx';

/** A switch. */
interface Switch {
  id: string;
  name: string;
  switch_id: string | null;
  description: string | null;
  driver: string;
  flat_vlan: number | null;
  updated_at: string | null;
}

/** A port configuration (wanted or applied). */
type PortConfig =
  { mode: 'quarantine' } | { mode: 'access'; vlan: number } | { mode: 'trunk'; native_vlan: number | null; allowed_vlans: number[] };

/** A switch port and its reconciliation state. */
interface SwitchPort {
  port_id: string;
  node_uuid: string | null;
  registered_node_uuid: string | null;
  vif: string | null;
  desired: PortConfig | null;
  status: 'pending' | 'applied' | 'failed' | null;
  applied: PortConfig | null;
  last_error: string | null;
  updated_at: string | null;
}

/** A port configuration in words. */
function configText(c: PortConfig | null): string {
  if (c === null) return '—';
  switch (c.mode) {
    case 'quarantine':
      return 'quarantine';
    case 'access':
      return `access VLAN ${c.vlan}`;
    case 'trunk':
      return `trunk${c.native_vlan === null ? '' : ` native ${c.native_vlan}`}${c.allowed_vlans.length ? `, VLANs ${c.allowed_vlans.join(', ')}` : ''}`;
  }
}

/** One switch's ports. */
function SwitchPorts({ sw, nodeName }: { sw: Switch; nodeName: (id: string | null) => ReactNode }): ReactNode {
  const qc = useQueryClient();
  const ports = useQuery({
    queryKey: ['admin', 'switch-ports', sw.id],
    queryFn: async ({ signal }) =>
      (await get<{ switch_ports: SwitchPort[] }>(`/network/v2.0/switches/${sw.id}/ports`, signal)).switch_ports,
  });
  const resync = useMutation({
    mutationFn: async () => call('POST', `/network/v2.0/switches/${sw.id}/resync`),
    onSuccess: async () => qc.invalidateQueries({ queryKey: ['admin', 'switch-ports', sw.id] }),
  });
  return (
    <section aria-labelledby={`switch-${sw.id}`} data-switch={sw.name}>
      <div className="page-header">
        <h2 id={`switch-${sw.id}`}>
          {sw.name} <span className="muted">({sw.driver})</span>
        </h2>
        <div className="actions">
          <button type="button" className="ghost" onClick={() => void ports.refetch()} aria-label={`Refresh the ports of ${sw.name}`}>
            Refresh
          </button>
          <button type="button" onClick={() => resync.mutate()} disabled={resync.isPending}>
            {resync.isPending ? 'Resyncing…' : 'Resync'}
            <span className="sr-only"> {sw.name}</span>
          </button>
        </div>
      </div>
      {resync.isSuccess ? <p role="status">Resync of {sw.name} started.</p> : null}
      <ErrorNote error={ports.error ?? resync.error} />
      <table className="grid" aria-busy={ports.isPending} aria-label={`Ports of ${sw.name}`}>
        <thead>
          <tr>
            <th scope="col">Port</th>
            <th scope="col">Node</th>
            <th scope="col">VIF</th>
            <th scope="col">Wanted</th>
            <th scope="col">Applied</th>
            <th scope="col">Status</th>
            <th scope="col">Last error</th>
            <th scope="col">Updated</th>
          </tr>
        </thead>
        <tbody>
          <Rows
            pending={ports.isPending}
            items={ports.data ?? []}
            columns={8}
            loadingRows={2}
            empty="No ports cabled to nodes."
            row={(p) => (
              <tr key={p.port_id} data-port={p.port_id}>
                <th scope="row" className="mono">
                  {p.port_id}
                </th>
                <td data-label="Node">{nodeName(p.node_uuid ?? p.registered_node_uuid)}</td>
                <td className="mono" data-label="VIF">
                  {p.vif ?? '—'}
                </td>
                <td data-label="Wanted">{configText(p.desired)}</td>
                <td data-label="Applied">{configText(p.applied)}</td>
                <td data-label="Status">
                  <span className={`badge ${p.status === 'failed' ? 'bad' : p.status === 'applied' ? 'good' : 'busy'}`}>
                    {p.status ?? 'not yet applied'}
                  </span>
                </td>
                <td className="wrap" data-label="Last error">
                  {p.last_error ?? <span className="muted">—</span>}
                </td>
                <td data-label="Updated">
                  <Time value={p.updated_at} />
                </td>
              </tr>
            )}
          />
        </tbody>
      </table>
    </section>
  );
}

/** The switches page. */
export function Switches(): ReactNode {
  const switches = useQuery({
    queryKey: ['admin', 'switches'],
    queryFn: async ({ signal }) => (await get<{ switches: Switch[] }>('/network/v2.0/switches', signal)).switches,
  });
  const nodes = useQuery({
    queryKey: ['nodes', 'names'],
    queryFn: async ({ signal }) =>
      (await get<{ nodes: Array<{ uuid: string; name: string | null }> }>('/baremetal/v1/nodes?fields=uuid,name', signal)).nodes,
  });
  const names = new Map((nodes.data ?? []).map((n) => [n.uuid, n.name ?? n.uuid]));
  const nodeName = (id: string | null): ReactNode =>
    id === null ? <span className="muted">—</span> : <Link to={`/dashboard/nodes/${id}`}>{names.get(id) ?? id}</Link>;
  return (
    <main className="admin">
      <PageHeader title="Switches" />
      <ErrorNote error={switches.error} />
      <table className="grid" aria-busy={switches.isPending} aria-label="Switches">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Switch ID</th>
            <th scope="col">Driver</th>
            <th scope="col">Flat VLAN</th>
            <th scope="col">Description</th>
          </tr>
        </thead>
        <tbody>
          <Rows
            pending={switches.isPending}
            items={switches.data ?? []}
            columns={5}
            loadingRows={2}
            empty="No switches are registered."
            row={(s) => (
              <tr key={s.id}>
                <th scope="row">
                  <a href={`#switch-${s.id}`}>{s.name}</a>
                </th>
                <td className="mono" data-label="Switch ID">
                  {s.switch_id ?? '—'}
                </td>
                <td data-label="Driver">{s.driver}</td>
                <td data-label="Flat VLAN">{s.flat_vlan ?? '—'}</td>
                <td data-label="Description">{s.description ?? <span className="muted">—</span>}</td>
              </tr>
            )}
          />
        </tbody>
      </table>
      {(switches.data ?? []).map((s) => (
        <SwitchPorts key={s.id} sw={s} nodeName={nodeName} />
      ))}
    </main>
  );
}
