/**
 * What the conductor's loops share: the node storage, the lock keeper, the task environment,
 * the log and this conductor's hostname ({@link ConductorRuntime}); plus helpers to walk every
 * node that matches a filter a page at a time and to run work with bounded parallelism.
 */
import type { Node, NodeField, NodeSlice } from '../domain/inventory/model.ts';
import type { NodeHistory } from '../domain/inventory/history.ts';
import type { NodeFilters, NodeRepository } from '../domain/inventory/ports.ts';
import type { NodeLocks } from './node-lock.ts';
import type { TaskEnv } from './tasks/context.ts';

/** A pino-compatible logger (the conductor logs node UUIDs and messages, never driver_info). */
export interface ConductorLog {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** Shared services of one conductor's loops. */
export interface ConductorRuntime {
  readonly nodes: NodeRepository;
  readonly locks: NodeLocks;
  readonly env: TaskEnv;
  readonly log: ConductorLog;
  /** This conductor's hostname. */
  readonly host: string;
  /** Node history, for events that are not errors written with a node (power-sync mismatches). */
  readonly history: NodeHistory;
}

/** A history that records nothing (conductors built without one, in tests). */
export const NO_HISTORY: NodeHistory = { record: async () => {} };

/** Decides whether a node maps to this conductor (`conductorFor` over the live conductors). */
export type Mine = (node: Pick<Node, 'uuid' | 'driver' | 'conductor_group'>) => boolean;

/** Page size when walking nodes. */
const PAGE = 500;

/**
 * Call `visit` with every node matching `filters`, in creation order, one page at a time.
 * @param fields fields to load besides the identity ones (see `NodeRepository.list`)
 * @param stop checked between pages; walking ends when it returns true
 */
export async function eachNodePage(
  nodes: NodeRepository,
  filters: NodeFilters,
  fields: readonly NodeField[],
  visit: (page: NodeSlice[]) => Promise<void>,
  stop: () => boolean = () => false,
): Promise<void> {
  let marker: Pick<Node, 'id'> | null = null;
  for (;;) {
    const page = await nodes.list({ filters, limit: PAGE, marker, sortKey: 'id', sortDir: 'asc', fields });
    if (page.length > 0) await visit(page);
    if (page.length < PAGE || stop()) return;
    marker = { id: page[page.length - 1]!.id };
  }
}

/**
 * Run `work` for every item with at most `parallelism` running at once.
 * `work` must not throw (errors are the caller's to handle inside `work`).
 */
export async function forEachBounded<T>(
  items: readonly T[],
  parallelism: number,
  work: (item: T) => Promise<void>,
  stop: () => boolean = () => false,
): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.max(1, Math.min(parallelism, items.length)) }, async () => {
    while (next < items.length && !stop()) {
      const item = items[next++]!;
      await work(item);
    }
  });
  await Promise.all(lanes);
}
