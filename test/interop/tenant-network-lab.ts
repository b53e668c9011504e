/**
 * The lab of the tenant-network interop tests (tenant-network.test.ts, tenant-floating-ip.test.ts):
 * esi started as the network node (ESI_DATAPLANE_BRIDGE) over a lab network (src/lab/network.ts:
 * a Linux bridge programmed by esi's `linux-bridge` switch driver, each lab port a network
 * namespace whose `eth0` is a veth into it), and what the tests do to the lab's namespaces —
 * cable them to esi nodes, attach VIFs, ask DHCP, configure addresses, run and ask TCP servers.
 *
 * One esi network node per host: a network node's reconciler removes every `qdhcp-`/`qrouter-`
 * namespace its database does not want, so two at once would undo each other's. Every test file
 * and benchmark that runs one holds {@link holdNetworkNodeLock} meanwhile (flock(1) on
 * {@link NETWORK_NODE_LOCK}; a crashed holder releases it with its process).
 *
 * Needs root (namespaces, bridges), iproute2, busybox, dnsmasq and nftables: {@link NEEDS},
 * {@link tenantLabSupport}.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { createLabNetwork, labNetworkSupport, type LabNetwork, type LabNetworkPort } from '../../src/lab/network.ts';
import type { Persona } from '../helpers/harness.ts';
import { commandTool, fileTool, TOOLS } from '../helpers/tools.ts';
import { bm, cabledNode, createSwitch, portAsAdmin, settle, startNetEnv, type NetEnv } from '../api/network/support.ts';

/** The Debian packages the tenant-network tests need. */
export const NEEDS = [
  TOOLS.iproute2,
  fileTool('/usr/sbin/dnsmasq', 'dnsmasq-base'),
  commandTool('nft', 'nftables'),
  fileTool('/bin/busybox', 'busybox-static'),
  commandTool('flock', 'util-linux'),
];

/** Whether this machine can build a lab network (root, namespaces); null when iproute2 is missing. */
export async function tenantLabSupport(): Promise<{ ok: true } | { ok: false; reason: string } | null> {
  return TOOLS.iproute2.present ? labNetworkSupport() : null;
}

/** The host-wide lock of an esi network node (see the module documentation). */
export const NETWORK_NODE_LOCK = '/run/lock/esi-network-node.lock';

/**
 * Wait for and take {@link NETWORK_NODE_LOCK}: `flock` holds it while its `cat` reads our pipe,
 * so the lock goes when the returned function closes the pipe or when this process dies.
 * @returns the release function (idempotent)
 * @throws Error when flock cannot run
 */
export function holdNetworkNodeLock(): Promise<() => void> {
  return new Promise((resolve, reject) => {
    const child = spawn('flock', [NETWORK_NODE_LOCK, '-c', 'echo locked; exec cat'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.once('error', reject);
    child.stdout.once('data', () => resolve(() => child.stdin.end()));
    child.once('exit', (code) => reject(new Error(`flock ${NETWORK_NODE_LOCK} ended (${code}): ${err.trim()}`)));
  });
}

/** A TCP server on the ports in argv that answers each connection with the address it sees the client at. */
const WHO = `const net = require('net'); const ports = process.argv.slice(1).map(Number); let n = 0;
for (const p of ports) net.createServer((s) => { s.on('error', () => {}); s.end(s.remoteAddress.replace('::ffff:', '')); }).listen(p, () => ++n === ports.length && console.log('listening'));`;
/** Connect to argv[1]:argv[2] and print the answer (exit 1 when nothing comes within argv[3] ms). */
const ASK = `const s = require('net').connect(+process.argv[2], process.argv[1]); let o = ''; s.on('data', (d) => (o += d)); s.on('end', () => { console.log(o); process.exit(0); }); s.on('error', () => process.exit(1)); setTimeout(() => process.exit(1), +process.argv[3]);`;

/** Run a command (at most 20 s): its exit status and its stdout and stderr together. */
export function sh(cmd: string, args: readonly string[]): { status: number | null; out: string } {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 20_000 });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

/** esi as the network node over a lab network; see the module documentation. */
export interface TenantLab {
  readonly env: NetEnv;
  readonly lab: LabNetwork;
  /** A temporary directory of the test (removed by {@link TenantLab.stop}). */
  readonly dir: string;
  /** Lab port `i`. */
  port(i: number): LabNetworkPort;
  /**
   * An esi node (fake-hardware; owned by o1 and leased to l1 unless `body` says otherwise) whose
   * bare-metal ports are cabled to lab ports `labPorts`, in order.
   * @returns the node and its bare-metal ports (JSON)
   */
  cable(name: string, labPorts: readonly number[], body?: Record<string, unknown>): Promise<{ node: any; ports: any[] }>;
  /** Attach network port `vif` to a node as `who` (on bare-metal port `portUuid` if given); waits until it is ACTIVE. */
  attach(who: Persona, nodeUuid: string, vif: string, portUuid?: string): Promise<void>;
  /** busybox udhcpc in lab port `i`'s namespace: what it was offered (ip, subnet, router, mtu, serverid), or null. */
  dhcp(i: number): Record<string, string> | null;
  /** Give lab port `i` address `cidr` and a default route via `gateway` (replacing what it had). */
  configure(i: number, cidr: string, gateway: string): void;
  /** Run a {@link WHO} server on `ports` in lab port `i`'s namespace (killed by stop); resolves once it listens. */
  serve(i: number, ports: readonly number[]): Promise<void>;
  /**
   * Connect from lab port `i` to `host:port`: the address the server saw us at, or null when no
   * answer came within `timeoutMs`.
   */
  ask(i: number, host: string, port?: number, timeoutMs?: number): string | null;
  /** Stop servers and esi, remove the network node's namespaces, the lab and the directory; release the lock. */
  stop(): Promise<void>;
}

/**
 * Take the network-node lock, build the lab network (`prefix`, one port per MAC), start esi as
 * its network node and register the lab bridge as switch `labtor` (linux-bridge driver).
 * @throws whatever a step throws (what was created by then is removed first, the lock released)
 */
export async function startTenantLab(prefix: string, macs: readonly string[]): Promise<TenantLab> {
  const release = await holdNetworkNodeLock();
  const children: ChildProcess[] = [];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `esi-${prefix}-`));
  let lab: LabNetwork | null = null;
  let env: NetEnv | null = null;
  const stop = async (): Promise<void> => {
    for (const c of children) c.kill('SIGKILL');
    await env?.ts.close();
    // The network node's namespaces outlive esi by design (a restart reconciles them): remove them
    // (every one on the host: we hold the lock, so they are ours or a killed run's).
    for (const line of sh('ip', ['netns', 'list']).out.split('\n')) {
      const ns = line.split(' ')[0] ?? '';
      if (!/^q(dhcp|router)-/.test(ns)) continue;
      for (const pid of sh('ip', ['netns', 'pids', ns])
        .out.split('\n')
        .filter((x) => /^\d+$/.test(x)))
        process.kill(Number(pid), 'SIGKILL');
      sh('ip', ['netns', 'del', ns]);
    }
    await lab?.destroy();
    fs.rmSync(dir, { recursive: true, force: true });
    release();
  };
  try {
    lab = await createLabNetwork({ prefix, macs });
    env = await startNetEnv({
      env: { ESI_DATAPLANE_BRIDGE: lab.bridge, ESI_DATAPLANE_POLL_MS: '500', ESI_DHCP_USER: 'root' },
    });
    await createSwitch(env, 'labtor', 'linux-bridge', { bridge: lab.bridge });
  } catch (err) {
    await stop();
    throw err;
  }
  const e = env;
  const l = lab;
  const port = (i: number): LabNetworkPort => l.ports[i]!;

  return {
    env: e,
    lab: l,
    dir,
    port,
    async cable(name, labPorts, body = {}) {
      const { node } = await cabledNode(
        e,
        name,
        'labtor',
        labPorts.map((i) => port(i).mac),
        body,
      );
      const ports = (await bm(e, e.p.admin, 'GET', `/v1/nodes/${node.uuid}/ports?detail=true`)).body.ports as any[];
      for (const p of ports) {
        const i = labPorts.find((j) => port(j).mac === p.address)!;
        const r = await bm(e, e.p.admin, 'PATCH', `/v1/ports/${p.uuid}`, [
          { op: 'replace', path: '/local_link_connection/port_id', value: port(i).port },
        ]);
        expect(r.status, r.text).toBe(200);
      }
      return { node, ports: labPorts.map((i) => ports.find((p) => p.address === port(i).mac)) };
    },
    async attach(who, nodeUuid, vif, portUuid) {
      const r = await bm(e, who, 'POST', `/v1/nodes/${nodeUuid}/vifs`, { id: vif, ...(portUuid ? { port_uuid: portUuid } : {}) });
      expect(r.status, r.text).toBe(204);
      const p = await settle(
        e,
        () => portAsAdmin(e, vif),
        (x) => x.status === 'ACTIVE' || x['binding:vif_type'] === 'binding_failed',
      );
      expect(p.status).toBe('ACTIVE');
    },
    dhcp(i) {
      const ns = port(i).netns;
      const out = path.join(dir, `lease-${ns}`);
      const script = path.join(dir, 'udhcpc.sh');
      fs.writeFileSync(
        script,
        `#!/bin/sh\n[ "$1" = bound ] || exit 0\nfor v in ip subnet router mtu serverid; do eval "x=\\$$v"; echo "$v=$x"; done > "${out}"\n`,
        { mode: 0o755 },
      );
      fs.rmSync(out, { force: true });
      const args = ['udhcpc', '-i', 'eth0', '-f', '-n', '-q', '-t', '2', '-T', '1', '-s', script, '-O', 'mtu'];
      const r = sh('ip', ['netns', 'exec', ns, 'busybox', ...args]);
      if (r.status !== 0 || !fs.existsSync(out)) return null;
      return Object.fromEntries(
        fs
          .readFileSync(out, 'utf8')
          .trim()
          .split('\n')
          .map((x) => [x.slice(0, x.indexOf('=')), x.slice(x.indexOf('=') + 1)]),
      );
    },
    configure(i, cidr, gateway) {
      const ns = port(i).netns;
      sh('ip', ['-n', ns, 'addr', 'flush', 'dev', 'eth0']);
      expect(sh('ip', ['-n', ns, 'addr', 'add', cidr, 'dev', 'eth0']).status).toBe(0);
      expect(sh('ip', ['-n', ns, 'route', 'replace', 'default', 'via', gateway]).status).toBe(0);
    },
    async serve(i, ports) {
      const server = spawn('ip', ['netns', 'exec', port(i).netns, process.execPath, '-e', WHO, ...ports.map(String)], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.push(server);
      await new Promise<void>((resolve, reject) => {
        server.stdout.on('data', (d: Buffer) => d.toString().includes('listening') && resolve());
        server.once('exit', (code) => reject(new Error(`TCP server in ${port(i).netns} ended (${code})`)));
      });
    },
    ask(i, host, p = 8080, timeoutMs = 2000) {
      const r = sh('ip', ['netns', 'exec', port(i).netns, process.execPath, '-e', ASK, host, String(p), String(timeoutMs)]);
      return r.status === 0 ? r.out.trim() : null;
    },
    stop,
  };
}
