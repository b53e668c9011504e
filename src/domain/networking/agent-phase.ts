/**
 * Whether a bare-metal port's node is in an agent phase: the deploy agent is booting or running
 * on it, so its NICs belong on the provisioning network (./provisioning.ts).
 */
import type { NodePortLink } from './ports.ts';
import { LOOKUP_STATES } from '../deploy/ramdisk.ts';

/**
 * Provision states in which the deploy agent is booting or running on the node: those in which
 * it may look itself up (Ironic `LOOKUP_ALLOWED_STATES`, src/domain/deploy/ramdisk.ts).
 */
export const AGENT_PHASE_STATES: ReadonlySet<string> = LOOKUP_STATES;

/** What {@link inAgentPhase} reads of a bare-metal port's node. */
export type AgentPhaseFields = Pick<NodePortLink, 'node_provision_state' | 'node_agent_boot'>;

/** True when the port's node is in an agent phase (see the module documentation). */
export function inAgentPhase(np: AgentPhaseFields): boolean {
  return np.node_agent_boot !== null && AGENT_PHASE_STATES.has(np.node_provision_state);
}
