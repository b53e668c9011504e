/**
 * Operator view of the conductors (`/dashboard/admin/conductors`): each conductor process with
 * whether it is alive, when it last reported (its heartbeat, `updated_at`), its conductor group
 * and drivers (`GET /baremetal/v1/conductors?detail=true`), and the nodes it holds
 * (`GET /baremetal/v1/nodes?conductor=<hostname>`), shown on request.
 */
import { useQuery } from '@tanstack/react-query';
import { Fragment, useState, type ReactNode } from 'react';
import { Link } from 'react-router';
import { get } from '../../lib/api.ts';
import { Badge, ErrorNote, PageHeader, Time, Rows } from '../../ui/common.tsx';

/** A conductor as `?detail=true` lists it. */
interface Conductor {
  hostname: string;
  conductor_group: string;
  alive: boolean;
  drivers?: string[];
  created_at?: string;
  updated_at?: string | null;
}

/** A node of a conductor. */
interface ConductorNode {
  uuid: string;
  name: string | null;
  provision_state: string;
  power_state: string | null;
  maintenance: boolean;
}

/** The nodes of one conductor. */
function ConductorNodes({ hostname }: { hostname: string }): ReactNode {
  const nodes = useQuery({
    queryKey: ['nodes', 'conductor', hostname],
    queryFn: async ({ signal }) =>
      (
        await get<{ nodes: ConductorNode[] }>(
          `/baremetal/v1/nodes?conductor=${encodeURIComponent(hostname)}&fields=uuid,name,provision_state,power_state,maintenance`,
          signal,
        )
      ).nodes,
  });
  if (nodes.isPending) return <p aria-busy="true">Loading the nodes of {hostname}…</p>;
  if (nodes.error) return <ErrorNote error={nodes.error} />;
  const list = nodes.data ?? [];
  if (list.length === 0) return <p className="muted">{hostname} holds no nodes.</p>;
  return (
    <ul className="node-list" aria-label={`Nodes of ${hostname}`}>
      {list.map((n) => (
        <li key={n.uuid}>
          <Link to={`/dashboard/nodes/${n.uuid}`}>{n.name ?? n.uuid}</Link> <Badge value={n.provision_state} />{' '}
          <Badge value={n.power_state} />
          {n.maintenance ? <span className="badge bad">maintenance</span> : null}
        </li>
      ))}
    </ul>
  );
}

/** The conductors page. */
export function Conductors(): ReactNode {
  const [open, setOpen] = useState<ReadonlySet<string>>(new Set());
  const conductors = useQuery({
    queryKey: ['admin', 'conductors'],
    queryFn: async ({ signal }) => (await get<{ conductors: Conductor[] }>('/baremetal/v1/conductors?detail=true', signal)).conductors,
  });
  const toggle = (h: string): void =>
    setOpen((s) => {
      const next = new Set(s);
      if (next.has(h)) next.delete(h);
      else next.add(h);
      return next;
    });
  return (
    <main className="admin">
      <PageHeader title="Conductors">
        <button type="button" className="ghost" onClick={() => void conductors.refetch()} disabled={conductors.isFetching}>
          Refresh
        </button>
      </PageHeader>
      <ErrorNote error={conductors.error} />
      <table className="grid" aria-busy={conductors.isPending}>
        <thead>
          <tr>
            <th scope="col">Hostname</th>
            <th scope="col">Alive</th>
            <th scope="col">Last seen</th>
            <th scope="col">Group</th>
            <th scope="col">Drivers</th>
            <th scope="col">Nodes</th>
          </tr>
        </thead>
        <tbody>
          <Rows
            pending={conductors.isPending}
            items={conductors.data ?? []}
            columns={6}
            empty="No conductor has registered."
            row={(c) => {
              const shown = open.has(c.hostname);
              return (
                <Fragment key={c.hostname}>
                  <tr data-conductor={c.hostname}>
                    <th scope="row" className="mono">
                      {c.hostname}
                    </th>
                    <td data-label="Alive">
                      {c.alive ? <span className="badge good">alive</span> : <span className="badge bad">down</span>}
                    </td>
                    <td data-label="Last seen">
                      <Time value={c.updated_at ?? c.created_at} />
                    </td>
                    <td data-label="Group">{c.conductor_group || <span className="muted">default</span>}</td>
                    <td data-label="Drivers">{(c.drivers ?? []).join(', ') || '—'}</td>
                    <td>
                      <button
                        type="button"
                        className="ghost"
                        aria-expanded={shown}
                        aria-label={`${shown ? 'Hide' : 'Show'} nodes of ${c.hostname}`}
                        onClick={() => toggle(c.hostname)}
                      >
                        {shown ? 'Hide nodes' : 'Show nodes'}
                      </button>
                    </td>
                  </tr>
                  {shown ? (
                    <tr>
                      <td colSpan={6}>
                        <ConductorNodes hostname={c.hostname} />
                      </td>
                    </tr>
                  ) : null}
                </Fragment>
              );
            }}
          />
        </tbody>
      </table>
    </main>
  );
}
