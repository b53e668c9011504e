/**
 * Processing of an inspection result (Ironic's inspection hooks, run by the conductor that
 * holds the node): from the {@link InspectionFacts} of an inventory, the node changes and the
 * port writes.
 *
 * - `properties`: `cpus`, `cpu_arch`, `memory_mb`, `local_gb` set (other keys kept), and
 *   `capabilities` gets `boot_mode:<bios|uefi>` when reported and not set yet (Ironic's redfish
 *   inspect does the same);
 * - ports: one per NIC with a MAC that has none yet (`pxe_enabled` for the boot NIC), as
 *   docs/inspection.md describes (Ironic's `[inspector] add_ports = all`); existing ports of the
 *   node get `pxe_enabled` from the boot NIC (`update_pxe_enabled`) and their
 *   `local_link_connection` from LLDP when LLDP saw a neighbour (the `local_link_connection` hook);
 * - the inspection rules (src/domain/inspection/rules.ts) then set traits, resource class and
 *   properties;
 * - `plugin_data`: the posted plugin data plus what processing derived (`macs`, `cpus`,
 *   `cpu_arch`, `memory_mb`, `local_gb`, `gpus`, `rules_applied`), as Ironic's sample shows.
 */
import type { JsonObject } from '../inventory/masking.ts';
import type { Node, Port } from '../inventory/model.ts';
import type { NodeChanges } from '../inventory/ports.ts';
import type { InspectionFacts } from './inventory.ts';
import type { InspectionPortPlan, InspectedPortCreate, InspectedPortUpdate } from './ports.ts';
import { applyInspectionRules, type InspectionRule } from './rules.ts';

/** What processing decided. */
export interface InspectionOutcome {
  readonly nodeChanges: NodeChanges;
  readonly ports: InspectionPortPlan;
  readonly pluginData: JsonObject;
}

/** Extra facts rules may read besides the properties (see rules.ts). */
export interface ExtraFacts {
  readonly disks?: number;
  readonly manufacturer?: string | null;
  readonly product?: string | null;
}

/**
 * Decide the outcome of an inspection (see the module documentation).
 * @param ports the node's current ports; `newUuid` makes port UUIDs
 */
export function planInspection(
  node: Pick<Node, 'properties' | 'traits' | 'resource_class'>,
  facts: InspectionFacts,
  ports: readonly Pick<Port, 'uuid' | 'address' | 'pxe_enabled' | 'local_link_connection'>[],
  rules: readonly InspectionRule[],
  pluginData: JsonObject,
  newUuid: () => string,
  extra: ExtraFacts = {},
): InspectionOutcome {
  const properties: JsonObject = { ...node.properties, ...facts.properties };
  if (facts.bootMode !== null) properties.capabilities = withCapability(node.properties.capabilities, 'boot_mode', facts.bootMode);
  const creates: InspectedPortCreate[] = [];
  const updates: InspectedPortUpdate[] = [];
  const anyPxe = facts.nics.some((n) => n.pxe);
  for (const nic of facts.nics) {
    const existing = ports.find((p) => p.address === nic.mac);
    const llc = Object.keys(nic.localLinkConnection).length > 0 ? nic.localLinkConnection : null;
    if (existing === undefined) {
      creates.push({ uuid: newUuid(), address: nic.mac, pxe_enabled: anyPxe ? nic.pxe : true, local_link_connection: llc ?? {} });
      continue;
    }
    const u: { uuid: string; pxe_enabled?: boolean; local_link_connection?: Record<string, string> } = { uuid: existing.uuid };
    if (anyPxe && existing.pxe_enabled !== nic.pxe) u.pxe_enabled = nic.pxe;
    if (llc !== null && JSON.stringify({ ...existing.local_link_connection, ...llc }) !== JSON.stringify(existing.local_link_connection))
      u.local_link_connection = { ...existing.local_link_connection, ...llc };
    if (Object.keys(u).length > 1) updates.push(u);
  }
  const subject = { traits: [...node.traits], resourceClass: node.resource_class, properties };
  const applied = applyInspectionRules(rules, subject, {
    gpus: facts.gpuCount,
    nics: facts.nics.length,
    disks: extra.disks ?? 0,
    ...(facts.bootMode !== null ? { boot_mode: facts.bootMode } : {}),
    ...(extra.manufacturer ? { manufacturer: extra.manufacturer } : {}),
    ...(extra.product ? { product: extra.product } : {}),
  });
  const nodeChanges: NodeChanges = {
    properties: subject.properties,
    ...(JSON.stringify(subject.traits) !== JSON.stringify(node.traits) ? { traits: subject.traits } : {}),
    ...(subject.resourceClass !== node.resource_class ? { resource_class: subject.resourceClass } : {}),
  };
  return {
    nodeChanges,
    ports: { creates, updates },
    pluginData: { ...pluginData, macs: facts.nics.map((n) => n.mac), ...facts.properties, gpus: facts.gpuCount, rules_applied: applied },
  };
}

/** `capabilities` ("k:v,k:v" string or object) with `key` set when absent (kept as a string). */
function withCapability(current: unknown, key: string, value: string): string {
  const pairs: Array<[string, string]> =
    typeof current === 'string' && current !== ''
      ? current.split(',').map((kv) => {
          const [k, ...v] = kv.split(':');
          return [k!.trim(), v.join(':').trim()];
        })
      : current !== null && typeof current === 'object'
        ? Object.entries(current as Record<string, unknown>).map(([k, v]) => [k, String(v)])
        : [];
  if (!pairs.some(([k]) => k === key)) pairs.push([key, value]);
  return pairs.map(([k, v]) => `${k}:${v}`).join(',');
}
