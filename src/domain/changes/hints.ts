/**
 * Change hints (issue 21, item 1): word that a node, lease or offer changed, delivered to every
 * process sharing the database as soon as the change commits — on PostgreSQL by LISTEN/NOTIFY
 * (src/store/change-listener.ts), on SQLite never (one process: the in-process paths, the
 * lease manager's `changed` and the conductor relay, carry every change).
 *
 * A hint carries no field values and may be lost (while the listening connection is down), so
 * receivers re-read what it names, and re-read everything when told to {@link ChangeHintHandler.resync}.
 */
import type { ChangeKind, ChangeOp } from './model.ts';

/** One change, as named by the database's notification. */
export interface ChangeHint {
  readonly kind: ChangeKind;
  readonly op: ChangeOp;
  /** The resource's uuid. */
  readonly id: string;
  /**
   * True when this process wrote the change itself (through its own connection pool): it has
   * already told its own parts in-process, so most receivers skip it.
   */
  readonly local: boolean;
}

/** A receiver of change hints. Neither method may throw (errors are the receiver's to log). */
export interface ChangeHintHandler {
  /** A change committed. */
  hint(hint: ChangeHint): void;
  /** Hints may have been missed (the listening connection was lost and is back): re-read everything. */
  resync(): void;
}

/** A source of change hints (one per process and database). */
export interface ChangeHints {
  /** Add a receiver. @returns a function that removes it */
  subscribe(handler: ChangeHintHandler): () => void;
  /**
   * Start listening; resolves once listening (or once the first attempt failed: it keeps
   * retrying in the background, and receivers get a `resync` when it succeeds). Never rejects.
   */
  start(): Promise<void>;
  /** Stop listening and close the connection. */
  stop(): Promise<void>;
}
