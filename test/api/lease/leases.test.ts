/**
 * `/lease/v1/leases` for every persona: direct create (owner, admin; lessee refused; another
 * project cannot see the node), list scoping (`view=all`, `project_id`, `owner_id`) and filters,
 * show, PATCH of the end time (admins) and delete. A lease the caller may not see is 404.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { call, type Persona } from '../../helpers/harness.ts';
import { at, DAY, enrolNode, expectFault, HOUR, startLeaseEnv, type LeaseEnv } from './support.ts';

const T = Date.now() + 30 * DAY;

/** The server of the running describe block, its nodes le-1 (class gpu) and le-2, and its leases. */
let env: LeaseEnv;
let n1: string;
let n2: string;
/** Leases of {@link withLeases} by name: direct1, direct2, admin. */
const L: Record<string, string> = {};

/** A fresh server with nodes le-1 and le-2 for the tests of one describe block. */
function freshServer(): void {
  beforeAll(async () => {
    env = await startLeaseEnv();
    n1 = await enrolNode(env, 'le-1', { resource_class: 'gpu' });
    n2 = await enrolNode(env, 'le-2');
  });
  afterAll(async () => env?.ts.close());
}

/**
 * The leases the reading and writing tests work on: o1 → l1 `direct-1` on le-1 for [T, T + 7 d)
 * (purpose research), an offer of le-2 for [T, T + 1 d) and o1 → l1 `direct-2` on le-2 for
 * [T + 1 d, T + 2 d), and admin → o2 `admin-lease` on le-1 for [T + 10 d, T + 40 d).
 */
async function withLeases(): Promise<void> {
  const made = async (persona: Persona, body: Record<string, unknown>): Promise<string> => {
    const r = await create(persona, body);
    expect(r.status, r.text).toBe(201);
    return r.body.uuid as string;
  };
  L.direct1 = await made(env.p.owner, {
    resource_uuid: 'le-1',
    project_id: 'l1',
    start_time: at(0, T),
    name: 'direct-1',
    purpose: 'research',
  });
  const offer = await call(env.ts, env.p.owner, 'POST', '/lease/v1/offers', {
    resource_uuid: n2,
    start_time: at(0, T),
    end_time: at(DAY, T),
  });
  expect(offer.status).toBe(201);
  L.direct2 = await made(env.p.owner, {
    resource_uuid: n2,
    project_id: 'l1',
    start_time: at(DAY, T),
    end_time: at(2 * DAY, T),
    name: 'direct-2',
  });
  L.admin = await made(env.p.admin, {
    resource_uuid: n1,
    project_id: 'o2',
    start_time: at(10 * DAY, T),
    end_time: at(40 * DAY, T),
    name: 'admin-lease',
  });
}

const create = (persona: Persona, body: Record<string, unknown>) => call(env.ts, persona, 'POST', '/lease/v1/leases', body);

describe('POST /v1/leases', () => {
  freshServer();

  it('owner: 201 leasing its node to l1 by project name; default end is start + 7 days', async () => {
    const r = await create(env.p.owner, {
      resource_uuid: 'le-1',
      project_id: 'l1',
      start_time: at(0, T),
      name: 'direct-1',
      purpose: 'research',
      properties: { k: 'v' },
    });
    expect(r.status, r.text).toBe(201);
    expect(r.body).toMatchObject({
      name: 'direct-1',
      project_id: env.p.lessee.projectId,
      project: 'l1',
      owner_id: env.p.owner.projectId,
      owner: 'o1',
      resource_type: 'ironic_node',
      resource_uuid: n1,
      resource: 'le-1',
      resource_class: 'gpu',
      start_time: at(0, T),
      end_time: at(7 * DAY, T),
      fulfill_time: null,
      expire_time: null,
      status: 'created',
      properties: { k: 'v' },
      purpose: 'research',
      offer_uuid: null,
      parent_lease_uuid: null,
    });
    expect(Object.keys(r.body).sort()).toEqual(
      [
        'end_time',
        'expire_time',
        'fulfill_time',
        'name',
        'offer_uuid',
        'owner',
        'owner_id',
        'parent_lease_uuid',
        'project',
        'project_id',
        'properties',
        'purpose',
        'resource',
        'resource_class',
        'resource_properties',
        'resource_type',
        'resource_uuid',
        'start_time',
        'status',
        'uuid',
      ].sort(),
    );
  });

  it('owner: an overlapping lease or an overlapping available offer is 409 naming it', async () => {
    const n3 = await enrolNode(env, 'le-3');
    const n4 = await enrolNode(env, 'le-4');
    const held = await create(env.p.owner, { resource_uuid: n3, project_id: 'l1', start_time: at(0, T), end_time: at(7 * DAY, T) });
    expect(held.status, held.text).toBe(201);
    const clash = await create(env.p.owner, { resource_uuid: n3, project_id: 'l1', start_time: at(6 * DAY, T), end_time: at(8 * DAY, T) });
    expectFault(clash, 409, `Time conflict for ironic_node ${n3}. Lease ${held.body.uuid} holds it from ${at(0, T)} to ${at(7 * DAY, T)}.`);
    const offer = await call(env.ts, env.p.owner, 'POST', '/lease/v1/offers', {
      resource_uuid: n4,
      start_time: at(0, T),
      end_time: at(DAY, T),
    });
    expect(offer.status).toBe(201);
    expectFault(
      await create(env.p.owner, { resource_uuid: n4, project_id: 'l1', start_time: at(HOUR, T), end_time: at(2 * HOUR, T) }),
      409,
      `Offer ${offer.body.uuid} holds it`,
    );
    const after = await create(env.p.owner, {
      resource_uuid: n4,
      project_id: env.p.lessee.projectId,
      start_time: at(DAY, T),
      end_time: at(2 * DAY, T),
    });
    expect(after.status, after.text).toBe(201);
  });

  it('owner: longer than 21 days is 403; admin: allowed, on a node it does not own', async () => {
    expectFault(
      await create(env.p.owner, { resource_uuid: n1, project_id: 'l1', start_time: at(10 * DAY, T), end_time: at(32 * DAY, T) }),
      403,
      'The max time range is 21 days.',
    );
    const r = await create(env.p.admin, {
      resource_uuid: n1,
      project_id: 'o2',
      start_time: at(10 * DAY, T),
      end_time: at(40 * DAY, T),
      name: 'admin-lease',
    });
    expect(r.status, r.text).toBe(201);
    expect(r.body).toMatchObject({ owner: 'admin', project: 'o2' });
  });

  it('lessee: 403; another project: 404 (node not visible); anonymous: 401', async () => {
    expectFault(
      await create(env.p.lessee, { resource_uuid: n1, project_id: 'l1', start_time: at(50 * DAY, T), end_time: at(51 * DAY, T) }),
      403,
      'Access was denied to esi_leap:lease:create.',
    );
    expectFault(
      await create(env.p.other, { resource_uuid: n1, project_id: 'o2', start_time: at(50 * DAY, T), end_time: at(51 * DAY, T) }),
      404,
    );
    expectFault(await create(env.p.anonymous, { resource_uuid: n1, project_id: 'o2' }), 401);
  });

  it('unknown lessee project: 404; missing project_id or resource_uuid: 400', async () => {
    expectFault(
      await create(env.p.owner, { resource_uuid: n1, project_id: 'nobody', start_time: at(50 * DAY, T), end_time: at(51 * DAY, T) }),
      404,
      'No project named nobody.',
    );
    expectFault(await create(env.p.owner, { resource_uuid: n1 }), 400, /project_id.*Mandatory field missing/);
    expectFault(await create(env.p.owner, { project_id: 'l1' }), 400, /resource_uuid.*Mandatory field missing/);
  });
});

describe('GET /v1/leases', () => {
  freshServer();
  beforeAll(withLeases);

  const names = async (persona: Persona, query = '') => {
    const r = await call(env.ts, persona, 'GET', `/lease/v1/leases${query}`);
    expect(r.status, r.text).toBe(200);
    return r.body.leases.map((l: any) => l.name).sort();
  };

  it('each project sees the leases it holds or granted; view=all is for admins', async () => {
    expect(await names(env.p.owner)).toEqual(['direct-1', 'direct-2']);
    expect(await names(env.p.lessee)).toEqual(['direct-1', 'direct-2']);
    expect(await names(env.p.other)).toEqual(['admin-lease']);
    expect(await names(env.p.admin)).toEqual(['admin-lease']);
    expect(await names(env.p.admin, '?view=all')).toEqual(['admin-lease', 'direct-1', 'direct-2']);
    expectFault(
      await call(env.ts, env.p.owner, 'GET', '/lease/v1/leases?view=all'),
      403,
      'Access was denied to esi_leap:lease:lease_admin.',
    );
    expectFault(await call(env.ts, env.p.anonymous, 'GET', '/lease/v1/leases'), 401);
  });

  it('project_id and owner_id naming another project need a lease admin', async () => {
    expect(await names(env.p.lessee, '?project_id=l1')).toEqual(['direct-1', 'direct-2']);
    expect(await names(env.p.owner, '?owner_id=o1')).toEqual(['direct-1', 'direct-2']);
    expectFault(await call(env.ts, env.p.owner, 'GET', '/lease/v1/leases?project_id=l1'), 403);
    expectFault(await call(env.ts, env.p.lessee, 'GET', '/lease/v1/leases?owner_id=o1'), 403);
    expect(await names(env.p.admin, '?project_id=l1')).toEqual(['direct-1', 'direct-2']);
    expect(await names(env.p.admin, '?view=all&owner_id=admin')).toEqual(['admin-lease']);
  });

  it('filters: time range (intersection, edges included), node, class, status, purpose', async () => {
    expect(await names(env.p.owner, `?start_time=${at(7 * DAY, T)}&end_time=${at(8 * DAY, T)}`)).toEqual(['direct-1']);
    expect(await names(env.p.owner, `?start_time=${at(3 * HOUR, T)}&end_time=${at(4 * HOUR, T)}`)).toEqual(['direct-1']);
    expect(await names(env.p.owner, `?start_time=${at(30 * DAY, T)}&end_time=${at(31 * DAY, T)}`)).toEqual([]);
    expect(await names(env.p.owner, '?resource_uuid=le-2')).toEqual(['direct-2']);
    expect(await names(env.p.owner, '?resource_class=gpu')).toEqual(['direct-1']);
    expect(await names(env.p.owner, '?purpose=research')).toEqual(['direct-1']);
    expect(await names(env.p.owner, '?status=active')).toEqual([]);
    expectFault(await call(env.ts, env.p.owner, 'GET', '/lease/v1/leases?view=mine'), 400);
    expectFault(
      await call(env.ts, env.p.owner, 'GET', `/lease/v1/leases?end_time=${at(0, T)}`),
      400,
      /both a valid Start Time and End Time/,
    );
  });
});

describe('GET /v1/leases/{uuid_or_name}', () => {
  freshServer();
  beforeAll(withLeases);

  it('owner, lessee and admin see it; another project gets 404; anonymous 401', async () => {
    for (const p of [env.p.owner, env.p.lessee, env.p.admin]) {
      expect((await call(env.ts, p, 'GET', `/lease/v1/leases/${L.direct1}`)).status, p.name).toBe(200);
      expect((await call(env.ts, p, 'GET', '/lease/v1/leases/direct-1')).body.uuid, p.name).toBe(L.direct1);
    }
    expectFault(
      await call(env.ts, env.p.other, 'GET', `/lease/v1/leases/${L.direct1}`),
      404,
      `Lease with name or uuid ${L.direct1} not found.`,
    );
    expectFault(await call(env.ts, env.p.other, 'GET', '/lease/v1/leases/direct-1'), 404);
    expectFault(await call(env.ts, env.p.anonymous, 'GET', `/lease/v1/leases/${L.direct1}`), 401);
  });
});

describe('PATCH /v1/leases/{uuid}', () => {
  freshServer();
  beforeAll(withLeases);

  it('admin: extends the end; a conflicting extension is 409; shortening is always allowed', async () => {
    const r = await call(env.ts, env.p.admin, 'PATCH', `/lease/v1/leases/${L.direct2}`, { end_time: at(3 * DAY, T) });
    expect(r.status, r.text).toBe(200);
    expect(r.body.end_time).toBe(at(3 * DAY, T));
    expectFault(
      await call(env.ts, env.p.admin, 'PATCH', `/lease/v1/leases/${L.direct1}`, { end_time: at(11 * DAY, T) }),
      409,
      `Lease ${L.admin} holds it`,
    );
    const shorter = await call(env.ts, env.p.admin, 'PATCH', `/lease/v1/leases/${L.direct1}`, { end_time: at(6 * DAY, T) });
    expect(shorter.body.end_time).toBe(at(6 * DAY, T));
  });

  it('owner and lessee: 403; another project: 404; anonymous: 401', async () => {
    expectFault(
      await call(env.ts, env.p.owner, 'PATCH', `/lease/v1/leases/${L.direct2}`, { end_time: at(4 * DAY, T) }),
      403,
      `Access was denied to lease ${L.direct2}.`,
    );
    expectFault(await call(env.ts, env.p.lessee, 'PATCH', `/lease/v1/leases/${L.direct2}`, { end_time: at(4 * DAY, T) }), 403);
    expectFault(await call(env.ts, env.p.other, 'PATCH', `/lease/v1/leases/${L.direct2}`, { end_time: at(4 * DAY, T) }), 404);
    expectFault(await call(env.ts, env.p.anonymous, 'PATCH', `/lease/v1/leases/${L.direct2}`, { end_time: at(4 * DAY, T) }), 401);
  });

  it('only end_time may change; it must be a time after the start', async () => {
    for (const body of [{}, { start_time: at(0, T) }, { end_time: at(4 * DAY, T), name: 'x' }, []]) {
      expectFault(
        await call(env.ts, env.p.admin, 'PATCH', `/lease/v1/leases/${L.direct2}`, body),
        400,
        'Only the end_time field may be updated',
      );
    }
    expectFault(await call(env.ts, env.p.admin, 'PATCH', `/lease/v1/leases/${L.direct2}`, { end_time: 'tomorrow' }), 400, /end_time/);
    expectFault(
      await call(env.ts, env.p.admin, 'PATCH', `/lease/v1/leases/${L.direct2}`, { end_time: at(DAY, T) }),
      400,
      /Start Time must be strictly less than End Time/,
    );
  });
});

describe('DELETE /v1/leases/{uuid_or_name}', () => {
  // Each test cancels leases: a server of its own.
  beforeEach(async () => {
    env = await startLeaseEnv();
    n1 = await enrolNode(env, 'le-1', { resource_class: 'gpu' });
    n2 = await enrolNode(env, 'le-2');
    await withLeases();
  });
  afterEach(async () => env?.ts.close());

  it('another project: 404; anonymous: 401; the lessee may cancel; deleting again is 404', async () => {
    expectFault(await call(env.ts, env.p.other, 'DELETE', `/lease/v1/leases/${L.direct2}`), 404);
    expectFault(await call(env.ts, env.p.anonymous, 'DELETE', `/lease/v1/leases/${L.direct2}`), 401);
    const r = await call(env.ts, env.p.lessee, 'DELETE', '/lease/v1/leases/direct-2');
    expect(r.status, r.text).toBe(200);
    expect(r.body).toBeNull();
    expect((await call(env.ts, env.p.owner, 'GET', `/lease/v1/leases/${L.direct2}`)).body).toMatchObject({ status: 'deleted' });
    expectFault(await call(env.ts, env.p.lessee, 'DELETE', `/lease/v1/leases/${L.direct2}`), 404);
    expect(
      await call(env.ts, env.p.owner, 'GET', '/lease/v1/leases?status=deleted').then((x) => x.body.leases.map((l: any) => l.name)),
    ).toEqual(['direct-2']);
  });

  it('the owner and an admin may cancel too; a cancelled lease frees its window', async () => {
    expect((await call(env.ts, env.p.owner, 'DELETE', `/lease/v1/leases/${L.direct1}`)).status).toBe(200);
    expect((await call(env.ts, env.p.admin, 'DELETE', `/lease/v1/leases/${L.admin}`)).status).toBe(200);
    const again = await create(env.p.owner, { resource_uuid: n1, project_id: 'l1', start_time: at(0, T), end_time: at(DAY, T) });
    expect(again.status, again.text).toBe(201);
  });
});
