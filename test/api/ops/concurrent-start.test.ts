/**
 * Issue 21, item 4: any number of processes may start at the same instant on a fresh PostgreSQL
 * database. Four `esi server` processes (two `--roles api`, two with every role) are spawned
 * together on an empty database: every one comes up (none exits with "Domain Default already
 * exists" or a duplicate role), the built-ins exist once each (one `Default` domain, one role of
 * each name, one `admin` project and user), and the admin password given to all of them signs in
 * on each. (PostgreSQL only: SQLite is one process by design.)
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, expect, it } from 'vitest';
import { describePostgresOnly } from '../../helpers/harness.ts';
import { createDatabase, startServerProcess, tokenFor, type ServerProcess, type TempDatabase } from '../lease/processes.ts';

const ADMIN_PW = 'concurrent-start-admin-pw';

describePostgresOnly('processes started at once on a fresh database', () => {
  let db: TempDatabase | undefined;
  const servers: ServerProcess[] = [];

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await db?.drop();
  });

  it('all four start, and the bootstrap made each built-in identity object once', async () => {
    db = await createDatabase();
    const env = { ESI_ADMIN_PASSWORD: ADMIN_PW, ESI_SECRET_KEY: randomBytes(32).toString('base64') };
    const roles = [['--roles', 'api'], ['--roles', 'api'], [], []];
    const started = await Promise.allSettled(roles.map((r) => startServerProcess([...r, '--database-url', db!.url], env)));
    for (const s of started) if (s.status === 'fulfilled') servers.push(s.value);
    const failures = started.flatMap((s) => (s.status === 'rejected' ? [String(s.reason)] : []));
    expect(failures, failures.join('\n---\n')).toEqual([]);

    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const count = async (q: string): Promise<Array<Record<string, unknown>>> => (await client.query(q)).rows;
      expect(await count(`select id, name from domains`)).toEqual([{ id: 'default', name: 'Default' }]);
      const roleNames = (await count(`select name from roles where domain_id is null order by name`)).map((r) => r.name);
      expect(roleNames).toEqual(['admin', 'manager', 'member', 'reader', 'service']);
      expect(await count(`select name from projects where name = 'admin'`)).toHaveLength(1);
      expect(await count(`select name from users where name = 'admin'`)).toHaveLength(1);
    } finally {
      await client.end();
    }
    for (const s of servers) expect(await tokenFor(s.url, 'admin', ADMIN_PW, 'admin')).toMatch(/\S/);
  }, 180_000);
});
