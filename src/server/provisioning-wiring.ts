/**
 * The provisioning network in the conductor (src/domain/networking/provisioning.ts): every node
 * write of the conductor that moves a node into or out of an agent phase tells the switches
 * ({@link watchAgentPhase}), and the agent flows wait for the switches to carry the change
 * before booting the ramdisk or the instance ({@link networkBootEnv}); a conductor on the
 * provisioning network serves its DHCP and TFTP ({@link createProvisioningDhcp}).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { ProvisioningDhcp } from '../conductor/provisioning-dhcp.ts';
import { NETWORK_BOOT_CHAIN } from '../domain/deploy/network-boot.ts';
import type { Subnet } from '../domain/networking/index.ts';
import { DnsmasqServer } from '../drivers/dhcp/dnsmasq.ts';
import type { Config } from './config.ts';
import type { NodeRepository } from '../domain/inventory/ports.ts';
import type { Node } from '../domain/inventory/model.ts';
import { inAgentPhase, type ProvisioningNetwork } from '../domain/networking/index.ts';
import type { NetworkBootEnv } from '../conductor/tasks/context.ts';

/** True when the node's deploy agent is booting or running (its NICs belong on the provisioning network). */
export function nodeInAgentPhase(n: Pick<Node, 'provision_state' | 'driver_internal_info'>): boolean {
  const boot = n.driver_internal_info.agent_boot;
  return inAgentPhase({ node_provision_state: n.provision_state, node_agent_boot: typeof boot === 'string' ? boot : null });
}

/**
 * Wrap the conductor's node repository so that each `applyConductorResult` that changes whether
 * the node is in an agent phase calls `changed(uuid)` (awaited: the switch intent is recorded
 * before the write returns). The phase last seen is kept per node in memory; a node seen for
 * the first time counts as changed (touching its switch ports again is harmless: switch changes
 * are declarative).
 */
export function watchAgentPhase(repo: NodeRepository, changed: (uuid: string) => Promise<void>, log: Logger): NodeRepository {
  const seen = new Map<string, boolean>();
  const apply: NodeRepository['applyConductorResult'] = async (uuid, changes, now, holder) => {
    const node = await repo.applyConductorResult(uuid, changes, now, holder);
    const phase = node === null ? false : nodeInAgentPhase(node);
    if (seen.get(uuid) !== phase) {
      if (node === null) seen.delete(uuid);
      else seen.set(uuid, phase);
      await changed(uuid).catch((err: unknown) => log.error({ err, node: uuid }, 'provisioning network: telling the switches failed'));
    }
    return node;
  };
  return new Proxy(repo, {
    get(target, prop, receiver) {
      if (prop === 'applyConductorResult') return apply;
      const v = Reflect.get(target, prop, receiver) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

/**
 * The agent flows' view of the provisioning network: `settle` polls the node's switch ports
 * every 100 ms until none has intent left to apply.
 * @throws Error (from `settle`) after `timeoutS` seconds, or at once when a switch gave up on a port
 */
export function networkBootEnv(provisioning: Pick<ProvisioningNetwork, 'settled'>): NetworkBootEnv {
  return {
    async settle(uuid: string, timeoutS: number): Promise<void> {
      const deadline = Date.now() + timeoutS * 1000;
      for (;;) {
        const s = await provisioning.settled(uuid);
        if (s.settled) return;
        if (s.error !== null) throw new Error(`the switch could not move node ${uuid}'s NICs: ${s.error}`);
        if (Date.now() >= deadline)
          throw new Error(`the switch ports of node ${uuid} (${s.pending.join(', ')}) were not configured within ${timeoutS} s`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
  };
}

/** Where Debian's iPXE binaries are (package `ipxe`): the BIOS and UEFI network boot programs. */
const IPXE_FILES: Readonly<Record<string, readonly string[]>> = Object.freeze({
  'undionly.kpxe': ['/usr/lib/ipxe/undionly.kpxe', '/boot/undionly.kpxe'],
  'ipxe.efi': ['/usr/lib/ipxe/ipxe.efi', '/boot/ipxe.efi'],
});

/**
 * The provisioning network's DHCP/TFTP server worker, when this process has a provisioning
 * interface (`ESI_PROVISIONING_INTERFACE`) and a provisioning network: dnsmasq on that interface,
 * TFTP from `<dataDir>/tftp` holding Debian's iPXE programs, iPXE clients sent to `/boot/boot.ipxe`.
 * @returns the worker, or null when not configured
 * @throws Error when Debian's iPXE files are missing (package `ipxe`)
 */
export function createProvisioningDhcp(o: {
  config: Config;
  logger: Logger;
  provisioning: ProvisioningNetwork;
  subnets: (networkId: string) => Promise<readonly Subnet[]>;
}): ProvisioningDhcp | null {
  const net = o.config.network;
  if (net.provisioningInterface === null || net.provisioningNetwork === null) return null;
  const tftpRoot = path.join(o.config.dataDir, 'tftp');
  fs.mkdirSync(tftpRoot, { recursive: true, mode: 0o755 });
  for (const [name, candidates] of Object.entries(IPXE_FILES)) {
    const src = candidates.find((c) => fs.existsSync(c));
    if (src === undefined) throw new Error(`network boot needs ${candidates[0]} (Debian package ipxe)`);
    fs.copyFileSync(src, path.join(tftpRoot, name));
    fs.chmodSync(path.join(tftpRoot, name), 0o644);
  }
  const log = o.logger.child({ component: 'provisioning-dhcp' });
  return new ProvisioningDhcp({
    provisioning: o.provisioning,
    subnets: o.subnets,
    server: (cfg) =>
      new DnsmasqServer(cfg, {
        dataDir: o.config.dataDir,
        user: net.dhcpUser,
        log: (level, msg) => log[level]({ subnet: cfg.id }, msg),
      }),
    log,
    interface: net.provisioningInterface,
    netns: net.provisioningNetns,
    boot: {
      tftpRoot,
      biosFile: 'undionly.kpxe',
      uefiFile: 'ipxe.efi',
      ipxeScriptUrl: `${o.config.publicUrl}${NETWORK_BOOT_CHAIN}`,
    },
    pollMs: 10_000,
  });
}
