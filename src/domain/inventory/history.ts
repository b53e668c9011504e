/**
 * Node history (Ironic API 1.78, https://docs.openstack.org/api-ref/baremetal/#history-of-nodes;
 * Ironic 21.4 `node_history_record`, `NodeHistoryController`): a per-node journal of errors, faults
 * and notable events, newest last, kept to at most `maxEntries` per node (Ironic
 * `[conductor] node_history_max_entries`, 300) and deleted with the node.
 *
 * - {@link NodeHistory} is the port every flow records through: `record(nodeUuid, entry)`.
 *   Events are stored as given after masking inline passwords (oslo `mask_password`) and
 *   cutting them to {@link MAX_EVENT_LENGTH}; callers pass text already safe to show.
 * - `NodeHistoryService` (./history-service.ts) answers the API (`GET …/history`, `GET …/history/{uuid}`) under
 *   `baremetal:node:history:get` (Ironic's default: admin, observer, owner — not the lessee, as
 *   in ESI's policy sample where everything not listed stays with admin and owner).
 * - Errors and faults reach the history without each flow asking: `history-recorder.ts` wraps
 *   the node repository.
 */
import type { Clock } from '../clock.ts';
import { maskPasswordText } from './masking.ts';

/** Severity of a history entry (Ironic records ERROR and INFO; esi adds WARNING for power-sync mismatches). */
export type HistorySeverity = 'ERROR' | 'WARNING' | 'INFO';

/**
 * What a history entry is about (Ironic's `event_type`: free text naming the activity). esi
 * uses: `provisioning`, `deploy`, `cleaning`, `inspection`, `verify`, `rescue`, `service`,
 * `adoption`, `power`, `power sync`, `console`, `maintenance`, `takeover`, `conductor`.
 */
export type HistoryEventType = string;

/** One entry as stored and shown (`user` is the Keystone user id that caused it, if any). */
export interface NodeHistoryEntry {
  readonly uuid: string;
  /** Epoch ms. */
  readonly created_at: number;
  readonly severity: HistorySeverity;
  readonly event: string;
  readonly event_type: HistoryEventType;
  /** Hostname of the conductor (or API process) that recorded it. */
  readonly conductor: string | null;
  readonly user: string | null;
}

/** What a caller records. */
export interface HistoryRecord {
  readonly eventType: HistoryEventType;
  readonly severity: HistorySeverity;
  readonly event: string;
  readonly user?: string | null;
}

/** The recording port (see the module documentation). */
export interface NodeHistory {
  /**
   * Append an entry to the node's history (a node that no longer exists records nothing).
   * Never throws: a storage failure is reported to the recorder's error callback, because a
   * failed history write must not fail the operation it describes.
   */
  record(nodeUuid: string, entry: HistoryRecord): Promise<void>;
}

/** One page of a node's history. */
export interface HistoryPageQuery {
  /** Internal id of the node. */
  readonly nodeId: number;
  /** Continue after this entry (uuid), oldest first. */
  readonly marker: string | null;
  readonly limit: number;
}

/** Storage of history entries (src/store/inventory/history-repository.ts). */
export interface NodeHistoryRepository {
  /**
   * Insert an entry for the node with this UUID and delete its oldest entries beyond `keep`.
   * @returns false when the node does not exist (nothing stored)
   */
  append(nodeUuid: string, entry: NodeHistoryEntry, keep: number): Promise<boolean>;
  /** A page of the node's entries, oldest first. @throws NotFoundError for an unknown marker */
  list(q: HistoryPageQuery): Promise<NodeHistoryEntry[]>;
  /** One entry of the node, or null. */
  get(nodeId: number, uuid: string): Promise<NodeHistoryEntry | null>;
}

/** Longest event stored, characters (Ironic stores the event as TEXT; esi caps it like `last_error`). */
export const MAX_EVENT_LENGTH = 2000;

/** Ironic's default `[conductor] node_history_max_entries`. */
export const DEFAULT_HISTORY_MAX_ENTRIES = 300;

/** Make event text safe to store: single line, no inline passwords, at most {@link MAX_EVENT_LENGTH}. */
export function cleanEvent(text: string): string {
  const t = maskPasswordText(text.replace(/\s+/g, ' ').trim());
  return t.length <= MAX_EVENT_LENGTH ? t : `${t.slice(0, MAX_EVENT_LENGTH - 3)}...`;
}

/** Options of {@link HistoryRecorder}. */
export interface HistoryRecorderOptions {
  readonly repository: NodeHistoryRepository;
  readonly clock: Clock;
  /** Entries kept per node (≥ 1). */
  readonly maxEntries: number;
  /** Hostname written as `conductor`. */
  readonly host: string;
  /** New entry uuids. */
  readonly newUuid: () => string;
  /** Told about storage failures (logged by the composition root). */
  readonly onError: (err: unknown, nodeUuid: string) => void;
}

/** The {@link NodeHistory} implementation over a repository. */
export class HistoryRecorder implements NodeHistory {
  constructor(private readonly o: HistoryRecorderOptions) {}

  async record(nodeUuid: string, entry: HistoryRecord): Promise<void> {
    const event = cleanEvent(entry.event);
    if (event === '') return;
    try {
      await this.o.repository.append(
        nodeUuid,
        {
          uuid: this.o.newUuid(),
          created_at: this.o.clock.now(),
          severity: entry.severity,
          event,
          event_type: entry.eventType,
          conductor: this.o.host,
          user: entry.user ?? null,
        },
        this.o.maxEntries,
      );
    } catch (err) {
      this.o.onError(err, nodeUuid);
    }
  }
}
