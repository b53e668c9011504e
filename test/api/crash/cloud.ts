/**
 * The crash suite's cloud (issue 23): one data directory (and, in the api-pg project, one fresh
 * PostgreSQL database) on which real `esi server` processes are started, killed with SIGKILL and
 * started again; JSON calls to the process that runs now, which fail fast once it is gone.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { freePort, ROOT, spawnEsiServer, type SpawnedServer } from '../../helpers/esi-process.ts';
import { testDb } from '../../helpers/harness.ts';
import { createDatabase, http, tokenFor, type TempDatabase } from '../lease/processes.ts';

/** The admin's password in every crash cloud. */
export const ADMIN_PW = 'crash-suite-admin-pw';

/** The server settings of the suite: fast switch retries, a VLAN pool, quick sweeps. */
const SERVER_ENV: Record<string, string> = {
  ESI_ADMIN_PASSWORD: ADMIN_PW,
  ESI_SWITCH_POLL_MS: '100',
  ESI_SWITCH_RETRY_BASE_MS: '20',
  ESI_NETWORK_VLAN_RANGES: 'physnet1:100:399',
  ESI_LEASE_SWEEP_INTERVAL: '2',
  ESI_CONDUCTOR_HEARTBEAT_INTERVAL: '2',
  ESI_CONDUCTOR_DEAD_AFTER: '6',
  ESI_QUOTA_FLOATINGIP: '-1',
};

/** What a call answered: the status and the parsed body. */
export interface Answer {
  readonly status: number;
  readonly body: any;
}

/** Thrown by a call when the process does not answer (it was killed). */
export class ProcessGone extends Error {}

/** A data directory (and database) that outlives the processes run on it. */
export class CrashCloud {
  readonly dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-crash-'));
  readonly secret = randomBytes(32).toString('base64');
  private db: TempDatabase | null = null;
  private server: SpawnedServer | null = null;
  /** The running process's base URL. */
  url = '';
  /** An admin token of the running process. */
  token = '';

  /**
   * @param port the TCP port every process listens on (a free one per start when omitted); a
   *   fixed one for peers that must reach each restarted process at the same URL (the deploy
   *   agents of the capture suite)
   */
  constructor(readonly port: number | null = null) {}

  /** The database's URL (PostgreSQL), or null on SQLite. */
  get databaseUrl(): string | null {
    return this.db?.url ?? null;
  }

  /** Create the PostgreSQL database when the api-pg project runs. */
  async init(): Promise<void> {
    if (testDb() === 'postgres') this.db = await createDatabase();
  }

  private async args(): Promise<{ port: number; args: string[] }> {
    const port = this.port ?? (await freePort());
    const args = ['--port', String(port), '--data-dir', this.dataDir, ...(this.db ? ['--database-url', this.db.url] : [])];
    return { port, args };
  }

  /**
   * Start esi on the cloud's data and wait until it listens; then log in as admin.
   * @throws when it does not start (with its output)
   */
  async start(): Promise<void> {
    const { port, args } = await this.args();
    this.server = await spawnEsiServer(args, { ...SERVER_ENV, ESI_SECRET_KEY: this.secret });
    this.url = `http://127.0.0.1:${port}`;
    this.token = await tokenFor(this.url, 'admin', ADMIN_PW, 'admin');
  }

  /**
   * A start killed with SIGKILL `afterMs` after its spawn (it may be migrating, recovering
   * locks, sweeping or already listening).
   * @returns how far it got: `listening` when it had printed that it listens, else `starting`
   */
  async killDuringStart(afterMs: number): Promise<'listening' | 'starting'> {
    const { args } = await this.args();
    const child = spawn(process.execPath, ['bin/esi.js', 'server', ...args], {
      cwd: ROOT,
      env: { ...process.env, ESI_LOG_LEVEL: 'warn', ...SERVER_ENV, ESI_SECRET_KEY: this.secret },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    await new Promise((r) => setTimeout(r, afterMs));
    const exited = new Promise((r) => child.once('exit', r));
    if (child.exitCode === null) child.kill('SIGKILL');
    await exited.catch(() => undefined);
    if (child.exitCode !== null && child.signalCode === null) throw new Error(`esi server exited (${child.exitCode}) on its own:\n${out}`);
    return /listening on/.test(out) ? 'listening' : 'starting';
  }

  /** SIGKILL the running process and wait until it is gone. */
  async kill(): Promise<void> {
    const s = this.server;
    if (s === null || s.child.exitCode !== null || s.child.signalCode !== null) return;
    const exited = new Promise((r) => s.child.once('exit', r));
    s.child.kill('SIGKILL');
    await exited;
  }

  /** The running process's output so far. */
  output(): string {
    return this.server?.output() ?? '';
  }

  /** Stop the process, drop the database, remove the data directory. */
  async close(): Promise<void> {
    await this.server?.stop();
    await this.db?.drop();
    fs.rmSync(this.dataDir, { recursive: true, force: true });
  }

  /**
   * One JSON call as `token` (the admin's by default) to the running process.
   * @throws ProcessGone when the process does not answer
   */
  async call(method: string, p: string, body?: unknown, token: string = this.token, headers: Record<string, string> = {}): Promise<Answer> {
    try {
      return await http(`${this.url}${p}`, method, token, body, headers);
    } catch (err) {
      throw new ProcessGone(`${method} ${p}: ${String(err)}`);
    }
  }

  /** A baremetal call at microversion 1.82. */
  bm(method: string, p: string, body?: unknown, token?: string): Promise<Answer> {
    return this.call(method, `/baremetal/v1${p}`, body, token, { 'x-openstack-ironic-api-version': '1.82' });
  }
}
