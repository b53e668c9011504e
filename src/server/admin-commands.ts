/**
 * `esi admin reset-password`: set the password of the bootstrap user `admin` on the database a
 * server would use (the same `--config`, `--data-dir`, `--database-url` and `ESI_*` settings as
 * `esi server`), rewrite `<data-dir>/admin-openrc`, and revoke the admin's tokens (as a Keystone
 * password change does). For an operator who lost the password, or who changed
 * `ESI_ADMIN_PASSWORD` after the first start (which `esi server` reports and does not apply).
 *
 * The new password: read from standard input with `--password-stdin` (one line), else
 * `ESI_ADMIN_PASSWORD`, else generated (24 random bytes, base64url) and printed once. A running
 * server sees the change at once (tokens are checked against the database).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import type { ConfigOptions } from './config.ts';

/** Read one line (without its end) from standard input. */
async function readLine(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8').split(/\r?\n/)[0] ?? '';
}

/** Register `admin reset-password`. */
export function registerAdminCommands(program: Command): void {
  const admin = program.command('admin').description('operator tasks on the data directory and database of a server');
  admin
    .command('reset-password')
    .description('set the password of user "admin" and rewrite <data-dir>/admin-openrc')
    .option('--config <file>', 'YAML configuration file (ESI_CONFIG)')
    .option('--data-dir <dir>', 'data directory (ESI_DATA_DIR, default ./data)')
    .option('--database-url <url>', 'PostgreSQL URL (ESI_DATABASE_URL); SQLite in the data directory when absent')
    .option('--password-stdin', 'read the new password from standard input (else ESI_ADMIN_PASSWORD, else a generated one)')
    .addHelpText('after', '\nExamples:\n  esi admin reset-password\n  printf %s "$NEW" | esi admin reset-password --password-stdin')
    .action(async (opts: ConfigOptions & { passwordStdin?: boolean }) => {
      const [
        { loadConfig },
        { openStore },
        { KyselyIdentityRepository },
        { resetAdminPassword },
        { writeOpenrc, openrcPath },
        { systemClock },
      ] = await Promise.all([
        import('./config.ts'),
        import('../store/database.ts'),
        import('../store/identity/repository.ts'),
        import('../domain/identity/index.ts'),
        import('./main.ts'),
        import('../domain/clock.ts'),
      ]);
      const config = loadConfig(opts);
      const sqlitePath = path.join(config.dataDir, 'esi.sqlite');
      if (config.databaseUrl === null && !fs.existsSync(sqlitePath))
        throw new Error(`no database at ${sqlitePath}: start esi once (esi server) to create it`);
      let password: string | null = config.adminPassword;
      if (opts.passwordStdin) {
        password = await readLine();
        if (password === '') throw new Error('--password-stdin read an empty password');
      }
      const store = await openStore({ databaseUrl: config.databaseUrl, sqlitePath });
      try {
        const r = await resetAdminPassword(new KyselyIdentityRepository(store.db), systemClock, password);
        writeOpenrc(config, r.password);
        process.stdout.write(`esi: the password of user "admin" was reset and its tokens revoked; ${openrcPath(config)} holds it\n`);
        if (r.generated) process.stdout.write(`esi: new password: ${r.password}\n`);
      } finally {
        await store.close();
      }
    });
}
