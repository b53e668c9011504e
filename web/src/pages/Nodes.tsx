/**
 * Nodes the viewer may see (`GET /baremetal/v1/nodes/detail`: an owner's own, a lessee's leased
 * ones, every node for admins), with their provision and power state, owner, lessee and lease;
 * kept live by the change stream (./lib/live.ts).
 */
import { useQuery } from '@tanstack/react-query';
import { useState, type ReactNode } from 'react';
import { Link } from 'react-router';
import { getAll } from '../lib/api.ts';
import { Badge, ErrorNote, PageHeader, Rows } from '../ui/common.tsx';

/** The node fields the list shows. */
const FIELDS = 'uuid,name,owner,lessee,provision_state,power_state,target_power_state,maintenance,resource_class,fault,last_error';

/** A node as the list reads it. */
export interface NodeRow {
  uuid: string;
  name: string | null;
  owner: string | null;
  lessee: string | null;
  provision_state: string;
  power_state: string | null;
  target_power_state: string | null;
  maintenance: boolean;
  resource_class: string | null;
  fault: string | null;
  last_error: string | null;
}

/** The node list page. */
export function Nodes(): ReactNode {
  const [filter, setFilter] = useState('');
  const nodes = useQuery({
    queryKey: ['nodes'],
    queryFn: async ({ signal }) => getAll<NodeRow>(`/baremetal/v1/nodes?fields=${FIELDS}`, 'nodes', signal),
  });
  const shown = (nodes.data ?? []).filter((n) => filter === '' || `${n.name ?? ''} ${n.uuid} ${n.resource_class ?? ''}`.includes(filter));
  return (
    <main>
      <PageHeader title="Nodes">
        <input
          aria-label="Filter nodes"
          placeholder="Filter by name, UUID, class"
          value={filter}
          onChange={(e) => setFilter(e.target.value)}
        />
      </PageHeader>
      <ErrorNote error={nodes.error} />
      <table className="grid" aria-busy={nodes.isPending}>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Resource class</th>
            <th scope="col">Provision state</th>
            <th scope="col">Power</th>
            <th scope="col">Owner</th>
            <th scope="col">Lessee</th>
          </tr>
        </thead>
        <tbody>
          <Rows
            pending={nodes.isPending}
            items={shown}
            columns={6}
            empty="No nodes to show."
            row={(n) => (
              <tr key={n.uuid} data-node={n.name ?? n.uuid}>
                <td>
                  <Link to={`/dashboard/nodes/${n.uuid}`}>{n.name ?? n.uuid}</Link>
                  {n.maintenance ? <span className="badge bad">maintenance</span> : null}
                </td>
                <td>{n.resource_class ?? '—'}</td>
                <td>
                  <Badge value={n.provision_state} />
                </td>
                <td>
                  <Badge value={n.target_power_state ? `${n.power_state ?? '?'} → ${n.target_power_state}` : n.power_state} />
                </td>
                <td className="mono">{n.owner ?? '—'}</td>
                <td className="mono">{n.lessee ?? '—'}</td>
              </tr>
            )}
          />
        </tbody>
      </table>
    </main>
  );
}
