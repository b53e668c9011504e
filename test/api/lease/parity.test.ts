/**
 * esi-leap parity items not covered elsewhere (issue 3, audit): lease filters `offer_uuid`,
 * `resource_type`, `status=any`; offer filters `resource_type`, `lessee_id`; names resolved in
 * bulk — one node query and one project-name query per list, whatever its length;
 * `GET /v1/nodes` with the offer current now and the lessee's view while its lease is active;
 * PATCH past the offer's end; default and maximum lease length taken from the configuration.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../../helpers/harness.ts';
import { at, DAY, enrolNode, expectFault, HOUR, MIN, startLeaseEnv, waitUntil, type LeaseEnv } from './support.ts';

let env: LeaseEnv;
const T = Math.ceil((Date.now() + 10 * DAY) / HOUR) * HOUR;
const offerUuids: string[] = [];
const leaseUuids: string[] = [];

beforeAll(async () => {
  env = await startLeaseEnv();
  for (let i = 0; i < 12; i++) {
    const node = await enrolNode(env, `par-${i}`, { resource_class: i % 2 ? 'odd' : 'even' });
    const o = await call(env.ts, env.p.owner, 'POST', '/lease/v1/offers', {
      resource_uuid: node,
      start_time: at(0, T),
      end_time: at(5 * DAY, T),
      ...(i === 0 ? { lessee_id: 'l1' } : {}),
    });
    offerUuids.push(o.body.uuid);
    const l = await call(env.ts, env.p.lessee, 'POST', `/lease/v1/offers/${o.body.uuid}/claim`, {
      start_time: at(HOUR, T),
      end_time: at(2 * HOUR, T),
      name: `par-lease-${i}`,
    });
    leaseUuids.push(l.body.uuid);
  }
});
afterAll(async () => env?.ts.close());

describe('list filters', () => {
  it('leases: offer_uuid, resource_type, status=any and one status', async () => {
    const q = async (query: string) =>
      (await call(env.ts, env.p.lessee, 'GET', `/lease/v1/leases${query}`)).body.leases.map((l: any) => l.uuid);
    expect(await q(`?offer_uuid=${offerUuids[3]}`)).toEqual([leaseUuids[3]]);
    expect(await q('?resource_type=ironic_node')).toHaveLength(12);
    await call(env.ts, env.p.lessee, 'DELETE', `/lease/v1/leases/${leaseUuids[11]}`);
    expect(await q('')).toHaveLength(11);
    expect(await q('?status=any')).toHaveLength(12);
    expect(await q('?status=deleted')).toEqual([leaseUuids[11]]);
    expectFault(
      await call(env.ts, env.p.lessee, 'GET', '/lease/v1/leases?resource_type=dummy_node'),
      400,
      'dummy_node resource type unknown.',
    );
  });

  it('offers: resource_type and lessee_id', async () => {
    const q = async (query: string) =>
      (await call(env.ts, env.p.lessee, 'GET', `/lease/v1/offers${query}`)).body.offers.map((o: any) => o.uuid);
    expect(await q('?resource_type=ironic_node')).toHaveLength(12);
    expect(await q('?lessee_id=l1')).toEqual([offerUuids[0]]);
    expect(await call(env.ts, env.p.other, 'GET', '/lease/v1/offers?lessee_id=l1').then((r) => r.body.offers)).toEqual([]);
  });
});

describe('display names are resolved in bulk', () => {
  it('one node query and one name query per list, for 12 offers or 12 leases', async () => {
    const gateway = env.ts.server.services.inventory.leaseGateway;
    const directory = env.ts.server.services.identity.directory;
    const calls = { nodes: 0, names: 0 };
    const findMany = gateway.findMany.bind(gateway);
    const projectsByIds = directory.projectsByIds.bind(directory);
    gateway.findMany = async (uuids) => {
      calls.nodes++;
      return findMany(uuids);
    };
    directory.projectsByIds = async (ids) => {
      calls.names++;
      return projectsByIds(ids);
    };
    try {
      const offers = await call(env.ts, env.p.lessee, 'GET', '/lease/v1/offers');
      expect(offers.body.offers).toHaveLength(12);
      expect(offers.body.offers.every((o: any) => o.project === 'o1' && /^par-\d+$/.test(o.resource))).toBe(true);
      expect(calls).toEqual({ nodes: 1, names: 1 });
      const leases = await call(env.ts, env.p.lessee, 'GET', '/lease/v1/leases?status=any');
      expect(leases.body.leases).toHaveLength(12);
      expect(
        leases.body.leases.every((l: any) => l.project === 'l1' && l.owner === 'o1' && ['odd', 'even'].includes(l.resource_class)),
      ).toBe(true);
      expect(calls).toEqual({ nodes: 2, names: 2 });
    } finally {
      gateway.findMany = findMany;
      directory.projectsByIds = projectsByIds;
    }
  });
});

describe('GET /v1/nodes', () => {
  // A server of its own: this node's offers and lease would show in the lists the other blocks count.
  let own: LeaseEnv;
  beforeAll(async () => {
    own = await startLeaseEnv();
  });
  afterAll(async () => own?.ts.close());

  it('shows the offer current now, and the lessee sees the node with its lease while it is active', async () => {
    const env = own;
    const node = await enrolNode(env, 'par-now');
    const now = Date.now();
    const offer = await call(env.ts, env.p.owner, 'POST', '/lease/v1/offers', {
      resource_uuid: node,
      start_time: at(-MIN, now),
      end_time: at(DAY, now),
    });
    const later = await call(env.ts, env.p.owner, 'POST', '/lease/v1/offers', {
      resource_uuid: node,
      start_time: at(2 * DAY, now),
      end_time: at(3 * DAY, now),
    });
    const owned = (await call(env.ts, env.p.owner, 'GET', '/lease/v1/nodes')).body.nodes.find((n: any) => n.uuid === node);
    expect(owned).toMatchObject({
      offer_uuid: offer.body.uuid,
      future_offers: [later.body.uuid],
      lease_uuid: null,
      provision_state: 'enroll',
    });
    const lease = await call(env.ts, env.p.lessee, 'POST', `/lease/v1/offers/${offer.body.uuid}/claim`, { end_time: at(HOUR, now) });
    expect(lease.status, lease.text).toBe(201);
    await waitUntil(async () => (await call(env.ts, env.p.lessee, 'GET', '/lease/v1/nodes')).body.nodes.some((n: any) => n.uuid === node));
    const held = (await call(env.ts, env.p.lessee, 'GET', '/lease/v1/nodes')).body.nodes.find((n: any) => n.uuid === node);
    expect(held).toMatchObject({ name: 'par-now', owner: 'o1', lessee: 'l1', lease_uuid: lease.body.uuid, offer_uuid: offer.body.uuid });
    expect(held).toHaveProperty('power_state');
    expect(held).toHaveProperty('target_power_state');
  });
});

describe('PATCH /v1/leases/{uuid} on a claim', () => {
  it('an extension past the offer’s end is 409 naming the offer window; within it, 200', async () => {
    const past = await call(env.ts, env.p.admin, 'PATCH', `/lease/v1/leases/${leaseUuids[5]}`, { end_time: at(6 * DAY, T) });
    expectFault(
      past,
      409,
      `Offer ${offerUuids[5]} has no availabilities at given time range ${at(2 * HOUR, T)}, ${at(6 * DAY, T)}. The offer runs from ${at(0, T)} to ${at(5 * DAY, T)}.`,
    );
    const ok = await call(env.ts, env.p.admin, 'PATCH', `/lease/v1/leases/${leaseUuids[5]}`, { end_time: at(5 * DAY, T) });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.end_time).toBe(at(5 * DAY, T));
    const events = await call(env.ts, env.p.lessee, 'GET', `/lease/v1/events?event_type=esi_leap.lease.update`);
    expect(events.body.events.map((e: any) => e.object_uuid)).toEqual([leaseUuids[5]]);
  });
});

describe('configurable default and maximum lease length', () => {
  it('ESI_DEFAULT_LEASE_TIME and ESI_MAX_LEASE_TIME apply to direct leases and claims', async () => {
    const small = await startLeaseEnv({ env: { ESI_DEFAULT_LEASE_TIME: '3600', ESI_MAX_LEASE_TIME: '7200' } });
    try {
      const node = await enrolNode(small, 'cfg-1');
      const d = await call(small.ts, small.p.owner, 'POST', '/lease/v1/leases', {
        resource_uuid: node,
        project_id: 'l1',
        start_time: at(0, T),
      });
      expect(d.body.end_time).toBe(at(HOUR, T));
      const node2 = await enrolNode(small, 'cfg-2');
      const o = await call(small.ts, small.p.owner, 'POST', '/lease/v1/offers', {
        resource_uuid: node2,
        start_time: at(0, T),
        end_time: at(DAY, T),
      });
      expectFault(
        await call(small.ts, small.p.lessee, 'POST', `/lease/v1/offers/${o.body.uuid}/claim`, {
          start_time: at(0, T),
          end_time: at(3 * HOUR, T),
        }),
        403,
        /The max time range is 0\.083 days\./,
      );
      const c = await call(small.ts, small.p.lessee, 'POST', `/lease/v1/offers/${o.body.uuid}/claim`, { start_time: at(0, T) });
      expect(c.body.end_time).toBe(at(HOUR, T));
    } finally {
      await small.ts.close();
    }
  });
});
