/**
 * Migration 0001: identity tables (domains, projects, users, roles, implied roles, role
 * assignments, tokens).
 */
import type { Kysely } from 'kysely';

/** Create the identity tables and their indexes. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('domains')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('projects')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('domain_id', 'text', (c) => c.notNull())
    .addColumn('parent_id', 'text')
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('extra', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('projects_domain_name_uq', ['domain_id', 'name'])
    .execute();
  await db.schema.createIndex('projects_parent_idx').on('projects').column('parent_id').execute();

  await db.schema
    .createTable('users')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('domain_id', 'text', (c) => c.notNull())
    .addColumn('password_hash', 'text')
    .addColumn('default_project_id', 'text')
    .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('extra', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('users_domain_name_uq', ['domain_id', 'name'])
    .execute();

  await db.schema
    .createTable('roles')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('domain_id', 'text')
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('implied_roles')
    .addColumn('prior_role_id', 'text', (c) => c.notNull())
    .addColumn('implied_role_id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('implied_roles_pk', ['prior_role_id', 'implied_role_id'])
    .execute();

  await db.schema
    .createTable('role_assignments')
    .addColumn('actor_id', 'text', (c) => c.notNull())
    .addColumn('target_type', 'text', (c) => c.notNull())
    .addColumn('target_id', 'text', (c) => c.notNull())
    .addColumn('role_id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('role_assignments_pk', ['actor_id', 'target_type', 'target_id', 'role_id'])
    .execute();
  await db.schema.createIndex('role_assignments_target_idx').on('role_assignments').columns(['target_type', 'target_id']).execute();

  await db.schema
    .createTable('tokens')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('project_id', 'text')
    .addColumn('system_scope', 'text')
    .addColumn('methods', 'text', (c) => c.notNull())
    .addColumn('roles', 'text', (c) => c.notNull())
    .addColumn('audit_id', 'text', (c) => c.notNull())
    .addColumn('issued_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('revoked_at', 'bigint')
    .execute();
  await db.schema.createIndex('tokens_user_idx').on('tokens').column('user_id').execute();
  await db.schema.createIndex('tokens_expires_idx').on('tokens').column('expires_at').execute();
}

/** Drop the identity tables. */
export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of ['tokens', 'role_assignments', 'implied_roles', 'roles', 'users', 'projects', 'domains']) {
    await db.schema.dropTable(t).ifExists().execute();
  }
}
