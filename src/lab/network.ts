/**
 * The lab's network: a Linux bridge standing in for the top-of-rack switch, and one network
 * namespace per virtual node whose NIC (`eth0`, with the node's MAC) is a veth pair into it —
 * the host end is the switch port the `linux-bridge` driver programs. Nodes start quarantined
 * (the host end is in no VLAN and down).
 *
 * | object          | name                          |
 * |-----------------|-------------------------------|
 * | bridge          | `<prefix>br` (VLAN filtering, default PVID 0, when the kernel has it) |
 * | node namespace  | `<prefix>-n<i>`               |
 * | switch port     | `<prefix>p<i>` (host end of the veth) |
 * | node NIC        | `eth0` in the namespace       |
 *
 * Needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN for namespaces); {@link labNetworkSupport}
 * says whether this host can. `destroy()` removes everything created, VLAN bridges the
 * driver made (`<prefix>brv<vlan>`) included.
 */
import { execFile } from 'node:child_process';
import { missingToolError } from '../drivers/host-tools.ts';

/** Options of {@link createLabNetwork}. */
export interface LabNetworkOptions {
  /** Short unique prefix of every name (1–6 of `a-z0-9`). */
  readonly prefix: string;
  /** The virtual nodes' NIC MACs, one node each. */
  readonly macs: readonly string[];
}

/** One node's cabling. */
export interface LabNetworkPort {
  /** The switch port (host end of the veth). */
  readonly port: string;
  /** The node's namespace; its NIC is `eth0`. */
  readonly netns: string;
  readonly mac: string;
}

/** A created lab network. */
export interface LabNetwork {
  readonly bridge: string;
  /** True when the bridge filters VLANs itself (tagged trunks work). */
  readonly vlanFiltering: boolean;
  readonly ports: readonly LabNetworkPort[];
  /** Remove the namespaces, veths and bridges. Never throws. */
  destroy(): Promise<void>;
}

/**
 * Run `tool` with `args` (and `input` on stdin), at most 30 s.
 * @returns its stdout
 * @throws Error naming the command and carrying its stderr
 */
export function run(tool: string, args: readonly string[], input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(tool, [...args], { timeout: 30_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${tool} ${args.join(' ')}: ${missingToolError(tool, err)?.message ?? (stderr || err.message).trim()}`));
      else resolve(stdout);
    });
    if (input !== undefined) child.stdin?.end(input);
  });
}

/**
 * Whether this host can build a lab network.
 * @returns `{ok: true}` or the reason it cannot (not root, no iproute2, no namespaces)
 */
export async function labNetworkSupport(): Promise<{ ok: true } | { ok: false; reason: string }> {
  if (typeof process.getuid === 'function' && process.getuid() !== 0)
    return { ok: false, reason: 'needs root (network namespaces and bridges)' };
  const probe = `esiprobe${process.pid % 100_000}`;
  try {
    await run('ip', ['netns', 'add', probe]);
    await run('ip', ['netns', 'del', probe]);
    return { ok: true };
  } catch (err) {
    return { ok: false, reason: `cannot create network namespaces: ${(err as Error).message}` };
  }
}

/**
 * Build the bridge, namespaces and veth pairs.
 * @throws Error when a command fails (whatever was created is removed first)
 */
export async function createLabNetwork(o: LabNetworkOptions): Promise<LabNetwork> {
  if (!/^[a-z0-9]{1,6}$/.test(o.prefix)) throw new Error('lab network prefix must be 1-6 characters a-z0-9');
  const bridge = `${o.prefix}br`;
  const ports = o.macs.map((mac, i) => ({ port: `${o.prefix}p${i}`, netns: `${o.prefix}-n${i}`, mac: mac.toLowerCase() }));
  const destroy = async (): Promise<void> => {
    for (const p of ports) await run('ip', ['netns', 'del', p.netns]).catch(() => undefined);
    const links = JSON.parse((await run('ip', ['-j', 'link', 'show']).catch(() => '[]')) || '[]') as Array<{ ifname: string }>;
    const ours = links.map((l) => l.ifname).filter((n) => n === bridge || n.startsWith(`${bridge}v`) || ports.some((p) => p.port === n));
    for (const n of ours) await run('ip', ['link', 'del', 'dev', n]).catch(() => undefined);
  };
  let vlanFiltering = true;
  try {
    try {
      await run('ip', ['link', 'add', 'name', bridge, 'type', 'bridge', 'vlan_filtering', '1', 'vlan_default_pvid', '0']);
    } catch {
      vlanFiltering = false;
      await run('ip', ['link', 'add', 'name', bridge, 'type', 'bridge']);
    }
    await run('ip', ['link', 'set', 'dev', bridge, 'up']);
    for (const p of ports) await run('ip', ['netns', 'add', p.netns]);
    const host = ports.map((p) => `link add ${p.port} type veth peer name eth0 netns ${p.netns}`);
    await run('ip', ['-batch', '-'], `${host.join('\n')}\n`);
    for (const p of ports) {
      await run('ip', ['-n', p.netns, '-batch', '-'], `link set dev eth0 address ${p.mac}\nlink set dev eth0 up\nlink set dev lo up\n`);
    }
    // Kernel IPv6 autoconfiguration would send its own frames; the nodes here only talk when told to.
    for (const p of ports)
      await run('ip', ['netns', 'exec', p.netns, 'sysctl', '-qw', 'net.ipv6.conf.all.disable_ipv6=1']).catch(() => undefined);
  } catch (err) {
    await destroy();
    throw err;
  }
  return { bridge, vlanFiltering, ports, destroy };
}
