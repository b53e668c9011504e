/**
 * Trunks, as `esi trunk …` makes them (`/network/v2.0/esi/trunks`): a trunk port carrying one
 * native (untagged) network and tagged networks, which a node's NIC then carries when attached
 * (`POST /network/v2.0/esi/node-networks {node, trunk}`, on the node's page). List, create with
 * a native network and tagged ones, add and remove tagged networks, delete (its ports too).
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent, type ReactNode } from 'react';
import { call, get } from '../../lib/api.ts';
import { ErrorNote, Rows } from '../../ui/common.tsx';

/** A trunk as esi's trunk list shows it. */
export interface Trunk {
  id: string;
  name: string;
  status: string;
  port: { id: string; name: string | null };
  networks: Array<{ id: string; name: string; vlan: number | null; role: string }>;
}

/** The viewer's trunks. */
export function useTrunks() {
  return useQuery({
    queryKey: ['trunks'],
    queryFn: async ({ signal }) => (await get<{ trunks: Trunk[] }>('/network/v2.0/esi/trunks', signal)).trunks,
  });
}

/** The trunks section of the networks page. */
export function Trunks({ networks }: { networks: ReadonlyArray<{ id: string; name: string }> }): ReactNode {
  const qc = useQueryClient();
  const trunks = useTrunks();
  const [name, setName] = useState('');
  const [native, setNative] = useState('');
  const [tagged, setTagged] = useState<string[]>([]);
  const refresh = async (): Promise<void> => qc.invalidateQueries({ queryKey: ['trunks'] });
  const create = useMutation({
    mutationFn: async () =>
      call('POST', '/network/v2.0/esi/trunks', {
        body: { name, native_network: native, ...(tagged.length > 0 ? { tagged_networks: tagged } : {}) },
      }),
    onSettled: refresh,
  });
  const remove = useMutation({ mutationFn: async (id: string) => call('DELETE', `/network/v2.0/esi/trunks/${id}`), onSettled: refresh });
  const change = useMutation({
    mutationFn: async ({ id, network, add }: { id: string; network: string; add: boolean }) =>
      call('POST', `/network/v2.0/esi/trunks/${id}/${add ? 'add' : 'remove'}-networks`, { body: { tagged_networks: [network] } }),
    onSettled: refresh,
  });
  return (
    <section aria-labelledby="trunks-heading">
      <h2 id="trunks-heading">Trunks</h2>
      <form
        className="inline-form"
        onSubmit={(e: FormEvent) => {
          e.preventDefault();
          create.mutate();
        }}
      >
        <label>
          Trunk name
          <input required value={name} onChange={(e) => setName(e.target.value)} />
        </label>
        <label>
          Native network
          <select required value={native} onChange={(e) => setNative(e.target.value)}>
            <option value="">Choose a network</option>
            {networks.map((n) => (
              <option key={n.id} value={n.id}>
                {n.name || n.id}
              </option>
            ))}
          </select>
        </label>
        <fieldset>
          <legend>Tagged networks</legend>
          {networks
            .filter((n) => n.id !== native)
            .map((n) => (
              <label key={n.id} className="inline">
                <input
                  type="checkbox"
                  checked={tagged.includes(n.id)}
                  onChange={(e) => setTagged(e.target.checked ? [...tagged, n.id] : tagged.filter((x) => x !== n.id))}
                />
                {n.name || n.id}
              </label>
            ))}
        </fieldset>
        <button type="submit" disabled={create.isPending}>
          Create trunk
        </button>
        <ErrorNote error={create.error} />
      </form>
      <ErrorNote error={trunks.error ?? remove.error ?? change.error} />
      <table className="grid" aria-busy={trunks.isPending}>
        <thead>
          <tr>
            <th scope="col">Trunk</th>
            <th scope="col">Native</th>
            <th scope="col">Tagged</th>
            <th scope="col">
              <span className="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          <Rows
            pending={trunks.isPending}
            items={trunks.data}
            columns={4}
            loadingRows={2}
            empty="No trunks."
            row={(t) => (
              <tr key={t.id} data-trunk={t.name}>
                <td>{t.name}</td>
                <td>
                  {t.networks
                    .filter((n) => n.role === 'native')
                    .map((n) => n.name)
                    .join(', ') || '—'}
                </td>
                <td>
                  {t.networks
                    .filter((n) => n.role === 'tagged')
                    .map((n) => (
                      <span key={n.id} className="badge plain">
                        {n.name}
                        {n.vlan !== null ? ` (VLAN ${n.vlan})` : ''}{' '}
                        <button
                          type="button"
                          className="ghost"
                          aria-label={`Remove ${n.name} from ${t.name}`}
                          onClick={() => change.mutate({ id: t.id, network: n.id, add: false })}
                        >
                          ×
                        </button>
                      </span>
                    ))}
                </td>
                <td>
                  <button type="button" className="danger" onClick={() => remove.mutate(t.id)} disabled={remove.isPending}>
                    Delete
                  </button>
                </td>
              </tr>
            )}
          />
        </tbody>
      </table>
    </section>
  );
}
