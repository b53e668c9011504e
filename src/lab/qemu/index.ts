/**
 * The lab's QEMU-backed systems (`esi lab --qemu N`, `esi server --lab-qemu N`): real virtual
 * machines behind the lab's Redfish BMC, as sushy-tools' libvirt driver and VirtualBMC give
 * Ironic's CI. {@link startQemuNodes} installs them as the lab's {@link LabMachines}: the BMC's
 * resets and virtual media of those systems go to their VMs (./node.ts), whose serial ports feed
 * the lab's serial consoles.
 *
 * Files (./options.ts, ./node.ts), command line (./command.ts), QMP (./qmp.ts), process
 * supervision (./process.ts), media (./media.ts), network (./network.ts). docs/lab.md is the guide.
 *
 * Supervision: every QEMU runs under `setpriv --pdeathsig KILL` (util-linux) and writes a pidfile;
 * the start of a lab kills what a crashed lab left (`killStaleQemu`), and `close()` ends every VM
 * (QMP quit, then SIGKILL) and removes the network.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { toolNotFoundMessage } from '../../drivers/host-tools.ts';
import type { LabSerialPorts } from '../serial.ts';
import type { LabMachines, LabState } from '../state.ts';
import { createQemuNetwork, qemuNetworkSupport, type QemuLabNetwork } from './network.ts';
import { nodeFiles } from './files.ts';
import { QemuNode } from './node.ts';
import { qemuSettings, type QemuFirmware, type QemuLabOptions, type QemuSettings } from './options.ts';
import { killStaleQemu } from './process.ts';

export { qemuLabModel, qemuSettings, type QemuAccel, type QemuFirmware, type QemuLabOptions, type QemuNetworkOptions } from './options.ts';
export { cleanQemuNetwork, qemuNetworkSupport, type QemuLabNetwork } from './network.ts';

/** The QEMU side of a running lab. */
export interface LabQemu extends LabMachines {
  readonly settings: QemuSettings;
  /** Ids of the QEMU-backed systems. */
  readonly ids: readonly string[];
  /** Their network, or null when their NICs are on hubs of their own. */
  readonly network: QemuLabNetwork | null;
  /** The VM of system `id`. @throws Error when `id` is not a QEMU-backed system */
  node(id: string): QemuNode;
  /** End every VM and remove the network. Idempotent. */
  close(): Promise<void>;
}

/** True when `command` is on the PATH. */
function onPath(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v '${command.replace(/'/g, '')}'`], { stdio: 'ignore' }).status === 0;
}

/** True when /dev/kvm can be opened read-write (KVM is there and ours to use). */
export function kvmUsable(): boolean {
  try {
    fs.closeSync(fs.openSync('/dev/kvm', 'r+'));
    return true;
  } catch {
    return false;
  }
}

/**
 * Take over the lab's QEMU-backed systems: end QEMUs a crashed lab left, build the network when
 * asked, and install the VMs as `state.machines`. The systems start powered off.
 *
 * @throws RangeError for bad options; Error when QEMU or the firmware is missing, or the network
 *   cannot be built (the reason says why: not root, no namespaces, no /dev/net/tun)
 */
export async function startQemuNodes(state: LabState, serial: LabSerialPorts, options: QemuLabOptions): Promise<LabQemu> {
  const settings = qemuSettings(options);
  const systems = state.systems().filter((s) => s.backing === 'qemu');
  if (systems.length === 0) throw new RangeError('the lab has no QEMU-backed systems');
  if (!onPath(settings.qemuBinary)) throw new Error(`${toolNotFoundMessage(settings.qemuBinary)} (QEMU lab nodes need it)`);
  for (const f of [settings.ovmf.code, settings.ovmf.vars]) {
    if (!fs.existsSync(f)) throw new Error(`QEMU lab nodes need the UEFI firmware ${f} (Debian package ovmf)`);
  }
  for (const s of systems) await killStaleQemu(nodeFiles(settings.dataDir, s.id).pidfile);
  let network: QemuLabNetwork | null = null;
  if (settings.network !== null) {
    const support = await qemuNetworkSupport();
    if (!support.ok) throw new Error(`the QEMU lab network ${support.reason}`);
    network = await createQemuNetwork({ ...settings.network, systems });
  }
  const ctx = {
    state,
    serial,
    settings,
    kvm: settings.accel !== 'tcg' && kvmUsable(),
    kvmBroken: new Set<QemuFirmware>(),
    pdeathsig: onPath('setpriv'),
    netns: network?.netns ?? null,
  };
  const nodes = new Map(systems.map((s) => [s.id, new QemuNode(ctx, s.id, network?.ports.get(s.id) ?? null)]));
  const node = (id: string): QemuNode => {
    const n = nodes.get(id);
    if (n === undefined) throw new Error(`${id} is not a QEMU-backed lab system`);
    return n;
  };
  let closed: Promise<void> | null = null;
  const lab: LabQemu = {
    settings,
    ids: [...nodes.keys()],
    network,
    node,
    reset: (id, type) => node(id).reset(type),
    insertMedia: (id, image) => node(id).insertMedia(image),
    ejectMedia: (id) => node(id).ejectMedia(),
    switchPort: (id) => {
      const port = network?.ports.get(id);
      return network === null || port === undefined ? null : { bridge: network.bridge, netns: network.netns, port };
    },
    close: () =>
      (closed ??= (async () => {
        if (state.machines === lab) state.machines = null;
        await Promise.allSettled([...nodes.values()].map((n) => n.close()));
        await network?.destroy();
      })()),
  };
  state.machines = lab;
  return lab;
}
