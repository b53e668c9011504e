/**
 * The image janitor worker (a `BackgroundWorker` of conductor processes): runs the image
 * janitor's sweep (src/domain/images/janitor.ts) when it starts and then every `intervalMs`, so
 * that the temporary files of killed uploads and the data of deleted images do not fill the
 * disk (issue 23). Sweeps never overlap; a failed sweep is logged and the next one runs on time.
 */
import type { ImageJanitor, JanitorLog } from '../domain/images/janitor.ts';
import { PeriodicSweep } from './periodic-sweep.ts';

/** How often the image store is swept by default, ms (10 minutes). */
export const IMAGE_SWEEP_INTERVAL_MS = 10 * 60 * 1000;

/** Sweeps the image store at start and periodically. */
export class ImageJanitorWorker extends PeriodicSweep {
  constructor(janitor: Pick<ImageJanitor, 'sweep'>, log: JanitorLog, intervalMs = IMAGE_SWEEP_INTERVAL_MS) {
    super('image-janitor', () => janitor.sweep(), log, intervalMs);
  }
}
