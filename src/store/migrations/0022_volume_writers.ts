/**
 * Migration 0022 (issue 18): who last wrote a volume connector or target, so that a lease's end
 * removes what the lessee set up (boot from volume must not carry the previous lessee's volumes
 * to the next one, as VIFs do not: `docs/leasing.md`).
 *
 * - `volume_connectors.written_by_project`, `volume_targets.written_by_project`: the project of
 *   the node's lessee when that lessee created or last updated the row, null when the owner or
 *   an operator did. Not shown on the API (Ironic has no such field).
 */
import type { Kysely } from 'kysely';

/** Add the column to both tables. */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const t of ['volume_connectors', 'volume_targets']) {
    await db.schema.alterTable(t).addColumn('written_by_project', 'text').execute();
  }
}

/** Drop the column from both tables. */
export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of ['volume_connectors', 'volume_targets']) {
    await db.schema.alterTable(t).dropColumn('written_by_project').execute();
  }
}
