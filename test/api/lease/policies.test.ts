/**
 * `/lease/v1/lease_policies` (docs/leasing.md "Owner lease policies"; ESI lets owners set lease policies such as a
 * maximum lease lifetime): an owner's maximum lease length, minimum gap between leases and allowed projects,
 * per node or for all its nodes, for every persona; honoured by claims (and shown in offer
 * availabilities), not by the owner's own direct leases, passed by admins; bad input is 400 and
 * writes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../../helpers/harness.ts';
import { at, countAny, countRows, DAY, enrolNode, expectFault, HOUR, startLeaseEnv, type LeaseEnv } from './support.ts';

let env: LeaseEnv;
const T = Math.ceil((Date.now() + 10 * DAY) / HOUR) * HOUR;
let n1: string;
let n2: string;
let offer1: string;
let offer2: string;
let allNodes: string;
let onlyL1: string;

const post = (persona: keyof LeaseEnv['p'], body: unknown) => call(env.ts, env.p[persona], 'POST', '/lease/v1/lease_policies', body);
const claim = (persona: keyof LeaseEnv['p'], offer: string, startH: number, endH: number) =>
  call(env.ts, env.p[persona], 'POST', `/lease/v1/offers/${offer}/claim`, {
    start_time: at(startH * HOUR, T),
    end_time: at(endH * HOUR, T),
  });

/**
 * A fresh server for the tests of one describe block: nodes pol-1 and pol-2 of o1, each offered
 * for [T, T + 20 d), then `fixture`.
 */
function freshServer(fixture: () => Promise<void> = async () => {}): void {
  beforeAll(async () => {
    env = await startLeaseEnv();
    n1 = await enrolNode(env, 'pol-1');
    n2 = await enrolNode(env, 'pol-2');
    offer1 = (
      await call(env.ts, env.p.owner, 'POST', '/lease/v1/offers', { resource_uuid: n1, start_time: at(0, T), end_time: at(20 * DAY, T) })
    ).body.uuid;
    offer2 = (
      await call(env.ts, env.p.owner, 'POST', '/lease/v1/offers', { resource_uuid: n2, start_time: at(0, T), end_time: at(20 * DAY, T) })
    ).body.uuid;
    await fixture();
  });
  afterAll(async () => env?.ts.close());
}

/**
 * The policies the other tests work with: o1's for all its nodes (at most 2 days, 1 h between
 * leases), o1's for pol-2 (only l1 may lease it), o2's for all its nodes (at most 2 h) and, made
 * by an admin, o2's for its node pol-o2.
 */
async function withPolicies(): Promise<void> {
  const made = async (persona: keyof LeaseEnv['p'], body: unknown): Promise<string> => {
    const r = await post(persona, body);
    expect(r.status, r.text).toBe(201);
    return r.body.uuid as string;
  };
  allNodes = await made('owner', { max_lease_seconds: 2 * 86_400, min_gap_seconds: 3600 });
  onlyL1 = await made('owner', { resource_uuid: 'pol-2', allowed_projects: ['l1'] });
  await made('other', { max_lease_seconds: 7200 });
  await made('admin', { project_id: 'o2', resource_uuid: await enrolNode(env, 'pol-o2', { owner: env.p.other.projectId }) });
}

describe('policy API for every persona', () => {
  describe('creating', () => {
    freshServer();

    it('owner: 201 for all its nodes, and for one node with allowed projects by name', async () => {
      const all = await post('owner', { max_lease_seconds: 2 * 86_400, min_gap_seconds: 3600 });
      expect(all.status, all.text).toBe(201);
      expect(all.body).toMatchObject({
        project_id: env.p.owner.projectId,
        project: 'o1',
        resource_uuid: null,
        resource: null,
        max_lease_seconds: 172_800,
        min_gap_seconds: 3600,
        allowed_projects: null,
        erase_devices: false,
      });
      const one = await post('owner', { resource_uuid: 'pol-2', allowed_projects: ['l1'] });
      expect(one.status, one.text).toBe(201);
      expect(one.body).toMatchObject({
        resource_uuid: n2,
        resource: 'pol-2',
        allowed_projects: [env.p.lessee.projectId],
        max_lease_seconds: null,
      });
    });

    it('lessee: 403 (no owner role); another project: 404 for a node it cannot see, 201 for its own nodes; anonymous: 401', async () => {
      expectFault(await post('lessee', { max_lease_seconds: 3600 }), 403, 'Access was denied to esi_leap:lease_policy:create.');
      expectFault(await post('other', { resource_uuid: n1, max_lease_seconds: 3600 }), 404);
      const own = await post('other', { max_lease_seconds: 7200 });
      expect(own.status, own.text).toBe(201);
      expectFault(await post('anonymous', { max_lease_seconds: 3600 }), 401);
    });

    it('admin: may create for another project, only naming that project’s nodes', async () => {
      expectFault(
        await post('owner', { project_id: 'o2', max_lease_seconds: 3600 }),
        403,
        'Access was denied to esi_leap:lease_policy:policy_admin.',
      );
      expectFault(await post('admin', { project_id: 'o2', resource_uuid: n1 }), 400, /is not owned by project/);
      const r = await post('admin', { project_id: 'o2', resource_uuid: await enrolNode(env, 'pol-o2', { owner: env.p.other.projectId }) });
      expect(r.status, r.text).toBe(201);
    });
  });

  describe('with o1’s and o2’s policies in place', () => {
    freshServer(withPolicies);

    it('a second policy for the same scope is 409 naming the first', async () => {
      expectFault(
        await post('owner', { max_lease_seconds: 3600 }),
        409,
        `Project ${env.p.owner.projectId} already has a lease policy for all its nodes: ${allNodes}. Update that one instead.`,
      );
    });

    it('GET: admin sees all; a project its own; others get 404 on one; anonymous 401', async () => {
      const list = async (p: keyof LeaseEnv['p'], q = '') =>
        (await call(env.ts, env.p[p], 'GET', `/lease/v1/lease_policies${q}`)).body.lease_policies?.map((x: any) => x.project);
      expect((await list('admin')).sort()).toEqual(['o1', 'o1', 'o2', 'o2']);
      expect(await list('owner')).toEqual(['o1', 'o1']);
      expect(await list('owner', `?resource_uuid=${n2}`)).toEqual(['o1']);
      expect(await list('lessee')).toEqual([]);
      expect(await list('other')).toEqual(['o2', 'o2']);
      expectFault(await call(env.ts, env.p.lessee, 'GET', '/lease/v1/lease_policies?project_id=o1'), 403);
      expectFault(await call(env.ts, env.p.anonymous, 'GET', '/lease/v1/lease_policies'), 401);
      expect((await call(env.ts, env.p.owner, 'GET', `/lease/v1/lease_policies/${allNodes}`)).status).toBe(200);
      expect((await call(env.ts, env.p.admin, 'GET', `/lease/v1/lease_policies/${allNodes}`)).status).toBe(200);
      for (const p of ['lessee', 'other'] as const)
        expectFault(
          await call(env.ts, env.p[p], 'GET', `/lease/v1/lease_policies/${allNodes}`),
          404,
          `Lease policy ${allNodes} could not be found.`,
        );
      expectFault(await call(env.ts, env.p.anonymous, 'GET', `/lease/v1/lease_policies/${allNodes}`), 401);
    });

    it('PATCH and DELETE: the owning project (owner role) or an admin; others 404', async () => {
      for (const p of ['lessee', 'other'] as const) {
        expectFault(await call(env.ts, env.p[p], 'PATCH', `/lease/v1/lease_policies/${allNodes}`, { max_lease_seconds: 60 }), 404);
        expectFault(await call(env.ts, env.p[p], 'DELETE', `/lease/v1/lease_policies/${allNodes}`), 404);
      }
      expectFault(await call(env.ts, env.p.anonymous, 'PATCH', `/lease/v1/lease_policies/${allNodes}`, { max_lease_seconds: 60 }), 401);
      const r = await call(env.ts, env.p.admin, 'PATCH', `/lease/v1/lease_policies/${allNodes}`, { max_lease_seconds: 3 * 86_400 });
      expect(r.body.max_lease_seconds).toBe(259_200);
      const back = await call(env.ts, env.p.owner, 'PATCH', `/lease/v1/lease_policies/${allNodes}`, { max_lease_seconds: 2 * 86_400 });
      expect(back.body).toMatchObject({ max_lease_seconds: 172_800, min_gap_seconds: 3600 });
    });
  });
});

describe('claims honour the node owner’s policy', () => {
  freshServer(withPolicies);

  it('longer than the owner’s maximum: 403 giving the maximum (the policy itself is the owner’s); the default end stops at the maximum', async () => {
    const long = await claim('lessee', offer1, 0, 49);
    expectFault(
      long,
      403,
      `Attempted to create lease with an invalid time range. The owner's lease policy allows at most 2 days on ironic_node ${n1}.`,
    );
    expect(long.text).not.toContain(allNodes);
    const dflt = await call(env.ts, env.p.lessee, 'POST', `/lease/v1/offers/${offer1}/claim`, { start_time: at(10 * DAY, T) });
    expect(dflt.status, dflt.text).toBe(201);
    expect(dflt.body.end_time).toBe(at(12 * DAY, T)); // not the site default of 7 days
  });

  it('closer than the minimum gap to another lease: 409 saying when the node is free, naming neither the other project’s lease nor the policy', async () => {
    const node = await enrolNode(env, 'pol-gap');
    const o = await call(env.ts, env.p.owner, 'POST', '/lease/v1/offers', {
      resource_uuid: node,
      start_time: at(0, T),
      end_time: at(20 * DAY, T),
    });
    expect(o.status, o.text).toBe(201);
    const first = await claim('lessee', o.body.uuid, 0, 10);
    expect(first.status).toBe(201);
    const before = await countRows(env, 'leases');
    const near = await claim('other', o.body.uuid, 10, 12);
    expectFault(
      near,
      409,
      `Time conflict for ironic_node ${node}. The owner's lease policy requires 1 h between leases (to clean the node); it is taken from ${at(0, T)} to ${at(10 * HOUR, T)}, so it is free from ${at(11 * HOUR, T)}.`,
    );
    expect(near.text).not.toContain(first.body.uuid);
    expect(near.text).not.toContain(allNodes);
    expect(await countRows(env, 'leases')).toBe(before);
    expect((await claim('other', o.body.uuid, 11, 12)).status).toBe(201);
  });

  it('availabilities leave the gap out', async () => {
    // Leases of pol-4 for [0 h, 10 h), [11 h, 12 h) and [10 d, 12 d) of its offer.
    const node = await enrolNode(env, 'pol-4');
    const o = await call(env.ts, env.p.owner, 'POST', '/lease/v1/offers', {
      resource_uuid: node,
      start_time: at(0, T),
      end_time: at(20 * DAY, T),
    });
    expect(o.status, o.text).toBe(201);
    expect((await claim('lessee', o.body.uuid, 0, 10)).status).toBe(201);
    expect((await claim('other', o.body.uuid, 11, 12)).status).toBe(201);
    expect((await claim('lessee', o.body.uuid, 10 * 24, 12 * 24)).status).toBe(201);
    const r = await call(env.ts, env.p.lessee, 'GET', `/lease/v1/offers/${o.body.uuid}`);
    expect(r.body.availabilities.slice(0, 2)).toEqual([
      [at(13 * HOUR, T), at(10 * DAY - HOUR, T)],
      [at(12 * DAY + HOUR, T), at(20 * DAY, T)],
    ]);
  });

  it('a node policy replaces the all-nodes one: only l1 may lease pol-2, with no maximum', async () => {
    const refused = await claim('other', offer2, 0, 1);
    expectFault(refused, 403, `The owner's lease policy does not allow project ${env.p.other.projectId} to lease ironic_node ${n2}.`);
    expect(refused.text).not.toContain(onlyL1);
    const long = await claim('lessee', offer2, 0, 24 * 5);
    expect(long.status, long.text).toBe(201);
  });

  it('the owner’s own direct leases and admins are not bound', async () => {
    const direct = await call(env.ts, env.p.owner, 'POST', '/lease/v1/leases', {
      resource_uuid: await enrolNode(env, 'pol-3'),
      project_id: 'o2',
      start_time: at(0, T),
      end_time: at(5 * DAY, T),
    });
    expect(direct.status, direct.text).toBe(201);
    const admin = await claim('admin', offer2, 24 * 6, 24 * 6 + 1);
    expect(admin.status, admin.text).toBe(201);
  });
});

describe('bad input: 400/404, nothing written', () => {
  freshServer(async () => {
    await withPolicies();
    await enrolNode(env, 'pol-3');
  });

  it('refuses bad durations, project lists, fields and bodies', async () => {
    const before = await countAny(env, 'lease_policies');
    const cases: Array<[unknown, number, RegExp | string]> = [
      [{ max_lease_seconds: 59, resource_uuid: 'pol-3' }, 400, /max_lease_seconds.*from 60/],
      [{ min_gap_seconds: -1, resource_uuid: 'pol-3' }, 400, /min_gap_seconds/],
      [{ min_gap_seconds: 'an hour', resource_uuid: 'pol-3' }, 400, /min_gap_seconds.*integer or null/],
      [{ allowed_projects: 'l1', resource_uuid: 'pol-3' }, 400, /allowed_projects.*list of strings/],
      [{ erase_devices: 'yes', resource_uuid: 'pol-3' }, 400, /erase_devices/],
      [{ allowed_projects: ['ghost'], resource_uuid: 'pol-3' }, 404, 'No project named ghost.'],
      [{ resource_uuid: 'no-such-node' }, 404, /Node no-such-node/],
      [{ resource_uuid: 'pol-3', uuid: 'x' }, 400, /uuid.*read-only/],
      [{ resource_uuid: 'pol-3', colour: 1 }, 400, 'Unknown attribute for argument lease_policy: colour'],
      ['{"max_lease_seconds"', 400, 'The request body is not valid JSON.'],
    ];
    for (const [body, status, message] of cases) expectFault(await post('owner', body), status, message);
    expectFault(
      await call(env.ts, env.p.owner, 'PATCH', `/lease/v1/lease_policies/${allNodes}`, { resource_uuid: n1 }),
      400,
      /resource_uuid.*read-only/,
    );
    expectFault(
      await call(env.ts, env.p.owner, 'PATCH', '/lease/v1/lease_policies/8b7f3c52-0000-4000-8000-000000000000', { max_lease_seconds: 60 }),
      404,
    );
    expect(await countAny(env, 'lease_policies')).toBe(before);
    expect((await call(env.ts, env.p.owner, 'GET', `/lease/v1/lease_policies/${allNodes}`)).body.max_lease_seconds).toBe(172_800);
  });
});
