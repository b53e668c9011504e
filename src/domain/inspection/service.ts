/**
 * The API side of inspection (Ironic 2023.2+ built-in agent inspection):
 *
 * - {@link InspectionService.continueInspection}: `POST /v1/continue_inspection`, public (the
 *   agent has no Keystone token; as in Ironic the node is found from the data itself): the
 *   inspection data is validated (src/domain/inspection/inventory.ts), the node found by the
 *   MACs of its inventory's interfaces (its enrolled ports, as Ironic's `lookup_node`), and it
 *   must wait for this data: `inspect wait` with the agent booted for inspection. The inventory
 *   is stored and the node resumes (`inspect wait` → `inspecting`) for the conductor, which
 *   processes it (src/conductor/inspect/). A node in `inspecting` (the conductor still holds
 *   it, or processes earlier data) → 409, which the agent retries; any other node → 404.
 * - {@link InspectionService.getInventory}: `GET /v1/nodes/{id}/inventory` (≥ 1.81), policy
 *   `baremetal:node:inventory:get` (owner or admin, not the lessee); 404 `NodeInventoryNotFound`
 *   when nothing is stored.
 */
import type { AuthContext } from '../auth.ts';
import type { Clock } from '../clock.ts';
import { ConflictError, LockedError, NotFoundError } from '../errors.ts';
import type { NodeAccess } from '../inventory/node-access.ts';
import type { ConductorPort, NodeRepository, PortRepository } from '../inventory/ports.ts';
import { next } from '../inventory/states.ts';
import { validateInspectionData } from './inventory.ts';
import type { InspectionRepository, StoredInventory } from './ports.ts';

/** What the service needs. */
export interface InspectionDeps {
  readonly access: NodeAccess;
  readonly nodes: NodeRepository;
  readonly ports: PortRepository;
  readonly store: InspectionRepository;
  readonly clock: Clock;
  readonly conductor: ConductorPort;
}

/** `driver_internal_info` key marking that the agent's inspection data was received. */
export const INSPECTION_RECEIVED_KEY = 'inspection_data_received';

/** Inspection endpoints (see the module documentation). */
export class InspectionService {
  constructor(private readonly d: InspectionDeps) {}

  /**
   * Accept an agent's inspection data.
   * @returns the node's UUID
   * @throws InvalidInputError for malformed data; NotFoundError when no node waits for it;
   *   ConflictError / LockedError while the node is being inspected or held (retry)
   */
  async continueInspection(body: unknown): Promise<{ uuid: string }> {
    const { inventory, pluginData } = validateInspectionData(body);
    const macs = (inventory.interfaces as Array<Record<string, unknown>>)
      .map((i) => (typeof i.mac_address === 'string' ? i.mac_address.toLowerCase() : null))
      .filter((m): m is string => m !== null);
    let nodeUuid: string | null = null;
    for (const mac of macs) {
      const port = await this.d.ports.getByAddress(mac);
      if (port !== null) {
        nodeUuid = port.node_uuid;
        break;
      }
    }
    const missing = () =>
      new NotFoundError(
        'node',
        macs.join(','),
        `No node waiting for inspection data was found for MAC addresses ${macs.join(', ') || '(none)'}.`,
      );
    if (nodeUuid === null) throw missing();
    for (let attempt = 0; attempt < 3; attempt++) {
      const node = await this.d.nodes.get(nodeUuid);
      if (node === null) throw missing();
      if (node.provision_state === 'inspecting')
        throw new ConflictError(`Node ${node.uuid} is being inspected; retry the inspection data later.`);
      if (node.provision_state !== 'inspect wait' || node.driver_internal_info.agent_boot !== 'inspect') throw missing();
      if (node.reservation !== null) throw new LockedError(`Node ${node.uuid} is locked by a conductor; retry the inspection data.`);
      const now = this.d.clock.now();
      await this.d.store.putInventory(node.id, inventory, pluginData, now);
      const t = next(node.provision_state, 'resume', 'manageable');
      const r = await this.d.nodes.update(
        node.uuid,
        node.version,
        {
          provision_state: t.state,
          target_provision_state: 'manageable',
          provision_updated_at: now,
          driver_internal_info: { ...node.driver_internal_info, [INSPECTION_RECEIVED_KEY]: true },
        },
        now,
      );
      if (r.ok) {
        this.d.conductor.notifyNode(node.uuid);
        return { uuid: node.uuid };
      }
      if (r.reason === 'missing') throw missing();
      if (r.reason === 'reserved') throw new LockedError(`Node ${node.uuid} is locked by a conductor; retry the inspection data.`);
    }
    throw new LockedError(`Node ${nodeUuid} changed while its inspection data arrived; retry.`);
  }

  /**
   * The node's stored inventory.
   * @throws NotFoundError (node not visible, or `NodeInventoryNotFound`); ForbiddenError when
   *   the caller may see the node but not its inventory
   */
  async getInventory(ctx: AuthContext, ident: string): Promise<Pick<StoredInventory, 'inventory' | 'plugin_data'>> {
    const node = await this.d.access.visible(ctx, ident, 'baremetal:node:inventory:get');
    const stored = await this.d.store.getInventory(node.id);
    if (stored === null)
      throw new NotFoundError('inventory', node.uuid, `Node inventory for node ${node.uuid} could not be found.`, 'NodeInventoryNotFound');
    return { inventory: stored.inventory, plugin_data: stored.plugin_data };
  }
}
