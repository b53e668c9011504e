/**
 * Helpers for interop tests that drive a real `esi server` process with real clients: Debian's
 * `openstack` CLI and our `esi` CLI, each run as a child process with `OS_*` credentials in
 * its environment (as a user would after `source admin-openrc`).
 */
import { execFile, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, spawnEsiServer } from '../helpers/esi-process.ts';
export { freePort } from '../helpers/esi-process.ts';

/** Repository root. */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** Debian's OpenStack CLI. */
export const OPENSTACK = '/usr/bin/openstack';

/** A running `esi server` child process. */
export interface EsiProcess {
  readonly url: string;
  readonly labUrl: string | null;
  readonly dataDir: string;
  readonly child: ChildProcess;
  /** The admin `OS_*` environment read from `<data-dir>/admin-openrc`. */
  readonly adminEnv: Record<string, string>;
  /** Everything the server printed so far. */
  output(): string;
  stop(): Promise<void>;
}

/**
 * Start `node bin/esi.js server` with the given arguments on free ports and wait until it
 * listens (up to 60 s).
 */
export async function startEsi(options: { lab?: number; env?: Record<string, string>; dataDir?: string } = {}): Promise<EsiProcess> {
  const port = await freePort();
  const labPort = options.lab ? await freePort() : null;
  const dataDir = options.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'esi-interop-'));
  const args = ['--port', String(port), '--data-dir', dataDir];
  if (options.lab) args.push('--lab', String(options.lab), '--lab-port', String(labPort));
  const server = await spawnEsiServer(args, { ESI_ADMIN_PASSWORD: 'interop-admin-pw', ...options.env });
  const adminEnv = parseOpenrc(fs.readFileSync(path.join(dataDir, 'admin-openrc'), 'utf8'));
  return {
    url: `http://127.0.0.1:${port}`,
    labUrl: labPort ? `http://127.0.0.1:${labPort}` : null,
    dataDir,
    child: server.child,
    adminEnv,
    output: server.output,
    stop: server.stop,
  };
}

/** Parse `export K=V` lines of an openrc file (single-quoted values allowed). */
export function parseOpenrc(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^export ([A-Z_]+)=(.*)$/.exec(line.trim());
    if (!m) continue;
    let v = m[2]!;
    if (v.startsWith("'") && v.endsWith("'")) v = v.slice(1, -1).replace(/'\\''/g, "'");
    env[m[1]!] = v;
  }
  return env;
}

/** Result of one CLI run. */
export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Environment of the CLI user `name` in project `project` (password auth, Default domain). */
export function userEnv(base: Record<string, string>, name: string, password: string, project: string): Record<string, string> {
  return { ...base, OS_USERNAME: name, OS_PASSWORD: password, OS_PROJECT_NAME: project };
}

function run(cmd: string, args: string[], env: Record<string, string>): Promise<CliResult> {
  const clean: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('OS_')) clean[k] = v;
  return new Promise((resolve) => {
    execFile(cmd, args, { cwd: ROOT, env: { ...clean, ...env }, timeout: 120_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code =
        err === null
          ? 0
          : typeof (err as NodeJS.ErrnoException & { code?: unknown }).code === 'number'
            ? Number((err as { code: number }).code)
            : 1;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

/** Run Debian's `openstack` CLI. */
export function openstack(env: Record<string, string>, ...args: string[]): Promise<CliResult> {
  return run(OPENSTACK, args, env);
}

/** Run our `esi` CLI. */
export function esi(env: Record<string, string>, ...args: string[]): Promise<CliResult> {
  return run(process.execPath, [path.join(ROOT, 'bin/esi.js'), ...args], env);
}

/** Run a CLI and parse its `-f json` output; throws with the CLI's stderr when it fails. */
export async function json<T = any>(p: Promise<CliResult>): Promise<T> {
  const r = await p;
  if (r.code !== 0) throw new Error(`command failed (${r.code}): ${r.stderr}${r.stdout}`);
  return JSON.parse(r.stdout) as T;
}

/** Run a CLI and require success; returns stdout. */
export async function ok(p: Promise<CliResult>): Promise<string> {
  const r = await p;
  if (r.code !== 0) throw new Error(`command failed (${r.code}): ${r.stderr}${r.stdout}`);
  return r.stdout;
}
