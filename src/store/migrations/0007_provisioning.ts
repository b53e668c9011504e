/**
 * Migration 0007 (provisioning): an owner's lease policy can ask for a full disk erase.
 *
 * | table            | column          | what |
 * |------------------|-----------------|------|
 * | `lease_policies` | `erase_devices` | 1: automated cleaning of the policy's nodes also runs `deploy.erase_devices` (the whole disk), not only `erase_devices_metadata`; 0 (default): metadata only |
 */
import type { Kysely } from 'kysely';

/** Add `lease_policies.erase_devices` (integer 0/1, default 0). */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('lease_policies')
    .addColumn('erase_devices', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}

/** Drop the column. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('lease_policies').dropColumn('erase_devices').execute();
}
