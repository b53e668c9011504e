/**
 * The owner's provision-state actions on one node — manage, inspect, provide
 * (`PUT /baremetal/v1/nodes/{id}/states/provision` with `{target}`) — with the node's state shown
 * live: the node is read with `GET /baremetal/v1/nodes/{id}` under the `['node', id]` key that
 * the live channel (../../lib/live.ts) refreshes on every change, so `verifying` → `manageable`
 * shows as it happens, without polling. Shown to the node's owner and to admins (the API
 * decides; a refusal shows in its words).
 *
 * Manage is how esi checks a BMC: `enroll` → `verifying` (the conductor reads the power state
 * with the node's credentials) → `manageable`, or back to `enroll` with the reason in
 * `last_error`.
 */
import { useMutation, useQuery, useQueryClient, type UseQueryResult } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { call, get } from '../../lib/api.ts';
import { isAdmin, useSession } from '../../lib/session.tsx';
import { Badge, ErrorNote } from '../../ui/common.tsx';
import './owner.css';

/** The node fields this component reads. */
export interface ProvisionNode {
  uuid: string;
  owner: string | null;
  provision_state: string;
  target_provision_state: string | null;
  power_state: string | null;
  last_error: string | null;
}

/** The verbs offered, the states each applies to (Ironic's state machine), and what it does. */
const VERBS: ReadonlyArray<{ verb: string; label: string; from: readonly string[]; hint: string }> = [
  {
    verb: 'manage',
    label: 'Manage',
    from: ['enroll', 'available', 'inspect failed', 'clean failed', 'adopt failed'],
    hint: 'Check the BMC with these credentials and take the node out of the pool (enroll → verifying → manageable).',
  },
  {
    verb: 'inspect',
    label: 'Inspect',
    from: ['manageable', 'inspect failed'],
    hint: 'Read the hardware (CPUs, memory, disks, NICs) into the node’s properties.',
  },
  {
    verb: 'provide',
    label: 'Provide',
    from: ['manageable'],
    hint: 'Clean the node and make it available for leases and deploys.',
  },
];

/** The node query shared with the node page (same key, same document). */
export function useNode(id: string): UseQueryResult<ProvisionNode> {
  return useQuery({
    queryKey: ['node', id],
    queryFn: async ({ signal }) => get<ProvisionNode>(`/baremetal/v1/nodes/${id}`, signal),
    enabled: id !== '',
  });
}

/** Provision actions and the live state of node `id` (nothing for viewers who neither own it nor administer). */
export function ProvisionActions({ id }: { id: string }): ReactNode {
  const { session } = useSession();
  const qc = useQueryClient();
  const node = useNode(id);
  const act = useMutation({
    mutationFn: async (target: string) => call('PUT', `/baremetal/v1/nodes/${id}/states/provision`, { body: { target } }),
    onSettled: async () => qc.invalidateQueries({ queryKey: ['node', id] }),
  });
  const n = node.data;
  if (n === undefined) return <ErrorNote error={node.error} />;
  if (!isAdmin(session) && (session?.project === null || n.owner !== session?.project?.id)) return null;
  const busy = n.target_provision_state !== null || act.isPending;
  return (
    <section className="o-lifecycle" aria-label="Lifecycle">
      <h2>Lifecycle</h2>
      <p data-testid="provision-state" aria-live="polite">
        <Badge value={n.provision_state} />
        {n.target_provision_state ? <span className="muted"> → {n.target_provision_state}</span> : null}
      </p>
      {n.last_error ? (
        <p className="error" data-testid="provision-last-error">
          Last error: {n.last_error}
        </p>
      ) : null}
      <div className="actions">
        {VERBS.map((v) => (
          <button
            key={v.verb}
            type="button"
            title={v.hint}
            disabled={busy || !v.from.includes(n.provision_state)}
            onClick={() => act.mutate(v.verb)}
          >
            {v.label}
          </button>
        ))}
      </div>
      <ul className="muted o-hints">
        {VERBS.map((v) => (
          <li key={v.verb}>
            <strong>{v.label}</strong>: {v.hint}
          </li>
        ))}
      </ul>
      <ErrorNote error={act.error} />
    </section>
  );
}
