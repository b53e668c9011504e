/**
 * WAL checkpoints of the embedded SQLite database, moved off the request path.
 *
 * In WAL mode with `synchronous = NORMAL`, a commit only appends to the WAL file (no fsync);
 * every ~1,000 pages SQLite's automatic checkpoint copies the WAL into the database file and
 * fsyncs it — inside whichever commit crossed the threshold. That one commit takes milliseconds
 * instead of microseconds: with a lease admission writing ~20 pages, 2–3 % of admissions paid it
 * (bench/lease-admission.ts: p98 5.7 ms against p50 0.6 ms, all of it in `COMMIT`).
 *
 * Here the automatic checkpoint is turned off on the store's connection and a worker thread,
 * with its own connection to the same file, runs `PRAGMA wal_checkpoint(PASSIVE)` every
 * `intervalMs`. A passive checkpoint never blocks writers or readers (SQLite copies what it can
 * and leaves the rest for the next pass), so commits on the main thread stay appends, and the
 * WAL is reset as usual after a complete checkpoint. Durability is that of `synchronous =
 * NORMAL` in WAL mode, as before. If the worker fails, automatic checkpoints are turned back on.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type SQLite from 'better-sqlite3';

/** A running checkpointer. */
export interface Checkpointer {
  /** Run a last checkpoint, stop the worker and turn automatic checkpoints back on. */
  stop(): Promise<void>;
}

/** The worker's code (CommonJS, evaluated in the worker thread). */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.module);
const db = new Database(workerData.file);
db.pragma('busy_timeout = 5000');
const checkpoint = () => {
  try { db.pragma('wal_checkpoint(PASSIVE)'); } catch (e) { parentPort.postMessage({ error: String((e && e.message) || e) }); }
};
const timer = setInterval(checkpoint, workerData.intervalMs);
parentPort.on('message', (m) => {
  if (m !== 'stop') return;
  clearInterval(timer);
  checkpoint();
  db.close();
  parentPort.postMessage({ stopped: true });
});
`;

/**
 * Start checkpointing `file` in a worker thread and turn off automatic checkpoints on
 * `database` (the store's connection to the same file).
 * @param intervalMs pause between two passive checkpoints (default 250 ms)
 * @param onError told of a failed checkpoint (the next pass tries again)
 */
export function startCheckpointer(
  database: SQLite.Database,
  file: string,
  intervalMs = 250,
  onError: (message: string) => void = () => undefined,
): Checkpointer {
  const module = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { file, intervalMs, module } });
  worker.unref();
  database.pragma('wal_autocheckpoint = 0');
  let stopped: Promise<void> | null = null;
  const fallBack = (): void => {
    if (database.open) database.pragma('wal_autocheckpoint = 1000');
  };
  worker.on('message', (m: { error?: string }) => {
    if (m.error) onError(m.error);
  });
  worker.on('error', (err) => {
    onError(err.message);
    fallBack();
  });
  return {
    stop() {
      stopped ??= new Promise<void>((resolve) => {
        const done = (): void => {
          fallBack();
          resolve();
        };
        worker.once('exit', done);
        worker.on('message', (m: { stopped?: boolean }) => {
          if (m.stopped) void worker.terminate();
        });
        worker.postMessage('stop');
        // A worker that does not answer within a second is terminated.
        setTimeout(() => void worker.terminate(), 1000).unref();
      });
      return stopped;
    },
  };
}
