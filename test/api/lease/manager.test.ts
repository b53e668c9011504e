/**
 * The lease manager's batch step and sweep horizon, on a manual clock: many leases due at the
 * same instant are all applied (one batch), each with exactly one event; back-to-back leases of
 * one node hand the node over at the shared boundary; a lease written by another process is
 * loaded by the sweep only once it falls within the horizon (two sweep intervals), and then fires
 * on time; a lease whose start is applied late, after failed tries and past its end, is ended in
 * the same pass.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DatabaseUnavailableError } from '../../../src/domain/errors.ts';
import { call, ManualClock } from '../../helpers/harness.ts';
import { at, enrolNode, HOUR, MIN, nodeAs, startLeaseEnv, type LeaseEnv } from './support.ts';

const T0 = Date.UTC(2031, 5, 1, 8);
const clock = new ManualClock(T0);
let env: LeaseEnv;

async function advance(ms: number): Promise<void> {
  clock.advance(ms);
  await env.ts.server.services.leaseManager.runDue();
}

const status = async (uuid: string) => (await call(env.ts, env.p.admin, 'GET', `/lease/v1/leases/${uuid}`)).body.status;

beforeAll(async () => {
  env = await startLeaseEnv({ clock, env: { ESI_TOKEN_TTL: String(7 * 24 * 3600), ESI_LEASE_SWEEP_INTERVAL: '60' } });
});
afterAll(async () => env?.ts.close());

describe('leases due together', () => {
  it('100 leases starting at the same instant are all applied, each with one fulfil event', async () => {
    const base = clock.now();
    const start = base + HOUR;
    const leases: string[] = [];
    const nodes: string[] = [];
    for (let i = 0; i < 100; i++) {
      const node = await enrolNode(env, `mgr-${i}`);
      nodes.push(node);
      const r = await call(env.ts, env.p.owner, 'POST', '/lease/v1/leases', {
        resource_uuid: node,
        project_id: i % 2 ? 'l1' : 'o2',
        start_time: at(0, start),
        end_time: at(HOUR, start),
      });
      expect(r.status, r.text).toBe(201);
      leases.push(r.body.uuid);
    }
    await advance(HOUR - 1);
    expect(await status(leases[0]!)).toBe('created');
    await advance(1);
    const listed = await call(env.ts, env.p.admin, 'GET', `/lease/v1/leases?view=all&status=active`);
    expect(listed.body.leases.filter((l: any) => leases.includes(l.uuid))).toHaveLength(100);
    expect(new Set(listed.body.leases.filter((l: any) => leases.includes(l.uuid)).map((l: any) => l.fulfill_time))).toEqual(
      new Set([at(HOUR, base)]),
    );
    const lessee = await nodeAs(env, env.p.lessee, nodes[1]!);
    expect(lessee.body.properties.lease_uuid).toBe(leases[1]);
    const events = await call(env.ts, env.p.admin, 'GET', '/lease/v1/events?event_type=esi_leap.lease.fulfill.end');
    expect(events.body.events.filter((e: any) => leases.includes(e.object_uuid))).toHaveLength(100);
    await advance(HOUR);
    const ended = await call(env.ts, env.p.admin, 'GET', `/lease/v1/leases?view=all&status=expired`);
    expect(ended.body.leases.filter((l: any) => leases.includes(l.uuid))).toHaveLength(100);
    expect((await nodeAs(env, env.p.lessee, nodes[1]!)).status).toBe(404);
  });

  it('back-to-back leases of one node: at the shared boundary the node passes from one lessee to the next', async () => {
    const start = clock.now() + HOUR;
    const node = await enrolNode(env, 'mgr-b2b');
    const first = await call(env.ts, env.p.owner, 'POST', '/lease/v1/leases', {
      resource_uuid: node,
      project_id: 'l1',
      start_time: at(0, start),
      end_time: at(HOUR, start),
    });
    const second = await call(env.ts, env.p.owner, 'POST', '/lease/v1/leases', {
      resource_uuid: node,
      project_id: 'o2',
      start_time: at(HOUR, start),
      end_time: at(2 * HOUR, start),
    });
    expect([first.status, second.status]).toEqual([201, 201]);
    await advance(HOUR);
    expect((await nodeAs(env, env.p.lessee, node)).body.lessee).toBe(env.p.lessee.projectId);
    await advance(HOUR);
    expect([await status(first.body.uuid), await status(second.body.uuid)]).toEqual(['expired', 'active']);
    expect((await nodeAs(env, env.p.lessee, node)).status).toBe(404);
    const held = await nodeAs(env, env.p.other, node);
    expect(held.body).toMatchObject({ lessee: env.p.other.projectId, properties: { lease_uuid: second.body.uuid } });
  });
});

describe('the sweep horizon', () => {
  it('a lease written by another process is loaded once it falls within two sweep intervals, and fires on time', async () => {
    const node = await enrolNode(env, 'mgr-far');
    const start = clock.now() + 10 * MIN;
    const uuid = randomUUID();
    // Written straight to the database, as another API process would (this manager is not told).
    await env.ts.server.services.store.db
      .insertInto('leases')
      .values({
        uuid,
        name: null,
        project_id: env.p.lessee.projectId!,
        owner_id: env.p.owner.projectId!,
        purpose: null,
        resource_type: 'ironic_node',
        resource_uuid: node,
        start_time: start,
        end_time: start + HOUR,
        fulfill_time: null,
        expire_time: null,
        status: 'created',
        properties: '{}',
        offer_uuid: null,
        parent_lease_uuid: null,
        created_at: clock.now(),
        updated_at: clock.now(),
      })
      .execute();
    const manager = env.ts.server.services.leaseManager;
    await manager.sweep();
    expect(manager.deadlineOf({ kind: 'lease', uuid })).toBeUndefined(); // 10 min ahead: beyond 2 × 60 s
    clock.advance(10 * MIN - 90_000);
    await manager.sweep();
    expect(manager.deadlineOf({ kind: 'lease', uuid })).toBe(start);
    await advance(90_000);
    expect(await status(uuid)).toBe('active');
  });
});

describe('the database away across a lease (issue 21)', () => {
  it('a start applied after failed tries, finishing past the lease end: the end is applied in the same pass, not after the failures’ back-off', async () => {
    const node = await enrolNode(env, 'mgr-away');
    const start = clock.now() + HOUR;
    const r = await call(env.ts, env.p.owner, 'POST', '/lease/v1/leases', {
      resource_uuid: node,
      project_id: 'l1',
      start_time: at(0, start),
      end_time: at(20_000, start),
    });
    expect(r.status, r.text).toBe(201);
    const { lifecycle } = env.ts.server.services.leasing;
    const original = lifecycle.processLeases.bind(lifecycle);
    // The database is away at the start and for the retries after it (1 s, 2 s, 4 s).
    lifecycle.processLeases = async () => {
      throw new DatabaseUnavailableError();
    };
    try {
      await advance(HOUR);
      for (const ms of [1000, 2000, 4000]) await advance(ms);
      expect(await status(r.body.uuid)).toBe('created');
      // Back at start + 7 s: the retry at + 15 s applies the start, and finishes past the end (+ 20 s).
      let first = true;
      lifecycle.processLeases = async (uuids) => {
        const out = await original(uuids);
        if (first) clock.advance(10_000);
        first = false;
        return out;
      };
      await advance(8000);
    } finally {
      lifecycle.processLeases = original;
    }
    const events = await call(env.ts, env.p.admin, 'GET', `/lease/v1/events?resource_uuid=${node}`);
    expect(events.body.events.map((e: any) => e.event_type)).toEqual(
      expect.arrayContaining(['esi_leap.lease.fulfill.end', 'esi_leap.lease.expire.end']),
    );
    expect(await status(r.body.uuid)).toBe('expired');
  });
});
