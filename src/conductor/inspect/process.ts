/**
 * The end of an inspection, shared by in-band (agent) and out-of-band (redfish) inspection:
 * the stored inventory is turned into node properties, ports (created, `pxe_enabled` and
 * `local_link_connection` updated — cabling checked as the inspection's requester,
 * ./cabling.ts) and the effects of the inspection rules (src/domain/inspection/process.ts),
 * written while this conductor holds the node.
 */
import { inspectionFacts } from '../../domain/inspection/inventory.ts';
import { planInspection } from '../../domain/inspection/process.ts';
import { newUuid } from '../../domain/ids.ts';
import type { JsonObject } from '../../domain/inventory/masking.ts';
import type { Node } from '../../domain/inventory/model.ts';
import type { NodeChanges } from '../../domain/inventory/ports.ts';
import { holdInspectedCabling } from './cabling.ts';
import type { InspectionEnv } from './env.ts';

/** Most ports a node may have that inspection reads back. */
const MAX_PORTS = 1000;

/**
 * Process an inventory for `node`: write the ports and plugin data.
 * @returns the node changes (properties, traits, resource class) for the final transition
 * @throws Error when the writes fail (the caller fails the inspection)
 */
export async function processInventory(
  ins: InspectionEnv,
  node: Node,
  inventory: JsonObject,
  pluginData: JsonObject,
  now: number,
): Promise<NodeChanges> {
  const facts = inspectionFacts(inventory, pluginData);
  const ports = await ins.ports.list({ filters: { nodeId: node.id }, limit: MAX_PORTS, marker: null, sortKey: 'id', sortDir: 'asc' });
  const vendor = (inventory.system_vendor ?? {}) as JsonObject;
  const outcome = planInspection(node, facts, ports, ins.rules, pluginData, newUuid, {
    disks: Array.isArray(inventory.disks) ? inventory.disks.length : 0,
    manufacturer: typeof vendor.manufacturer === 'string' ? vendor.manufacturer : null,
    product: typeof vendor.product_name === 'string' ? vendor.product_name : null,
  });
  const held = await holdInspectedCabling(ins.cabling, node, outcome.ports, new Map(ports.map((p) => [p.uuid, p.address])));
  let skipped: string[];
  try {
    skipped = await ins.store.applyPorts(node.id, ins.host, held.plan, now);
  } catch (err) {
    for (const h of held.holds.values()) await h.abort();
    throw err;
  }
  const notCreated = new Set(held.plan.creates.filter((c) => skipped.includes(c.address)).map((c) => c.uuid));
  for (const [uuid, h] of held.holds) await (notCreated.has(uuid) ? h.abort() : h.commit());
  await ins.store.putPluginData(
    node.id,
    {
      ...outcome.pluginData,
      ...(skipped.length > 0 ? { macs_on_other_nodes: skipped } : {}),
      ...(held.refused.length > 0 ? { local_link_connection_refused: held.refused.map((r) => ({ ...r })) } : {}),
    },
    now,
  );
  return outcome.nodeChanges;
}
