/**
 * The heartbeats of API-only processes (src/store/leasing/api-processes.ts) are stamped and aged
 * by the database's clock: silence is `now - heartbeat_at` computed by the database, so no
 * process's own clock (or a test's manual one) enters the decision to release a process's lease
 * claims (issue 21: decisions use the database's clock). SQLite and PostgreSQL.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KyselyApiProcesses } from '../../../src/store/leasing/api-processes.ts';
import { startTestServer, type TestServer } from '../../helpers/harness.ts';

let ts: TestServer;
beforeAll(async () => {
  ts = await startTestServer();
});
afterAll(async () => ts?.close());

describe('API process heartbeats', () => {
  it('are aged by the database, refreshed by a beat and gone once removed', async () => {
    const { db, dialect } = ts.server.services.store;
    const registry = new KyselyApiProcesses(db, dialect);
    await registry.register('hb-1');
    await registry.register('hb-2');
    const stamped = await db.selectFrom('api_processes').select(['id', 'heartbeat_at']).where('id', 'in', ['hb-1', 'hb-2']).execute();
    // Stamped with the real time (the database server's), not 0 or a test clock's.
    for (const r of stamped) expect(Math.abs(Number(r.heartbeat_at) - Date.now())).toBeLessThan(60_000);
    expect(await registry.silentFor(10_000)).not.toContain('hb-1');
    // hb-1 last beat 20 s ago (as the database sees it; under the 30 s after which the server's
    // own reaper would forget it); hb-2 is fresh.
    await db
      .updateTable('api_processes')
      .set({ heartbeat_at: sql`heartbeat_at - 20000` })
      .where('id', '=', 'hb-1')
      .execute();
    const silent = await registry.silentFor(10_000);
    expect(silent).toContain('hb-1');
    expect(silent).not.toContain('hb-2');
    expect(await registry.silentFor(30_000)).not.toContain('hb-1');
    expect(await registry.beat('hb-1')).toBe(true);
    expect(await registry.silentFor(10_000)).not.toContain('hb-1');
    await registry.remove('hb-1');
    expect(await registry.beat('hb-1')).toBe(false);
    await registry.remove('hb-2');
  });
});
