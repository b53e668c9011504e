/**
 * Migration 0006: each node's display document, stored beside its columns so that node lists
 * read one text per node instead of ~60 columns, and splice it into responses without parsing
 * or re-masking (the format is the baremetal API's, `src/api/baremetal/node-document.ts`):
 *
 * - `display`: the node's fields as JSON members in display form — secrets masked — after the
 *   offset of each member, written with every change of the node;
 * - `display_version`: the row `version` the document was made for;
 * - `display_rev`: fingerprint of the code that made it (serialisation and masking rules).
 *
 * A document is used only when `display_version = version` and `display_rev` is the running
 * code's; otherwise readers rebuild it from the columns. Rows existing before this migration
 * have none; the server fills them in at start-up. The columns are added empty on purpose: a
 * migration is frozen and must not depend on the masking code of whatever release runs it.
 */
import type { Kysely } from 'kysely';

/** Add the display document columns to `nodes` (nullable). */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('nodes').addColumn('display', 'text').execute();
  await db.schema.alterTable('nodes').addColumn('display_version', 'integer').execute();
  await db.schema.alterTable('nodes').addColumn('display_rev', 'text').execute();
}

/** Drop the display document columns. */
export async function down(db: Kysely<unknown>): Promise<void> {
  for (const col of ['display_rev', 'display_version', 'display']) await db.schema.alterTable('nodes').dropColumn(col).execute();
}
