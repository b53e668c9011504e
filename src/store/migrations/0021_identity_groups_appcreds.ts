/**
 * Migration 0021 (issue 18, item 6): Keystone groups, group role assignments and application
 * credentials, as Keystone's `group`, `user_group_membership`, `assignment` (group rows) and
 * `application_credential` tables.
 *
 * - `groups`: name unique per domain (Keystone's `ixu_group_name_domain_id`), extra attributes
 *   as JSON text.
 * - `group_memberships`: one row per (group, user); looked up by user for token scoping.
 * - `group_assignments`: role grants to groups on a project or a domain, apart from the users'
 *   `role_assignments` so that a group id can never be read as a user id.
 * - `application_credentials`: name unique per user (Keystone's
 *   `duplicate_app_cred_constraint`), the secret's scrypt hash, the delegated role ids as a JSON
 *   array, expiry (epoch ms, null: never) and `unrestricted` (0/1).
 * - `tokens.app_cred_id`: the application credential a token was issued with, so that deleting
 *   the credential revokes its tokens.
 */
import type { Kysely } from 'kysely';

/** Create the four tables and the token column. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('groups')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('domain_id', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('extra', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('groups_domain_name_uq', ['domain_id', 'name'])
    .execute();

  await db.schema
    .createTable('group_memberships')
    .addColumn('group_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('group_memberships_pk', ['group_id', 'user_id'])
    .execute();
  await db.schema.createIndex('group_memberships_user_idx').on('group_memberships').column('user_id').execute();

  await db.schema
    .createTable('group_assignments')
    .addColumn('group_id', 'text', (c) => c.notNull())
    .addColumn('target_type', 'text', (c) => c.notNull())
    .addColumn('target_id', 'text', (c) => c.notNull())
    .addColumn('role_id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('group_assignments_pk', ['group_id', 'target_type', 'target_id', 'role_id'])
    .execute();
  await db.schema.createIndex('group_assignments_target_idx').on('group_assignments').columns(['target_type', 'target_id']).execute();

  await db.schema
    .createTable('application_credentials')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('secret_hash', 'text', (c) => c.notNull())
    .addColumn('role_ids', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint')
    .addColumn('unrestricted', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('application_credentials_user_name_uq', ['user_id', 'name'])
    .execute();
  await db.schema.createIndex('application_credentials_project_idx').on('application_credentials').column('project_id').execute();

  await db.schema.alterTable('tokens').addColumn('app_cred_id', 'text').execute();
  await db.schema.createIndex('tokens_app_cred_idx').on('tokens').column('app_cred_id').execute();
}

/** Drop what {@link up} created. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('tokens_app_cred_idx').ifExists().execute();
  await db.schema.alterTable('tokens').dropColumn('app_cred_id').execute();
  for (const t of ['application_credentials', 'group_assignments', 'group_memberships', 'groups']) {
    await db.schema.dropTable(t).ifExists().execute();
  }
}
