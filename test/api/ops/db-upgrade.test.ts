/**
 * Upgrading from an earlier schema (issue 19, item 7): a database left by an earlier esi
 * (migrations up to 0014, commit 1a68fb4; test/fixtures/db-upgrade/) is upgraded by this build
 * without losing a row, and the server starts on it and serves its data.
 *
 * SQLite: the committed fixture file, built by that commit's own store code
 * (test/fixtures/db-upgrade/make-fixture.ts). PostgreSQL: a fresh schema migrated to 0014 only
 * (those migrations have not changed since, beyond formatting) with the same rows inserted.
 * Every row of every table is found again by its key with the values it had; migration 0015's
 * backfill registered the switch port that port 1 names.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { migrateStore, openStore, type Store, type StoreOptions } from '../../../src/store/database.ts';
import { KNOWN_MIGRATIONS, readSchemaState } from '../../../src/store/schema-state.ts';
import { insertFixtureRows } from '../../fixtures/db-upgrade/insert.ts';
import { FIXTURE_ADMIN_PASSWORD, FIXTURE_KEYS, FIXTURE_MIGRATION, FIXTURE_ROWS } from '../../fixtures/db-upgrade/rows.ts';
import { startTestServer, TEST_PG_URL, testDb } from '../../helpers/harness.ts';

const FIXTURE = path.resolve(import.meta.dirname, '../../fixtures/db-upgrade/esi-0014.sqlite.gz');

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

/** A database at the fixture's schema version with its rows: where it is and how to open it. */
async function earlierDatabase(): Promise<{ dataDir: string; schema: string | undefined; options: StoreOptions }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-upgrade-'));
  if (testDb() === 'sqlite') {
    const file = path.join(dataDir, 'esi.sqlite');
    fs.writeFileSync(file, zlib.gunzipSync(fs.readFileSync(FIXTURE)));
    return { dataDir, schema: undefined, options: { sqlitePath: file, migrate: false } };
  }
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const options: StoreOptions = { databaseUrl: TEST_PG_URL, pgSchema: schema, pgPoolSize: 2, migrate: false };
  const store = await openStore(options);
  try {
    await migrateStore(store, schema, FIXTURE_MIGRATION);
    await insertFixtureRows(store.db, 'postgres');
  } finally {
    await store.close();
  }
  return { dataDir, schema, options };
}

/** Every fixture row, found by its key, still has the values it was written with. */
async function expectEveryRow(store: Store): Promise<void> {
  for (const [table, rows] of FIXTURE_ROWS) {
    const { n } = await store.db
      .selectFrom(table as 'nodes')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(n), `rows of ${table}`).toBe(rows.length);
    for (const row of rows) {
      let q = store.db.selectFrom(table as 'nodes').selectAll();
      for (const k of FIXTURE_KEYS[table]!) q = q.where(k as 'id', '=', row[k] as number);
      const found = (await q.executeTakeFirst()) as Record<string, unknown> | undefined;
      expect(found, `${table} ${JSON.stringify(row)}`).toBeDefined();
      const got = Object.fromEntries(Object.keys(row).map((c) => [c, typeof row[c] === 'number' ? Number(found![c]) : found![c]]));
      expect(got, table).toEqual(row);
    }
  }
}

describe('upgrade from an earlier schema', () => {
  it('keeps every row of a 0014 database, backfills 0015, and the server starts on it and serves the data', async () => {
    const earlier = await earlierDatabase();
    cleanups.push(async () => fs.rmSync(earlier.dataDir, { recursive: true, force: true }));

    const store = await openStore(earlier.options);
    try {
      const before = await readSchemaState(store.db, store.dialect);
      expect(before.applied[before.applied.length - 1]).toBe(FIXTURE_MIGRATION);
      expect(before.pending.length).toBeGreaterThan(0);
      expect(FIXTURE_ROWS.length).toBe(41); // every table of 0014 (esi_migration aside)

      const applied = await migrateStore(store, earlier.schema);
      expect(applied).toEqual(before.pending);
      expect((await readSchemaState(store.db, store.dialect)).pending).toEqual([]);
      expect(await migrateStore(store, earlier.schema)).toEqual([]);

      await expectEveryRow(store);
      // 0015 registered the switch port port 1 names to its node, held by that port.
      const cabling = await store.db.selectFrom('switch_port_cabling').selectAll().execute();
      expect(cabling.map((c) => [c.port_id, Number(c.node_id), c.baremetal_port_uuid])).toEqual([
        ['Ethernet1/1', 1, '7a9e0d1c-2f3b-4d5e-8f60-718293a40001'],
      ]);
    } finally {
      await store.close();
    }

    const server = await startTestServer({
      reuse: { dataDir: earlier.dataDir, schema: earlier.schema },
      env: { ESI_CONDUCTOR_WORKERS: '0', ESI_ADMIN_PASSWORD: FIXTURE_ADMIN_PASSWORD },
    });
    cleanups.push(() => server.close());
    const login = await fetch(`${server.url}/identity/v3/auth/tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        auth: {
          identity: {
            methods: ['password'],
            password: { user: { name: 'admin', domain: { name: 'Default' }, password: FIXTURE_ADMIN_PASSWORD } },
          },
          scope: { project: { name: 'admin', domain: { name: 'Default' } } },
        },
      }),
    });
    expect(login.status).toBe(201);
    const headers = { 'x-auth-token': login.headers.get('x-subject-token')!, 'x-openstack-ironic-api-version': '1.78' };
    const get = async (p: string): Promise<any> => {
      const r = await fetch(server.url + p, { headers });
      expect(r.status, p).toBe(200);
      return r.json();
    };
    const node = await get('/baremetal/v1/nodes/B');
    expect(node).toMatchObject({ name: 'B', owner: 'aaaaaaaa000000000000000000000002', lessee: 'aaaaaaaa000000000000000000000003' });
    expect(node.properties).toMatchObject({ memory_mb: 49152, cpus: 8 });
    expect(await get('/lease/v1/leases/c0ffee00-0000-4000-8000-000000000002')).toMatchObject({
      status: 'active',
      resource_uuid: node.uuid,
    });
    expect((await get('/network/v2.0/networks/f0f0f0f0-0000-4000-8000-000000000001')).network).toMatchObject({
      name: 'mynet',
      'provider:segmentation_id': 100,
    });
    expect(await get('/image/v2/images/e1e2e3e4-0000-4000-8000-000000000001')).toMatchObject({ name: 'debian-12', os_distro: 'debian' });
    const ready = await fetch(`${server.url}/readyz`);
    expect(((await ready.json()) as any).checks.migrations.ok).toBe(true);
    expect(KNOWN_MIGRATIONS).toContain(FIXTURE_MIGRATION);
  });

  it('a process whose database a newer esi upgraded meanwhile is not ready (/readyz names the migration)', async () => {
    const ts = await startTestServer({ env: { ESI_CONDUCTOR_WORKERS: '0' } });
    cleanups.push(() => ts.close());
    expect((await fetch(`${ts.url}/readyz`)).status).toBe(200);
    await sql`insert into esi_migration (name, timestamp) values ('0999_future', '2030-01-01T00:00:00.000Z')`.execute(
      ts.server.services.store.db,
    );
    const r = await fetch(`${ts.url}/readyz`);
    expect(r.status).toBe(503);
    expect(((await r.json()) as any).checks.migrations).toEqual({
      ok: false,
      detail: 'a newer esi upgraded the database (0999_future, unknown to this esi): replace this process',
    });
  });
});
