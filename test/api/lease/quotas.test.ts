/**
 * `/lease/v1/quotas` (docs/leasing.md "Quotas"; so that one lessee cannot lease every node
 * for ever):
 * admin-set limits per lessee project on nodes held at once and node-hours in a rolling window,
 * for every persona; enforced on claims, direct leases and lease requests inside the admission
 * transaction (ten parallel claims with a limit of three: exactly three succeed); bad input is
 * 400 and writes nothing.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { call } from '../../helpers/harness.ts';
import { at, countAny, countRows, DAY, enrolNode, expectFault, HOUR, startLeaseEnv, type LeaseEnv } from './support.ts';

let env: LeaseEnv;
const T = Math.ceil((Date.now() + 10 * DAY) / HOUR) * HOUR;
let nodes: string[] = [];
let offers: string[] = [];

const put = (persona: keyof LeaseEnv['p'], project: string, body: unknown) =>
  call(env.ts, env.p[persona], 'PUT', `/lease/v1/quotas/${project}`, body);
const claim = (persona: keyof LeaseEnv['p'], i: number, startH: number, endH: number) =>
  call(env.ts, env.p[persona], 'POST', `/lease/v1/offers/${offers[i]}/claim`, {
    start_time: at(startH * HOUR, T),
    end_time: at(endH * HOUR, T),
  });

/**
 * A fresh server for the tests of one describe block: nodes q-0 … q-11 of o1, each offered for
 * [T, T + 60 d); with `l1Quota`, l1 may hold 2 nodes at once; with `eachTest`, one for each test.
 */
function freshServer(options: { l1Quota?: boolean; eachTest?: boolean } = {}): void {
  (options.eachTest ? beforeEach : beforeAll)(async () => {
    await startServerWithOffers();
    if (options.l1Quota) expect((await put('admin', 'l1', { max_nodes: 2 })).status).toBe(200);
  });
  (options.eachTest ? afterEach : afterAll)(async () => env?.ts.close());
}

async function startServerWithOffers(): Promise<void> {
  env = await startLeaseEnv();
  nodes = [];
  offers = [];
  for (let i = 0; i < 12; i++) {
    nodes.push(await enrolNode(env, `q-${i}`, { properties: { memory_mb: 4096 } }));
    const o = await call(env.ts, env.p.owner, 'POST', '/lease/v1/offers', {
      resource_uuid: nodes[i],
      start_time: at(0, T),
      end_time: at(60 * DAY, T),
    });
    offers.push(o.body.uuid);
  }
}

describe('quota API for every persona', () => {
  describe('setting', () => {
    freshServer();

    it('admin sets a quota by project name: 200 with limits and usage', async () => {
      const r = await put('admin', 'l1', { max_nodes: 2 });
      expect(r.status, r.text).toBe(200);
      expect(r.body).toEqual({
        project_id: env.p.lessee.projectId,
        project: 'l1',
        max_nodes: 2,
        max_node_hours: null,
        window_hours: 720,
        usage: { nodes_now: 0, peak_nodes: 0, node_hours_in_window: 0 },
      });
    });
  });

  describe('with l1’s quota of 2 nodes', () => {
    freshServer({ l1Quota: true });

    it('owner, lessee and another project may not set quotas (403); anonymous 401', async () => {
      for (const p of ['owner', 'lessee', 'other'] as const)
        expectFault(await put(p, 'l1', { max_nodes: 100 }), 403, 'Access was denied to esi_leap:quota:set.');
      expectFault(await put('anonymous', 'l1', { max_nodes: 100 }), 401);
      expect((await call(env.ts, env.p.admin, 'GET', '/lease/v1/quotas/l1')).body.max_nodes).toBe(2);
    });

    it('GET one: admin and the project itself; other projects get 404; anonymous 401', async () => {
      expect((await call(env.ts, env.p.admin, 'GET', `/lease/v1/quotas/${env.p.lessee.projectId}`)).body.project).toBe('l1');
      expect((await call(env.ts, env.p.lessee, 'GET', '/lease/v1/quotas/l1')).body.max_nodes).toBe(2);
      expectFault(await call(env.ts, env.p.owner, 'GET', '/lease/v1/quotas/l1'), 404, 'No project named l1.');
      expectFault(await call(env.ts, env.p.other, 'GET', '/lease/v1/quotas/l1'), 404);
      expectFault(await call(env.ts, env.p.anonymous, 'GET', '/lease/v1/quotas/l1'), 401);
      // A project without a quota is unlimited.
      expect((await call(env.ts, env.p.owner, 'GET', '/lease/v1/quotas/o1')).body).toMatchObject({
        project: 'o1',
        max_nodes: null,
        max_node_hours: null,
      });
    });

    it('GET list: admin sees every quota, a project only its own', async () => {
      await put('admin', 'o2', { max_node_hours: 1000, window_hours: 24 });
      expect((await call(env.ts, env.p.admin, 'GET', '/lease/v1/quotas')).body.quotas.map((q: any) => q.project).sort()).toEqual([
        'l1',
        'o2',
      ]);
      expect((await call(env.ts, env.p.lessee, 'GET', '/lease/v1/quotas')).body.quotas.map((q: any) => q.project)).toEqual(['l1']);
      expect((await call(env.ts, env.p.owner, 'GET', '/lease/v1/quotas')).body.quotas).toEqual([]);
      expectFault(await call(env.ts, env.p.anonymous, 'GET', '/lease/v1/quotas'), 401);
    });

    it('DELETE: admin only; deleting again is 404', async () => {
      expect((await put('admin', 'o2', { max_node_hours: 1000, window_hours: 24 })).status).toBe(200);
      for (const p of ['owner', 'lessee', 'other'] as const)
        expectFault(await call(env.ts, env.p[p], 'DELETE', '/lease/v1/quotas/o2'), 403);
      expectFault(await call(env.ts, env.p.anonymous, 'DELETE', '/lease/v1/quotas/o2'), 401);
      expect((await call(env.ts, env.p.admin, 'DELETE', '/lease/v1/quotas/o2')).status).toBe(200);
      expectFault(await call(env.ts, env.p.admin, 'DELETE', '/lease/v1/quotas/o2'), 404, 'No quota is set for project o2.');
    });
  });
});

describe('max_nodes is enforced on every way of leasing', () => {
  // Each test reads the usage its own leases make: a server for each.
  freshServer({ l1Quota: true, eachTest: true });

  it('claims: a third overlapping node is 403 naming the limit; a disjoint window is fine', async () => {
    expect((await claim('lessee', 0, 0, 10)).status).toBe(201);
    expect((await claim('lessee', 1, 5, 15)).status).toBe(201);
    const before = await countRows(env, 'leases');
    const third = await claim('lessee', 2, 8, 9);
    expectFault(
      third,
      403,
      `Quota exceeded for project ${env.p.lessee.projectId}: these leases would hold 3 nodes at once at ${at(8 * HOUR, T)} (limit 2).`,
    );
    expect(await countRows(env, 'leases')).toBe(before);
    expect((await claim('lessee', 2, 15, 20)).status).toBe(201);
    const shown = await call(env.ts, env.p.lessee, 'GET', '/lease/v1/quotas/l1');
    expect(shown.body.usage).toMatchObject({ nodes_now: 0, peak_nodes: 2 });
  });

  it('a direct lease by the owner to l1 counts too; an admin may exceed it', async () => {
    // l1 holds its 2 nodes for [100 h, 101 h).
    expect((await claim('lessee', 10, 100, 101)).status).toBe(201);
    expect((await claim('lessee', 11, 100, 101)).status).toBe(201);
    const spare = await enrolNode(env, 'q-direct');
    const direct = { resource_uuid: spare, project_id: 'l1', start_time: at(100 * HOUR, T), end_time: at(101 * HOUR, T) };
    expectFault(await call(env.ts, env.p.owner, 'POST', '/lease/v1/leases', direct), 403, /Quota exceeded/);
    const admin = await call(env.ts, env.p.admin, 'POST', '/lease/v1/leases', direct);
    expect(admin.status, admin.text).toBe(201);
  });

  it('a lease request for more nodes than the quota is 403 and leases nothing', async () => {
    const before = await countRows(env, 'leases');
    const r = await call(env.ts, env.p.lessee, 'POST', '/lease/v1/lease_requests', {
      start_time: at(30 * DAY, T),
      end_time: at(31 * DAY, T),
      groups: [{ count: 3 }],
    });
    expectFault(r, 403, /would hold 3 nodes at once/);
    expect(await countRows(env, 'leases')).toBe(before);
    const two = await call(env.ts, env.p.lessee, 'POST', '/lease/v1/lease_requests', {
      start_time: at(30 * DAY, T),
      end_time: at(31 * DAY, T),
      groups: [{ count: 2 }],
    });
    expect(two.status, two.text).toBe(201);
  });

  it('ten parallel claims on ten nodes with a limit of three: exactly three succeed', async () => {
    await put('admin', 'o2', { max_nodes: 3 });
    const results = await Promise.all(offers.slice(0, 10).map((_o, i) => claim('other', i, 40 * 24, 40 * 24 + 1)));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 201, 201, 403, 403, 403, 403, 403, 403, 403]);
  });
});

describe('max_node_hours over a rolling window', () => {
  freshServer({ l1Quota: true });

  it('refuses what would exceed the node-hours of any window, counting every lease of the project', async () => {
    await put('admin', 'l1', { max_node_hours: 10, window_hours: 24 });
    expect((await claim('lessee', 4, 52 * 24, 52 * 24 + 6)).status).toBe(201);
    expectFault(
      await claim('lessee', 5, 52 * 24 + 10, 52 * 24 + 15),
      403,
      /would use 11 node-hours in the 24-hour window ending .* \(limit 10\)/,
    );
    expect((await claim('lessee', 5, 52 * 24 + 10, 52 * 24 + 14)).status).toBe(201);
    expect((await claim('lessee', 6, 53 * 24 + 12, 53 * 24 + 20)).status).toBe(201); // the next day's window
  });
});

describe('bad input: 400 (or 404), nothing written', () => {
  freshServer();

  it('refuses bad limits, unknown fields and unknown projects', async () => {
    const before = await countAny(env, 'lease_quotas');
    const cases: Array<[string, unknown, number, RegExp | string]> = [
      ['o1', { max_nodes: -1 }, 400, /max_nodes.*from 0 to 1000000/],
      ['o1', { max_nodes: 'ten' }, 400, /max_nodes.*integer or null/],
      ['o1', { max_node_hours: 1.5 }, 400, /max_node_hours/],
      ['o1', { window_hours: 0 }, 400, /window_hours.*from 1 to 87600/],
      ['o1', { max_nodes: 1, colour: 'red' }, 400, 'Unknown attribute for argument quota: colour'],
      ['o1', { usage: {} }, 400, /usage.*read-only/],
      ['o1', '{"max_nodes": ', 400, 'The request body is not valid JSON.'],
      ['o1', [1], 400, /must be a JSON object/],
      ['ghost', { max_nodes: 1 }, 404, 'No project named ghost.'],
    ];
    for (const [project, body, status, message] of cases) expectFault(await put('admin', project, body), status, message);
    expect(await countAny(env, 'lease_quotas')).toBe(before);
    expectFault(await call(env.ts, env.p.admin, 'GET', '/lease/v1/quotas?colour=red'), 400, 'Unknown argument: "colour".');
  });
});
