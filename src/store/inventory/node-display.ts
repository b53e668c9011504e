/**
 * The stored display documents of nodes (migration 0006): the column values of a node's
 * document, the expression that keeps a document valid across writes that do not change it,
 * and the rebuild of every stale document.
 *
 * The store does not know what a document holds: its owner (the baremetal API's renderer,
 * src/api/baremetal/node-document.ts) hands the store a {@link NodeDocumentCodec} at start-up,
 * and the store writes what it encodes for every node version it writes and hands the text
 * back on request.
 *
 * Validity rule (what readers check, `node-reads.ts`): a document describes the row when
 * `display_version = version` and `display_rev` is the codec's revision.
 */
import { sql, type RawBuilder } from 'kysely';
import type { Node } from '../../domain/inventory/model.ts';
import type { NodeChanges } from '../../domain/inventory/ports.ts';
import type { Db } from '../database.ts';
import { changesToRow, fullRowToNode, NODE_COLUMNS } from './node-rows.ts';

/**
 * What the store needs to keep node documents without knowing their format: a fingerprint of
 * the format (a document stored under another one is rebuilt) and the encoder of a full node.
 */
export interface NodeDocumentCodec {
  /** Fingerprint of the format (stored in `nodes.display_rev`). */
  readonly revision: string;
  /** The document of a full node (any text; the store never reads into it). */
  encode(node: Node): string;
}

/** Rows per batch of {@link refreshDisplays}. */
const REFRESH_BATCH = 500;

/** The display columns of a node as read back from its row (full, current version). */
export function displayColumns(node: Node, codec: NodeDocumentCodec): { display: string; display_version: number; display_rev: string } {
  return { display: codec.encode(node), display_version: node.version, display_rev: codec.revision };
}

/**
 * The display columns of the node that a conditional write of `changes` on `base` (the node as
 * stored, at its `version`) will leave: `base` with the changes, `version + 1` and
 * `updated_at = now`, converted to column values and back as a written row is, so that it
 * can be written by the same statement. The writer compares it with the document of the row it
 * gets back (`RETURNING`) and rewrites it if they differ, so a prediction is never trusted blindly.
 * @param now the write's `updated_at`, epoch ms
 */
export function predictedDisplay(
  base: Node,
  changes: NodeChanges,
  now: number,
  codec: NodeDocumentCodec,
): { display: string; display_version: number; display_rev: string } {
  const merged: Record<string, unknown> = { ...changesToRow(base), ...changesToRow(changes) };
  // In the column order of a returned row: the document must not depend on how it was built.
  const row: Record<string, unknown> = {};
  for (const column of NODE_COLUMNS) row[column] = merged[column];
  row.id = base.id;
  row.version = base.version + 1;
  row.updated_at = now;
  return displayColumns(fullRowToNode(row as never), codec);
}

/**
 * `display_version` for a statement that bumps `version` (`version = version + 1`) without
 * changing anything a document holds (`reservation` and `updated_at` are not in it; a port
 * change touches no node field): a valid document stays valid, a stale one stays stale. Both
 * engines evaluate the right-hand sides of an UPDATE on the old row.
 */
export const DISPLAY_IN_STEP: RawBuilder<number | null> = sql<
  number | null
>`case when display_version = version then version + 1 else display_version end`;

/**
 * Rebuild every document that is missing, stale or made by other code, in batches by id. Each
 * row is written only if its version is still the one read, so a concurrent write (which
 * stores its own document) is never overwritten with an older one.
 * @param readNodes full nodes by internal id (missing ones absent)
 * @returns the number of documents written
 */
export async function refreshDisplays(
  db: Db,
  readNodes: (ids: readonly number[]) => Promise<Node[]>,
  codec: NodeDocumentCodec,
): Promise<number> {
  let written = 0;
  let after = 0;
  for (;;) {
    const stale = await db
      .selectFrom('nodes')
      .select('id')
      .where('id', '>', after)
      .where((eb) =>
        eb.or([
          eb('display_rev', 'is', null),
          eb('display_rev', '!=', codec.revision),
          eb('display_version', 'is', null),
          eb('display_version', '!=', eb.ref('version')),
        ]),
      )
      .orderBy('id')
      .limit(REFRESH_BATCH)
      .execute();
    if (stale.length === 0) return written;
    const nodes = await readNodes(stale.map((r) => r.id));
    await db.transaction().execute(async (tx) => {
      for (const node of nodes) {
        const r = await tx
          .updateTable('nodes')
          .set(displayColumns(node, codec))
          .where('id', '=', node.id)
          .where('version', '=', node.version)
          .executeTakeFirst();
        written += Number(r.numUpdatedRows);
      }
    });
    after = stale[stale.length - 1]!.id;
  }
}
