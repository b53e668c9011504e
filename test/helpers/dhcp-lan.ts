/**
 * Test networks for DHCP: a Linux bridge in a "switch" namespace and one namespace per role with
 * a veth (`eth0`) into it, removed when the test ends; and Debian busybox's `udhcpc` as the
 * client (what its script saw on `bound`).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { onTestFinished } from 'vitest';

export function run(cmd: string, args: readonly string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('close', (code) => resolve({ code, out }));
  });
}

export async function must(cmd: string, args: readonly string[]): Promise<string> {
  const r = await run(cmd, args);
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.code}): ${r.out}`);
  return r.out;
}

/** Run `fn` when the current test ends (last registered first), even when it fails. */
export function cleanup(fn: () => unknown): void {
  onTestFinished(async () => {
    await fn();
  });
}

let lanCount = 0;

/** A bridged test network: namespace and MAC of each role; `srv` has the server address (default 10.77.0.1/24). */
export interface Lan {
  ns(role: string): string;
  mac(role: string): string;
  /** A temp directory every user may read (dnsmasq runs as nobody). */
  dir: string;
}

export async function makeLan(roles: readonly string[], srvAddress = '10.77.0.1/24'): Promise<Lan> {
  const prefix = `dq${process.pid % 1000}${lanCount++}`;
  const sw = `${prefix}sw`;
  const made: string[] = [];
  cleanup(async () => {
    for (const ns of made.reverse()) await run('ip', ['netns', 'del', ns]);
  });
  await must('ip', ['netns', 'add', sw]);
  made.push(sw);
  await must('ip', ['-n', sw, 'link', 'add', 'br0', 'type', 'bridge']);
  await must('ip', ['-n', sw, 'link', 'set', 'br0', 'up']);
  const macs = new Map<string, string>();
  for (const role of roles) {
    const ns = `${prefix}${role}`;
    await must('ip', ['netns', 'add', ns]);
    made.push(ns);
    await must('ip', ['-n', sw, 'link', 'add', ns, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns]);
    await must('ip', ['-n', sw, 'link', 'set', ns, 'master', 'br0', 'up']);
    await must('ip', ['netns', 'exec', ns, 'sysctl', '-qw', 'net.ipv6.conf.all.disable_ipv6=1']);
    await must('ip', ['-n', ns, 'link', 'set', 'lo', 'up']);
    await must('ip', ['-n', ns, 'link', 'set', 'eth0', 'up']);
    const link = JSON.parse(await must('ip', ['-n', ns, '-j', 'link', 'show', 'eth0'])) as Array<{ address: string }>;
    macs.set(role, link[0]!.address);
  }
  if (roles.includes('srv')) await must('ip', ['-n', `${prefix}srv`, 'addr', 'add', srvAddress, 'dev', 'eth0']);
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'esi-dhcp-'));
  await fs.chmod(dir, 0o755);
  cleanup(() => fs.rm(dir, { recursive: true, force: true }));
  return { ns: (r) => `${prefix}${r}`, mac: (r) => macs.get(r)!, dir };
}

/** What udhcpc's script saw on `bound` (unset variables absent); null when no lease came. */
export async function udhcpc(lan: Lan, role: string, extra: readonly string[] = [], tries = 3): Promise<Record<string, string> | null> {
  const out = path.join(lan.dir, `udhcpc-${role}-${Math.random().toString(36).slice(2)}`);
  const script = path.join(lan.dir, 'udhcpc.sh');
  const vars = 'ip subnet router dns domain mtu staticroutes msstaticroutes hostname lease serverid siaddr boot_file';
  await fs.writeFile(
    script,
    `#!/bin/sh\n[ "$1" = bound ] || exit 0\nfor v in ${vars}; do eval "x=\\$$v"; [ -n "$x" ] && echo "$v=$x"; done > "${out}"\n`,
    { mode: 0o755 },
  );
  const r = await run('ip', [
    'netns',
    'exec',
    lan.ns(role),
    'busybox',
    'udhcpc',
    '-i',
    'eth0',
    '-f',
    '-n',
    '-q',
    '-t',
    String(tries),
    '-T',
    '1',
    '-s',
    script,
    '-O',
    'staticroutes',
    '-O',
    'msstaticroutes',
    '-O',
    'mtu',
    ...extra,
  ]);
  if (r.code !== 0) return null;
  const text = await fs.readFile(out, 'utf8');
  return Object.fromEntries(
    text
      .split('\n')
      .filter((l) => l.includes('='))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
}
