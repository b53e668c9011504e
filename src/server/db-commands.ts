/**
 * `esi db status|upgrade|backup|restore`: the schema version, upgrades and backups of the
 * database a server would use (the same `--config`, `--data-dir`, `--database-url` and `ESI_*`
 * settings as `esi server`; docs/operations.md, "Upgrades and backups").
 *
 * - `status`: engine, location (a PostgreSQL URL without its password), migrations applied of
 *   those this build knows, the latest known, the pending ones. Changes nothing.
 * - `upgrade`: applies the pending migrations and names them. `esi server` does the same on
 *   start; run this first when several processes share one PostgreSQL database.
 * - `backup <file>`, `restore <file>`: SQLite only (src/store/sqlite-backup.ts); on PostgreSQL
 *   they print the `pg_dump`/`pg_restore` command lines to run instead and exit with status 1.
 *
 * A database that is not esi's, is corrupt, or was upgraded by a newer esi is refused with one
 * line (`esi: …`, status 1) before anything is written, as `esi server` refuses it.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import type { ConfigOptions } from './config.ts';
import type { SchemaState } from '../store/schema-state.ts';

/** The database a server with these options would use. */
interface Target {
  readonly engine: 'sqlite' | 'postgres';
  /** `postgres://…` (with its password, to connect) or null for SQLite. */
  readonly databaseUrl: string | null;
  /** The SQLite file (also set for PostgreSQL: the data directory's, unused). */
  readonly sqlitePath: string;
  /** The location as shown: the SQLite path, or the URL without its password. */
  readonly shown: string;
}

/** Resolve the database from the server's configuration. @throws ConfigError */
async function targetOf(opts: ConfigOptions): Promise<Target> {
  const [{ loadConfig }, { displayUrl }] = await Promise.all([import('./config.ts'), import('../store/database.ts')]);
  const config = loadConfig(opts);
  const sqlitePath = path.join(config.dataDir, 'esi.sqlite');
  return config.databaseUrl === null
    ? { engine: 'sqlite', databaseUrl: null, sqlitePath, shown: sqlitePath }
    : { engine: 'postgres', databaseUrl: config.databaseUrl, sqlitePath, shown: displayUrl(config.databaseUrl) };
}

/** The schema state of `t`, read without writing (a missing SQLite file: nothing applied). */
async function stateOf(t: Target): Promise<{ exists: boolean; state: SchemaState }> {
  const [{ schemaStateOf, readSchemaState }, { sqliteSchemaState }, { openStore }] = await Promise.all([
    import('../store/schema-state.ts'),
    import('../store/sqlite-backup.ts'),
    import('../store/database.ts'),
  ]);
  if (t.engine === 'sqlite') {
    if (!fs.existsSync(t.sqlitePath)) return { exists: false, state: schemaStateOf(null) };
    return { exists: true, state: sqliteSchemaState(t.sqlitePath) };
  }
  const store = await openStore({ databaseUrl: t.databaseUrl, migrate: false, pgPoolSize: 1 });
  try {
    return { exists: true, state: await readSchemaState(store.db, 'postgres') };
  } finally {
    await store.close();
  }
}

/** The lines of `esi db status`. */
function statusLines(t: Target, exists: boolean, s: SchemaState): string[] {
  const known = s.applied.length + s.pending.length;
  return [
    `engine:    ${t.engine === 'sqlite' ? 'SQLite' : 'PostgreSQL'}`,
    `location:  ${t.shown}${exists ? '' : ' (no database yet: esi server or esi db upgrade creates it)'}`,
    `applied:   ${s.applied.length} of ${known} known migrations${s.applied.length > 0 ? ` (last ${s.applied[s.applied.length - 1]})` : ''}`,
    `latest:    ${s.latestKnown}`,
    `pending:   ${s.pending.length === 0 ? 'none (up to date)' : `${s.pending.length}: ${s.pending.join(', ')} (esi db upgrade applies them)`}`,
  ];
}

/** Quote `s` for a POSIX shell. */
function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * What to run instead of `esi db backup|restore` on PostgreSQL: the pg_dump / pg_restore
 * command lines for `file`, the URL without its password.
 */
function postgresInstructions(verb: 'backup' | 'restore', t: Target, file: string): string[] {
  const url = shellQuote(t.shown);
  const hadPassword = t.databaseUrl !== null && t.databaseUrl !== t.shown && /:[^/@:]*@/.test(t.databaseUrl);
  const password = hadPassword ? ['(the password is left out: give it in PGPASSWORD or ~/.pgpass)'] : [];
  return verb === 'backup'
    ? [
        'esi: esi db backup copies SQLite databases only; this server uses PostgreSQL: back it up with pg_dump (safe while esi runs):',
        `  pg_dump --format=custom --no-owner --file=${shellQuote(file)} ${url}`,
        ...password,
      ]
    : [
        'esi: esi db restore restores SQLite databases only; this server uses PostgreSQL: stop every esi process, then:',
        `  pg_restore --clean --if-exists --no-owner --single-transaction --dbname=${url} ${shellQuote(file)}`,
        '  esi db upgrade   # when the dump is of an older esi',
        ...password,
      ];
}

/** The options every `esi db` command takes (those of `esi server` that choose the database). */
function withDatabaseOptions(cmd: Command): Command {
  return cmd
    .option('--config <file>', 'YAML configuration file (ESI_CONFIG)')
    .option('--data-dir <dir>', 'data directory (ESI_DATA_DIR, default ./data)')
    .option('--database-url <url>', 'PostgreSQL URL (ESI_DATABASE_URL); SQLite in the data directory when absent');
}

/** Register `db status|upgrade|backup|restore` on the program. */
export function registerDbCommands(program: Command): void {
  const db = program
    .command('db')
    .description("the server's database: schema version, upgrades, backups (docs/operations.md)")
    .addHelpText(
      'after',
      '\nExamples:\n  esi db status\n  esi db upgrade --config /etc/esi/esi.yaml\n' +
        '  esi db backup /backups/esi-$(date -u +%F).sqlite\n  esi db restore /backups/esi-2026-11-27.sqlite --force   # esi server stopped',
    );

  withDatabaseOptions(db.command('status'))
    .description('engine, location, applied and pending schema migrations; changes nothing')
    .action(async (opts: ConfigOptions) => {
      const t = await targetOf(opts);
      const { exists, state } = await stateOf(t);
      process.stdout.write(statusLines(t, exists, state).join('\n') + '\n');
    });

  withDatabaseOptions(db.command('upgrade'))
    .description('apply the pending schema migrations (esi server does on start; run this first for several processes)')
    .action(async (opts: ConfigOptions) => {
      const t = await targetOf(opts);
      const { openStore, migrateStore } = await import('../store/database.ts');
      const store = await openStore({ databaseUrl: t.databaseUrl, sqlitePath: t.sqlitePath, migrate: false, pgPoolSize: 1 });
      try {
        const applied = await migrateStore(store);
        const { KNOWN_MIGRATIONS } = await import('../store/schema-state.ts');
        const latest = KNOWN_MIGRATIONS[KNOWN_MIGRATIONS.length - 1];
        process.stdout.write(
          applied.length === 0
            ? `esi: nothing to apply: ${t.shown} is at ${latest}, the latest this esi knows\n`
            : `esi: applied ${applied.length} migration${applied.length === 1 ? '' : 's'} to ${t.shown}: ${applied.join(', ')}; it is at ${latest}\n`,
        );
      } finally {
        await store.close();
      }
    });

  withDatabaseOptions(db.command('backup <file>'))
    .description('copy the SQLite database to <file>, safe while esi runs (PostgreSQL: prints the pg_dump command)')
    .option('--force', 'replace <file> when it exists')
    .action(async (file: string, opts: ConfigOptions & { force?: boolean }) => {
      const t = await targetOf(opts);
      if (t.engine === 'postgres') return refuseOnPostgres('backup', t, file);
      const { backupSqlite } = await import('../store/sqlite-backup.ts');
      const r = await backupSqlite(t.sqlitePath, path.resolve(file), opts.force === true);
      process.stdout.write(`esi: backed up ${t.sqlitePath} to ${r.file} (${r.bytes} bytes, schema ${lastApplied(r.schema)})\n`);
    });

  withDatabaseOptions(db.command('restore <file>'))
    .description('replace the stopped server’s SQLite database with the backup <file> (PostgreSQL: prints the pg_restore command)')
    .option('--force', 'replace an existing database (kept beside it as <database>.replaced-<time>)')
    .action(async (file: string, opts: ConfigOptions & { force?: boolean }) => {
      const t = await targetOf(opts);
      if (t.engine === 'postgres') return refuseOnPostgres('restore', t, file);
      const { restoreSqlite } = await import('../store/sqlite-backup.ts');
      const r = await restoreSqlite(path.resolve(file), t.sqlitePath, opts.force === true);
      process.stdout.write(
        `esi: restored ${t.sqlitePath} from ${path.resolve(file)} (schema ${lastApplied(r.schema)}` +
          `${r.schema.pending.length > 0 ? `; ${r.schema.pending.length} migration(s) to apply: esi db upgrade, or the next esi server start` : ''})` +
          `${r.replacedKeptAs !== null ? `; the database it replaced is ${r.replacedKeptAs}` : ''}\n`,
      );
    });
}

/** The last applied migration of `s`, for messages. */
function lastApplied(s: SchemaState): string {
  return s.applied[s.applied.length - 1] ?? 'empty';
}

/** Print the PostgreSQL command lines and fail: nothing was copied. */
function refuseOnPostgres(verb: 'backup' | 'restore', t: Target, file: string): void {
  process.stderr.write(postgresInstructions(verb, t, file).join('\n') + '\n');
  process.exitCode = 1;
}
