/**
 * This process's conductor name (issue 21): the one given (`--conductor-name`,
 * `ESI_CONDUCTOR_HOSTNAME`, `conductor_hostname`), else `<host>-<id>` with `<id>` a short random
 * id kept in `<data-dir>/conductor-id` (created on the first start, mode 0600, reused after), so
 * that the name stays the same across restarts and differs between data directories. And the
 * start-up check that no other live process runs a conductor of that name.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { claimConductorName, nameWatchFor, type NameClaim } from '../domain/inventory/index.ts';
import type { Config } from './config-types.ts';
import type { Services } from './services.ts';
import { StartupError } from './preflight.ts';

/** Path of the file holding this data directory's conductor id. */
export function conductorIdPath(dataDir: string): string {
  return path.join(dataDir, 'conductor-id');
}

/**
 * The conductor id of `dataDir`: read from `<data-dir>/conductor-id`, or, on the first start,
 * 8 random hexadecimal digits written there (mode 0600; a process that creates it at the same
 * moment reads the other's).
 * @returns the id (letters, digits, `-`, `_`; 1 to 64 characters)
 * @throws StartupError when the file cannot be read or written, or holds no valid id
 */
export function persistedConductorId(dataDir: string): string {
  const file = conductorIdPath(dataDir);
  try {
    fs.mkdirSync(dataDir, { recursive: true });
    fs.writeFileSync(file, `${randomBytes(4).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') {
      throw new StartupError(`cannot create ${file}: ${(err as Error).message}; fix the data directory or give --conductor-name`);
    }
  }
  let id: string;
  try {
    id = fs.readFileSync(file, 'utf8').trim();
  } catch (err) {
    throw new StartupError(`cannot read ${file}: ${(err as Error).message}; fix its permissions or give --conductor-name`);
  }
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(id)) {
    throw new StartupError(`${file} holds no valid conductor id (1 to 64 letters, digits, "-" or "_"); remove it to get a new one`);
  }
  return id;
}

/**
 * `config` with its conductor name complete: unchanged when a name was given, else with
 * `conductor.hostname` set to `<host>-<id>` ({@link persistedConductorId}).
 * @throws StartupError as {@link persistedConductorId}
 */
export function withConductorName(config: Config): Config {
  if (config.conductor.name !== null) return config;
  const hostname = `${config.conductor.hostname}-${persistedConductorId(config.dataDir)}`;
  return Object.freeze({ ...config, conductor: Object.freeze({ ...config.conductor, hostname }) });
}

/**
 * Before a conductor process registers: wait while another live process may use its name
 * (src/domain/inventory/conductor-name.ts), watching for `heartbeatIntervalS` plus a little.
 * @returns how the name was found
 * @throws ConductorNameInUse when another live process uses it
 */
export async function checkConductorName(services: Pick<Services, 'config' | 'inventory' | 'logger'>): Promise<NameClaim> {
  const { config, inventory } = services;
  const hostname = config.conductor.hostname;
  const watch = nameWatchFor(config.conductor.heartbeatIntervalS * 1000);
  const claim = await claimConductorName(inventory.conductorRepository, hostname, watch);
  if (claim === 'silent') {
    services.logger.warn(
      { conductor: hostname },
      'conductor: this name was registered by a process that stopped heartbeating; taking over',
    );
  }
  return claim;
}
