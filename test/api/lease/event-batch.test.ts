/**
 * A batch's events written at once (src/store/leasing/outbox.ts `insertEventsWithDeliveries`,
 * used by the lease manager's batches): on SQLite and PostgreSQL (the api-pg project), the
 * events are stored in the given order (ids increase along it), an event whose lessee or owner
 * has an enabled webhook subscribed to its type gets its delivery with its own id, and the others
 * — written together in one statement — get none; a disabled webhook or another type gets nothing.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewLeasingEvent } from '../../../src/domain/leasing/model.ts';
import { openStore, type Store } from '../../../src/store/database.ts';
import { insertEventsWithDeliveries } from '../../../src/store/leasing/outbox.ts';
import { TEST_PG_URL, testDb } from '../../helpers/harness.ts';

describe(`a batch of lease events (${testDb()})`, () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-event-batch-'));
  const schema = `t_${randomBytes(6).toString('hex')}`;
  let store: Store;

  beforeAll(async () => {
    store =
      testDb() === 'postgres'
        ? await openStore({ databaseUrl: TEST_PG_URL, pgSchema: schema, pgPoolSize: 2 })
        : await openStore({ sqlitePath: path.join(dir, 'esi.db') });
  });

  afterAll(async () => {
    if (testDb() === 'postgres') await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(store.db);
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** A webhook row of `project` for `types` (JSON list; empty = all). */
  async function webhook(project: string, types: string[], enabled = true): Promise<string> {
    const uuid = randomUUID();
    await store.db
      .insertInto('lease_webhooks')
      .values({
        uuid,
        project_id: project,
        name: null,
        url: `http://127.0.0.1:9/${project}`,
        secret: 'x'.repeat(32),
        event_types: JSON.stringify(types),
        enabled: enabled ? 1 : 0,
        created_at: 1,
        updated_at: 1,
      })
      .execute();
    return uuid;
  }

  /** An event of lease `object` between lessee `lessee` and owner `owner`. */
  function event(object: string, type: string, lessee: string | null, owner: string): NewLeasingEvent {
    return {
      event_type: type,
      event_time: 1_700_000_000_000,
      object_type: 'lease',
      object_uuid: object,
      resource_type: 'dummy_node',
      resource_uuid: randomUUID(),
      lessee_id: lessee,
      owner_id: owner,
    };
  }

  it('stores the events in order, with deliveries for the subscribed ones only', async () => {
    const hookA = await webhook('project-a', ['esi_leap.lease.fulfill*']);
    await webhook('project-b', [], false);
    await webhook('project-c', ['esi_leap.offer.create']);
    const events = [
      event('e1', 'esi_leap.lease.fulfill.end', 'project-b', 'owner-1'),
      event('e2', 'esi_leap.lease.fulfill.end', 'project-b', 'owner-1'),
      event('e3', 'esi_leap.lease.fulfill.end', 'project-a', 'owner-1'),
      event('e4', 'esi_leap.lease.fulfill.end', 'project-c', 'owner-1'),
      event('e5', 'esi_leap.lease.expire.end', 'project-a', 'owner-1'),
      event('e6', 'esi_leap.lease.fulfill.end', null, 'project-a'),
    ];
    await insertEventsWithDeliveries(store.db, events);
    const rows = await store.db.selectFrom('lease_events').select(['id', 'object_uuid', 'lessee_id']).orderBy('id').execute();
    expect(rows.map((r) => r.object_uuid)).toEqual(['e1', 'e2', 'e3', 'e4', 'e5', 'e6']);
    const idOf = new Map(rows.map((r) => [r.object_uuid, Number(r.id)]));
    const deliveries = await store.db
      .selectFrom('lease_webhook_deliveries')
      .select(['webhook_uuid', 'event_id', 'event_type'])
      .orderBy('event_id')
      .execute();
    expect(deliveries.map((d) => ({ ...d, event_id: Number(d.event_id) }))).toEqual([
      { webhook_uuid: hookA, event_id: idOf.get('e3'), event_type: 'esi_leap.lease.fulfill.end' },
      { webhook_uuid: hookA, event_id: idOf.get('e6'), event_type: 'esi_leap.lease.fulfill.end' },
    ]);
  });

  it('writes nothing for an empty batch', async () => {
    const before = await store.db
      .selectFrom('lease_events')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    await insertEventsWithDeliveries(store.db, []);
    const after = await store.db
      .selectFrom('lease_events')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(after.n)).toBe(Number(before.n));
  });
});
