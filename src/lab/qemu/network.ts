/**
 * The network of the lab's QEMU nodes: a Linux bridge with VLAN filtering inside a network
 * namespace of its own, standing in for the top-of-rack switch; each VM's NIC is a tap that is a
 * port of that bridge; one veth uplink gives the host (esi, its dnsmasq) a leg in the
 * provisioning VLAN.
 *
 * | object                    | name / setting                                                            |
 * |---------------------------|---------------------------------------------------------------------------|
 * | namespace                 | `<prefix>-sw`                                                             |
 * | bridge (in the namespace) | `<prefix>br`, `vlan_filtering 1`, `vlan_default_pvid 0`                   |
 * | switch port of node-i     | tap `<prefix>p<i>` (in the namespace), quarantined: no VLAN and down     |
 * | uplink, host end          | `<prefix>prov` with the provisioning address (default 10.42.0.1/24)        |
 * | uplink, bridge end        | `<prefix>up`: access port of the provisioning VLAN (default 3900; PVID, untagged) |
 *
 * A kernel without bridge VLAN filtering (CONFIG_BRIDGE_VLAN_FILTERING) gets the layout the
 * driver's `bridge_per_vlan` mode uses instead (src/drivers/switch/bridge-plan.ts): one bridge per
 * VLAN, `<prefix>brv<vlan>`; the uplink is then a port of `<prefix>brv<provisioning VLAN>` and the
 * quarantined taps are in no bridge.
 *
 * The `linux-bridge` switch driver (src/drivers/switch/linux-bridge.ts) programs the ports with
 * `driver_info` `bridge=<prefix>br,netns=<prefix>-sw`: a node whose port is in the provisioning
 * VLAN reaches the host at the provisioning address. QEMU runs in the namespace (`ip netns exec`)
 * to open its tap. Needs root (CAP_NET_ADMIN, CAP_SYS_ADMIN) and /dev/net/tun.
 *
 * {@link cleanQemuNetwork} removes everything of a prefix and is idempotent; it runs before a
 * build (leftovers of a crashed lab) and at shutdown.
 */
import fs from 'node:fs';
import { labNetworkSupport, run } from '../network.ts';

/** A built QEMU lab network. */
export interface QemuLabNetwork {
  readonly prefix: string;
  /** The namespace holding the bridge and the taps. */
  readonly netns: string;
  readonly bridge: string;
  /** True when the bridge filters VLANs itself; false: one bridge per VLAN (see the module documentation). */
  readonly vlanFiltering: boolean;
  /** The host's end of the provisioning uplink and its address (with prefix length). */
  readonly uplink: string;
  readonly provisioningAddress: string;
  readonly provisioningVlan: number;
  /** The switch port (tap) of each system id. */
  readonly ports: ReadonlyMap<string, string>;
  /** Remove the namespace, bridge, taps and uplink. Never throws. */
  destroy(): Promise<void>;
}

/** Names of a prefix's objects. */
export function qemuNetworkNames(prefix: string): {
  netns: string;
  bridge: string;
  uplink: string;
  uplinkPeer: string;
  port: (index: number) => string;
} {
  return {
    netns: `${prefix}-sw`,
    bridge: `${prefix}br`,
    uplink: `${prefix}prov`,
    uplinkPeer: `${prefix}up`,
    port: (i) => `${prefix}p${i}`,
  };
}

/**
 * Whether this host can build the network.
 * @returns `{ok: true}` or the reason it cannot (not root, no namespaces, no /dev/net/tun)
 */
export async function qemuNetworkSupport(): Promise<{ ok: true } | { ok: false; reason: string }> {
  const base = await labNetworkSupport();
  if (!base.ok) return base;
  if (!fs.existsSync('/dev/net/tun')) return { ok: false, reason: 'needs /dev/net/tun (taps)' };
  return { ok: true };
}

/** Remove every object of `prefix` (see the module documentation). Idempotent; never throws. */
export async function cleanQemuNetwork(prefix: string): Promise<void> {
  const n = qemuNetworkNames(prefix);
  // Deleting the namespace deletes the bridge, the taps and the bridge end of the veth (so its host end too).
  await run('ip', ['netns', 'del', n.netns]).catch(() => undefined);
  await run('ip', ['link', 'del', 'dev', n.uplink]).catch(() => undefined);
}

/**
 * Build the network for `systems` (id and index: node-i's port is `<prefix>p<i>`).
 * @throws Error when a command fails (whatever was created is removed first)
 */
export async function createQemuNetwork(o: {
  prefix: string;
  provisioningVlan: number;
  provisioningAddress: string;
  systems: ReadonlyArray<{ readonly id: string; readonly index: number }>;
}): Promise<QemuLabNetwork> {
  const n = qemuNetworkNames(o.prefix);
  await cleanQemuNetwork(o.prefix);
  const ports = new Map(o.systems.map((s) => [s.id, n.port(s.index)]));
  const inNs = (lines: string[]) => run('ip', ['-n', n.netns, '-batch', '-'], `${lines.join('\n')}\n`);
  let vlanFiltering = true;
  try {
    await run('ip', ['netns', 'add', n.netns]);
    await inNs(['link set dev lo up']);
    await inNs([`link add name ${n.bridge} type bridge vlan_filtering 1 vlan_default_pvid 0`]).catch(async () => {
      vlanFiltering = false;
      await inNs([`link add name ${n.bridge} type bridge`]);
    });
    // Quarantined switch ports: no VLAN and down (as src/lab/network.ts starts its ports).
    await inNs([
      `link set dev ${n.bridge} up`,
      ...[...ports.values()].flatMap((p) => [
        `tuntap add dev ${p} mode tap`,
        ...(vlanFiltering ? [`link set dev ${p} master ${n.bridge}`] : []),
      ]),
    ]);
    await run('ip', ['link', 'add', n.uplink, 'type', 'veth', 'peer', 'name', n.uplinkPeer, 'netns', n.netns]);
    if (vlanFiltering) {
      await inNs([`link set dev ${n.uplinkPeer} master ${n.bridge}`, `link set dev ${n.uplinkPeer} up`]);
      await run('bridge', ['-n', n.netns, 'vlan', 'add', 'dev', n.uplinkPeer, 'vid', String(o.provisioningVlan), 'pvid', 'untagged']);
    } else {
      // The bridge of the provisioning VLAN, named as the driver's bridge_per_vlan mode names it.
      const vlanBridge = `${n.bridge}v${o.provisioningVlan}`;
      await inNs([
        `link add name ${vlanBridge} type bridge`,
        `link set dev ${vlanBridge} up`,
        `link set dev ${n.uplinkPeer} master ${vlanBridge}`,
        `link set dev ${n.uplinkPeer} up`,
      ]);
    }
    await run('ip', ['addr', 'add', o.provisioningAddress, 'dev', n.uplink]);
    await run('ip', ['link', 'set', 'dev', n.uplink, 'up']);
  } catch (err) {
    await cleanQemuNetwork(o.prefix);
    throw err;
  }
  return {
    prefix: o.prefix,
    netns: n.netns,
    bridge: n.bridge,
    vlanFiltering,
    uplink: n.uplink,
    provisioningAddress: o.provisioningAddress,
    provisioningVlan: o.provisioningVlan,
    ports,
    destroy: () => cleanQemuNetwork(o.prefix),
  };
}
