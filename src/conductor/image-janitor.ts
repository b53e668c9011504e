/**
 * The image janitor worker (a `BackgroundWorker` of conductor processes): runs the image
 * janitor's sweep (src/domain/images/janitor.ts) when it starts and then every `intervalMs`, so
 * that the temporary files of killed uploads and the data of deleted images do not fill the
 * disk (issue 23). Sweeps never overlap; a failed sweep is logged and the next one runs on time.
 */
import type { ImageJanitor, JanitorLog } from '../domain/images/janitor.ts';
import type { BackgroundWorker } from './worker.ts';

/** How often the image store is swept by default, ms (10 minutes). */
export const IMAGE_SWEEP_INTERVAL_MS = 10 * 60 * 1000;

/** Sweeps the image store at start and periodically. */
export class ImageJanitorWorker implements BackgroundWorker {
  readonly name = 'image-janitor';
  #timer: NodeJS.Timeout | null = null;
  #running: Promise<void> | null = null;

  constructor(
    private readonly janitor: Pick<ImageJanitor, 'sweep'>,
    private readonly log: JanitorLog,
    private readonly intervalMs = IMAGE_SWEEP_INTERVAL_MS,
  ) {}

  /** Sweep once (awaited), then every interval. */
  async start(): Promise<void> {
    await this.runOnce();
    this.#timer = setInterval(() => void this.runOnce(), this.intervalMs);
    this.#timer.unref();
  }

  /** Stop the timer and wait for a sweep in progress. */
  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await this.#running;
  }

  /** One sweep, unless one is running (then that one's promise). Never rejects. */
  runOnce(): Promise<void> {
    this.#running ??= this.janitor
      .sweep()
      .then(
        () => undefined,
        (err: unknown) => this.log.error({ err }, 'image store sweep failed'),
      )
      .finally(() => {
        this.#running = null;
      });
    return this.#running;
  }
}
