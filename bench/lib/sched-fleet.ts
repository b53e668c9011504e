/**
 * A mixed bare-metal fleet and a stream of flavor requests for the placement benchmark,
 * generated deterministically (mulberry32 seeds) so that every run measures the same thing.
 *
 * Fleet (per 100 nodes, on average): four resource classes and eleven machine models —
 * `compute` 60 (four sizes, 16–64 cores, 64–256 GiB), `storage` 20 (two sizes, 8–16 TB disk),
 * `gpu` 10 (trait CUSTOM_GPU), `highmem` 10 (768 GiB and 1.5 TiB); traits CUSTOM_NVME (40 %),
 * CUSTOM_25G (30 %), HW_CPU_X86_AVX2 (90 %); `capabilities` boot_mode uefi (80 %) or bios; states
 * 70 % available, 20 % active with an instance, 5 % cleaning, 3 % in maintenance, 2 % with an
 * unknown power state; owned by 20 projects, 30 % of the nodes leased to another one.
 *
 * Requests: one flavor per model (sizes equal to the model: an exact match exists while such a
 * node is free), plus "odd" flavors between models (no exact match: the weighers pick the least
 * surplus), some requiring CUSTOM_NVME or forbidding CUSTOM_GPU.
 */
import type { PlacementRequest, SchedNode, SizeKey, SizeWant } from '../../src/domain/scheduling/model.ts';
import { fnv1a } from '../../src/domain/scheduling/weighers.ts';
import { rng } from './random.ts';

/** A machine model. */
export interface Model {
  readonly rc: string;
  readonly cpus: number;
  readonly memoryMb: number;
  readonly localGb: number;
  /** Share of the fleet, percent. */
  readonly share: number;
  readonly traits?: readonly string[];
}

/** The models of the fleet. */
export const MODELS: readonly Model[] = [
  { rc: 'compute', cpus: 16, memoryMb: 65536, localGb: 480, share: 20 },
  { rc: 'compute', cpus: 32, memoryMb: 131072, localGb: 960, share: 20 },
  { rc: 'compute', cpus: 48, memoryMb: 196608, localGb: 1920, share: 12 },
  { rc: 'compute', cpus: 64, memoryMb: 262144, localGb: 1920, share: 8 },
  { rc: 'storage', cpus: 16, memoryMb: 65536, localGb: 8000, share: 12 },
  { rc: 'storage', cpus: 32, memoryMb: 131072, localGb: 16000, share: 8 },
  { rc: 'gpu', cpus: 32, memoryMb: 262144, localGb: 1920, share: 6, traits: ['CUSTOM_GPU'] },
  { rc: 'gpu', cpus: 64, memoryMb: 524288, localGb: 3840, share: 4, traits: ['CUSTOM_GPU'] },
  { rc: 'highmem', cpus: 48, memoryMb: 786432, localGb: 960, share: 6 },
  { rc: 'highmem', cpus: 64, memoryMb: 1572864, localGb: 1920, share: 4 },
];

/** One node of the fleet: its scheduler view and its model. */
export interface FleetNode {
  readonly node: SchedNode;
  readonly model: number;
}

/** Projects owning the fleet. */
export const PROJECTS = 20;

/**
 * Generate a fleet.
 * @param count number of nodes
 * @param seed PRNG seed
 */
export function fleet(count: number, seed = 7): FleetNode[] {
  const r = rng(seed);
  const cumulative: number[] = [];
  let acc = 0;
  for (const m of MODELS) cumulative.push((acc += m.share));
  const out: FleetNode[] = [];
  for (let i = 0; i < count; i++) {
    const pick = r() * acc;
    const model = cumulative.findIndex((c) => pick < c);
    const m = MODELS[model]!;
    const traits = new Set(m.traits ?? []);
    if (r() < 0.4) traits.add('CUSTOM_NVME');
    if (r() < 0.3) traits.add('CUSTOM_25G');
    if (r() < 0.9) traits.add('HW_CPU_X86_AVX2');
    const s = r();
    const state = s < 0.7 ? 'available' : s < 0.9 ? 'active' : s < 0.95 ? 'cleaning' : 'available';
    const owner = `p${Math.floor(r() * PROJECTS)}`;
    const lessee = r() < 0.3 ? `p${Math.floor(r() * PROJECTS)}` : null;
    const hex = i.toString(16).padStart(12, '0');
    out.push({
      model,
      node: {
        uuid: `00000000-0000-4000-8000-${hex}`,
        version: 1,
        hash: fnv1a(`00000000-0000-4000-8000-${hex}`),
        name: `n${i}`,
        owner,
        lessee: lessee === owner ? null : lessee,
        resourceClass: m.rc,
        traits,
        provisionState: state,
        maintenance: s >= 0.95 && s < 0.98,
        powerState: s >= 0.98 ? null : 'power off',
        instanceUuid: state === 'active' ? `11111111-0000-4000-8000-${hex}` : null,
        cpus: m.cpus,
        memoryMb: m.memoryMb,
        localGb: m.localGb,
        cpuArch: 'x86_64',
        capabilities: { boot_mode: r() < 0.8 ? 'uefi' : 'bios' },
      },
    });
  }
  return out;
}

/** A flavor of the request stream: what it wants, and the model it equals (null for odd ones). */
export interface Flavor {
  readonly name: string;
  readonly rc: string;
  readonly sizes: Readonly<Record<SizeKey, number>>;
  readonly required: readonly string[];
  readonly forbidden: readonly string[];
  /** Index of the model it matches exactly, or null. */
  readonly model: number | null;
  /** Relative frequency. */
  readonly weight: number;
}

/** The flavors: one per model, and odd ones between models. */
export const FLAVORS: readonly Flavor[] = [
  ...MODELS.map((m, i) => ({
    name: `${m.rc}-${m.cpus}c`,
    rc: m.rc,
    sizes: { cpus: m.cpus, memory_mb: m.memoryMb, local_gb: m.localGb },
    required: m.traits ?? [],
    forbidden: m.rc === 'gpu' ? [] : ['CUSTOM_GPU'],
    model: i,
    weight: m.share,
  })),
  {
    name: 'compute-24c',
    rc: 'compute',
    sizes: { cpus: 24, memory_mb: 98304, local_gb: 600 },
    required: [],
    forbidden: [],
    model: null,
    weight: 6,
  },
  {
    name: 'compute-8c-nvme',
    rc: 'compute',
    sizes: { cpus: 8, memory_mb: 32768, local_gb: 240 },
    required: ['CUSTOM_NVME'],
    forbidden: [],
    model: null,
    weight: 6,
  },
  {
    name: 'storage-10tb',
    rc: 'storage',
    sizes: { cpus: 16, memory_mb: 65536, local_gb: 10000 },
    required: [],
    forbidden: [],
    model: null,
    weight: 3,
  },
];

/** Index of a flavor drawn from the weights. */
export function drawFlavor(r: () => number): number {
  const total = FLAVORS.reduce((s, f) => s + f.weight, 0);
  let x = r() * total;
  for (let i = 0; i < FLAVORS.length; i++) {
    x -= FLAVORS[i]!.weight;
    if (x < 0) return i;
  }
  return FLAVORS.length - 1;
}

/**
 * The placement request of a flavor (at-least sizes, the esi default; the flavor's resource
 * class as an exact class for the allocation path).
 * @param tenancy `any` (an admin's allocation: all 10,000 nodes) or a project
 */
export function requestOf(f: Flavor, tenancy: PlacementRequest['tenancy'], seed: string): PlacementRequest {
  const sizes: Partial<Record<SizeKey, SizeWant>> = {};
  for (const k of ['cpus', 'memory_mb', 'local_gb'] as const) sizes[k] = { value: f.sizes[k], mode: 'min' };
  return {
    resourceClass: { name: f.rc, match: 'exact' },
    requiredTraits: f.required,
    forbiddenTraits: f.forbidden,
    sizes,
    cpuArch: null,
    capabilities: [],
    candidates: null,
    tenancy,
    preferName: null,
    seed,
  };
}

/** True when a node's sizes equal what the flavor asks. */
export function isExact(n: SchedNode, f: Flavor): boolean {
  return n.cpus === f.sizes.cpus && n.memoryMb === f.sizes.memory_mb && n.localGb === f.sizes.local_gb;
}
