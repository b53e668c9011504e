/**
 * One node: its state, hardware properties and lease; power on/off/reboot
 * (`PUT /baremetal/v1/nodes/{id}/states/power`) and the serial console (./Console.tsx) for whoever
 * the policy allows. Properties are shown read-only; the API refuses a lessee's change anyway.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { lazy, Suspense, useState, type FormEvent, type ReactNode } from 'react';
import { useParams } from 'react-router';
import { call, get } from '../lib/api.ts';
import { Badge, ErrorNote, PageHeader, Time } from '../ui/common.tsx';
import { ProvisionActions } from './owner/ProvisionActions.tsx';
import { ProvisionPanel } from './lessee/Provision.tsx';
import { NodeNetworks } from './lessee/Networks.tsx';

const Console = lazy(() => import('./Console.tsx'));

/** A node as the page reads it (`GET /baremetal/v1/nodes/{id}`). */
interface Node {
  [field: string]: unknown;
  uuid: string;
  name: string | null;
  owner: string | null;
  lessee: string | null;
  provision_state: string;
  power_state: string | null;
  target_power_state: string | null;
  resource_class: string | null;
  properties: Record<string, unknown>;
  maintenance: boolean;
  last_error: string | null;
  provision_updated_at: string | null;
  updated_at: string | null;
}

/**
 * Set one hardware property (`PATCH /baremetal/v1/nodes/{id}` with
 * `[{op: add, path: /properties/<key>, value}]`; a number when the value reads as one). Shown to
 * everyone: the API decides, and a lessee's attempt is refused beside the form in its words.
 */
function PropertyEditor({ node }: { node: string }): ReactNode {
  const qc = useQueryClient();
  const [key, setKey] = useState('');
  const [value, setValue] = useState('');
  const save = useMutation({
    mutationFn: async () => {
      const v = value.trim() !== '' && Number.isFinite(Number(value)) ? Number(value) : value;
      await call('PATCH', `/baremetal/v1/nodes/${node}`, { body: [{ op: 'add', path: `/properties/${key}`, value: v }] });
    },
    onSuccess: async () => qc.invalidateQueries({ queryKey: ['node', node] }),
  });
  return (
    <form
      className="inline-form"
      aria-label="Set a property"
      onSubmit={(e: FormEvent) => {
        e.preventDefault();
        save.mutate();
      }}
    >
      <label>
        Property
        <input required value={key} onChange={(e) => setKey(e.target.value)} pattern="[A-Za-z0-9_.:-]+" />
      </label>
      <label>
        Value
        <input required value={value} onChange={(e) => setValue(e.target.value)} />
      </label>
      <button type="submit" disabled={save.isPending}>
        Set property
      </button>
      <ErrorNote error={save.error} id="property-error" />
    </form>
  );
}

/** The node page. */
export function NodeDetail(): ReactNode {
  const { id = '' } = useParams();
  const [consoleOpen, setConsoleOpen] = useState(false);
  const node = useQuery({ queryKey: ['node', id], queryFn: async ({ signal }) => get<Node>(`/baremetal/v1/nodes/${id}`, signal) });
  const power = useMutation({
    mutationFn: async (target: string) => call('PUT', `/baremetal/v1/nodes/${id}/states/power`, { body: { target } }),
  });
  const n = node.data;
  if (node.isPending) return <main aria-busy="true">Loading node…</main>;
  if (n === undefined)
    return (
      <main>
        <ErrorNote error={node.error ?? 'This node no longer exists, or you may no longer see it.'} />
      </main>
    );
  return (
    <main>
      <PageHeader title={n.name ?? n.uuid}>
        <button type="button" onClick={() => power.mutate('power on')} disabled={power.isPending}>
          Power on
        </button>
        <button type="button" onClick={() => power.mutate('power off')} disabled={power.isPending}>
          Power off
        </button>
        <button type="button" onClick={() => power.mutate('rebooting')} disabled={power.isPending}>
          Reboot
        </button>
        <button type="button" onClick={() => setConsoleOpen((o) => !o)} aria-expanded={consoleOpen}>
          {consoleOpen ? 'Close console' : 'Console'}
        </button>
      </PageHeader>
      <ErrorNote error={power.error} />
      <dl className="facts">
        <dt>UUID</dt>
        <dd className="mono">{n.uuid}</dd>
        <dt>Provision state</dt>
        <dd>
          <Badge value={n.provision_state} /> <Time value={n.provision_updated_at} />
        </dd>
        <dt>Power</dt>
        <dd data-testid="power-state">
          <Badge value={n.power_state} />
          {n.target_power_state ? <span className="muted"> → {n.target_power_state}</span> : null}
        </dd>
        <dt>Resource class</dt>
        <dd>{n.resource_class ?? '—'}</dd>
        <dt>Owner</dt>
        <dd className="mono">{n.owner ?? '—'}</dd>
        <dt>Lessee</dt>
        <dd className="mono">{n.lessee ?? '—'}</dd>
        <dt>Last error</dt>
        <dd>
          {n.last_error === null ? (
            '—'
          ) : n.last_error.startsWith('** ') ? (
            <span className="muted">shown to the node's owner and admins only</span>
          ) : (
            n.last_error
          )}
        </dd>
      </dl>
      <ProvisionPanel node={n} />
      <NodeNetworks node={n.uuid} />
      <ProvisionActions id={id} />
      <h2>Properties</h2>
      <table className="grid compact">
        <tbody>
          {Object.entries(n.properties ?? {}).map(([k, v]) => (
            <tr key={k}>
              <th scope="row">{k}</th>
              <td className="mono">{typeof v === 'string' ? v : JSON.stringify(v)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <PropertyEditor node={n.uuid} />
      {consoleOpen ? (
        <Suspense fallback={<p>Opening the console…</p>}>
          <Console node={n.uuid} />
        </Suspense>
      ) : null}
    </main>
  );
}
