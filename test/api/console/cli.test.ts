/**
 * `esi node console <node>` as a real child process over pipes (no terminal): the owner types
 * at a lab node and sees the echo, then disconnects with `~.`; the lessee only watches; other
 * projects and disabled consoles get a clear error and exit code 1.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { personaEnv, type LoginName } from '../cli/support.ts';
import { startConductorEnv, type ConductorEnv } from '../conductor/support.ts';
import { itNeeding, TOOLS } from '../../helpers/tools.ts';
import { consoleNode } from './support.ts';
import { waitFor } from '../../helpers/wait-for.ts';

const ESI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../bin/esi.js');

let env: ConductorEnv;
let node: any;

beforeAll(async () => {
  env = await startConductorEnv(2);
  node = await consoleNode(env, 'node-0');
  await consoleNode(env, 'node-1');
  env.lab.systems.setPowerState('node-0', 'On');
}, 60_000);
afterAll(async () => env?.close());

/** A running `esi` child with its output so far. */
interface Run {
  readonly child: ChildProcessWithoutNullStreams;
  stdout(): string;
  stderr(): string;
  until(re: RegExp, stream?: 'stdout' | 'stderr'): Promise<void>;
  readonly exit: Promise<number>;
}

/** Run `esi <args>` as `who`; with `tty`, inside a pseudo-terminal made by util-linux `script`. */
function run(args: string[], who: LoginName, tty = false): Run {
  const e: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('OS_')) e[k] = v;
  Object.assign(e, personaEnv(env.ts, who));
  const quoted = [process.execPath, ESI, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const child = tty
    ? spawn('/usr/bin/script', ['-qfec', quoted, '/dev/null'], { env: e })
    : spawn(process.execPath, [ESI, ...args], { env: e });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exit = new Promise<number>((resolve) => child.on('exit', (code) => resolve(code ?? 1)));
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  void exit.then(() => clearTimeout(timer));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    async until(re, stream = 'stdout') {
      await waitFor(
        () => ({ out, err }),
        (seen) => re.test(stream === 'stdout' ? seen.out : seen.err),
        {
          timeoutMs: 15_000,
          intervalMs: 25,
          what: `${stream} matching ${re}`,
          show: (seen) => ({ stdout: seen.out.slice(-400), stderr: seen.err }),
        },
      );
    },
    exit,
  };
}

describe('esi node console', () => {
  it('owner: --enable, sees the console, types, sees the echo, and leaves with ~.', async () => {
    const r = run(['node', 'console', 'node-0', '--enable'], 'owner');
    await r.until(/connected to the serial console of node node-0 \(read-write\)/, 'stderr');
    env.lab.serial.note('node-0', 'hello from the lab node');
    await r.until(/hello from the lab node/);
    r.child.stdin.write('typed-by-cli\r');
    await r.until(/typed-by-cli\r\n/);
    r.child.stdin.write('~.');
    expect(await r.exit).toBe(0);
    expect(r.stderr()).toMatch(/disconnected from node node-0/);
    expect(env.lab.serial.scrollback('node-0').toString()).toContain('typed-by-cli');
    expect(r.stdout()).not.toContain('password');
  });

  it('lessee: read-only by default (input ignored); --read-only sends nothing; --duration detaches', async () => {
    const r = run(['node', 'console', node.uuid, '--duration', '3'], 'lessee');
    await r.until(/\(read-only\)/, 'stderr');
    r.child.stdin.write('lessee-cli-keys\r');
    await r.until(/input ignored/);
    expect(await r.exit).toBe(0);
    expect(r.stdout()).not.toContain('lessee-cli-keys');

    const ro = run(['node', 'console', 'node-0', '--read-only', '--duration', '2'], 'owner');
    await ro.until(/\(read-only\)/, 'stderr');
    ro.child.stdin.write('owner-watching\r');
    expect(await ro.exit).toBe(0);
    expect(ro.stdout()).not.toContain('input ignored');
    expect(env.lab.serial.scrollback('node-0').toString()).not.toContain('owner-watching');
  });

  itNeeding([TOOLS.script], 'on a terminal: raw mode sends Ctrl-C to the node instead of stopping esi; ~. quits', async () => {
    const r = run(['node', 'console', 'node-0', '--enable'], 'owner', true);
    await r.until(/connected to the serial console of node node-0 \(read-write\)/);
    r.child.stdin.write('rawkeys\x03\r');
    // The pseudo-terminal's output processing turns the node's LF into CR LF.
    await r.until(/rawkeys\x03\r\r?\n/);
    expect(env.lab.serial.scrollback('node-0').toString()).toContain('rawkeys\x03');
    r.child.stdin.write('~.');
    expect(await r.exit).toBe(0);
    expect(r.stdout()).toMatch(/disconnected from node node-0/);
  });

  it('another project: not found (exit 1); a disabled console: a clear error with the hint', async () => {
    const other = run(['node', 'console', 'node-0'], 'other');
    expect(await other.exit).toBe(1);
    expect(other.stderr()).toMatch(/not found|could not be found/i);
    const disabled = run(['node', 'console', 'node-1'], 'owner');
    expect(await disabled.exit).toBe(1);
    expect(disabled.stderr()).toMatch(/not enabled.*--enable/);
    const bad = run(['node', 'console', 'node-0', '--ttl', 'soon'], 'owner');
    expect(await bad.exit).toBe(1);
    expect(bad.stderr()).toMatch(/--ttl takes a whole number/);
  });
});
