/**
 * The stored display documents of nodes (migration 0006; the format is `nodeDocumentOf`,
 * src/domain/inventory/node-text.ts): the column values of a node's document, the expression
 * that keeps a document valid across writes that do not change it, and the rebuild of every
 * stale document.
 *
 * Validity rule (what readers check, `node-reads.ts`): a document describes the row when
 * `display_version = version` and `display_rev = NODE_TEXT_REVISION`.
 */
import { sql, type RawBuilder } from 'kysely';
import type { Node } from '../../domain/inventory/model.ts';
import { NODE_TEXT_REVISION, nodeDocumentOf } from '../../domain/inventory/node-text.ts';
import type { Db } from '../database.ts';
import type { NodeReads } from './node-reads.ts';

/** Rows per batch of {@link refreshDisplays}. */
const REFRESH_BATCH = 500;

/** The display columns of a node as read back from its row (full, current version). */
export function displayColumns(node: Node): { display: string; display_version: number; display_rev: string } {
  return { display: nodeDocumentOf(node), display_version: node.version, display_rev: NODE_TEXT_REVISION };
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
 * @returns the number of documents written
 */
export async function refreshDisplays(db: Db, reads: NodeReads): Promise<number> {
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
          eb('display_rev', '!=', NODE_TEXT_REVISION),
          eb('display_version', 'is', null),
          eb('display_version', '!=', eb.ref('version')),
        ]),
      )
      .orderBy('id')
      .limit(REFRESH_BATCH)
      .execute();
    if (stale.length === 0) return written;
    const nodes = await reads.fullIn(
      'id',
      stale.map((r) => r.id),
    );
    await db.transaction().execute(async (tx) => {
      for (const node of nodes) {
        const r = await tx
          .updateTable('nodes')
          .set(displayColumns(node))
          .where('id', '=', node.id)
          .where('version', '=', node.version)
          .executeTakeFirst();
        written += Number(r.numUpdatedRows);
      }
    });
    after = stale[stale.length - 1]!.id;
  }
}
