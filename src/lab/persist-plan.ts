/**
 * Reconciles the nodes a lab is asked to run with the ones its data directory remembers
 * (./persist.ts), so that a restart never changes an enrolled node behind its operator's back:
 *
 * - node i keeps its UUID and MACs; a node beyond the persisted ones is new (seeded identities);
 * - a node without a requested model keeps its persisted model (restarting without
 *   `--models`/`--lab-models` changes nothing); a requested model — the spec names the first
 *   nodes, the nodes after it get the default model, as without persistence — or a different
 *   kind (simulated ↔ QEMU, as when `--nodes`/`--qemu` move the boundary) or QEMU settings
 *   (memory, vCPUs, disk, firmware) are a *change*;
 * - changes are refused ({@link LabModelChangeError}, listing each node, old → new) unless
 *   `force`, which applies them and returns them to be printed;
 * - persisted nodes past the count asked for stay in the file and are not run.
 */
import { SWITCH_PORTS, type LabLldp, type LabModel } from './hardware.ts';
import type { LabStateFile, PersistedLabNode } from './persist.ts';
import type { SystemBacking } from './system.ts';

/** One node whose model or kind differs from what the data directory remembers. */
export interface LabModelChange {
  /** `node-<i>`. */
  readonly id: string;
  /** The persisted model, described (see {@link describeModel}). */
  readonly from: string;
  /** The new one. */
  readonly to: string;
}

/** A restart that would change persisted nodes' models, refused because `force` was not given. */
export class LabModelChangeError extends Error {
  constructor(
    readonly changes: readonly LabModelChange[],
    readonly stateFile: string,
  ) {
    super(
      `refusing to change the hardware of ${changes.length} lab node(s) kept in ${stateFile} ` +
        `(an enrolled node would no longer match its inventory):\n${formatModelChanges(changes)}\n` +
        'start with --force (esi server: --lab-force) to apply these changes, or without the model spec to keep the nodes as they are',
    );
    this.name = 'LabModelChangeError';
  }
}

/** What a lab asks for, for {@link planLabNodes}. */
export interface LabNodeRequest {
  /** Every node to run (simulated + QEMU). */
  readonly total: number;
  /** How many of them, the last ones, are QEMU-backed. */
  readonly qemu: number;
  /** Models requested for the first simulated nodes, or undefined when no spec was given. */
  readonly requested: ReadonlyArray<LabModel | undefined> | undefined;
  /** The default model of simulated node `index` (from the lab's `hardware`). */
  readonly defaultModel: (index: number) => LabModel;
  /** The model of the QEMU nodes (from their settings), when there are any. */
  readonly qemuModel: LabModel | undefined;
  /** Apply changes instead of refusing them. */
  readonly force: boolean;
}

/** The plan: the model and kept identities of each node to run, and the changes `force` allowed. */
export interface LabNodePlan {
  /** Model of node i, for i < total. */
  readonly models: readonly LabModel[];
  /** Kept identities of node i (undefined for a new node), then those of kept nodes past `total` (reserved). */
  readonly identities: ReadonlyArray<
    { readonly uuid: string; readonly macs: readonly string[]; readonly switchPorts?: readonly number[] } | undefined
  >;
  /** Changed nodes (empty unless `force`). */
  readonly changes: readonly LabModelChange[];
}

/**
 * Plans the nodes of a lab started on a data directory holding `persisted` (null: a first start).
 * @throws LabModelChangeError when a persisted node's model or kind would change and `force` is false
 */
export function planLabNodes(persisted: LabStateFile | null, request: LabNodeRequest, stateFile: string): LabNodePlan {
  const models: LabModel[] = [];
  const identities: Array<{ uuid: string; macs: readonly string[]; switchPorts?: readonly number[] } | undefined> = [];
  const changes: LabModelChange[] = [];
  for (let i = 0; i < request.total; i++) {
    const backing: SystemBacking = i >= request.total - request.qemu ? 'qemu' : 'simulated';
    const old: PersistedLabNode | undefined = persisted?.nodes[i];
    let model: LabModel;
    if (backing === 'qemu') model = request.qemuModel!;
    else if (request.requested !== undefined) model = request.requested[i] ?? request.defaultModel(i);
    else if (old !== undefined && old.backing === 'simulated') model = old.model;
    else model = request.defaultModel(i);
    models.push(model);
    identities.push(
      old === undefined ? undefined : { uuid: old.uuid, macs: old.macs, ...(old.switchPorts ? { switchPorts: old.switchPorts } : {}) },
    );
    if (old !== undefined && (old.backing !== backing || canonical(old.model) !== canonical(model))) {
      const from = describeModel(old.model, old.backing);
      let to = describeModel(model, backing);
      if (to === from) to += ` with other ${differingKeys(old.model, model).join(', ')}`;
      changes.push({ id: `node-${i}`, from, to });
    }
  }
  // Kept nodes not run now still hold their MACs and switch ports: new ones must not take them.
  for (const old of persisted?.nodes.slice(request.total) ?? [])
    identities.push({ uuid: old.uuid, macs: old.macs, ...(old.switchPorts ? { switchPorts: old.switchPorts } : {}) });
  if (changes.length > 0 && !request.force) throw new LabModelChangeError(changes, stateFile);
  return { models, identities, changes };
}

/**
 * A model and a node's kind in one line, e.g. `gpu (simulated, 2×40 cores, 1024 GiB RAM, 2 disks 1920 GB, 8 GPUs, 4 NICs, uefi)`
 * (disk sizes in decimal GB, as vendors label disks).
 */
export function describeModel(m: LabModel, backing: SystemBacking): string {
  const disks = m.disks.reduce((n, d) => n + d.count, 0);
  const diskGb = Math.round(m.disks.reduce((n, d) => n + d.count * d.sizeBytes, 0) / 1e9);
  const gpus = m.gpus.reduce((n, g) => n + g.count, 0);
  const cores = m.cpu.sockets > 1 ? `${m.cpu.sockets}×${m.cpu.coresPerSocket}` : String(m.cpu.coresPerSocket);
  const parts = [
    backing,
    `${cores} cores`,
    `${+(m.memoryMiB / 1024).toFixed(2)} GiB RAM`,
    `${disks} disk${disks === 1 ? '' : 's'} ${diskGb} GB`,
    ...(gpus > 0 ? [`${gpus} GPU${gpus === 1 ? '' : 's'}`] : []),
    `${m.nics.length} NIC${m.nics.length === 1 ? '' : 's'}`,
    m.bootMode,
  ];
  return `${m.name} (${parts.join(', ')})`;
}

/** The changes as lines `  node-0: default (…) → gpu (…)`. */
export function formatModelChanges(changes: readonly LabModelChange[]): string {
  return changes.map((c) => `  ${c.id}: ${c.from} → ${c.to}`).join('\n');
}

/** The top-level fields of two models that differ (e.g. `cpu`, `disks`). */
function differingKeys(a: LabModel, b: LabModel): string[] {
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  return keys.filter(
    (k) => canonical((a as unknown as Record<string, unknown>)[k]) !== canonical((b as unknown as Record<string, unknown>)[k]),
  );
}

/** JSON with object keys sorted and undefined members left out, so equal hardware compares equal. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v !== null && typeof v === 'object')
    return `{${Object.keys(v)
      .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v);
}

/** A running node as {@link PersistedLabNode} needs it (from the lab's state). */
export interface RunningLabNode {
  readonly id: string;
  readonly backing: SystemBacking;
  readonly uuid: string;
  /** Its MAC (its first NIC's). */
  readonly mac: string;
  readonly machine: { readonly nics: ReadonlyArray<{ readonly mac: string; readonly lldp: LabLldp | null }> };
}

/**
 * The state file after a lab started: its seed, the running nodes (with the models they run)
 * followed by the persisted nodes it did not run, its Redfish URL and process id.
 */
export function stateAfterStart(
  current: LabStateFile,
  started: { seed: string; url: string; systems: readonly RunningLabNode[]; models: readonly LabModel[] },
): LabStateFile {
  const running: PersistedLabNode[] = started.systems.map((s, i) => ({
    id: s.id,
    backing: s.backing,
    uuid: s.uuid,
    macs: [s.mac, ...s.machine.nics.slice(1).map((n) => n.mac)],
    switchPorts: s.machine.nics.flatMap((n) => (n.lldp === null ? [] : [switchPortNumber(n.lldp)])),
    model: started.models[i]!,
  }));
  return {
    ...current,
    seed: started.seed,
    nodes: [...running, ...current.nodes.slice(running.length)],
    redfish: { url: started.url, pid: process.pid, running: running.map((n) => n.id) },
  };
}

/** The lab-wide switch port number (0-based, as `SwitchCabling` of ./hardware.ts) of an LLDP neighbour ./hardware.ts made (`esi-lab-sw<n>`, `Ethernet<p>`). */
export function switchPortNumber(lldp: LabLldp): number {
  const sw = Number(/^esi-lab-sw(\d+)$/.exec(lldp.systemName)?.[1]);
  const port = Number(/^Ethernet(\d+)$/.exec(lldp.portId)?.[1]);
  return sw * SWITCH_PORTS + port - 1;
}
