/**
 * `Store.withLock` on PostgreSQL (src/store/database.ts): the advisory locks of every key of a
 * transaction are taken in one statement, in sorted order. Checked on a fresh schema:
 * - a transaction naming a key another one holds waits until that one commits, whichever other
 *   keys either names;
 * - transactions naming the same keys in opposite orders, many at once, never deadlock (each
 *   would fail with PostgreSQL's `deadlock detected` if the locks were taken in the order given);
 * - keys that no other transaction holds do not wait.
 * On SQLite (one connection, transactions already exclusive) the suite is skipped.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openStore, type Store } from '../../../src/store/database.ts';
import { describePostgresOnly, TEST_PG_URL } from '../../helpers/harness.ts';

describePostgresOnly('withLock on PostgreSQL', () => {
  const schema = `t_${randomBytes(6).toString('hex')}`;
  let store: Store;

  beforeAll(async () => {
    store = await openStore({ databaseUrl: TEST_PG_URL, pgSchema: schema, pgPoolSize: 8 });
  });

  afterAll(async () => {
    await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(store.db);
    await store.close();
  });

  /** Resolves after `ms`. */
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it('makes a transaction naming a held key wait for its commit', async () => {
    const order: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let entered!: () => void;
    const holding = new Promise<void>((r) => (entered = r));
    const first = store.withLock(['node:b', 'node:a', 'node:c'], async () => {
      entered();
      await held;
      order.push('first done');
    });
    await holding;
    const second = store.withLock(['node:z', 'node:c'], async () => {
      order.push('second in');
    });
    const free = store.withLock(['node:x', 'node:y'], async () => {
      order.push('free in');
    });
    await free;
    await sleep(300);
    expect(order).toEqual(['free in']);
    release();
    await Promise.all([first, second]);
    expect(order).toEqual(['free in', 'first done', 'second in']);
  });

  it('never deadlocks when transactions name the same keys in opposite orders', async () => {
    const keys = Array.from({ length: 12 }, (_, i) => `node:${i.toString().padStart(2, '0')}`);
    let inside = 0;
    let most = 0;
    await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        store.withLock(i % 2 === 0 ? keys : [...keys].reverse(), async (tx) => {
          inside++;
          most = Math.max(most, inside);
          await sql`select pg_sleep(0.01)`.execute(tx);
          inside--;
        }),
      ),
    );
    // All name every key: they ran one at a time.
    expect(most).toBe(1);
  });
});
