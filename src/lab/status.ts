/**
 * `esi lab status`: what the lab of a data directory is made of, read from its state file
 * (./persist.ts) and its node directories, without asking a running lab — so it works whether the
 * lab runs or not. One row per node: kind, whether the last lab runs it, its BMC address (Redfish
 * URL and system path, or IPMI host and UDP port), model, UUID, MAC, and its disk file.
 *
 * Disk files are sparse (a QEMU node's `disk.qcow2`, a simulated node's `disk.img`), so their
 * size is told three ways: the size the node sees (`virtualBytes`: a qcow2's virtual size from
 * its header, the file's length for a raw image), the file's apparent length (`apparentBytes`,
 * `stat.size`) and what it really takes on disk (`allocatedBytes`, `stat.blocks × 512`).
 */
import fs from 'node:fs';
import path from 'node:path';
import { hasQcow2Magic } from '../domain/images/qcow2.ts';
import { describeModel } from './persist-plan.ts';
import { labStatePath, readLabState, type LabStateFile } from './persist.ts';
import { processAlive } from '../drivers/host-process.ts';

/** A node's disk file and its sizes, bytes. */
export interface LabDiskUsage {
  readonly file: string;
  /** The size the node sees: a qcow2's virtual size, else the file's length. */
  readonly virtualBytes: number;
  /** `stat.size`: the file's length, holes included. */
  readonly apparentBytes: number;
  /** `stat.blocks × 512`: the space it takes on the file system. */
  readonly allocatedBytes: number;
}

/** One node of {@link LabStatus}. */
export interface LabStatusNode {
  /** `node-<i>` or `ipmi-<i>`. */
  readonly id: string;
  readonly kind: 'simulated' | 'qemu' | 'ipmi';
  /** Whether the last lab started on this directory runs it and still runs (see {@link LabStatus.pid}). */
  readonly running: boolean;
  /** `<redfish url>/redfish/v1/Systems/<id>`, or `ipmi <host>:<port>/udp`. */
  readonly bmc: string;
  /** The model in one line (`describeModel`), or `ipmi_sim` for an IPMI node. */
  readonly model: string;
  readonly uuid: string | null;
  readonly mac: string | null;
  /** Its disk file, or null when it has none (yet). */
  readonly disk: LabDiskUsage | null;
}

/** The lab of a data directory. */
export interface LabStatus {
  /** The state file read. */
  readonly stateFile: string;
  /** Redfish URL of the last lab, or null when no Redfish lab was started here. */
  readonly url: string | null;
  /** Process id of the lab that runs now, or null when none does. */
  readonly pid: number | null;
  readonly nodes: readonly LabStatusNode[];
}

/**
 * The status of the lab of `dataDir`.
 * @throws Error when `dataDir` holds no lab state (no lab was started there) or an invalid one
 */
export function labStatus(dataDir: string): LabStatus {
  const state: LabStateFile | null = readLabState(dataDir);
  const stateFile = labStatePath(dataDir);
  if (state === null) throw new Error(`no lab has been started with data directory ${dataDir} (no ${stateFile})`);
  const redfish = state.redfish;
  const pid = redfish?.pid != null && processAlive(redfish.pid) ? redfish.pid : null;
  const runs = new Set(pid !== null ? redfish!.running : []);
  const nodes: LabStatusNode[] = state.nodes.map((n) => ({
    id: n.id,
    kind: n.backing,
    running: runs.has(n.id),
    bmc: `${redfish?.url ?? '(lab URL unknown)'}/redfish/v1/Systems/${n.id}`,
    model: describeModel(n.model, n.backing),
    uuid: n.uuid,
    mac: n.macs[0] ?? null,
    disk: diskUsage(path.join(dataDir, 'lab', n.id, n.backing === 'qemu' ? 'disk.qcow2' : 'disk.img')),
  }));
  const ipmiRun = state.ipmiRun;
  const ipmiRuns = new Set(ipmiRun?.pid != null && processAlive(ipmiRun.pid) ? ipmiRun.running : []);
  for (const b of state.ipmi)
    nodes.push({
      id: b.name,
      kind: 'ipmi',
      running: ipmiRuns.has(b.name),
      bmc: `ipmi ${b.host}:${b.port}/udp`,
      model: 'ipmi_sim',
      uuid: null,
      mac: null,
      disk: null,
    });
  return { stateFile, url: redfish?.url ?? null, pid, nodes };
}

/**
 * The sizes of disk file `file` (see the module doc), or null when it does not exist.
 * @throws Error for another stat error
 */
export function diskUsage(file: string): LabDiskUsage | null {
  let st: fs.Stats;
  try {
    st = fs.statSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  return { file, virtualBytes: qcow2VirtualSize(file) ?? st.size, apparentBytes: st.size, allocatedBytes: st.blocks * 512 };
}

/** `1.5 GiB`, `196 KiB`, `0 B`: a byte count in binary units. */
export function formatBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${n} B` : `${+v.toFixed(1)} ${units[u]}`;
}

/** The disk column of a status row: `8 GiB virtual, 196 KiB file, 200 KiB allocated`, or `-`. */
export function describeDisk(d: LabDiskUsage | null): string {
  if (d === null) return '-';
  return `${formatBytes(d.virtualBytes)} virtual, ${formatBytes(d.apparentBytes)} file, ${formatBytes(d.allocatedBytes)} allocated`;
}

/**
 * The virtual size of a qcow2 image (big-endian u64 at byte 24 after the magic the image
 * service's parser checks), or null for another file. Only reads: the image service's full
 * header checks are for uploads, not for reporting a lab disk.
 */
function qcow2VirtualSize(file: string): number | null {
  const fd = fs.openSync(file, 'r');
  try {
    const head = Buffer.alloc(32);
    if (fs.readSync(fd, head, 0, 32, 0) < 32 || !hasQcow2Magic(head)) return null;
    return Number(head.readBigUInt64BE(24));
  } finally {
    fs.closeSync(fd);
  }
}
