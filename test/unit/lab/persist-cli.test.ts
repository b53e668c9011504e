/**
 * A lab that stays put, end to end: the real `esi lab` CLI restarted on one data directory keeps
 * its nodes, refuses a `--models` that changes a kept node (and applies it with `--force`), and
 * `esi lab status` lists the nodes; `esi server --lab` refuses such a change too; IPMI lab nodes come back on their kept UDP ports, a taken
 * port is an error naming node and port, and `force` moves the node and says so.
 */
import { execFile, spawn } from 'node:child_process';
import dgram from 'node:dgram';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { startPersistentIpmiLab } from '../../../src/lab/ipmi-persist.ts';
import { parseModelSpec, startLab } from '../../../src/lab/index.ts';
import { readLabState } from '../../../src/lab/persist.ts';
import { describeNeeding, IPMI_TOOLS } from '../../helpers/tools.ts';
import { waitFor } from '../../helpers/wait-for.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const ESI = path.join(ROOT, 'bin', 'esi.js');
const run = promisify(execFile);

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-lab-persist-cli-'));
  dirs.push(d);
  return d;
}

/** Runs `esi lab <args>` until it prints `until`; returns its output so far and a stop (SIGTERM → exit status). */
async function startLabCli(args: string[], until: RegExp): Promise<{ output: () => string; stop: () => Promise<number | null> }> {
  const child = spawn(process.execPath, [ESI, 'lab', '--port', '0', ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  await waitFor(
    () => out,
    (text) => {
      if (child.exitCode !== null) throw new Error(`esi lab exited early:\n${text}`);
      return until.test(text);
    },
    { timeoutMs: 60_000, intervalMs: 100, what: `esi lab printing ${until}` },
  );
  return {
    output: () => out,
    stop: () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

/** `esi lab status -f json --data-dir <dir>`, parsed. */
async function statusJson(dir: string): Promise<Array<Record<string, unknown>>> {
  const { stdout } = await run(process.execPath, [ESI, 'lab', 'status', '--data-dir', dir, '-f', 'json'], { cwd: ROOT });
  return JSON.parse(stdout) as Array<Record<string, unknown>>;
}

describe('esi lab restarted on one data directory', () => {
  it('keeps its nodes, refuses a --models that changes one (applies it with --force), and esi lab status lists them', async () => {
    const dir = tempDir();
    const first = await startLabCli(['--nodes', '2', '--data-dir', dir, '--models', 'gpu:1'], /Redfish nodes at/);
    const table = (await run(process.execPath, [ESI, 'lab', 'status', '--data-dir', dir], { cwd: ROOT })).stdout;
    expect(table).toMatch(/running \(pid \d+\), Redfish at http:\/\/127\.0\.0\.1:\d+/);
    expect(table).toMatch(/node-0 .*simulated .*True .*\/redfish\/v1\/Systems\/node-0 .*gpu \(simulated, 2×40 cores/);
    const before = await statusJson(dir);
    expect(before.map((n) => n.Node)).toEqual(['node-0', 'node-1']);
    expect(await first.stop()).toBe(0);
    expect((await statusJson(dir)).map((n) => n.Running)).toEqual([false, false]);

    const refused = await run(process.execPath, [ESI, 'lab', '--nodes', '2', '--port', '0', '--data-dir', dir, '--models', 'small:1'], {
      cwd: ROOT,
    }).catch((e: { code: number; stderr: string }) => e);
    expect('code' in refused && refused.code).toBe(1);
    const message = (refused as { stderr: string }).stderr;
    expect(message).toContain(`refusing to change the hardware of 1 lab node(s) kept in ${dir}/lab/lab-state.json`);
    expect(message).toMatch(/node-0: gpu \(simulated, .*\) → small \(simulated, .*\)/);
    expect(message).toContain('--force');

    const forced = await startLabCli(['--nodes', '2', '--data-dir', dir, '--models', 'small:1', '--force'], /Redfish nodes at/);
    await waitFor(forced.output, (o) => o.includes('node-0: gpu ('), { timeoutMs: 5000, what: 'the --force report' });
    expect(forced.output()).toMatch(/esi: --force changed the model of 1 kept lab node\(s\):\n {2}node-0: gpu \(.*\) → small \(/);
    const after = await statusJson(dir);
    expect(after[0]).toMatchObject({ Node: 'node-0', UUID: before[0]!.UUID, MAC: before[0]!.MAC, Running: true });
    expect(after[0]!.Model).toMatch(/^small \(/);
    expect(after[1]).toMatchObject({ ...before[1], BMC: expect.any(String), Running: true });
    expect(await forced.stop()).toBe(0);
  }, 120_000);
});

describe('esi server --lab on a data directory with a kept lab', () => {
  it('refuses --lab-models that change a kept node before starting anything, and names --lab-force', async () => {
    const dir = tempDir();
    const lab = await startLab({ nodes: 2, persist: { dataDir: dir }, models: parseModelSpec('storage:1') });
    await lab.close();
    const args = ['server', '--port', '0', '--lab', '2', '--lab-port', '0', '--data-dir', dir, '--lab-models', 'gpu:2'];
    const refused = await run(process.execPath, [ESI, ...args], { cwd: ROOT, env: { ...process.env, ESI_ADMIN_PASSWORD: 'x' } }).catch(
      (e: { code: number; stderr: string }) => e,
    );
    expect('code' in refused && refused.code).toBe(1);
    const message = (refused as { stderr: string }).stderr;
    expect(message).toMatch(/node-0: storage \(simulated, .*\) → gpu \(simulated, .*\)\n {2}node-1: default \(simulated, .*\) → gpu \(/);
    expect(message).toContain('--lab-force');
    // Nothing started: no database was created.
    expect(fs.readdirSync(dir)).toEqual(['lab']);
  }, 60_000);
});

describeNeeding(IPMI_TOOLS, 'IPMI lab nodes that keep their ports', () => {
  it('come back on the kept port; a taken one is an error naming node and port; force moves the node and says so', async () => {
    const dir = tempDir();
    const first = await startPersistentIpmiLab(1, '127.0.0.1', { dataDir: dir });
    const port = first.bmcs[0]!.port;
    expect(readLabState(dir)!.ipmi).toEqual([{ name: 'ipmi-0', host: '127.0.0.1', port }]);
    await first.close();
    expect(readLabState(dir)!.ipmiRun!.pid).toBeNull();

    const second = await startPersistentIpmiLab(2, '127.0.0.1', { dataDir: dir });
    expect(second.bmcs.map((b) => b.port)[0]).toBe(port);
    expect(second.moved).toEqual([]);
    const ports = second.bmcs.map((b) => b.port);
    await second.close();

    // Another process takes ipmi-0's port.
    const squatter = dgram.createSocket('udp4');
    await new Promise<void>((r) => squatter.bind(port, '127.0.0.1', () => r()));
    try {
      await expect(startPersistentIpmiLab(2, '127.0.0.1', { dataDir: dir })).rejects.toThrow(
        `IPMI lab node ipmi-0: its UDP port 127.0.0.1:${port} is in use by another process`,
      );
      expect(readLabState(dir)!.ipmi.map((b) => b.port)).toEqual(ports);
      const forced = await startPersistentIpmiLab(2, '127.0.0.1', { dataDir: dir, force: true });
      try {
        const moved = forced.bmcs[0]!.port;
        expect(moved).not.toBe(port);
        expect(forced.moved).toEqual([{ name: 'ipmi-0', host: '127.0.0.1', from: port, to: moved }]);
        expect(forced.bmcs[1]!.port).toBe(ports[1]);
        expect(readLabState(dir)!.ipmi.map((b) => b.port)).toEqual([moved, ports[1]]);
      } finally {
        await forced.close();
      }
    } finally {
      squatter.close();
    }
  }, 120_000);
});
