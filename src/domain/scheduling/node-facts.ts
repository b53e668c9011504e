/**
 * The scheduler's view of a node ({@link SchedNode}) from the node's Ironic fields.
 *
 * Ironic stores `properties` as given, so sizes may be numbers or numeric strings
 * (`"memory_mb": "16384"`); anything else counts as unknown. `properties.capabilities` is
 * Ironic's `"key:value,key2:value2"` string (an object is accepted too), e.g.
 * `"boot_mode:uefi,cpu_vt:true"` (Nova's ComputeCapabilitiesFilter).
 */
import type { NodeField, NodeSlice } from '../inventory/model.ts';
import type { SchedNode } from './model.ts';
import { fnv1a } from './weighers.ts';

/** The node fields {@link schedNodeOf} reads (besides uuid, owner and lessee). */
export const SCHED_FIELDS: readonly NodeField[] = Object.freeze([
  'name',
  'resource_class',
  'traits',
  'provision_state',
  'maintenance',
  'power_state',
  'instance_uuid',
  'properties',
]);

/** A non-negative finite number from a number or a numeric string, else null. */
export function sizeOf(v: unknown): number | null {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
  return Number.isFinite(n) && n >= 0 ? n : null;
}

/**
 * Parse `properties.capabilities`: a `"k:v,k2:v2"` string (entries without `:` are ignored; the
 * first `:` splits key and value) or an object of scalar values.
 * @returns a map of strings (empty when absent or malformed)
 */
export function parseCapabilities(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof v === 'string') {
    for (const part of v.split(',')) {
      const i = part.indexOf(':');
      if (i <= 0) continue;
      const key = part.slice(0, i).trim();
      if (key !== '') out[key] = part.slice(i + 1).trim();
    }
  } else if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
    for (const [k, val] of Object.entries(v as Record<string, unknown>)) {
      if (typeof val === 'string' || typeof val === 'number' || typeof val === 'boolean') out[k] = String(val);
    }
  }
  return out;
}

/** The scheduler's view of a node loaded with at least {@link SCHED_FIELDS}. */
export function schedNodeOf(n: NodeSlice): SchedNode {
  const p = (n.properties ?? {}) as Record<string, unknown>;
  return {
    uuid: n.uuid,
    version: n.version,
    hash: fnv1a(n.uuid),
    name: n.name ?? null,
    owner: n.owner,
    lessee: n.lessee,
    resourceClass: n.resource_class ?? null,
    traits: new Set(n.traits ?? []),
    provisionState: n.provision_state ?? 'enroll',
    maintenance: n.maintenance ?? false,
    powerState: n.power_state ?? null,
    instanceUuid: n.instance_uuid ?? null,
    cpus: sizeOf(p.cpus),
    memoryMb: sizeOf(p.memory_mb),
    localGb: sizeOf(p.local_gb),
    cpuArch: typeof p.cpu_arch === 'string' && p.cpu_arch !== '' ? p.cpu_arch : null,
    capabilities: parseCapabilities(p.capabilities),
  };
}
