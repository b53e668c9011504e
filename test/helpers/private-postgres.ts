/**
 * A PostgreSQL cluster of a test's own, for tests that stop and start the database server (the
 * shared server at 127.0.0.1:5432 serves other tests and must never be restarted): `initdb` in a
 * temporary directory, `pg_ctl start` on a free loopback port, trust authentication, and
 * `pg_ctl stop` / `start` at the test's command. Everything is removed by {@link PrivateCluster.destroy}.
 *
 * The server binaries are looked up in /usr/lib/postgresql/<version>/bin (Debian's layout, the
 * newest version first) or in `ESI_TEST_PG_BIN`. PostgreSQL refuses to run as root, so when this
 * process is root the commands run as the `postgres` OS user (`runuser -u postgres --`), who
 * then owns the directory. {@link privateClusterUnavailable} says why a cluster cannot be made,
 * for a test to skip with that reason.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './esi-process.ts';

/** The directory holding `initdb` and `pg_ctl`, or null when none is installed. */
function binDir(): string | null {
  const env = process.env.ESI_TEST_PG_BIN;
  if (env) return fs.existsSync(path.join(env, 'pg_ctl')) ? env : null;
  const root = '/usr/lib/postgresql';
  if (!fs.existsSync(root)) return null;
  const versions = fs
    .readdirSync(root)
    .filter((v) => fs.existsSync(path.join(root, v, 'bin', 'pg_ctl')) && fs.existsSync(path.join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? null : path.join(root, versions[0], 'bin');
}

const isRoot = () => typeof process.getuid === 'function' && process.getuid() === 0;

/**
 * Why this machine cannot run a private cluster (no server binaries; root without a `postgres`
 * user or `runuser`), or null when it can.
 */
export function privateClusterUnavailable(): string | null {
  if (binDir() === null) return 'no PostgreSQL server binaries (initdb, pg_ctl) in /usr/lib/postgresql/*/bin or ESI_TEST_PG_BIN';
  if (isRoot()) {
    if (spawnSync('id', ['-u', 'postgres']).status !== 0) return 'running as root and there is no postgres OS user to run the server as';
    if (spawnSync('runuser', ['--help']).status !== 0) return 'running as root and runuser(1) is missing';
  }
  return null;
}

/** A running (or stopped, between {@link PrivateCluster.stop} and {@link PrivateCluster.start}) private cluster. */
export interface PrivateCluster {
  /** The server's TCP port on 127.0.0.1 (kept across restarts). */
  readonly port: number;
  /** `postgres://postgres@127.0.0.1:<port>/<database>`. */
  url(database: string): string;
  /** Stop the server: `fast` (clients disconnected, clean shutdown) or `immediate` (as a crash; recovery at the next start). */
  stop(mode: 'fast' | 'immediate'): void;
  /** Start the server again on the same port; returns once it accepts connections. */
  start(): void;
  /** The server's log so far (for failure messages). */
  log(): string;
  /** Stop the server if running and delete its directory. */
  destroy(): void;
}

/**
 * Create and start a private cluster with one database `databases` each (owner `postgres`).
 * @throws when {@link privateClusterUnavailable} gives a reason, or a command fails (its output in the message)
 */
export async function createPrivateCluster(databases: readonly string[]): Promise<PrivateCluster> {
  const reason = privateClusterUnavailable();
  if (reason !== null) throw new Error(reason);
  const bin = binDir()!;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-private-pg-'));
  const data = path.join(dir, 'data');
  const logFile = path.join(dir, 'server.log');
  if (isRoot()) execFileSync('chown', ['postgres:postgres', dir]);
  const run = (cmd: string, args: readonly string[]) => {
    const [file, argv] = isRoot() ? ['runuser', ['-u', 'postgres', '--', path.join(bin, cmd), ...args]] : [path.join(bin, cmd), args];
    const r = spawnSync(file, argv, { cwd: dir, encoding: 'utf8', timeout: 120_000 });
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status ?? r.signal}):\n${r.stdout}\n${r.stderr}`);
    return r.stdout;
  };
  const port = await freePort();
  let running = false;
  const cluster: PrivateCluster = {
    port,
    url: (database) => `postgres://postgres@127.0.0.1:${port}/${database}`,
    stop(mode) {
      run('pg_ctl', ['stop', '-D', data, '-m', mode, '-w', '-t', '60']);
      running = false;
    },
    start() {
      // No fsync (a test's data need not survive a power cut); the socket in the cluster's own directory.
      const opts = `-p ${port} -c listen_addresses=127.0.0.1 -k ${dir} -c fsync=off -c max_connections=100`;
      run('pg_ctl', ['start', '-D', data, '-l', logFile, '-o', opts, '-w', '-t', '60']);
      running = true;
    },
    log: () => (fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8') : ''),
    destroy() {
      try {
        if (running) cluster.stop('immediate');
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  };
  try {
    run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync', '--no-instructions']);
    cluster.start();
    for (const name of databases) run('createdb', ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', name]);
  } catch (err) {
    cluster.destroy();
    throw err;
  }
  return cluster;
}
