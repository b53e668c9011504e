/**
 * Dialect helpers for migrations: the only place where a migration's SQL depends on the engine.
 *
 * Migrations are frozen once released: never edit one that has shipped; add a new one.
 */
import { PostgresAdapter, type CreateTableBuilder, type Kysely } from 'kysely';

/** True when the migration runs on PostgreSQL. */
export function isPostgres(db: Kysely<unknown>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/**
 * Add an auto-incrementing integer primary key `id`: `integer primary key autoincrement` on
 * SQLite, `bigserial primary key` on PostgreSQL.
 */
export function withIdColumn<TB extends string, C extends string>(
  db: Kysely<unknown>,
  table: CreateTableBuilder<TB, C>,
): CreateTableBuilder<TB, C | 'id'> {
  return isPostgres(db)
    ? table.addColumn('id', 'bigserial', (c) => c.primaryKey())
    : table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
}
