/**
 * One live process per conductor name (issue 21): before a conductor registers and fails the
 * nodes still reserved under its name (what a restart after a crash must do), it makes sure no
 * other live process uses that name. A registration whose heartbeat is recent may be the name's
 * previous, crashed process or another process running now; watching it for a bit more than
 * one heartbeat interval tells them apart: a live process's heartbeat advances.
 */
import { isLive } from './conductors.ts';
import type { ConductorRepository } from './ports.ts';

/** Another live process runs a conductor of the name this process was to start with. */
export class ConductorNameInUse extends Error {
  /** @param hostname the conductor name in use */
  constructor(readonly hostname: string) {
    super(
      `conductor name "${hostname}" is in use by another live process (its heartbeat advanced while this process waited); ` +
        'start this conductor with another name (--conductor-name, ESI_CONDUCTOR_HOSTNAME), or, when it has the default ' +
        'name (<host>-<id> of <data-dir>/conductor-id), with a data directory of its own (--data-dir)',
    );
    this.name = 'ConductorNameInUse';
  }
}

/** How {@link claimConductorName} watches a registration. */
export interface NameWatch {
  /** How long a recent registration is watched, ms: a bit more than one heartbeat interval. */
  readonly watchMs: number;
  /** How often it is read meanwhile, ms. */
  readonly pollMs: number;
  /** Waits `ms` (default: a timer); tests pass their own. */
  readonly sleep?: (ms: number) => Promise<void>;
}

/** What {@link claimConductorName} found: the name is this process's to register. */
export type NameClaim =
  /** No registration of the name. */
  | 'unregistered'
  /** A registration silent for longer than its dead-after, or removed while watched. */
  | 'dead'
  /** A recent registration whose heartbeat did not advance while watched: a crashed process. */
  | 'silent';

/**
 * Watch times for a heartbeat every `heartbeatIntervalMs`: the interval plus a quarter of it (at
 * least 1 s more), read every quarter interval (at most every 500 ms).
 */
export function nameWatchFor(heartbeatIntervalMs: number): NameWatch {
  return {
    watchMs: heartbeatIntervalMs + Math.max(1000, heartbeatIntervalMs / 4),
    pollMs: Math.min(500, Math.max(50, heartbeatIntervalMs / 4)),
  };
}

/**
 * Check that no other live process uses conductor name `hostname`; call it before registering.
 * Without a registration, or with one silent for longer than its dead-after (by the database's
 * clock), it returns at once; with a recent one, it reads it every `pollMs` for `watchMs`.
 * @returns how the name was found (see {@link NameClaim})
 * @throws ConductorNameInUse as soon as the registration's heartbeat advances
 */
export async function claimConductorName(repo: ConductorRepository, hostname: string, watch: NameWatch): Promise<NameClaim> {
  const row = async () => (await repo.list()).find((c) => c.hostname === hostname) ?? null;
  const find = async (): Promise<number | null> => (await row())?.updated_at ?? null;
  const registered = await row();
  if (registered === null) return 'unregistered';
  if (!isLive(registered)) return 'dead';
  const first = registered.updated_at;
  const sleep = watch.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  for (let waited = 0; waited < watch.watchMs;) {
    const step = Math.min(watch.pollMs, watch.watchMs - waited);
    await sleep(step);
    waited += step;
    const now = await find();
    if (now === null) return 'dead';
    if (now !== first) throw new ConductorNameInUse(hostname);
  }
  return 'silent';
}
