/**
 * The conductor's options, read from the configuration (the conductor itself knows nothing of
 * how esi is configured: it receives these).
 */
import type { ConductorOptions } from '../conductor/conductor.ts';
import type { Config } from './config.ts';

/**
 * The conductor's options from the configuration: `config.conductor` (seconds → ms), the
 * poll every `pollMs` (1 s), `powerSyncWorkers` parallel power reads (Ironic `sync_power_state_workers`, 8), the
 * default group ''.
 */
export function conductorOptionsFrom(config: Pick<Config, 'conductor'>): ConductorOptions {
  const c = config.conductor;
  return {
    hostname: c.hostname,
    group: '',
    workers: c.workers,
    pollIntervalMs: c.pollMs,
    powerTimeoutS: c.powerTimeoutS,
    automatedClean: c.automatedClean,
    powerSyncIntervalMs: c.powerSyncIntervalS * 1000,
    powerSyncMaxRetries: c.powerSyncMaxRetries,
    powerSyncParallelism: c.powerSyncWorkers,
    forcePowerStateDuringSync: c.forcePowerStateDuringSync,
    bmcTimeoutS: c.bmcTimeoutS,
    checkIntervalMs: c.checkProvisionStateIntervalS * 1000,
    deployCallbackTimeoutS: c.deployCallbackTimeoutS,
    cleanCallbackTimeoutS: c.cleanCallbackTimeoutS,
    inspectWaitTimeoutS: c.inspectWaitTimeoutS,
    rescueCallbackTimeoutS: c.rescueCallbackTimeoutS,
  };
}
