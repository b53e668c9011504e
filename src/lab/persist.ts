/**
 * The lab's memory across restarts: `<dataDir>/lab/lab-state.json`, which keeps what an
 * operator enrols and must not change under them — the seed, each node's id, system UUID, NIC
 * MACs, kind (simulated or QEMU) and full hardware model, each IPMI node's address and UDP port,
 * and where the last lab served its BMCs. A lab started on the same data directory reads it and
 * comes back with the same identities, ports and models (docs/lab.md "A lab that stays put").
 *
 * The file is written atomically (a temporary file in the same directory, then `rename`), so a
 * lab killed while writing leaves the old file or the new one, never half of one. Its format:
 * ```json
 * {"version": 1, "seed": "<hex>",
 *  "nodes": [{"id": "node-0", "backing": "simulated", "uuid": "…", "macs": ["52:54:00:…"], "switchPorts": [0],
 *             "model": {LabModel}}],
 *  "ipmi": [{"name": "ipmi-0", "host": "127.0.0.1", "port": 40123}], "ipmiRun": {"pid": 1234, "running": ["ipmi-0"]} | null,
 *  "redfish": {"url": "http://127.0.0.1:8586", "pid": 1234, "running": ["node-0"]} | null}
 * ```
 * How a wished-for node set is reconciled with this file is ./persist-plan.ts.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { LabModel } from './hardware.ts';
import type { SystemBacking } from './system.ts';

/** One Redfish node of the lab as it was last run (or configured). */
export interface PersistedLabNode {
  /** `node-<index>`. */
  readonly id: string;
  readonly backing: SystemBacking;
  readonly uuid: string;
  /** MACs of its NICs in order; the first is the node's MAC. Lower case. */
  readonly macs: readonly string[];
  /** Lab switch ports (0-based, lab-wide; switch ⌊n/48⌋, `Ethernet<n mod 48 + 1>`) of its cabled NICs, in order. */
  readonly switchPorts?: readonly number[];
  /** Its hardware model, in full (so an edited or deleted model file changes nothing). */
  readonly model: LabModel;
}

/** One IPMI (ipmi_sim) node of the lab. */
export interface PersistedIpmiNode {
  /** `ipmi-<index>`. */
  readonly name: string;
  readonly host: string;
  /** Its UDP port, the `ipmi_port` of its enrolled node's driver_info. */
  readonly port: number;
}

/** The lab's Redfish service as the last lab that started on this data directory served it. */
export interface PersistedRedfish {
  /** Base URL of the BMCs, e.g. `http://127.0.0.1:8586`. */
  readonly url: string;
  /** Process id of that lab while it runs; null once it closed cleanly. */
  readonly pid: number | null;
  /** Ids of the nodes it runs (the first N of `nodes`). */
  readonly running: readonly string[];
}

/** The content of the lab state file (see the module doc). */
export interface LabStateFile {
  readonly version: 1;
  /** Seed of the lab's derived identities (serials, WWNs, switch MACs). */
  readonly seed: string;
  readonly nodes: readonly PersistedLabNode[];
  readonly ipmi: readonly PersistedIpmiNode[];
  /** The lab that last ran the IPMI nodes: its process id (null once it closed) and the names it runs. */
  readonly ipmiRun: { readonly pid: number | null; readonly running: readonly string[] } | null;
  readonly redfish: PersistedRedfish | null;
}

/** Path of the lab state file of data directory `dataDir`. */
export function labStatePath(dataDir: string): string {
  return path.join(dataDir, 'lab', 'lab-state.json');
}

/** A new, empty state with a random seed. */
export function emptyLabState(): LabStateFile {
  return { version: 1, seed: crypto.randomBytes(16).toString('hex'), nodes: [], ipmi: [], ipmiRun: null, redfish: null };
}

/**
 * Reads the lab state of `dataDir`.
 * @returns null when there is no file yet
 * @throws Error naming the file when it cannot be read or is not a lab state (it is never
 *   overwritten then: the operator decides)
 */
export function readLabState(dataDir: string): LabStateFile | null {
  const file = labStatePath(dataDir);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new Error(`cannot read the lab state ${file}: ${(err as Error).message}`, { cause: err });
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new Error(`the lab state ${file} is not JSON (${(err as Error).message}); move it away to start a new lab`, { cause: err });
  }
  return checkLabState(doc, file);
}

/**
 * Writes `state` as the lab state of `dataDir`, atomically (temporary file, fsync, rename, fsync
 * of the directory).
 * @throws Error from the file system (the old file is left as it was)
 */
export function writeLabState(dataDir: string, state: LabStateFile): void {
  const file = labStatePath(dataDir);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`;
  try {
    const fd = fs.openSync(tmp, 'w', 0o644);
    try {
      fs.writeFileSync(fd, `${JSON.stringify(state, null, 2)}\n`);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, file);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
  // The rename is durable once the directory is.
  const dir = fs.openSync(path.dirname(file), 'r');
  try {
    fs.fsyncSync(dir);
  } finally {
    fs.closeSync(dir);
  }
}

/**
 * Reads the state of `dataDir` (an empty one when there is none), applies `change` and writes the
 * result atomically. Read and write are synchronous, so two updates of one process never interleave.
 * @returns the state written
 * @throws Error as {@link readLabState} and {@link writeLabState}
 */
export function updateLabState(dataDir: string, change: (current: LabStateFile) => LabStateFile): LabStateFile {
  const next = change(readLabState(dataDir) ?? emptyLabState());
  writeLabState(dataDir, next);
  return next;
}

/** Checks the shape of a parsed state file. @throws Error naming `file` and the bad field */
function checkLabState(doc: unknown, file: string): LabStateFile {
  const bad = (what: string): never => {
    throw new Error(`the lab state ${file} is invalid: ${what}; move it away to start a new lab`);
  };
  const o = doc as Partial<LabStateFile> | null;
  if (o === null || typeof o !== 'object') return bad('not an object');
  if (o.version !== 1) return bad(`version ${String(o.version)} is not 1`);
  if (typeof o.seed !== 'string' || o.seed === '') bad('seed must be a string');
  if (!Array.isArray(o.nodes)) bad('nodes must be a list');
  o.nodes!.forEach((n, i) => {
    if (n === null || typeof n !== 'object') bad(`nodes[${i}] must be an object`);
    if (n.id !== `node-${i}`) bad(`nodes[${i}].id must be node-${i}`);
    if (n.backing !== 'simulated' && n.backing !== 'qemu') bad(`nodes[${i}].backing must be simulated or qemu`);
    if (typeof n.uuid !== 'string') bad(`nodes[${i}].uuid must be a string`);
    if (!Array.isArray(n.macs) || n.macs.length === 0 || !n.macs.every((m) => /^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/.test(String(m))))
      bad(`nodes[${i}].macs must be a list of lower-case MACs`);
    if (n.switchPorts !== undefined && (!Array.isArray(n.switchPorts) || !n.switchPorts.every((p) => Number.isInteger(p) && p >= 0)))
      bad(`nodes[${i}].switchPorts must be a list of port numbers`);
    if (n.model === null || typeof n.model !== 'object' || typeof n.model.name !== 'string') bad(`nodes[${i}].model must be a model`);
  });
  const ipmi = o.ipmi ?? [];
  if (!Array.isArray(ipmi)) bad('ipmi must be a list');
  ipmi.forEach((n, i) => {
    if (n?.name !== `ipmi-${i}`) bad(`ipmi[${i}].name must be ipmi-${i}`);
    if (typeof n.host !== 'string' || !Number.isInteger(n.port) || n.port < 1 || n.port > 65_535)
      bad(`ipmi[${i}] needs a host and a port 1…65535`);
  });
  return { version: 1, seed: o.seed!, nodes: o.nodes!, ipmi, ipmiRun: o.ipmiRun ?? null, redfish: o.redfish ?? null };
}
