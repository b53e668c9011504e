/**
 * The leasing life cycle end to end, on a manual clock: the demo flow (owner o1 offers a node,
 * lessee l1 claims it, the lease manager applies it at the start — the node becomes visible to
 * l1 through the baremetal API — and removes it at the end or on delete), sub-leasing with the
 * parent re-applied, cascades, offer expiry, and the event log with its cursors.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, ManualClock } from '../../helpers/harness.ts';
import { at, enrolNode, HOUR, MIN, nodeAs, startLeaseEnv, type LeaseEnv } from './support.ts';

let T0 = 0;
let clock: ManualClock;
let env: LeaseEnv;

/** Move the manual clock and let the lease manager act on what became due. */
async function advance(ms: number): Promise<void> {
  clock.advance(ms);
  await env.ts.server.services.leaseManager.runDue();
}

async function leaseStatus(uuid: string): Promise<string> {
  const r = await call(env.ts, env.p.admin, 'GET', `/lease/v1/leases/${uuid}`);
  return r.body.status;
}

/** A server on a manual clock at `start` of its own for the tests of one describe block. */
function freshServer(start: number): void {
  beforeAll(async () => {
    T0 = start;
    clock = new ManualClock(T0);
    // Tokens live a week so that moving the manual clock by hours does not expire them.
    env = await startLeaseEnv({ clock, env: { ESI_TOKEN_TTL: String(7 * 24 * 3600) } });
  });
  afterAll(async () => env?.ts.close());
}

describe('demo flow: offer, claim, activation, expiry', () => {
  freshServer(Date.UTC(2030, 0, 1, 12));

  it('owner o1 offers a node that l1 claims for a window starting in 10 minutes: nothing changes before the start; at the start the node’s lessee becomes l1 (Ironic API 1.65), l1 may open its console and the offer shows the window as taken; at the end l1 gets 404 on the node again', async () => {
    const base = clock.now();
    // Owner o1 offers a node; lessee l1 cannot see the node yet.
    const node = await enrolNode(env, 'demo-1');
    const o = await call(env.ts, env.p.owner, 'POST', '/lease/v1/offers', {
      resource_uuid: 'demo-1',
      start_time: at(0, base),
      end_time: at(2 * HOUR, base),
    });
    expect(o.status, o.text).toBe(201);
    const offer = o.body.uuid;
    expect((await nodeAs(env, env.p.lessee, node)).status).toBe(404);

    // l1 claims a window starting in 10 minutes; nothing changes before the start.
    const r = await call(env.ts, env.p.lessee, 'POST', `/lease/v1/offers/${offer}/claim`, {
      start_time: at(10 * MIN, base),
      end_time: at(40 * MIN, base),
    });
    expect(r.status, r.text).toBe(201);
    expect(r.body).toMatchObject({ status: 'created', project: 'l1', owner: 'o1', offer_uuid: offer, fulfill_time: null });
    const lease = r.body.uuid;
    await advance(10 * MIN - 1);
    expect(await leaseStatus(lease)).toBe('created');
    expect((await nodeAs(env, env.p.lessee, node)).status).toBe(404);

    // At the start the node’s lessee becomes l1 and l1 sees the node (Ironic API 1.65).
    await advance(1);
    const shown = await call(env.ts, env.p.lessee, 'GET', `/lease/v1/leases/${lease}`);
    expect(shown.body).toMatchObject({ status: 'active', fulfill_time: at(10 * MIN, base) });
    const n = await nodeAs(env, env.p.lessee, node);
    expect(n.status, n.text).toBe(200);
    expect(n.body.lessee).toBe(env.p.lessee.projectId);
    expect(n.body.properties.lease_uuid).toBe(lease);
    const listed = await call(env.ts, env.p.owner, 'GET', '/lease/v1/nodes');
    expect(listed.body.nodes.find((x: any) => x.uuid === node)).toMatchObject({ lessee: 'l1', lease_uuid: lease, owner: 'o1' });

    // While the lease is active l1 may open the node’s console.
    const c = await call(env.ts, env.p.lessee, 'POST', '/lease/v1/console_auth_tokens', { node_uuid_or_name: node });
    expect(c.status, c.text).toBe(201);
    const consoleToken = c.body.token;
    expect(await env.ts.server.services.leasing.consoleTokens.validate(consoleToken)).toMatchObject({ node_uuid: node });

    // The offer shows the claimed window as taken.
    const taken = await call(env.ts, env.p.lessee, 'GET', `/lease/v1/offers/${offer}`);
    expect(taken.body.availabilities).toEqual([[at(40 * MIN, base), at(2 * HOUR, base)]]);

    // At the end the lease is removed: l1 gets 404 on the node again.
    await advance(30 * MIN);
    const ended = await call(env.ts, env.p.lessee, 'GET', `/lease/v1/leases/${lease}`);
    expect(ended.body).toMatchObject({ status: 'expired', expire_time: at(40 * MIN, base) });
    expect((await nodeAs(env, env.p.lessee, node)).status).toBe(404);
    const owned = await nodeAs(env, env.p.owner, node);
    expect(owned.body.lessee).toBeNull();
    expect(owned.body.properties.lease_uuid).toBeUndefined();
    // The node's console tokens went with the lease.
    expect(await env.ts.server.services.leasing.consoleTokens.validate(consoleToken)).toBeNull();
    expect((await call(env.ts, env.p.lessee, 'POST', '/lease/v1/console_auth_tokens', { node_uuid_or_name: node })).status).toBe(404);
  });

  it('deleting an active lease removes it at once', async () => {
    const base = clock.now();
    const node = await enrolNode(env, 'demo-del');
    const o = await call(env.ts, env.p.owner, 'POST', '/lease/v1/offers', {
      resource_uuid: node,
      start_time: at(0, base),
      end_time: at(2 * HOUR, base),
    });
    expect(o.status, o.text).toBe(201);
    const r = await call(env.ts, env.p.lessee, 'POST', `/lease/v1/offers/${o.body.uuid}/claim`, {
      start_time: at(0, base),
      end_time: at(50 * MIN, base),
    });
    expect(r.status, r.text).toBe(201);
    await advance(0);
    expect(await leaseStatus(r.body.uuid)).toBe('active');
    expect((await nodeAs(env, env.p.lessee, node)).status).toBe(200);
    const d = await call(env.ts, env.p.lessee, 'DELETE', `/lease/v1/leases/${r.body.uuid}`);
    expect(d.status).toBe(200);
    expect(d.text).toBe('null');
    const shown = await call(env.ts, env.p.lessee, 'GET', `/lease/v1/leases/${r.body.uuid}`);
    expect(shown.body).toMatchObject({ status: 'deleted', expire_time: at(0, base) });
    expect((await nodeAs(env, env.p.lessee, node)).status).toBe(404);
  });

  it('the offer expires at its end', async () => {
    const base = clock.now();
    const node = await enrolNode(env, 'demo-exp');
    const o = await call(env.ts, env.p.owner, 'POST', '/lease/v1/offers', {
      resource_uuid: node,
      start_time: at(0, base),
      end_time: at(2 * HOUR, base),
    });
    expect(o.status, o.text).toBe(201);
    const offer = o.body.uuid;
    clock.set(base + 2 * HOUR);
    await env.ts.server.services.leaseManager.runDue();
    const r = await call(env.ts, env.p.owner, 'GET', `/lease/v1/offers/${offer}`);
    expect(r.body).toMatchObject({ status: 'expired', availabilities: [] });
    const list = await call(env.ts, env.p.owner, 'GET', '/lease/v1/offers');
    expect(list.body.offers.map((x: any) => x.uuid)).not.toContain(offer);
  });
});

describe('sub-leasing and cascades (docs/leasing.md; esi-leap: https://opendev.org/openstack/esi-leap)', () => {
  freshServer(Date.UTC(2030, 0, 1, 15));

  it('o1 leases a node to l1 directly and at the start l1 holds it; a lessee without the owner role cannot re-offer it; with it, a sub-offer inside the lease is allowed', async () => {
    const base = clock.now();
    const node = await enrolNode(env, 'sub-1');
    const r = await call(env.ts, env.p.owner, 'POST', '/lease/v1/leases', {
      resource_uuid: node,
      project_id: 'l1',
      start_time: at(0, base),
      end_time: at(HOUR, base),
    });
    expect(r.status, r.text).toBe(201);
    const parent = r.body.uuid;
    await advance(0);
    expect(await leaseStatus(parent)).toBe('active');

    const denied = await call(env.ts, env.p.lessee, 'POST', '/lease/v1/offers', {
      resource_uuid: node,
      start_time: at(10 * MIN, base),
      end_time: at(20 * MIN, base),
    });
    expect(denied.status).toBe(403);
    // Give l1's user the owner role too (as ESI sub-leasing requires).
    const { grants, tokens } = env.ts.server.services.identity;
    const ownerRole = (await grants.listRoles(env.p.admin.context!, { name: 'owner' }))[0]!;
    await grants.grant(env.p.admin.context!, {
      user_id: env.p.lessee.userId!,
      role_id: ownerRole.id,
      target: { type: 'project', id: env.p.lessee.projectId! },
    });
    const issued = await tokens.authenticatePassword(
      { userId: env.p.lessee.userId!, password: 'pw-lessee1' },
      { kind: 'project', projectId: env.p.lessee.projectId! },
    );
    const l1owner = { ...env.p.lessee, token: issued.secret };
    const outside = await call(env.ts, l1owner, 'POST', '/lease/v1/offers', {
      resource_uuid: node,
      start_time: at(30 * MIN, base),
      end_time: at(2 * HOUR, base),
    });
    expect(outside.status).toBe(403);
    expect(outside.body.faultstring).toMatch(/You do not have permissions on ironic_node .* for the time range/);
    const sub = await call(env.ts, l1owner, 'POST', '/lease/v1/offers', {
      resource_uuid: node,
      start_time: at(10 * MIN, base),
      end_time: at(30 * MIN, base),
    });
    expect(sub.status, sub.text).toBe(201);
    expect(sub.body.parent_lease_uuid).toBe(parent);
    expect(sub.body.project).toBe('l1');

    // o2 claims the sub-offer; at its start o2 holds the node, l1 loses it; at its end l1 has it back.
    const claim = await call(env.ts, env.p.other, 'POST', `/lease/v1/offers/${sub.body.uuid}/claim`, {
      start_time: at(10 * MIN, base),
      end_time: at(20 * MIN, base),
    });
    expect(claim.status, claim.text).toBe(201);
    expect(claim.body).toMatchObject({ parent_lease_uuid: parent, owner: 'l1', project: 'o2' });
    await advance(10 * MIN);
    expect(await leaseStatus(claim.body.uuid)).toBe('active');
    expect((await nodeAs(env, env.p.other, node)).body.lessee).toBe(env.p.other.projectId);
    expect((await nodeAs(env, env.p.lessee, node)).status).toBe(404);
    await advance(10 * MIN);
    expect(await leaseStatus(claim.body.uuid)).toBe('expired');
    expect((await nodeAs(env, env.p.other, node)).status).toBe(404);
    const back = await nodeAs(env, env.p.lessee, node);
    expect(back.body.lessee).toBe(env.p.lessee.projectId);
    expect(back.body.properties.lease_uuid).toBe(parent);

    // A second sub-lease, then the parent is deleted: the child and the sub-offer go with it.
    const child = await call(env.ts, l1owner, 'POST', '/lease/v1/leases', {
      resource_uuid: node,
      project_id: 'o2',
      start_time: at(40 * MIN, base),
      end_time: at(50 * MIN, base),
    });
    expect(child.status, child.text).toBe(201);
    expect(child.body.parent_lease_uuid).toBe(parent);
    const overlapping = await call(env.ts, l1owner, 'POST', '/lease/v1/leases', {
      resource_uuid: node,
      project_id: 'o2',
      start_time: at(45 * MIN, base),
      end_time: at(55 * MIN, base),
    });
    expect(overlapping.status).toBe(409);
    expect(overlapping.body.faultstring).toContain(`Lease ${parent} has no availabilities`);
    expect(overlapping.body.faultstring).toContain(`Lease ${child.body.uuid} holds it from`);
    const del = await call(env.ts, env.p.owner, 'DELETE', `/lease/v1/leases/${parent}`);
    expect(del.status, del.text).toBe(200);
    expect(await leaseStatus(parent)).toBe('deleted');
    expect(await leaseStatus(child.body.uuid)).toBe('deleted');
    const subOffer = await call(env.ts, env.p.owner, 'GET', `/lease/v1/offers/${sub.body.uuid}`);
    expect(subOffer.body.status).toBe('deleted');
    expect((await nodeAs(env, env.p.lessee, node)).status).toBe(404);
    expect((await nodeAs(env, env.p.owner, node)).body.lessee).toBeNull();
  });
});

describe('a busy node: wait states retried with back-off', () => {
  freshServer(Date.UTC(2030, 0, 1, 18));

  it('a reserved node parks the lease in wait fulfill / wait expire / wait cancel until it is released', async () => {
    const base = clock.now();
    const node = await enrolNode(env, 'busy-1');
    const nodes = env.ts.server.services.inventory.nodeRepository;
    const manager = env.ts.server.services.leaseManager;
    expect(await nodes.reserve(node, 'some-conductor')).toBe(true);
    const r = await call(env.ts, env.p.owner, 'POST', '/lease/v1/leases', {
      resource_uuid: node,
      project_id: 'l1',
      start_time: at(0, base),
      end_time: at(HOUR, base),
    });
    expect(r.status, r.text).toBe(201);
    const lease = r.body.uuid;
    await advance(0);
    expect(await leaseStatus(lease)).toBe('wait fulfill');
    const retry = manager.deadlineOf({ kind: 'lease', uuid: lease })!;
    expect(retry - clock.now()).toBe(1000);
    await advance(1000);
    expect(await leaseStatus(lease)).toBe('wait fulfill');
    expect(manager.deadlineOf({ kind: 'lease', uuid: lease })! - clock.now()).toBe(2000); // exponential back-off
    await nodes.release(node, 'some-conductor');
    await advance(2000);
    expect(await leaseStatus(lease)).toBe('active');
    expect((await nodeAs(env, env.p.lessee, node)).status).toBe(200);

    // Busy at the end: wait expire, then expired once released.
    expect(await nodes.reserve(node, 'some-conductor')).toBe(true);
    clock.set(base + HOUR);
    await manager.runDue();
    expect(await leaseStatus(lease)).toBe('wait expire');
    // Revocation never waits on the lock: the lessee has lost the node already.
    expect((await nodeAs(env, env.p.lessee, node)).status).toBe(404);
    await nodes.release(node, 'some-conductor');
    await advance(1000);
    expect(await leaseStatus(lease)).toBe('expired');
    expect((await nodeAs(env, env.p.lessee, node)).status).toBe(404);

    // Busy on cancel: DELETE answers at once, the lease waits in wait cancel, a retry within a second finishes it.
    const second = await call(env.ts, env.p.owner, 'POST', '/lease/v1/leases', {
      resource_uuid: node,
      project_id: 'l1',
      start_time: at(HOUR, base),
      end_time: at(2 * HOUR, base),
    });
    await advance(0);
    expect(await leaseStatus(second.body.uuid)).toBe('active');
    expect(await nodes.reserve(node, 'some-conductor')).toBe(true);
    expect((await call(env.ts, env.p.lessee, 'DELETE', `/lease/v1/leases/${second.body.uuid}`)).status).toBe(200);
    expect(await leaseStatus(second.body.uuid)).toBe('wait cancel');
    expect((await nodeAs(env, env.p.lessee, node)).status).toBe(404);
    expect((await nodeAs(env, env.p.owner, node)).body.lessee).toBeNull();
    // Retried at once and then with back-off, not at the lease's end nor at the next sweep.
    await manager.runDue();
    expect(manager.deadlineOf({ kind: 'lease', uuid: second.body.uuid })! - clock.now()).toBeLessThanOrEqual(1000);
    await nodes.release(node, 'some-conductor');
    await advance(1000);
    expect(await leaseStatus(second.body.uuid)).toBe('deleted');
    expect((await nodeAs(env, env.p.lessee, node)).status).toBe(404);

    const events = await call(env.ts, env.p.admin, 'GET', `/lease/v1/events?resource_uuid=${node}`);
    expect(events.body.events.filter((e: any) => e.object_uuid === lease).map((e: any) => e.event_type)).toEqual([
      'esi_leap.lease.create',
      'esi_leap.lease.fulfill.error',
      'esi_leap.lease.fulfill.end',
      'esi_leap.lease.expire.error',
      'esi_leap.lease.expire.end',
    ]);
    expect(events.body.events.filter((e: any) => e.object_uuid === second.body.uuid).map((e: any) => e.event_type)).toEqual([
      'esi_leap.lease.create',
      'esi_leap.lease.fulfill.end',
      'esi_leap.lease.delete.error',
      'esi_leap.lease.delete.end',
    ]);
  });
});

describe('event log', () => {
  freshServer(Date.UTC(2030, 0, 2, 12));
  /**
   * Every kind of event: o1 offers demo-1 for [T0, T0 + 2 h); l1 claims [10 min, 40 min), which is
   * applied and expires; l1 claims [40 min, 90 min), applied and deleted; the offer expires at
   * T0 + 2 h; at T0 + 3 h o1 offers the node again and deletes the offer.
   */
  beforeAll(async () => {
    await enrolNode(env, 'demo-1');
    const o = await call(env.ts, env.p.owner, 'POST', '/lease/v1/offers', {
      resource_uuid: 'demo-1',
      start_time: at(0, T0),
      end_time: at(2 * HOUR, T0),
    });
    expect(o.status, o.text).toBe(201);
    const claim = async (from: number, to: number): Promise<string> => {
      const r = await call(env.ts, env.p.lessee, 'POST', `/lease/v1/offers/${o.body.uuid}/claim`, {
        start_time: at(from, T0),
        end_time: at(to, T0),
      });
      expect(r.status, r.text).toBe(201);
      return r.body.uuid as string;
    };
    await claim(10 * MIN, 40 * MIN);
    await advance(10 * MIN);
    await advance(30 * MIN);
    const second = await claim(40 * MIN, 90 * MIN);
    await advance(0);
    expect(await leaseStatus(second)).toBe('active');
    expect((await call(env.ts, env.p.lessee, 'DELETE', `/lease/v1/leases/${second}`)).status).toBe(200);
    clock.set(T0 + 2 * HOUR);
    await env.ts.server.services.leaseManager.runDue();
    clock.set(T0 + 3 * HOUR);
    const again = await call(env.ts, env.p.owner, 'POST', '/lease/v1/offers', {
      resource_uuid: 'demo-1',
      start_time: at(3 * HOUR, T0),
      end_time: at(4 * HOUR, T0),
    });
    expect(again.status, again.text).toBe(201);
    expect((await call(env.ts, env.p.owner, 'DELETE', `/lease/v1/offers/${again.body.uuid}`)).status).toBe(200);
  });

  it('records every state change with esi-leap fields, scoped to the caller’s project, with cursors', async () => {
    const all = await call(env.ts, env.p.admin, 'GET', '/lease/v1/events');
    expect(all.status).toBe(200);
    const types = new Set(all.body.events.map((e: any) => e.event_type));
    for (const t of [
      'esi_leap.offer.create',
      'esi_leap.lease.create',
      'esi_leap.lease.fulfill.end',
      'esi_leap.lease.expire.end',
      'esi_leap.lease.delete.end',
      'esi_leap.offer.expire',
      'esi_leap.offer.delete',
    ]) {
      expect(types, t).toContain(t);
    }
    const first = all.body.events[0];
    expect(Object.keys(first).sort()).toEqual([
      'event_time',
      'event_type',
      'id',
      'lessee_id',
      'object_type',
      'object_uuid',
      'owner_id',
      'resource_type',
      'resource_uuid',
    ]);
    const ids = all.body.events.map((e: any) => e.id);
    expect(ids).toEqual([...ids].sort((a: number, b: number) => a - b));

    const mine = await call(env.ts, env.p.lessee, 'GET', '/lease/v1/events');
    expect(mine.body.events.length).toBeGreaterThan(0);
    for (const e of mine.body.events) expect([e.lessee_id, e.owner_id]).toContain(env.p.lessee.projectId);
    // A non-admin cannot widen the scope to another project.
    const forced = await call(env.ts, env.p.lessee, 'GET', `/lease/v1/events?lessee_or_owner_id=${env.p.owner.projectId}`);
    expect(forced.body.events).toEqual(mine.body.events);

    const cursor = ids[Math.floor(ids.length / 2)];
    const after = await call(env.ts, env.p.admin, 'GET', `/lease/v1/events?last_event_id=${cursor}`);
    expect(after.body.events.every((e: any) => e.id > cursor)).toBe(true);
    expect(after.body.events.length).toBe(ids.filter((i: number) => i > cursor).length);
    const byTime = await call(env.ts, env.p.admin, 'GET', `/lease/v1/events?last_event_time=${at(2 * HOUR, T0)}`);
    expect(byTime.body.events.length).toBeGreaterThan(0);
    expect(byTime.body.events.every((e: any) => e.event_time > at(2 * HOUR, T0))).toBe(true);
    const fulfils = await call(env.ts, env.p.admin, 'GET', '/lease/v1/events?event_type=esi_leap.lease.fulfill.end&resource_uuid=demo-1');
    expect(fulfils.body.events.length).toBe(2);
    expect((await call(env.ts, env.p.anonymous, 'GET', '/lease/v1/events')).status).toBe(401);
  });
});
