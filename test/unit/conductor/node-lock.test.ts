/**
 * NodeLocks over the real node repository (SQLite in memory): the lock is taken atomically,
 * always released (also when the work throws), refused while another conductor holds it;
 * take-over moves a dead conductor's lock to this one; a release that keeps failing leaves the
 * node "leaked" (no new lock on it) until a retry succeeds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeLocks } from '../../../src/conductor/node-lock.ts';
import type { NodeRepository } from '../../../src/domain/inventory/ports.ts';
import { NODE_DOCUMENT_CODEC } from '../../../src/api/baremetal/node-document.ts';
import { openStore, type Store } from '../../../src/store/database.ts';
import { KyselyNodeRepository } from '../../../src/store/inventory/node-repository.ts';
import { fixedClock, makeNode } from './fixtures.ts';

let store: Store;
let repo: KyselyNodeRepository;

beforeAll(async () => {
  store = await openStore({ sqlitePath: ':memory:' });
  repo = new KyselyNodeRepository(store.db, fixedClock(1000), NODE_DOCUMENT_CODEC);
});
afterAll(async () => store?.close());

async function newNode(): Promise<string> {
  const { id: _id, version: _v, updated_at: _u, ...row } = makeNode();
  return (await repo.insert(row, 1000)).uuid;
}

describe('NodeLocks', () => {
  it('holds the reservation during the work and releases it after', async () => {
    const uuid = await newNode();
    const locks = new NodeLocks(repo, 'c1', () => {});
    const r = await locks.with(uuid, async () => {
      expect(locks.isHeld(uuid)).toBe(true);
      return (await repo.get(uuid))!.reservation;
    });
    expect(r).toEqual({ locked: true, value: 'c1' });
    expect((await repo.get(uuid))!.reservation).toBeNull();
    expect(locks.isHeld(uuid)).toBe(false);
  });

  it('releases when the work throws, and rethrows', async () => {
    const uuid = await newNode();
    const locks = new NodeLocks(repo, 'c1', () => {});
    await expect(locks.with(uuid, async () => Promise.reject(new Error('task broke')))).rejects.toThrow('task broke');
    expect((await repo.get(uuid))!.reservation).toBeNull();
  });

  it('does not run the work while another conductor holds the node', async () => {
    const uuid = await newNode();
    expect(await repo.reserve(uuid, 'other')).toBe(true);
    let ran = false;
    const r = await new NodeLocks(repo, 'c1', () => {}).with(uuid, async () => {
      ran = true;
    });
    expect(r).toEqual({ locked: false });
    expect(ran).toBe(false);
    expect((await repo.get(uuid))!.reservation).toBe('other');
  });

  it("takes over a dead conductor's lock, and works under its own stale lock", async () => {
    const uuid = await newNode();
    await repo.reserve(uuid, 'dead');
    // The lock moves in one write: the dead holder's lock is never released first (a reader
    // in between would see a working node without a lock).
    const releasedBy: string[] = [];
    const watched: Pick<NodeRepository, 'reserve' | 'release'> = {
      reserve: (u, h, from) => repo.reserve(u, h, from),
      release: (u, h) => (releasedBy.push(h), repo.release(u, h)),
    };
    const locks = new NodeLocks(watched, 'c1', () => {});
    const r = await locks.takeOver(uuid, 'dead', async () => (await repo.get(uuid))!.reservation);
    expect(r).toEqual({ locked: true, value: 'c1' });
    expect(releasedBy).toEqual(['c1']);
    expect((await repo.get(uuid))!.reservation).toBeNull();

    await repo.reserve(uuid, 'c1');
    const own = await locks.takeOver(uuid, 'c1', async () => (await repo.get(uuid))!.reservation);
    expect(own).toEqual({ locked: true, value: 'c1' });
    expect((await repo.get(uuid))!.reservation).toBeNull();

    // Someone else got the node after the dead conductor's lock was cleared: nothing runs.
    await repo.reserve(uuid, 'fast');
    expect(await locks.takeOver(uuid, 'dead', async () => 'ran')).toEqual({ locked: false });
    expect((await repo.get(uuid))!.reservation).toBe('fast');
  });

  it('remembers a node whose release kept failing, refuses to lock it, and releases it on retry', async () => {
    const uuid = await newNode();
    let failing = true;
    const flaky: Pick<NodeRepository, 'reserve' | 'release'> = {
      reserve: (u, h) => repo.reserve(u, h),
      release: (u, h) => (failing ? Promise.reject(new Error('database unreachable')) : repo.release(u, h)),
    };
    const errors: unknown[] = [];
    const locks = new NodeLocks(flaky, 'c1', (_u, e) => errors.push(e));
    await locks.with(uuid, async () => {});
    expect(errors.length).toBe(4);
    expect(locks.leaked).toEqual([uuid]);
    expect((await repo.get(uuid))!.reservation).toBe('c1');
    expect(await locks.with(uuid, async () => 'again')).toEqual({ locked: false });
    failing = false;
    await locks.retryLeaked();
    expect(locks.leaked).toEqual([]);
    expect((await repo.get(uuid))!.reservation).toBeNull();
  }, 10_000);
});
