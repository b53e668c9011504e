/**
 * The Debian `openstack` CLI run as the test personas of test/helpers/harness.ts
 * (`createPersonas`: admin, owner1 in o1, lessee1 in l1, owner2 in o2), each call a child process
 * with its own `OS_*` password credentials, as a user would after sourcing an openrc file.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ADMIN_PASSWORD } from '../helpers/harness.ts';
import { OPENSTACK } from './cli-driver.ts';

const run = promisify(execFile);

/** A persona of `createPersonas`. */
export type CliPersona = 'admin' | 'owner' | 'lessee' | 'other';

/** User, password and project of each persona (harness passwords are `pw-<user>`). */
export const PERSONA_CREDENTIALS: Readonly<Record<CliPersona, { user: string; password: string; project: string }>> = Object.freeze({
  admin: { user: 'admin', password: ADMIN_PASSWORD, project: 'admin' },
  owner: { user: 'owner1', password: 'pw-owner1', project: 'o1' },
  lessee: { user: 'lessee1', password: 'pw-lessee1', project: 'l1' },
  other: { user: 'owner2', password: 'pw-owner2', project: 'o2' },
});

/** `openstack` as a persona: `os` resolves with stdout (rejects with stderr), `osJson` adds `-f json`. */
export interface PersonaCli {
  os(who: CliPersona, args: readonly string[]): Promise<string>;
  osJson(who: CliPersona, args: readonly string[]): Promise<any>;
}

/**
 * The CLI against the esi whose base URL `baseUrl()` returns when a call is made (so it can be
 * created before the server starts).
 * @param timeoutMs how long one CLI call may take, milliseconds
 */
export function personaCli(baseUrl: () => string, timeoutMs = 60_000): PersonaCli {
  const os = async (who: CliPersona, args: readonly string[]): Promise<string> => {
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('OS_')) env[k] = v;
    const c = PERSONA_CREDENTIALS[who];
    Object.assign(env, {
      OS_AUTH_URL: `${baseUrl()}/identity/v3`,
      OS_AUTH_TYPE: 'password',
      OS_IDENTITY_API_VERSION: '3',
      OS_USERNAME: c.user,
      OS_PASSWORD: c.password,
      OS_PROJECT_NAME: c.project,
      OS_USER_DOMAIN_NAME: 'Default',
      OS_PROJECT_DOMAIN_NAME: 'Default',
      OS_REGION_NAME: 'RegionOne',
      OS_INTERFACE: 'public',
    });
    try {
      return (await run(OPENSTACK, [...args], { env, timeout: timeoutMs })).stdout;
    } catch (err) {
      const e = err as { stderr?: string; message: string };
      throw new Error(e.stderr || e.message, { cause: err });
    }
  };
  return { os, osJson: async (who, args) => JSON.parse(await os(who, [...args, '-f', 'json'])) };
}
