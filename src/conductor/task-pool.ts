/**
 * A bounded, keyed task pool: at most `limit` tasks run at once, and at most one task per key
 * (a node UUID) runs at a time in this process. The conductor uses it so that one node never
 * has two of its tasks in flight here (across processes the node's reservation does that job,
 * docs/architecture.md) while many nodes progress in parallel, as Ironic's conductor worker pool
 * does (`[conductor] workers_pool_size`).
 *
 * Semantics:
 * - {@link KeyedTaskPool.submit} of a key that is already queued does nothing (the queued run
 *   will see the newest data); of a key that is running, marks it to run once more after the
 *   current run ends (a change may have arrived after the task read its data).
 * - Tasks start in submission order as slots free up.
 * - A task's rejection is passed to `onError` and never escapes.
 * - {@link KeyedTaskPool.close} drops the queue, refuses new work and resolves once the running
 *   tasks have finished.
 */

/** The work for one key; called afresh for every run. */
export type KeyedTask = () => Promise<void>;

/** See the module documentation. */
export class KeyedTaskPool {
  readonly #limit: number;
  readonly #onError: (key: string, err: unknown) => void;
  readonly #queue = new Map<string, KeyedTask>();
  readonly #running = new Map<string, Promise<void>>();
  readonly #again = new Map<string, KeyedTask>();
  #closed = false;
  #idleWaiters: Array<() => void> = [];

  /**
   * @param limit most tasks running at once (≥ 1)
   * @param onError called with the key and the error when a task rejects
   * @throws RangeError when `limit` is not an integer ≥ 1
   */
  constructor(limit: number, onError: (key: string, err: unknown) => void) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`task pool limit must be an integer >= 1, got ${limit}`);
    this.#limit = limit;
    this.#onError = onError;
  }

  /** True once {@link close} was called. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Tasks running now. */
  get running(): number {
    return this.#running.size;
  }

  /** Tasks waiting for a slot. */
  get queued(): number {
    return this.#queue.size;
  }

  /** True when `key` is running or queued. */
  has(key: string): boolean {
    return this.#running.has(key) || this.#queue.has(key);
  }

  /**
   * Run `task` for `key` when a slot is free (see the module documentation for repeats).
   * @returns false when the pool is closed (nothing was scheduled)
   */
  submit(key: string, task: KeyedTask): boolean {
    if (this.#closed) return false;
    if (this.#running.has(key)) {
      this.#again.set(key, task);
      return true;
    }
    if (!this.#queue.has(key)) this.#queue.set(key, task);
    this.#pump();
    return true;
  }

  /** Resolves when nothing is running or queued. */
  idle(): Promise<void> {
    if (this.#running.size === 0 && this.#queue.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** Refuse new work, drop the queue and wait for the running tasks. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#queue.clear();
    this.#again.clear();
    await Promise.allSettled([...this.#running.values()]);
    this.#notifyIdle();
  }

  #pump(): void {
    while (this.#running.size < this.#limit && this.#queue.size > 0) {
      const [key, task] = this.#queue.entries().next().value as [string, KeyedTask];
      this.#queue.delete(key);
      this.#start(key, task);
    }
    this.#notifyIdle();
  }

  #start(key: string, task: KeyedTask): void {
    const run = (async () => {
      try {
        await task();
      } catch (err) {
        try {
          this.#onError(key, err);
        } catch {
          // an error reporter must not break the pool
        }
      }
    })();
    this.#running.set(key, run);
    void run.then(() => {
      this.#running.delete(key);
      const again = this.#again.get(key);
      if (again !== undefined) {
        this.#again.delete(key);
        if (!this.#closed && !this.#queue.has(key)) this.#queue.set(key, again);
      }
      this.#pump();
    });
  }

  #notifyIdle(): void {
    if (this.#running.size !== 0 || this.#queue.size !== 0) return;
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const w of waiters) w();
  }
}
