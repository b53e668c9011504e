/**
 * The lab of test/system/tenant-dataplane.test.ts: a "switch" namespace `tdp-sw` holding a
 * Linux bridge `tdpbr` (in the mode asked for), "node" namespaces `tdp-<name>` whose `eth0` is a
 * veth into the bridge made an access port of its VLAN by esi's own switch driver, an esi
 * {@link LinuxTenantDataplane} on that bridge, and small TCP programs run in the namespaces
 * (`ip netns exec … node tcp.mjs`): a server that answers every connection with the address it
 * sees the client as, a client, and a prober that connects until it gets through.
 *
 * Every name is fixed, so a lab a killed run left behind is removed before a new one is built;
 * `cleanup` (run when the test ends) removes it all.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { DhcpLog } from '../../src/drivers/dhcp/dnsmasq.ts';
import type { BridgeMode } from '../../src/drivers/switch/bridge-plan.ts';
import { LinuxBridgeSwitch } from '../../src/drivers/switch/linux-bridge.ts';
import { LinuxTenantDataplane } from '../../src/drivers/network/linux-dataplane.ts';
import { cleanup, must, run } from '../helpers/dhcp-lan.ts';

export const SWITCH_NS = 'tdp-sw';
export const BRIDGE = 'tdpbr';
/** The dataplane's files (fixed, so a killed run's dnsmasq is found by its configuration path). */
export const STATE_DIR = '/tmp/esi-tdp';

/** Ids the tests use (their namespaces `qdhcp-…`/`qrouter-…` are removed before and after each test). */
export const IDS = {
  netA: 'a0d90000-0000-4000-8000-00000000000a',
  netB: 'b0d90000-0000-4000-8000-00000000000b',
  ext: 'e0d90000-0000-4000-8000-0000000000e0',
  router: 'c0d90000-0000-4000-8000-0000000000c0',
} as const;

/** Whether this kernel's bridge filters VLANs. */
export async function vlanFilteringSupported(): Promise<boolean> {
  const r = await run('ip', ['link', 'add', 'tdpchk', 'type', 'bridge', 'vlan_filtering', '1']);
  if (r.code === 0) await run('ip', ['link', 'del', 'tdpchk']);
  return r.code === 0;
}

const TCP_PROGRAM = `
import net from 'node:net';
const [mode, ...a] = process.argv.slice(2);
const get = (host, port, ms) => new Promise((resolve) => {
  const s = net.connect({ host, port: Number(port) });
  let out = '';
  const t = setTimeout(() => { s.destroy(); resolve(null); }, ms);
  s.on('data', (d) => (out += d));
  s.on('end', () => { clearTimeout(t); resolve(out.trim()); });
  s.on('error', () => { clearTimeout(t); resolve(null); });
});
if (mode === 'serve') {
  let n = 0;
  for (const p of a) net.createServer((s) => s.end(s.remoteAddress + ' ' + p + '\\n')).listen(Number(p), '0.0.0.0', () => { if (++n === a.length) console.log('listening'); });
} else if (mode === 'get') {
  const r = await get(a[0], a[1], Number(a[2]));
  console.log(r ?? 'FAILED');
} else if (mode === 'echo') {
  net.createServer((s) => s.on('data', (d) => s.write(d))).listen(Number(a[0]), '0.0.0.0', () => console.log('listening'));
} else if (mode === 'hold') {
  // One connection: a message through it now, another when told on stdin.
  const s = net.connect({ host: a[0], port: Number(a[1]) });
  const ask = (m) => new Promise((res) => {
    const t = setTimeout(() => res('TIMEOUT'), 1000);
    s.once('data', (d) => { clearTimeout(t); res(String(d)); });
    s.write(m);
  });
  s.on('error', () => { console.log('FAILED'); process.exit(0); });
  s.on('connect', async () => {
    console.log(await ask('one'));
    process.stdin.once('data', async () => { console.log(await ask('two')); process.exit(0); });
  });
} else if (mode === 'probe') {
  const end = Date.now() + Number(a[2]);
  for (;;) {
    const r = await get(a[0], a[1], 100);
    if (r !== null) { console.log(Date.now() + ' ' + r); break; }
    if (Date.now() > end) { console.log('FAILED'); break; }
    await new Promise((res) => setTimeout(res, 5));
  }
}
`;

/** A node namespace on the bridge. */
export interface LabNode {
  readonly ns: string;
  readonly mac: string;
}

/** A built lab. */
export interface Lab {
  readonly mode: BridgeMode;
  readonly dp: LinuxTenantDataplane;
  readonly logs: Array<{ level: string; msg: string }>;
  node(name: string): LabNode;
  /** Start the answering server on `ports` in a node's namespace (ends with the test). */
  serve(name: string, ports: readonly number[]): Promise<void>;
  /** Start an echo server on `port` in a node's namespace (ends with the test). */
  echo(name: string, port: number): Promise<void>;
  /** Open one connection from a node and send `one` through it; `again()` sends `two` through the same connection. */
  hold(name: string, host: string, port: number): Promise<{ first: string; again: () => Promise<string> }>;
  /** Connect from a node; the server's answer (`<client address as seen> <port>`) or null. */
  get(name: string, host: string, port: number, timeoutMs?: number): Promise<string | null>;
  /** Start connecting from a node until one connection gets through; resolves to its epoch ms and answer. */
  probe(name: string, host: string, port: number, deadlineMs: number): Promise<{ at: number; answer: string } | null>;
  /** Ask for an address by DHCP (busybox udhcpc) and, with `configure`, set it and the default route. */
  dhcp(name: string, configure?: boolean, tries?: number): Promise<Record<string, string> | null>;
}

/** Remove whatever a lab (this run's or a killed one's) left: processes in its namespaces, namespaces, files. */
export async function removeLab(): Promise<void> {
  const names = new Set((await run('ip', ['netns', 'list'])).out.split('\n').map((l) => l.split(' ')[0]!));
  const ours = [...names].filter(
    (n) => n.startsWith('tdp-') || Object.values(IDS).some((id) => n === `qdhcp-${id}` || n === `qrouter-${id}`),
  );
  for (const ns of ours) {
    const pids = (await run('ip', ['netns', 'pids', ns])).out.split('\n').filter((p) => /^\d+$/.test(p));
    for (const pid of pids) {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
  for (const ns of ours.filter((n) => n !== SWITCH_NS)) await run('ip', ['netns', 'del', ns]);
  await run('ip', ['netns', 'del', SWITCH_NS]);
  await fs.rm(STATE_DIR, { recursive: true, force: true });
}

/**
 * Build the lab: the bridge (in `mode`), one node namespace per entry of `nodes` (name → VLAN),
 * each node's port an access port of its VLAN, and the dataplane. Removed when the test ends.
 */
export async function makeLab(mode: BridgeMode, nodes: Readonly<Record<string, number>>): Promise<Lab> {
  await removeLab();
  const children: ChildProcess[] = [];
  const logs: Array<{ level: string; msg: string }> = [];
  const log: DhcpLog = (level, msg) => logs.push({ level, msg });
  cleanup(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await removeLab();
  });
  await fs.mkdir(STATE_DIR, { mode: 0o755 });
  await fs.chmod(STATE_DIR, 0o755);
  const program = path.join(STATE_DIR, 'tcp.mjs');
  await fs.writeFile(program, TCP_PROGRAM, { mode: 0o644 });
  await must('ip', ['netns', 'add', SWITCH_NS]);
  const filtering = mode === 'vlan_filtering' ? ['vlan_filtering', '1', 'vlan_default_pvid', '0'] : [];
  await must('ip', ['-n', SWITCH_NS, 'link', 'add', 'name', BRIDGE, 'type', 'bridge', ...filtering]);
  await must('ip', ['-n', SWITCH_NS, 'link', 'set', 'dev', BRIDGE, 'up']);
  const macs = new Map<string, string>();
  const changes = [];
  for (const [i, [name, vlan]] of Object.entries(nodes).entries()) {
    const ns = `tdp-${name}`;
    const mac = `52:54:00:d9:00:${(i + 1).toString(16).padStart(2, '0')}`;
    await must('ip', ['netns', 'add', ns]);
    await must('ip', ['-n', SWITCH_NS, 'link', 'add', `tdpp${i}`, 'type', 'veth', 'peer', 'name', 'eth0', 'address', mac, 'netns', ns]);
    await must('ip', ['netns', 'exec', ns, 'sysctl', '-qw', 'net.ipv6.conf.all.disable_ipv6=1']);
    await must('ip', ['-n', ns, 'link', 'set', 'dev', 'lo', 'up']);
    await must('ip', ['-n', ns, 'link', 'set', 'dev', 'eth0', 'up']);
    changes.push({ port: `tdpp${i}`, config: { mode: 'access' as const, vlan } });
    macs.set(name, mac);
  }
  await new LinuxBridgeSwitch({ bridge: BRIDGE, mode, netns: SWITCH_NS }).apply(changes);
  const dp = new LinuxTenantDataplane({ switch: { bridge: BRIDGE, netns: SWITCH_NS, mode }, stateDir: STATE_DIR, log });
  cleanup(() => dp.close());

  const tcp = (ns: string, args: readonly string[]): ChildProcess => {
    const child = spawn('ip', ['netns', 'exec', ns, process.execPath, program, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    children.push(child);
    return child;
  };
  const output = (child: ChildProcess): Promise<string> =>
    new Promise((resolve) => {
      let out = '';
      child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
      child.on('close', () => resolve(out.trim()));
    });
  const node = (name: string): LabNode => {
    const mac = macs.get(name);
    if (!mac) throw new Error(`no node ${name} in this lab`);
    return { ns: `tdp-${name}`, mac };
  };
  const started = (child: ChildProcess, what: string): Promise<void> =>
    new Promise((resolve, reject) => {
      let out = '';
      child.stdout?.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('listening')) resolve();
      });
      child.on('close', () => reject(new Error(`${what} ended: ${out}`)));
    });
  /** The next line a child prints. */
  const line = (child: ChildProcess): Promise<string> =>
    new Promise((resolve) => {
      let out = '';
      const on = (d: Buffer): void => {
        out += d.toString();
        if (!out.includes('\n')) return;
        child.stdout?.off('data', on);
        resolve(out.trim());
      };
      child.stdout?.on('data', on);
    });
  return {
    mode,
    dp,
    logs,
    node,
    serve: (name, ports) => started(tcp(node(name).ns, ['serve', ...ports.map(String)]), `server in ${name}`),
    echo: (name, port) => started(tcp(node(name).ns, ['echo', String(port)]), `echo server in ${name}`),
    hold: async (name, host, port) => {
      const child = tcp(node(name).ns, ['hold', host, String(port)]);
      const first = await line(child);
      return {
        first,
        again: async () => {
          const next = line(child);
          child.stdin?.write('go\n');
          return next;
        },
      };
    },
    get: async (name, host, port, timeoutMs = 1000) => {
      const out = await output(tcp(node(name).ns, ['get', host, String(port), String(timeoutMs)]));
      return out === 'FAILED' ? null : out;
    },
    probe: async (name, host, port, deadlineMs) => {
      const out = await output(tcp(node(name).ns, ['probe', host, String(port), String(deadlineMs)]));
      const m = /^(\d+) (.*)$/.exec(out);
      return m ? { at: Number(m[1]), answer: m[2]! } : null;
    },
    dhcp: (name, configure = true, tries = 3) => udhcpc(node(name).ns, configure, tries),
  };
}

/** Busybox udhcpc in `ns`: what its script saw on `bound` (null: no lease); with `configure`, address and default route set. */
async function udhcpc(ns: string, configure: boolean, tries: number): Promise<Record<string, string> | null> {
  const out = path.join(STATE_DIR, `lease-${ns}-${Date.now()}`);
  const script = path.join(STATE_DIR, 'udhcpc.sh');
  const vars = 'ip subnet router dns mtu staticroutes hostname lease serverid';
  await fs.writeFile(
    script,
    `#!/bin/sh\n[ "$1" = bound ] || exit 0\nfor v in ${vars}; do eval "x=\\$$v"; [ -n "$x" ] && echo "$v=$x"; done > "$OUT"\n`,
    { mode: 0o755 },
  );
  const args = ['netns', 'exec', ns, 'env', `OUT=${out}`, 'busybox', 'udhcpc', '-i', 'eth0', '-f', '-n', '-q'];
  const r = await run('ip', [...args, '-t', String(tries), '-T', '1', '-s', script, '-O', 'staticroutes', '-O', 'mtu']);
  if (r.code !== 0) return null;
  const lease = Object.fromEntries(
    (await fs.readFile(out, 'utf8'))
      .split('\n')
      .filter((l) => l.includes('='))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
  if (configure) {
    const prefix = lease.subnet!.split('.').reduce((n, o) => n + Number(o).toString(2).replace(/0/g, '').length, 0);
    await must('ip', ['-n', ns, 'addr', 'flush', 'dev', 'eth0']);
    await must('ip', ['-n', ns, 'addr', 'add', `${lease.ip}/${prefix}`, 'dev', 'eth0']);
    if (lease.router) await must('ip', ['-n', ns, 'route', 'replace', 'default', 'via', lease.router]);
  }
  return lease;
}
