/**
 * Networks (Neutron v2.0): those the viewer may use (`GET /network/v2.0/networks`), creating one
 * with an IPv4 subnet (`POST /networks`, then `POST /subnets`), deleting one; and, on a node's
 * page, its NICs with the networks they carry (`GET /network/v2.0/esi/node-networks?node=`, as
 * `esi node network list`) with attach (`POST /esi/node-networks {node, network}`) and detach
 * (`POST /esi/node-networks/detach {node, ports}`), a trunk attached as a network is (its
 * `{node, trunk}`); trunks themselves: ./Trunks.tsx.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent, type ReactNode } from 'react';
import { call, get } from '../../lib/api.ts';
import { ErrorNote, LoadingRows, PageHeader, Rows } from '../../ui/common.tsx';
import { Trunks, useTrunks } from './Trunks.tsx';

/** A network as the list reads it. */
interface Network {
  id: string;
  name: string;
  status: string;
  shared: boolean;
  'router:external': boolean;
  'provider:segmentation_id'?: number | null;
  subnets: string[];
  project_id: string;
}

/** The networks the viewer may use. */
function useNetworks() {
  return useQuery({
    queryKey: ['networks'],
    queryFn: async ({ signal }) => (await get<{ networks: Network[] }>('/network/v2.0/networks', signal)).networks,
  });
}

/** The networks page. */
export function Networks(): ReactNode {
  const qc = useQueryClient();
  const networks = useNetworks();
  const [name, setName] = useState('');
  const [cidr, setCidr] = useState('');
  const create = useMutation({
    mutationFn: async () => {
      const net = await call<{ network: Network }>('POST', '/network/v2.0/networks', { body: { network: { name } } });
      if (cidr !== '')
        await call('POST', '/network/v2.0/subnets', {
          body: { subnet: { network_id: net.body.network.id, cidr, ip_version: 4, name: `${name}-subnet` } },
        });
    },
    onSettled: async () => qc.invalidateQueries({ queryKey: ['networks'] }),
  });
  const remove = useMutation({
    mutationFn: async (id: string) => call('DELETE', `/network/v2.0/networks/${id}`),
    onSettled: async () => qc.invalidateQueries({ queryKey: ['networks'] }),
  });
  return (
    <main>
      <PageHeader title="Networks" />
      <form
        className="inline-form"
        onSubmit={(e: FormEvent) => {
          e.preventDefault();
          create.mutate();
        }}
      >
        <label>
          Name
          <input required value={name} onChange={(e) => setName(e.target.value)} />
        </label>
        <label>
          Subnet (CIDR, optional)
          <input value={cidr} onChange={(e) => setCidr(e.target.value)} placeholder="10.0.0.0/24" />
        </label>
        <button type="submit" disabled={create.isPending}>
          Create network
        </button>
        <ErrorNote error={create.error} />
      </form>
      <ErrorNote error={networks.error ?? remove.error} />
      <table className="grid" aria-busy={networks.isPending}>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">VLAN</th>
            <th scope="col">Subnets</th>
            <th scope="col">Shared</th>
            <th scope="col">External</th>
            <th scope="col">
              <span className="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          <Rows
            pending={networks.isPending}
            items={networks.data}
            columns={6}
            empty="No networks."
            row={(n) => (
              <tr key={n.id} data-network={n.name}>
                <td>{n.name || n.id}</td>
                <td>{n['provider:segmentation_id'] ?? '—'}</td>
                <td>{n.subnets.length}</td>
                <td>{n.shared ? 'yes' : 'no'}</td>
                <td>{n['router:external'] ? 'yes' : 'no'}</td>
                <td>
                  <button type="button" className="danger" onClick={() => remove.mutate(n.id)} disabled={remove.isPending}>
                    Delete
                  </button>
                </td>
              </tr>
            )}
          />
        </tbody>
      </table>
      <Trunks networks={networks.data ?? []} />
    </main>
  );
}

/** One NIC row of `esi node network list`. */
interface NodeNetworkRow {
  baremetal_port_uuid: string;
  mac_address: string;
  network_port: { id: string | null; name: string | null; fixed_ips: Array<{ ip_address: string }> } | null;
  networks: Array<{ id: string; name: string; vlan: number | null; role: string }>;
  floating_ip: { floating_ip_address: string } | null;
}

/** A node's NICs and their networks, with attach and detach (on the node's page). */
export function NodeNetworks({ node }: { node: string }): ReactNode {
  const qc = useQueryClient();
  const rows = useQuery({
    queryKey: ['node-networks', node],
    queryFn: async ({ signal }) =>
      (await get<{ node_networks: NodeNetworkRow[] }>(`/network/v2.0/esi/node-networks?node=${encodeURIComponent(node)}`, signal))
        .node_networks,
  });
  const networks = useNetworks();
  const trunks = useTrunks();
  const [network, setNetwork] = useState('');
  const refresh = async (): Promise<void> => qc.invalidateQueries({ queryKey: ['node-networks', node] });
  const attach = useMutation({
    mutationFn: async () =>
      call('POST', '/network/v2.0/esi/node-networks', {
        body: network.startsWith('trunk:') ? { node, trunk: network.slice('trunk:'.length) } : { node, network },
      }),
    onSettled: refresh,
  });
  const detach = useMutation({
    mutationFn: async (port: string) => call('POST', '/network/v2.0/esi/node-networks/detach', { body: { node, ports: [port] } }),
    onSettled: refresh,
  });
  return (
    <section aria-labelledby="node-networks-heading">
      <h2 id="node-networks-heading">Networks</h2>
      <ErrorNote error={rows.error ?? detach.error} />
      <table className="grid compact" aria-busy={rows.isPending}>
        <thead>
          <tr>
            <th scope="col">NIC</th>
            <th scope="col">Port</th>
            <th scope="col">Networks</th>
            <th scope="col">Addresses</th>
            <th scope="col">
              <span className="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.isPending ? (
            <LoadingRows columns={5} rows={2} />
          ) : (
            (rows.data ?? []).map((r) => (
              <tr key={r.baremetal_port_uuid}>
                <td className="mono">{r.mac_address}</td>
                <td>{r.network_port?.name ?? r.network_port?.id ?? '—'}</td>
                <td>{r.networks.map((n) => `${n.name}${n.vlan !== null ? ` (VLAN ${n.vlan})` : ''}`).join(', ') || '—'}</td>
                <td className="mono">
                  {[
                    ...(r.network_port?.fixed_ips ?? []).map((f) => f.ip_address),
                    ...(r.floating_ip ? [r.floating_ip.floating_ip_address] : []),
                  ].join(', ') || '—'}
                </td>
                <td>
                  {r.network_port?.id ? (
                    <button type="button" className="ghost" onClick={() => detach.mutate(r.network_port!.id!)} disabled={detach.isPending}>
                      Detach
                    </button>
                  ) : null}
                </td>
              </tr>
            ))
          )}
        </tbody>
      </table>
      <form
        className="inline-form"
        onSubmit={(e: FormEvent) => {
          e.preventDefault();
          attach.mutate();
        }}
      >
        <label>
          Attach a network or a trunk
          <select required value={network} onChange={(e) => setNetwork(e.target.value)}>
            <option value="">Choose a network or a trunk</option>
            <optgroup label="Networks">
              {(networks.data ?? []).map((n) => (
                <option key={n.id} value={n.id}>
                  {n.name || n.id}
                </option>
              ))}
            </optgroup>
            <optgroup label="Trunks">
              {(trunks.data ?? []).map((t) => (
                <option key={t.id} value={`trunk:${t.id}`}>
                  {t.name}
                </option>
              ))}
            </optgroup>
          </select>
        </label>
        <button type="submit" disabled={attach.isPending}>
          Attach
        </button>
        <ErrorNote error={attach.error} />
      </form>
    </section>
  );
}
