/**
 * The change feed of the dashboard's live channel (issue 20, item 6): what a change is, and
 * the ports that read the change log and deliver its rows as they come.
 *
 * The change log (migration 0025, src/store/migrations/0025_change_log.ts) gets a row from
 * database triggers whenever a node, a lease or an offer is created, changed in a way a viewer
 * sees, or deleted — whichever process wrote it. A row names the resource and the projects that
 * may see the change, never its field values: a client told of a change reads the resource
 * through the API, whose policy decides what it may see of it.
 */

/** What kind of resource changed. */
export type ChangeKind = 'node' | 'lease' | 'offer';

/** What happened to it. */
export type ChangeOp = 'create' | 'update' | 'delete';

/** One row of the change log. */
export interface ChangeRecord {
  /** The log's cursor: strictly increasing in the order the rows were written (not always committed). */
  readonly seq: number;
  readonly kind: ChangeKind;
  /** The resource's uuid. */
  readonly resource_id: string;
  readonly op: ChangeOp;
  /**
   * Who may see the change (src/domain/changes/visibility.ts): project ids; `^<id>` for a
   * project and its subtree (an offer's `lessee_id`); `*` for every project (a public offer).
   */
  readonly projects: readonly string[];
}

/** The first and last `seq` the log holds (null when it is empty). */
export interface ChangeLogBounds {
  readonly min: number | null;
  readonly max: number | null;
}

/**
 * Reads the change log (implemented in src/store/changes/change-log.ts). Every read is one
 * indexed query on `seq`.
 */
export interface ChangeLogReader {
  /** The first and last `seq` of the log now. */
  bounds(): Promise<ChangeLogBounds>;
  /**
   * Rows after a cursor, in `seq` order: those with `seq > after`, and those whose `seq` is in
   * `also` (rows of transactions that had not committed when a later row was read).
   * @param limit most rows returned
   */
  after(after: number, limit: number, also?: readonly number[]): Promise<ChangeRecord[]>;
  /** Rows with `from < seq <= to`, in `seq` order, at most `limit`. */
  between(from: number, to: number, limit: number): Promise<ChangeRecord[]>;
}

/**
 * Removes old rows of the change log (a conductor's periodic job,
 * src/conductor/change-log-pruner.ts).
 */
export interface ChangeLogPruner {
  /**
   * Delete the rows older than `retentionMs` by the database's clock, except the newest row (the
   * log never becomes empty once written, so that a cursor from before the prune is known to be
   * stale, see {@link ChangeFeed.subscribe}).
   * @returns the number of rows deleted
   */
  prune(retentionMs: number): Promise<number>;
}

/** What a subscriber of the {@link ChangeFeed} is told. */
export interface ChangeListener {
  /**
   * The subscription is live from `seq` on: every later change is delivered by {@link change}.
   * `reset` is true when the cursor the subscriber resumed from is no longer in the log (pruned,
   * or from another database): changes were lost and the subscriber must read everything again.
   * Called once, after the resumed changes (if any) were delivered.
   */
  start(seq: number, reset: boolean): void;
  /** One change, in `seq` order except for a late commit (a row whose `seq` was passed over while its transaction ran). */
  change(record: ChangeRecord): void;
}

/** A subscription; `close()` is idempotent. */
export interface ChangeSubscription {
  close(): void;
}

/**
 * The live feed of the change log in one process: a tailer reads the log while anyone
 * subscribes and hands each row to every subscriber (src/server/change-tailer.ts).
 */
export interface ChangeFeed {
  /**
   * Subscribe from a cursor.
   * @param from the last `seq` the subscriber has seen (SSE `Last-Event-ID`), or null to start
   *   from now; a cursor older than the log's first row, newer than its last, or too far behind
   *   to replay starts with a reset ({@link ChangeListener.start})
   * @returns the subscription; the listener is never called during this call (the first call,
   *   `start`, comes from the feed's next read)
   */
  subscribe(from: number | null, listener: ChangeListener): ChangeSubscription;
}
