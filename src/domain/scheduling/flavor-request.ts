/**
 * What a flavor asks of a bare-metal node, from its sizes and extra specs — Nova's conventions
 * for Ironic flavors (`nova/virt/ironic/driver.py` in https://opendev.org/openstack/nova) plus
 * esi's matching rules:
 *
 * | extra spec                         | meaning |
 * |------------------------------------|---------|
 * | `resources:CUSTOM_<CLASS>=1`        | the node's resource class, normalised as Nova's ironic driver reports it (`baremetal-gold` → `CUSTOM_BAREMETAL_GOLD`); a node is one whole unit, so the amount must be 1; at most one such key. Without one, nodes of any class qualify |
 * | `resources:VCPU=0`, `resources:MEMORY_MB=0`, `resources:DISK_GB=0` | Nova's way to say the flavor's vcpus/ram/disk are not scheduled on: esi then ignores that size unless an `esi:match:` key says otherwise. Only 0 is accepted |
 * | `trait:<TRAIT>=required` / `=forbidden` | the node must have / must not have the trait |
 * | `capabilities:<key>=<spec>`          | matched against `properties.capabilities` with Nova's operators (`./capabilities.ts`); plain values are also passed to the deploy as `instance_info.capabilities` (e.g. `boot_mode`) |
 * | `capabilities:cpu_arch=<arch>`, `esi:cpu_arch=<arch>` | `properties.cpu_arch` must equal it |
 * | `esi:match:cpus` / `esi:match:memory_mb` / `esi:match:local_gb` = `exact`, `min` or `ignore` | how the flavor's vcpus / ram (MiB) / disk (GiB) are matched against the node's `cpus` / `memory_mb` / `local_gb` |
 *
 * Default matching of a size: `min` (the node has at least the amount; the weighers then prefer
 * the node with the least surplus, so an exact match wins whenever one exists), `ignore` when
 * the matching `resources:<STANDARD>=0` is set; a size of 0 is never a requirement. Other
 * namespaces (`hw:`, `quota:`, …) are accepted and ignored, as Nova before 2.86.
 */
import { InvalidInputError } from '../errors.ts';
import { checkTrait } from '../inventory/validation.ts';
import { checkSpec } from './capabilities.ts';
import type { CapabilityWant, MatchMode, ResourceClassWant, SizeKey, SizeWant } from './model.ts';

/** The parts of a placement request that come from a flavor. */
export interface FlavorPlacement {
  readonly resourceClass: ResourceClassWant | null;
  readonly requiredTraits: readonly string[];
  readonly forbiddenTraits: readonly string[];
  readonly sizes: Readonly<Partial<Record<SizeKey, SizeWant>>>;
  readonly cpuArch: string | null;
  readonly capabilities: readonly CapabilityWant[];
  /** Plain-valued `capabilities:` specs, for `instance_info.capabilities` (Nova's deploy patch). */
  readonly instanceCapabilities: Readonly<Record<string, string>>;
}

/** The sizes of a flavor (Nova: vcpus, ram in MiB, disk in GiB). */
export interface FlavorSizes {
  readonly vcpus: number;
  readonly ram: number;
  readonly disk: number;
  readonly extra_specs: Readonly<Record<string, string>>;
}

/** Node size key ← the flavor field and the standard placement resource class of each. */
const SIZES: ReadonlyArray<{ key: SizeKey; flavor: 'vcpus' | 'ram' | 'disk'; standard: string }> = [
  { key: 'cpus', flavor: 'vcpus', standard: 'VCPU' },
  { key: 'memory_mb', flavor: 'ram', standard: 'MEMORY_MB' },
  { key: 'local_gb', flavor: 'disk', standard: 'DISK_GB' },
];
const STANDARD = new Set(SIZES.map((s) => s.standard));
const MODES = new Set<MatchMode>(['exact', 'min', 'ignore']);
const CUSTOM_RC = /^CUSTOM_[A-Z0-9_]+$/;
const ARCH = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * Check one extra spec the way esi reads it (unknown namespaces pass).
 * @throws InvalidInputError naming the key and what is wrong
 */
export function checkExtraSpec(key: string, value: string): void {
  if (key.startsWith('resources:')) {
    const rc = key.slice('resources:'.length);
    if (STANDARD.has(rc)) {
      if (value.trim() !== '0')
        throw new InvalidInputError(
          `Invalid extra spec ${key}=${value}: esi matches vcpus, ram and disk through the flavor's sizes; ${key} may only be 0.`,
        );
      return;
    }
    if (!CUSTOM_RC.test(rc))
      throw new InvalidInputError(
        `Invalid extra spec ${key}: esi schedules bare-metal nodes by resources:CUSTOM_<RESOURCE_CLASS> (and VCPU, MEMORY_MB, DISK_GB set to 0).`,
      );
    if (value.trim() !== '1')
      throw new InvalidInputError(
        `Invalid extra spec ${key}=${value}: a bare-metal node is one whole unit of its resource class; the amount must be 1.`,
      );
    return;
  }
  if (key.startsWith('trait:')) {
    checkTrait(key.slice('trait:'.length));
    if (value !== 'required' && value !== 'forbidden')
      throw new InvalidInputError(`Invalid extra spec ${key}=${value}: the value must be "required" or "forbidden".`);
    return;
  }
  if (key.startsWith('capabilities:')) {
    const cap = key.slice('capabilities:'.length);
    if (cap === '') throw new InvalidInputError(`Invalid extra spec ${key}: a capability name is needed.`);
    if (cap === 'cpu_arch' && !ARCH.test(value))
      throw new InvalidInputError(`Invalid extra spec ${key}=${value}: not a CPU architecture name.`);
    checkSpec(key, value);
    return;
  }
  if (key === 'esi:cpu_arch') {
    if (!ARCH.test(value)) throw new InvalidInputError(`Invalid extra spec ${key}=${value}: not a CPU architecture name.`);
    return;
  }
  if (key.startsWith('esi:match:')) {
    const size = key.slice('esi:match:'.length);
    if (!SIZES.some((s) => s.key === size))
      throw new InvalidInputError(`Invalid extra spec ${key}: esi:match: applies to cpus, memory_mb and local_gb.`);
    if (!MODES.has(value as MatchMode))
      throw new InvalidInputError(`Invalid extra spec ${key}=${value}: the value must be exact, min or ignore.`);
    return;
  }
  if (key.startsWith('esi:'))
    throw new InvalidInputError(`Unknown esi extra spec ${key}: esi reads esi:cpu_arch and esi:match:<cpus|memory_mb|local_gb>.`);
}

/**
 * The placement parts of a flavor.
 * @throws InvalidInputError for an extra spec esi cannot apply (see {@link checkExtraSpec}), or
 *   two `resources:CUSTOM_…` keys
 */
export function flavorPlacement(flavor: FlavorSizes): FlavorPlacement {
  const specs = flavor.extra_specs;
  let resourceClass: ResourceClassWant | null = null;
  const required: string[] = [];
  const forbidden: string[] = [];
  const capabilities: CapabilityWant[] = [];
  const instanceCapabilities: Record<string, string> = {};
  const zeroed = new Set<string>();
  let cpuArch: string | null = null;
  for (const [key, value] of Object.entries(specs)) {
    checkExtraSpec(key, value);
    if (key.startsWith('resources:')) {
      const rc = key.slice('resources:'.length);
      if (STANDARD.has(rc)) zeroed.add(rc);
      else {
        if (resourceClass !== null)
          throw new InvalidInputError(`The flavor names two bare-metal resource classes (${resourceClass.name}, ${rc}); a node has one.`);
        resourceClass = { name: rc, match: 'custom' };
      }
    } else if (key.startsWith('trait:')) {
      (value === 'required' ? required : forbidden).push(key.slice('trait:'.length));
    } else if (key === 'capabilities:cpu_arch' || key === 'esi:cpu_arch') {
      if (cpuArch !== null && cpuArch !== value)
        throw new InvalidInputError(`The flavor asks for two CPU architectures (${cpuArch}, ${value}).`);
      cpuArch = value;
    } else if (key.startsWith('capabilities:')) {
      const cap = key.slice('capabilities:'.length);
      capabilities.push({ key: cap, spec: value });
      if (!/\s/.test(value.trim()) && !value.trim().startsWith('<')) instanceCapabilities[cap] = value.trim();
    }
  }
  const sizes: Partial<Record<SizeKey, SizeWant>> = {};
  for (const s of SIZES) {
    const explicit = specs[`esi:match:${s.key}`] as MatchMode | undefined;
    const mode: MatchMode = explicit ?? (zeroed.has(s.standard) ? 'ignore' : 'min');
    const value = flavor[s.flavor];
    if (mode !== 'ignore' && value > 0) sizes[s.key] = { value, mode };
  }
  return {
    resourceClass,
    requiredTraits: required.sort(),
    forbiddenTraits: forbidden.sort(),
    sizes,
    cpuArch,
    capabilities: capabilities.sort((a, b) => a.key.localeCompare(b.key)),
    instanceCapabilities,
  };
}
