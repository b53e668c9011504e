/**
 * The conductor side of a node's exclusive lock (its `reservation`, docs/architecture.md "State and
 * concurrency"): take it with
 * `NodeRepository.reserve`, run the work, and ALWAYS release it — also when the work throws —
 * so that a failed task never leaves a node locked (Ironic's `TaskManager` context).
 *
 * A release that fails (the database is unreachable) is retried a few times; if it still fails
 * the node is remembered as *leaked*: this process takes no new lock on it, and
 * {@link NodeLocks.retryLeaked} (run by the conductor's periodic check) releases it later.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { NodeRepository } from '../domain/inventory/ports.ts';

/** Outcome of {@link NodeLocks.with}: whether the lock was taken, and the work's result. */
export type LockResult<T> = { readonly locked: false } | { readonly locked: true; readonly value: T };

/** Delays between release attempts, ms. */
const RELEASE_RETRIES_MS = [50, 250, 1000];

/** The locks one conductor takes on nodes. */
export class NodeLocks {
  readonly #held = new Map<string, number>();
  readonly #leaked = new Set<string>();

  /**
   * @param host this conductor's hostname (the value written to `reservation`)
   * @param onReleaseError told about every failed release attempt
   */
  constructor(
    private readonly nodes: Pick<NodeRepository, 'reserve' | 'release'>,
    readonly host: string,
    private readonly onReleaseError: (uuid: string, err: unknown) => void,
  ) {}

  /** True while this process holds (or is taking or releasing) the lock of `uuid`. */
  isHeld(uuid: string): boolean {
    return this.#held.has(uuid);
  }

  /** Nodes whose release failed and is still to be retried. */
  get leaked(): readonly string[] {
    return [...this.#leaked];
  }

  /**
   * Run `work` while holding the lock of node `uuid`.
   * @returns `{locked: false}` when another holder has the node (nothing ran)
   * @throws whatever `work` throws, after the lock was released
   */
  async with<T>(uuid: string, work: () => Promise<T>): Promise<LockResult<T>> {
    if (this.#leaked.has(uuid)) return { locked: false };
    this.#enter(uuid);
    try {
      if (!(await this.nodes.reserve(uuid, this.host))) return { locked: false };
      try {
        return { locked: true, value: await work() };
      } finally {
        await this.#release(uuid, this.host);
      }
    } finally {
      this.#leave(uuid);
    }
  }

  /**
   * Take over a node locked by a dead conductor: move its reservation to this conductor in one
   * write (only if `deadHost` still holds it), run `work`, release.
   * @returns `{locked: false}` when the node was not taken (someone else was faster)
   */
  async takeOver<T>(uuid: string, deadHost: string, work: () => Promise<T>): Promise<LockResult<T>> {
    if (this.#leaked.has(uuid)) return { locked: false };
    this.#enter(uuid);
    try {
      if (deadHost === this.host) {
        // This conductor's own reservation, left by a crash before this start: keep it and work.
        return { locked: true, value: await this.#finally(uuid, work) };
      }
      if (!(await this.nodes.reserve(uuid, this.host, deadHost))) return { locked: false };
      return { locked: true, value: await this.#finally(uuid, work) };
    } finally {
      this.#leave(uuid);
    }
  }

  /** Retry the releases that failed earlier (see the module documentation). */
  async retryLeaked(): Promise<void> {
    for (const uuid of [...this.#leaked]) {
      try {
        await this.nodes.release(uuid, this.host);
        this.#leaked.delete(uuid);
      } catch (err) {
        this.onReleaseError(uuid, err);
      }
    }
  }

  async #finally<T>(uuid: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } finally {
      await this.#release(uuid, this.host);
    }
  }

  async #release(uuid: string, host: string): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.nodes.release(uuid, host);
        return;
      } catch (err) {
        this.onReleaseError(uuid, err);
        const delay = RELEASE_RETRIES_MS[attempt];
        if (delay === undefined) {
          this.#leaked.add(uuid);
          return;
        }
        await sleep(delay);
      }
    }
  }

  #enter(uuid: string): void {
    this.#held.set(uuid, (this.#held.get(uuid) ?? 0) + 1);
  }

  #leave(uuid: string): void {
    const n = (this.#held.get(uuid) ?? 1) - 1;
    if (n <= 0) this.#held.delete(uuid);
    else this.#held.set(uuid, n);
  }
}
