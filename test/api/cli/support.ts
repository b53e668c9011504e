/**
 * Helpers of the CLI tests: run `node bin/esi.js …` as a child process with a persona's
 * `OS_*` credentials, as a user would after sourcing an openrc file.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ADMIN_PASSWORD, type TestServer } from '../../helpers/harness.ts';

const ESI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../bin/esi.js');

/** The result of one `esi` run. */
export interface EsiResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Logins of the standard personas (see `createPersonas`). */
export const LOGINS = {
  admin: { user: 'admin', password: ADMIN_PASSWORD, project: 'admin' },
  owner: { user: 'owner1', password: 'pw-owner1', project: 'o1' },
  lessee: { user: 'lessee1', password: 'pw-lessee1', project: 'l1' },
  other: { user: 'owner2', password: 'pw-owner2', project: 'o2' },
} as const;

/** A persona name with credentials. */
export type LoginName = keyof typeof LOGINS;

/** The environment of a persona (project-scoped password login), without other OS_* values. */
export function personaEnv(ts: TestServer, name: LoginName, extra: Record<string, string> = {}): Record<string, string> {
  const l = LOGINS[name];
  return {
    OS_AUTH_URL: `${ts.url}/identity/v3`,
    OS_USERNAME: l.user,
    OS_PASSWORD: l.password,
    OS_PROJECT_NAME: l.project,
    OS_USER_DOMAIN_NAME: 'Default',
    OS_PROJECT_DOMAIN_NAME: 'Default',
    OS_IDENTITY_API_VERSION: '3',
    OS_INTERFACE: 'public',
    OS_REGION_NAME: 'RegionOne',
    ...extra,
  };
}

/**
 * Run `esi <args>` with exactly the given OS_* settings (inherited OS_* variables removed).
 * Never rejects: the exit code is in the result.
 */
export function esi(args: string[], osEnv: Record<string, string>): Promise<EsiResult> {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('OS_')) env[k] = v;
  Object.assign(env, osEnv);
  return new Promise((resolve) => {
    execFile(process.execPath, [ESI, ...args], { env, timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** Run `esi <args> -f json` and parse stdout; throws with stderr when it fails. */
export async function esiJson(args: string[], osEnv: Record<string, string>): Promise<any> {
  const r = await esi([...args, '-f', 'json'], osEnv);
  if (r.code !== 0) throw new Error(`esi ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

/**
 * Run `esi <args>` as {@link esi} does, with its stdout and stderr merged into one pipe
 * (`2>&1`), as a log collector or `esi … 2>&1 | tee` sees them: `output` holds both in the order
 * they arrived. Never rejects.
 */
export function esiMerged(args: string[], osEnv: Record<string, string>): Promise<{ code: number; output: string }> {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('OS_')) env[k] = v;
  Object.assign(env, osEnv);
  return new Promise((resolve) => {
    // `exec … 2>&1`: the shell gives esi's stderr the same pipe as its stdout, then becomes esi.
    execFile('/bin/sh', ['-c', 'exec "$@" 2>&1', 'sh', process.execPath, ESI, ...args], { env, timeout: 120_000 }, (err, stdout) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
      resolve({ code, output: stdout });
    });
  });
}
