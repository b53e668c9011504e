/**
 * `esi server` as a child process, for the tests that need a real process (several processes on
 * one database, the CLI against a server with its lab): a free loopback port, the spawn, the wait
 * until it listens, and a stop that waits for the exit.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitFor } from './wait-for.ts';

/** The repository's root (where `bin/esi.js` is). */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** A free TCP port on 127.0.0.1 (closed again before it is returned). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => resolve(typeof a === 'object' && a ? a.port : 0));
    });
  });
}

/** A spawned `esi server` that is listening. */
export interface SpawnedServer {
  readonly child: ChildProcess;
  /** Everything the process printed so far (stdout and stderr). */
  output(): string;
  /** SIGTERM, then SIGKILL if it has not exited after 10 s; resolves once it is gone. */
  stop(): Promise<void>;
}

/**
 * Run `node bin/esi.js server <args>` from the repository's root with `env` added to this
 * process's environment (`ESI_LOG_LEVEL=warn` unless given), and wait until it prints
 * `listening on` (60 s at most).
 * @throws when the process exits first or the wait times out (the process is killed; the
 *   message carries its output)
 */
export async function spawnEsiServer(args: readonly string[], env: Record<string, string>): Promise<SpawnedServer> {
  const child = spawn(process.execPath, ['bin/esi.js', 'server', ...args], {
    cwd: ROOT,
    env: { ...process.env, ESI_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  await waitFor(
    () => {
      if (child.exitCode !== null) throw new Error(`esi server exited (${child.exitCode}):\n${out}`);
      return out;
    },
    (o) => /listening on/.test(o),
    { timeoutMs: 60_000, intervalMs: 100, what: 'esi server to listen', show: (o) => o },
  ).catch((err: unknown) => {
    child.kill('SIGKILL');
    throw err;
  });
  return {
    child,
    output: () => out,
    async stop() {
      if (child.exitCode !== null) return;
      const done = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await Promise.race([done, new Promise((r) => setTimeout(r, 10_000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}
