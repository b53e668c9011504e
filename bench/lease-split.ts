/**
 * Split-mode set-up of the leasing benchmarks (issue 21, item 1): a fresh PostgreSQL database,
 * a conductor in its own process (`node bin/esi.js server --roles conductor`, lease sweep at its
 * 30 s default) and the API in this process (`startLeaseBench` with `roles: 'api'`), as an
 * operator runs them. Leases created through the API reach the conductor only through the
 * database: its sweep, or PostgreSQL's notifications (src/server/change-events.ts).
 *
 * Everything is removed at close (the process, the database), also on Ctrl-C (lib/cleanup.ts).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startLeaseBench, type LeaseBench } from './lease-env.ts';
import { onCleanup } from './lib/cleanup.ts';
import { adminSql } from './lib/local.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Start a conductor process on `dbUrl` and wait until it runs (it prints `listening on`).
 * @returns a function that stops it (SIGTERM, then SIGKILL after 10 s) and removes its data directory
 * @throws Error with its output when it exits first or takes longer than 60 s
 */
async function startConductor(dbUrl: string, env: Record<string, string>): Promise<() => Promise<void>> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-split-conductor-'));
  const child = spawn(process.execPath, ['bin/esi.js', 'server', '--roles', 'conductor', '--port', '0', '--data-dir', dataDir], {
    cwd: ROOT,
    env: { ...process.env, ESI_DATABASE_URL: dbUrl, ESI_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`conductor process: not running after 60 s:\n${out}`)), 60_000);
    const onData = (d: Buffer) => {
      out += d.toString();
      if (/listening on/.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`conductor process exited (${code}):\n${out}`));
    });
  });
  return async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(t);
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
}

/**
 * Create a database next to `pgUrl`'s, start a conductor process on it, then the API in this
 * process. The bench's `close` stops both and drops the database.
 * @throws Error when a process cannot start
 */
export async function startSplitLeaseBench(o: { pgUrl: string; lessees: number; log: (line: string) => void }): Promise<LeaseBench> {
  const name = `esi_split_${randomBytes(5).toString('hex')}`;
  await adminSql(o.pgUrl, `create database ${name}`);
  const url = new URL(o.pgUrl);
  url.pathname = `/${name}`;
  const dbUrl = url.toString();
  const dropDb = onCleanup(`database ${name}`, () => adminSql(o.pgUrl, `drop database if exists ${name} with (force)`));
  // Shared by both processes: whichever starts first creates the admin with it.
  const env = {
    ESI_ADMIN_PASSWORD: randomBytes(18).toString('base64url'),
    ESI_SECRET_KEY: randomBytes(32).toString('base64'),
    ESI_POWER_SYNC_INTERVAL: '86400',
    ESI_AUTOMATED_CLEAN: 'false',
  };
  let stopConductor: (() => Promise<void>) | null = null;
  try {
    stopConductor = await startConductor(dbUrl, env);
    const conductorDown = onCleanup('conductor process', stopConductor);
    const bench = await startLeaseBench({
      pgUrl: dbUrl,
      lessees: o.lessees,
      roles: 'api',
      ownSchema: false,
      idleConductor: false,
      env,
      log: o.log,
    });
    o.log(`split: a conductor process and the API (this process) on database ${name}`);
    return {
      ...bench,
      label: 'esi/postgres split',
      async close() {
        await bench.close();
        await conductorDown();
        await dropDb();
      },
    };
  } catch (err) {
    await stopConductor?.();
    await dropDb();
    throw err;
  }
}
