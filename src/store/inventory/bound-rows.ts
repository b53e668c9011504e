/**
 * Shared parts of the inventory resource repositories (migration 0017): keyset pagination of
 * one table, and the claim of a node's row that makes writes of node-bound rows (portgroups,
 * volume connectors and targets) wait for, and be refused by, the node's conductor
 * reservation — as port writes are (`port-repository.ts`).
 *
 * The claim is `UPDATE nodes SET version = version + 1 WHERE id = ? AND reservation IS NULL`
 * (plus `AND power_state = 'power off'` when the write requires it): it row-locks the node
 * (PostgreSQL) or holds the single writer (SQLite) until commit. The node's display document
 * holds none of these rows and stays valid.
 */
import { sql, type Expression, type SqlBool } from 'kysely';
import type { BoundWriteOptions, ResourcePage } from '../../domain/inventory/resource-ports.ts';
import { TEXT_SORT_KEYS } from '../../domain/inventory/resource-model.ts';
import { toBool, type Tx } from '../database.ts';
import { DISPLAY_IN_STEP } from './node-display.ts';

/** Why a node claim failed. */
export type ClaimFailure = 'reserved' | 'missing' | 'powered';

/**
 * Claim `nodeId`'s row for the transaction.
 * @returns null when claimed, else why not
 */
export async function claimNode(tx: Tx, nodeId: number, options: BoundWriteOptions = {}): Promise<ClaimFailure | null> {
  let q = tx
    .updateTable('nodes')
    .set({ version: sql`version + 1`, display_version: DISPLAY_IN_STEP })
    .where('id', '=', nodeId)
    .where('reservation', 'is', null);
  if (options.requirePowerOff) q = q.where('power_state', '=', 'power off');
  const r = await q.executeTakeFirst();
  if (Number(r.numUpdatedRows) === 1) return null;
  const n = await tx.selectFrom('nodes').select(['reservation', 'power_state']).where('id', '=', nodeId).executeTakeFirst();
  if (!n) return 'missing';
  return n.reservation !== null ? 'reserved' : 'powered';
}

/**
 * Claim several node rows in id order (a move touches two); stops at the first failure.
 * @returns null when all are claimed, else why not
 */
export async function claimNodes(tx: Tx, nodeIds: readonly number[], options: BoundWriteOptions = {}): Promise<ClaimFailure | null> {
  for (const id of [...new Set(nodeIds)].sort((a, b) => a - b)) {
    const failure = await claimNode(tx, id, options);
    if (failure !== null) return failure;
  }
  return null;
}

/** The SQL expression a list sorts by: the column with NULL mapped to '' (text) or -1. */
export function sortExpression(table: string, key: string): Expression<unknown> {
  const ref = sql.ref(`${table}.${key}`);
  if (key === 'id') return ref;
  return TEXT_SORT_KEYS.has(key) ? sql`coalesce(${ref}, '')` : sql`coalesce(${ref}, -1)`;
}

/** The marker row's value of the sort expression. */
function markerValue(marker: Record<string, unknown>, key: string): string | number {
  const v = marker[key];
  if (TEXT_SORT_KEYS.has(key)) return typeof v === 'string' ? v : '';
  if (typeof v === 'boolean') return toBool(v);
  return typeof v === 'number' ? v : -1;
}

/** The keyset condition "after the marker" of a page, or null for the first page. */
export function afterMarker<T extends { id: number }>(table: string, page: ResourcePage<T, unknown>): Expression<SqlBool> | null {
  if (page.marker === null) return null;
  const op = sql.raw(page.sortDir === 'asc' ? '>' : '<');
  const id = sql.ref(`${table}.id`);
  if (page.sortKey === 'id') return sql<SqlBool>`${id} ${op} ${page.marker.id}`;
  const expr = sortExpression(table, page.sortKey);
  const mv = markerValue(page.marker, page.sortKey);
  return sql<SqlBool>`(${expr} ${op} ${mv} or (${expr} = ${mv} and ${id} ${op} ${page.marker.id}))`;
}
