/**
 * Tenant isolation of the lease API (docs/policy.md): what a caller may not see is 404, and a
 * 403/409 never names another project's leases, offers, policies or quota figures; project
 * filters and "act for a project" fields give the same answer whether another project exists or
 * not; `GET /v1/nodes` shows only the offers and leases the caller may see; `GET /v1/events`
 * answers alike for an unknown node and a node the caller may not see.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KyselyIdentityRepository } from '../../../src/store/identity/repository.ts';
import { call } from '../../helpers/harness.ts';
import { at, DAY, enrolNode, expectFault, HOUR, startLeaseEnv, type LeaseEnv } from './support.ts';

let env: LeaseEnv;
const T = Math.ceil((Date.now() + 30 * DAY) / HOUR) * HOUR;
type Who = keyof LeaseEnv['p'];
const get = (who: Who, path: string) => call(env.ts, env.p[who], 'GET', `/lease/v1${path}`);
const post = (who: Who, path: string, body: unknown) => call(env.ts, env.p[who], 'POST', `/lease/v1${path}`, body);
const claim = (who: Who, offer: string, startH: number, endH: number) =>
  post(who, `/offers/${offer}/claim`, { start_time: at(startH * HOUR, T), end_time: at(endH * HOUR, T) });

/** o1's offer of node iso-conflict for [T, T + 10 d), and l1's lease of it for [T, T + 1 d) (read only). */
let offer: string;
let l1Lease: string;

beforeAll(async () => {
  env = await startLeaseEnv();
  const n = await enrolNode(env, 'iso-conflict');
  offer = (await post('owner', '/offers', { resource_uuid: n, start_time: at(0, T), end_time: at(10 * DAY, T) })).body.uuid;
  const mine = await claim('lessee', offer, 0, 24);
  expect(mine.status, mine.text).toBe(201);
  l1Lease = mine.body.uuid;
});
afterAll(async () => env?.ts.close());

describe('409 and 403 messages name only what the caller may see', () => {
  it('a claim conflicting with another project’s lease gives the window, not the lease', async () => {
    const theirs = await claim('other', offer, 12, 48);
    expectFault(
      theirs,
      409,
      `Offer ${offer} has no availabilities at given time range ${at(12 * HOUR, T)}, ${at(48 * HOUR, T)}. It is taken from ${at(0, T)} to ${at(DAY, T)}.`,
    );
    expect(theirs.text).not.toContain(l1Lease);
  });

  it('the lease’s own lessee and admins still get the lease named', async () => {
    expectFault(await claim('lessee', offer, 12, 48), 409, `Lease ${l1Lease} holds it from ${at(0, T)} to ${at(DAY, T)}.`);
    expectFault(await claim('admin', offer, 12, 48), 409, `Lease ${l1Lease} holds it`);
  });

  it('a quota refusal quotes the figures to the lessee project, not to an owner leasing to it', async () => {
    const quota = await call(env.ts, env.p.admin, 'PUT', '/lease/v1/quotas/l1', { max_nodes: 1 });
    expect(quota.status, quota.text).toBe(200);
    const n = await enrolNode(env, 'iso-quota');
    const direct = await post('owner', '/leases', {
      resource_uuid: n,
      project_id: 'l1',
      start_time: at(HOUR, T),
      end_time: at(2 * HOUR, T),
    });
    expectFault(
      direct,
      403,
      `Quota exceeded for project ${env.p.lessee.projectId}: the lease quota of that project does not allow these leases.`,
    );
    expect(direct.text).not.toMatch(/limit|nodes at once|node-hours/);
    const second = (await post('owner', '/offers', { resource_uuid: n, start_time: at(0, T), end_time: at(DAY, T) })).body.uuid;
    expectFault(
      await claim('lessee', second, 1, 2),
      403,
      `Quota exceeded for project ${env.p.lessee.projectId}: these leases would hold 2 nodes at once at ${at(HOUR, T)} (limit 1).`,
    );
    expect((await call(env.ts, env.p.admin, 'DELETE', '/lease/v1/quotas/l1')).status).toBe(200);
  });
});

describe('project names and ids: the same answer whether another project exists or not', () => {
  it('lease filters: a non-admin naming another project is 403, existing or not; its own by name or id is fine', async () => {
    const denied = await get('lessee', '/leases?project_id=o2');
    expectFault(denied, 403, 'Access was denied to esi_leap:lease:lease_admin.');
    for (const q of ['project_id=no-such-project', 'owner_id=o2', 'owner_id=no-such-project', `project_id=${'f'.repeat(32)}`]) {
      const r = await get('lessee', `/leases?${q}`);
      expect([r.status, r.body], q).toEqual([denied.status, denied.body]);
    }
    expect((await get('lessee', '/leases?project_id=l1')).status).toBe(200);
    expect((await get('lessee', `/leases?project_id=${env.p.lessee.projectId}`)).status).toBe(200);
    expectFault(await get('admin', '/leases?project_id=no-such-project'), 404, 'No project named no-such-project.');
  });

  it('a filter inside the caller’s own leases that names no project is an empty list', async () => {
    const mine = (await get('owner', '/leases?owner_id=o1&project_id=l1')).body.leases;
    expect(mine.length).toBeGreaterThan(0);
    expect((await get('owner', '/leases?owner_id=o1&project_id=no-such-project')).body.leases).toEqual([]);
    // A project that exists and holds none of o1's leases (o2 may hold one, made by another test).
    await env.ts.server.services.identity.directory.createProject(env.p.admin.context!, { name: 'iso-none' });
    expect((await get('owner', '/leases?owner_id=o1&project_id=iso-none')).body.leases).toEqual([]);
  });

  it('offer and node filters of non-admins: an unknown project lists nothing, like a project with nothing visible', async () => {
    for (const q of ['project_id', 'lessee_id']) {
      expect((await get('lessee', `/offers?${q}=no-such-project`)).body.offers, q).toEqual([]);
      expect((await get('lessee', `/offers?${q}=o2`)).body.offers, q).toEqual([]);
    }
    expect((await get('lessee', '/offers?project_id=o1')).body.offers.length).toBeGreaterThan(0);
    for (const q of ['owner', 'lessee']) {
      expect((await get('other', `/nodes?${q}=no-such-project`)).body.nodes, q).toEqual([]);
      expect((await get('other', `/nodes?${q}=o1`)).body.nodes, q).toEqual([]);
    }
    expectFault(await get('admin', '/offers?lessee_id=no-such-project'), 404);
  });

  it('lease policies and webhooks: the policy check comes before any lookup (403 for any other project)', async () => {
    const cases: Array<[string, string, unknown]> = [
      ['GET', '/lease_policies?project_id=', undefined],
      ['POST', '/lease_policies', { max_lease_seconds: 3600 }],
      ['GET', '/webhooks?project_id=', undefined],
      ['POST', '/webhooks', { url: 'https://hooks.example.com/x', secret: 'a-webhook-secret-0123456789' }],
    ];
    for (const [method, path, body] of cases) {
      const as = (project: string) =>
        method === 'GET'
          ? call(env.ts, env.p.owner, 'GET', `/lease/v1${path}${project}`)
          : call(env.ts, env.p.owner, 'POST', `/lease/v1${path}`, { ...(body as object), project_id: project });
      const existing = await as('o2');
      expect(existing.status, `${method} ${path}`).toBe(403);
      const unknown = await as('no-such-project');
      expect([unknown.status, unknown.body], `${method} ${path}`).toEqual([existing.status, existing.body]);
    }
  });

  it('a name two projects share is refused like an unknown one (no "multiple projects" answer)', async () => {
    const repo = new KyselyIdentityRepository(env.ts.server.services.store.db);
    const now = Date.now();
    await repo.createDomain({ id: 'd-iso', name: 'iso-domain', description: '', enabled: true }, now);
    for (const [id, domainId] of [
      ['a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0', 'default'],
      ['b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0', 'd-iso'],
    ] as const) {
      await repo.createProject({ id, name: 'twin', domain_id: domainId, parent_id: null, description: '', enabled: true, extra: {} }, now);
    }
    const n = await enrolNode(env, 'iso-twin');
    const lease = (project: string) =>
      post('owner', '/leases', { resource_uuid: n, project_id: project, start_time: at(40 * DAY, T), end_time: at(41 * DAY, T) });
    const twin = await lease('twin');
    const ghost = await lease('ghost');
    expectFault(twin, 404, 'No project named twin.');
    expectFault(ghost, 404, 'No project named ghost.');
    expect(twin.body.faultstring.replace('twin', 'ghost')).toBe(ghost.body.faultstring);
    const byId = await lease('b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0');
    expect(byId.status, byId.text).toBe(201);
  });
});

describe('GET /v1/nodes shows only the offers and leases the caller may see', () => {
  it('a lessee of the node sees neither an offer restricted to another project nor that project’s lease', async () => {
    const n = await enrolNode(env, 'iso-nodes');
    const patch = await call(
      env.ts,
      env.p.admin,
      'PATCH',
      `/baremetal/v1/nodes/${n}`,
      [{ op: 'add', path: '/lessee', value: env.p.lessee.projectId }],
      { 'x-openstack-ironic-api-version': '1.65' },
    );
    expect(patch.status, patch.text).toBe(200);
    const open = (await post('owner', '/offers', { resource_uuid: n, start_time: at(0, T), end_time: at(DAY, T) })).body.uuid;
    const restricted = (
      await post('owner', '/offers', { resource_uuid: n, lessee_id: 'o2', start_time: at(2 * DAY, T), end_time: at(3 * DAY, T) })
    ).body.uuid;
    const o2Lease = await claim('other', open, 1, 2);
    expect(o2Lease.status, o2Lease.text).toBe(201);
    const row = async (who: Who) => (await get(who, '/nodes')).body.nodes.find((x: any) => x.uuid === n);
    const lesseeView = await row('lessee');
    expect(lesseeView.future_offers).toEqual([open]);
    expect(lesseeView.future_leases).toEqual([]);
    const ownerView = await row('owner');
    expect(ownerView.future_offers.sort()).toEqual([open, restricted].sort());
    expect(ownerView.future_leases).toEqual([o2Lease.body.uuid]);
    expect((await row('admin')).future_leases).toEqual([o2Lease.body.uuid]);
  });
});

describe('GET /v1/events?resource_uuid=', () => {
  it('an unknown node and a node the caller may not see give the same empty list', async () => {
    const hidden = await enrolNode(env, 'iso-events');
    await post('owner', '/offers', { resource_uuid: hidden, start_time: at(0, T), end_time: at(DAY, T) });
    const invisible = await get('other', `/events?resource_uuid=${hidden}`);
    const unknown = await get('other', '/events?resource_uuid=0b7a8a3e-5f0c-4b4e-9c1e-000000000000');
    const unknownName = await get('other', '/events?resource_uuid=no-such-node');
    expect([invisible.status, invisible.body]).toEqual([200, { events: [] }]);
    expect([unknown.status, unknown.body]).toEqual([200, { events: [] }]);
    expect([unknownName.status, unknownName.body]).toEqual([200, { events: [] }]);
    expect((await get('owner', `/events?resource_uuid=${hidden}`)).body.events.map((e: any) => e.event_type)).toEqual([
      'esi_leap.offer.create',
    ]);
  });
});
