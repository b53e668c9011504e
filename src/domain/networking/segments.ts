/**
 * Network segments: which physical networks exist, which VLANs project networks may take, and
 * how a network's provider attributes are checked (Neutron ML2's `vlan` and `flat` type
 * drivers).
 *
 * Configuration follows ML2's options:
 * - `network_vlan_ranges` (`ESI_NETWORK_VLAN_RANGES`): `physnet[:min:max]` entries, comma
 *   separated. Every named physical network accepts VLAN provider networks; the ranges form
 *   the pool project networks take their VLAN from (`physnet1:100:199,physnet2`);
 * - `flat_networks` (`ESI_NETWORK_FLAT_NETWORKS`): physical networks that accept flat
 *   networks, or `*` for any (ML2's default).
 *
 * Allocation: a project network gets the lowest free VLAN of the pool, physical networks in
 * configuration order (ML2 picks a random free one; lowest-first is deterministic). A VLAN is
 * free when no network uses it on that physical network; deleting the network releases it.
 * Admins may create VLAN networks with any id 1…4094 on a configured physical network,
 * inside the pool or not (ML2's `reserve_provider_segment`), but never one in use.
 */
import { InvalidInputError } from '../errors.ts';
import { VLAN_MAX, VLAN_MIN, type NetworkType } from './model.ts';

/** A configured VLAN range of a physical network (inclusive). */
export interface VlanRange {
  readonly physnet: string;
  readonly min: number;
  readonly max: number;
}

/** Segment settings (from `config.network`). */
export interface SegmentSettings {
  /** Physical networks that accept VLAN networks, in configuration order. */
  readonly vlanPhysnets: readonly string[];
  /** The pool of project-network VLANs. */
  readonly vlanRanges: readonly VlanRange[];
  /** Physical networks that accept flat networks; `*` for any. */
  readonly flatNetworks: readonly string[] | '*';
}

const PHYSNET_RE = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * Parse ML2's `network_vlan_ranges` syntax.
 * @param text e.g. `physnet1:100:199,physnet2` (blank: no VLAN physical networks)
 * @returns the physical networks (each once, in order) and the ranges
 * @throws InvalidInputError naming the bad entry (bad name, VLAN outside 1…4094, min > max)
 */
export function parseVlanRanges(text: string): { physnets: string[]; ranges: VlanRange[] } {
  const physnets: string[] = [];
  const ranges: VlanRange[] = [];
  for (const raw of text.split(',')) {
    const entry = raw.trim();
    if (entry === '') continue;
    const parts = entry.split(':');
    const physnet = parts[0]!;
    if (!PHYSNET_RE.test(physnet)) throw new InvalidInputError(`Invalid physical network name in VLAN range "${entry}".`);
    if (!physnets.includes(physnet)) physnets.push(physnet);
    if (parts.length === 1) continue;
    if (parts.length !== 3 || !/^\d+$/.test(parts[1]!) || !/^\d+$/.test(parts[2]!)) {
      throw new InvalidInputError(`Invalid VLAN range "${entry}": expected physnet:min:max.`);
    }
    const min = Number(parts[1]);
    const max = Number(parts[2]);
    if (min < VLAN_MIN || max > VLAN_MAX || min > max) {
      throw new InvalidInputError(`Invalid VLAN range "${entry}": VLANs must be ${VLAN_MIN}…${VLAN_MAX} with min ≤ max.`);
    }
    ranges.push({ physnet, min, max });
  }
  return { physnets, ranges };
}

/**
 * Parse ML2's `flat_networks`: `*` (any physical network), or comma-separated names (blank: none).
 * @throws InvalidInputError for a bad name
 */
export function parseFlatNetworks(text: string): readonly string[] | '*' {
  if (text.trim() === '*') return '*';
  const out: string[] = [];
  for (const raw of text.split(',')) {
    const name = raw.trim();
    if (name === '') continue;
    if (!PHYSNET_RE.test(name)) throw new InvalidInputError(`Invalid physical network name "${name}" in flat networks.`);
    out.push(name);
  }
  return out;
}

/** Provider attributes as requested (any of them may be absent). */
export interface ProviderRequest {
  readonly networkType?: unknown;
  readonly physicalNetwork?: unknown;
  readonly segmentationId?: unknown;
}

/** A checked provider segment; `segmentationId` null for flat, or for VLAN "take one from the pool". */
export interface CheckedSegment {
  readonly networkType: NetworkType;
  readonly physicalNetwork: string | null;
  readonly segmentationId: number | null;
}

/**
 * Check provider attributes as ML2 does (`validate_provider_segment` of the vlan/flat drivers).
 * @throws InvalidInputError: unknown network type, a segmentation id for flat, a VLAN outside
 *   1…4094, a physical network that is not configured for the type, a VLAN id without a
 *   physical network
 */
export function checkProviderSegment(settings: SegmentSettings, req: ProviderRequest): CheckedSegment {
  const type = req.networkType ?? 'vlan';
  if (type !== 'vlan' && type !== 'flat') {
    throw new InvalidInputError(`Invalid input for operation: network_type value '${String(type)}' not supported (vlan, flat).`);
  }
  const physnet = req.physicalNetwork ?? null;
  if (physnet !== null && (typeof physnet !== 'string' || physnet === '')) {
    throw new InvalidInputError('Invalid input for operation: provider:physical_network must be a non-empty string.');
  }
  const seg = req.segmentationId ?? null;
  if (type === 'flat') {
    if (seg !== null) throw new InvalidInputError('Invalid input for operation: segmentation_id prohibited for flat provider network.');
    if (physnet === null) throw new InvalidInputError('Invalid input for operation: physical_network required for flat provider network.');
    if (settings.flatNetworks !== '*' && !settings.flatNetworks.includes(physnet)) {
      throw new InvalidInputError(`Invalid input for operation: physical_network '${physnet}' unknown for flat provider network.`);
    }
    return { networkType: 'flat', physicalNetwork: physnet, segmentationId: null };
  }
  let vlan: number | null = null;
  if (seg !== null) {
    const n = typeof seg === 'string' && /^\d+$/.test(seg) ? Number(seg) : seg;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < VLAN_MIN || n > VLAN_MAX) {
      throw new InvalidInputError(`Invalid input for operation: segmentation_id out of range (${VLAN_MIN} through ${VLAN_MAX}).`);
    }
    vlan = n;
    if (physnet === null)
      throw new InvalidInputError(
        'Invalid input for operation: physical_network required for VLAN provider network with a segmentation_id.',
      );
  }
  if (physnet !== null && !settings.vlanPhysnets.includes(physnet)) {
    throw new InvalidInputError(`Invalid input for operation: physical_network '${physnet}' unknown for VLAN provider network.`);
  }
  return { networkType: 'vlan', physicalNetwork: physnet, segmentationId: vlan };
}

/**
 * The lowest free VLAN of the pool, physical networks in configuration order.
 * @param used VLANs in use per physical network
 * @param physnet restrict to this physical network (a provider request without an id)
 * @returns the choice, or null when the pool is exhausted
 */
export function pickPoolVlan(
  settings: SegmentSettings,
  used: ReadonlyMap<string, ReadonlySet<number>>,
  physnet: string | null,
): { physnet: string; vlan: number } | null {
  for (const r of settings.vlanRanges) {
    if (physnet !== null && r.physnet !== physnet) continue;
    const taken = used.get(r.physnet) ?? new Set<number>();
    for (let v = r.min; v <= r.max; v++) if (!taken.has(v)) return { physnet: r.physnet, vlan: v };
  }
  return null;
}

/** True when `vlan` on `physnet` belongs to the project-network pool. */
export function inPool(settings: SegmentSettings, physnet: string, vlan: number): boolean {
  return settings.vlanRanges.some((r) => r.physnet === physnet && vlan >= r.min && vlan <= r.max);
}
