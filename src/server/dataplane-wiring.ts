/**
 * The tenant dataplane of the network node (docs/tenant-networking.md): when this process is
 * configured as the network node (`ESI_DATAPLANE_BRIDGE`), a {@link LinuxTenantDataplane} that
 * plugs DHCP servers and routers into that bridge, and the conductor worker that keeps them
 * equal to the database ({@link DataplaneReconciler}). Files go to `<dataDir>/dataplane/`.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { DataplaneReconciler } from '../conductor/dataplane-reconciler.ts';
import type { Networking } from '../domain/networking/index.ts';
import { LinuxTenantDataplane } from '../drivers/network/linux-dataplane.ts';
import type { Config } from './config.ts';

/** Full passes between forced re-applies of unchanged intents (about a minute at the default period). */
const RESYNC_EVERY = 6;

/**
 * The dataplane reconciler of this process, or null when it is not the network node.
 * @throws DataplaneError when the bridge settings are invalid (a start-up error naming the setting)
 */
export function createDataplaneReconciler(o: { config: Config; logger: Logger; networking: Networking }): DataplaneReconciler | null {
  const dp = o.config.network.dataplane;
  if (dp === null) return null;
  const stateDir = path.join(o.config.dataDir, 'dataplane');
  fs.mkdirSync(stateDir, { recursive: true, mode: 0o755 });
  const log = o.logger.child({ component: 'dataplane' });
  const dataplane = new LinuxTenantDataplane({
    switch: { bridge: dp.bridge, mode: dp.mode, flat_vlan: dp.flatVlan, ...(dp.netns !== null ? { netns: dp.netns } : {}) },
    stateDir,
    log: (level, msg) => log[level](msg),
    dnsmasqUser: o.config.network.dhcpUser,
  });
  return new DataplaneReconciler(o.networking, dataplane, log, { pollMs: dp.pollMs, resyncEvery: RESYNC_EVERY });
}
