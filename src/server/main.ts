/**
 * `esi server`: start one esi process with the roles its configuration names (all-in-one by
 * default: every API plus the conductor and the lease manager), bootstrap the identity store
 * on first start, optionally start the virtual lab, and shut down cleanly on SIGINT/SIGTERM.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { bootstrapIdentity } from '../domain/identity/index.ts';
import { KyselyIdentityRepository } from '../store/identity/repository.ts';
import { buildApp } from './app.ts';
import type { Config } from './config.ts';
import { createServices, type ContainerOverrides } from './container.ts';
import { checkConductorName, withConductorName } from './conductor-name.ts';
import { listenFailure } from './preflight.ts';
import type { Services } from './services.ts';

/** A running server. */
export interface RunningServer {
  readonly services: Services;
  /** Base URL the API listens on (e.g. `http://127.0.0.1:8585`), or null without the api role. */
  readonly url: string | null;
  readonly app: FastifyInstance | null;
  /** Stop workers, the HTTP listener, the lab and the database, in that order. */
  close(): Promise<void>;
}

/** The lock key the first-start identity bootstrap holds (`Store.withLock`). */
const BOOTSTRAP_LOCK = 'identity:bootstrap';

/** Options of {@link startServer} beyond the configuration. */
export interface StartOptions extends ContainerOverrides {
  /** Extra resources to close with the server (e.g. a lab started alongside). */
  readonly onClose?: Array<() => Promise<void>>;
}

/**
 * Start a server process in-process (used by `esi server` and by tests).
 * @throws Error when the database cannot be opened or the port cannot be bound
 * @throws ConductorNameInUse (with the conductor role) when another live process runs a
 *   conductor of this process's name (src/server/conductor-name.ts); nothing was started
 */
export async function startServer(requested: Config, options: StartOptions = {}): Promise<RunningServer> {
  const config = withConductorName(await withConcretePort(requested));
  const services = await createServices(config, options);
  if (config.roles.includes('conductor')) {
    // Before anything registers or fails nodes reserved under this name (issue 21).
    await checkConductorName(services).catch(async (err: unknown) => {
      await services.inventory.hardware.close();
      await services.store.close();
      throw err;
    });
  }
  // Serialised across processes (issue 21): processes started at once on a fresh PostgreSQL
  // database each find the built-ins missing; under the lock the later ones find them made.
  const boot = await services.store.withLock([BOOTSTRAP_LOCK], (tx) =>
    bootstrapIdentity(new KyselyIdentityRepository(tx), services.clock, config.adminPassword),
  );
  if (boot.createdAdmin && boot.adminPassword) {
    writeOpenrc(config, boot.adminPassword);
    if (boot.generated) {
      // Printed once, on the first start only; it is also in <data-dir>/admin-openrc (mode 0600).
      process.stdout.write(`esi: created user "admin" in project "admin" with password: ${boot.adminPassword}\n`);
    }
  } else if (boot.givenPasswordDiffers) {
    // The given password applies on the first start only; say so rather than ignore it.
    const message =
      'ESI_ADMIN_PASSWORD differs from the password of user "admin", which is set on the first start only; ' +
      `it was not applied (run \`esi admin reset-password\` to change it; ${openrcPath(config)} holds the password in use)`;
    services.logger.warn(message);
    process.stderr.write(`esi: ${message}\n`);
  } else if (config.adminPassword && !fs.existsSync(openrcPath(config))) {
    writeOpenrc(config, config.adminPassword);
  }

  // Registered before it serves: this process's lease claims carry its id (issue 23).
  await services.apiHeartbeat?.start();
  let app: FastifyInstance | null = null;
  let url: string | null = null;
  if (config.roles.includes('api')) {
    app = await buildApp(services);
    const address = await app.listen({ host: config.host, port: config.port }).catch((err: unknown) => {
      // Taken since the start-up check (./preflight.ts), or a server started in-process.
      throw listenFailure(err, 'the API', config.host, config.port, '--port (ESI_PORT)');
    });
    url = config.publicUrl;
    services.logger.debug({ address }, 'esi api listening');
  }
  // Listen for other processes' changes (PostgreSQL) before the workers' first sweep and poll,
  // so that nothing committed in between is missed (src/server/change-events.ts).
  await services.store.changeHints?.start();
  const started: Array<{ stop(): Promise<void> }> = [];
  if (config.roles.includes('conductor')) {
    for (const worker of services.workers) {
      await worker.start();
      started.push(worker);
    }
  }
  let closed = false;
  return {
    services,
    url,
    app,
    async close() {
      if (closed) return;
      closed = true;
      for (const w of started.reverse()) await w.stop();
      if (app) await app.close();
      await services.apiHeartbeat?.stop();
      for (const fn of options.onClose ?? []) await fn();
      await services.inventory.hardware.close();
      await services.store.close();
    },
  };
}

/**
 * Port 0 means "any free port": pick one now, before the services are built, so that the
 * public URL in the catalogue, links and admin-openrc names the real port.
 */
async function withConcretePort(config: Config): Promise<Config> {
  if (config.port !== 0) return config;
  const port = await new Promise<number>((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, config.host, () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
  const publicUrl = config.publicUrl.replace(/:0$/, `:${port}`);
  return Object.freeze({ ...config, port, publicUrl });
}

/** Path of the admin credentials file a user can `source`. */
export function openrcPath(config: Config): string {
  return path.join(config.dataDir, 'admin-openrc');
}

/**
 * Write `<data-dir>/admin-openrc` (mode 0600): the `OS_*` settings of user `admin` with
 * `password`, for `source` before running `openstack` or `esi`.
 */
export function writeOpenrc(config: Config, password: string): void {
  fs.mkdirSync(config.dataDir, { recursive: true });
  const quoted = `'${password.replace(/'/g, `'\\''`)}'`;
  const lines = [
    '# esi admin credentials: `source` this file before running `openstack` or `esi`.',
    `export OS_AUTH_URL=${config.publicUrl}/identity/v3`,
    'export OS_AUTH_TYPE=password',
    'export OS_IDENTITY_API_VERSION=3',
    'export OS_USERNAME=admin',
    `export OS_PASSWORD=${quoted}`,
    'export OS_PROJECT_NAME=admin',
    'export OS_USER_DOMAIN_NAME=Default',
    'export OS_PROJECT_DOMAIN_NAME=Default',
    `export OS_REGION_NAME=${config.identity.region}`,
    'export OS_INTERFACE=public',
    '',
  ];
  fs.writeFileSync(openrcPath(config), lines.join('\n'), { mode: 0o600 });
}
