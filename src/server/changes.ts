/**
 * The live channel's parts in one process (issue 20, item 6): the change tailer that reads the
 * change log (API processes, ./change-tailer.ts) and the channels the dashboard API opens on
 * it (src/domain/changes/channel.ts); the log's pruner runs in conductor processes
 * (src/conductor/change-log-pruner.ts, added to the workers by ./container.ts).
 */
import { ChangeChannels } from '../domain/changes/channel.ts';
import { KyselyChangeLog } from '../store/changes/change-log.ts';
import { ChangeTailer, type ChangeTailerOptions } from './change-tailer.ts';
import type { Services } from './services.ts';

/** Shortest time between two change-log reads woken by change hints, ms. */
const HINT_WAKE_MS = 20;

/** The live channel of one API process. */
export interface LiveChanges {
  readonly tailer: ChangeTailer;
  readonly channels: ChangeChannels;
}

/**
 * Build the tailer and the channels of an API process; nothing runs until a channel opens. On
 * PostgreSQL the store's change hints wake the tailer (a read at once instead of at its tick).
 * Stop the tailer (`tailer.stop()`) when the process closes.
 */
export function createLiveChanges(
  services: Pick<Services, 'store' | 'identity' | 'logger'>,
  options: ChangeTailerOptions = {},
): LiveChanges {
  const tailer = new ChangeTailer(new KyselyChangeLog(services.store), services.logger.child({ component: 'changes' }), options);
  // On PostgreSQL every committed change is notified: read the log soon (at most one wake per
  // HINT_WAKE_MS however many changes commit; a stopped tailer ignores it).
  let due = false;
  const wake = () => {
    if (due) return;
    due = true;
    setTimeout(() => {
      due = false;
      tailer.wake();
    }, HINT_WAKE_MS).unref();
  };
  services.store.changeHints?.subscribe({ hint: wake, resync: wake });
  const directory = services.identity.directory;
  return { tailer, channels: new ChangeChannels(tailer, (projectId) => directory.projectAncestors(projectId)) };
}
