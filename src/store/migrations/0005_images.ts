/**
 * Migration 0005: image tables (Glance v2 subset): images, their custom properties and tags,
 * and the memberships of shared images. Properties, tags and members go with their image
 * (`on delete cascade`).
 *
 * Indexes serve the list queries: visibility and owner (who sees what), `created_at` (the
 * default sort), name and status filters, property and tag filters by `(name, value)` /
 * `value`, and memberships by member project.
 */
import type { Kysely } from 'kysely';

/** Create the image tables and their indexes. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('images')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('visibility', 'text', (c) => c.notNull())
    .addColumn('protected', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('os_hidden', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('owner', 'text')
    .addColumn('disk_format', 'text')
    .addColumn('container_format', 'text')
    .addColumn('min_disk', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('min_ram', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('size', 'bigint')
    .addColumn('virtual_size', 'bigint')
    .addColumn('checksum', 'text')
    .addColumn('os_hash_algo', 'text')
    .addColumn('os_hash_value', 'text')
    .addColumn('location', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('images_owner_idx').on('images').columns(['owner', 'created_at']).execute();
  await db.schema.createIndex('images_visibility_idx').on('images').columns(['visibility', 'created_at']).execute();
  await db.schema.createIndex('images_created_idx').on('images').columns(['created_at', 'id']).execute();
  await db.schema.createIndex('images_name_idx').on('images').column('name').execute();
  await db.schema.createIndex('images_status_idx').on('images').column('status').execute();

  await db.schema
    .createTable('image_properties')
    .addColumn('image_id', 'text', (c) => c.notNull().references('images.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('image_properties_pk', ['image_id', 'name'])
    .execute();
  await db.schema.createIndex('image_properties_name_value_idx').on('image_properties').columns(['name', 'value']).execute();

  await db.schema
    .createTable('image_tags')
    .addColumn('image_id', 'text', (c) => c.notNull().references('images.id').onDelete('cascade'))
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('image_tags_pk', ['image_id', 'value'])
    .execute();
  await db.schema.createIndex('image_tags_value_idx').on('image_tags').column('value').execute();

  await db.schema
    .createTable('image_members')
    .addColumn('image_id', 'text', (c) => c.notNull().references('images.id').onDelete('cascade'))
    .addColumn('member_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('image_members_pk', ['image_id', 'member_id'])
    .execute();
  await db.schema.createIndex('image_members_member_idx').on('image_members').columns(['member_id', 'status']).execute();
}

/** Drop the image tables. */
export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of ['image_members', 'image_tags', 'image_properties', 'images']) {
    await db.schema.dropTable(t).ifExists().execute();
  }
}
