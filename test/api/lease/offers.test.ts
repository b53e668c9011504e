/**
 * `/lease/v1/offers` for every persona: create, list (visibility and filters), show (by UUID
 * or name; lessee-subtree restriction), delete (cascade) and claim (default end, maximum
 * length, windows). A resource the caller may not see is 404; anonymous callers get 401.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { call, type Persona } from '../../helpers/harness.ts';
import { at, DAY, enrolNode, expectFault, startLeaseEnv, type LeaseEnv } from './support.ts';

/** The server of the running describe block and its nodes of-1 (class gpu) and of-2. */
let env: LeaseEnv;
let n1: string;
let n2: string;
/** A user in project l1-child (child of l1) with the lessee role. */
let childLessee: Persona;
const T = Date.now() + 30 * DAY;

/** A fresh server (nodes of-1, of-2, project l1-child) for the tests of one describe block, then `fixture`. */
function freshServer(fixture: () => Promise<void> = async () => {}): void {
  beforeAll(async () => {
    await startServerWithNodes();
    await fixture();
  });
  afterAll(async () => env?.ts.close());
}

/** As {@link freshServer}, for each test of the block (tests that change what the others read). */
function freshServerEach(fixture: () => Promise<void>): void {
  beforeEach(async () => {
    await startServerWithNodes();
    await fixture();
  });
  afterEach(async () => env?.ts.close());
}

async function startServerWithNodes(): Promise<void> {
  env = await startLeaseEnv();
  n1 = await enrolNode(env, 'of-1', { resource_class: 'gpu', properties: { cpus: 8, lease_uuid: 'stale', capabilities: 'x' } });
  n2 = await enrolNode(env, 'of-2');
  const { directory, grants, tokens } = env.ts.server.services.identity;
  const admin = env.p.admin.context!;
  const child = await directory.createProject(admin, { name: 'l1-child', parentId: env.p.lessee.projectId! });
  const user = await directory.createUser(admin, { name: 'child1', password: 'pw-child1', defaultProjectId: child.id });
  const role = (await grants.listRoles(admin, { name: 'lessee' }))[0]!;
  await grants.grant(admin, { user_id: user.id, role_id: role.id, target: { type: 'project', id: child.id } });
  const issued = await tokens.authenticatePassword({ userId: user.id, password: 'pw-child1' }, { kind: 'project', projectId: child.id });
  childLessee = { name: 'child', token: issued.secret, projectId: child.id, projectName: 'l1-child', userId: user.id, context: null };
}

const offer = (persona: Persona, body: Record<string, unknown>) => call(env.ts, persona, 'POST', '/lease/v1/offers', body);

/**
 * The offers the reading, claiming and deleting tests work on: o1's `open-1` of of-1 for
 * [T, T + 10 d), o1's `for-l1` of of-1 for [T + 10 d, T + 20 d) limited to l1, the admin's
 * `admin-offer` of of-2 for [T, T + 1 d), and a deleted offer of of-2.
 */
async function withOffers(): Promise<void> {
  const made = async (persona: Persona, body: Record<string, unknown>): Promise<string> => {
    const r = await offer(persona, body);
    expect(r.status, r.text).toBe(201);
    return r.body.uuid as string;
  };
  await made(env.p.owner, {
    resource_uuid: 'of-1',
    start_time: at(0, T),
    end_time: at(10 * DAY, T),
    name: 'open-1',
    properties: { note: 'x' },
  });
  await made(env.p.owner, {
    resource_uuid: n1,
    start_time: at(10 * DAY, T),
    end_time: at(20 * DAY, T),
    lessee_id: env.p.lessee.projectId,
    name: 'for-l1',
  });
  await made(env.p.admin, { resource_uuid: n2, start_time: at(0, T), end_time: at(DAY, T), name: 'admin-offer' });
  const gone = await made(env.p.owner, { resource_uuid: n2, start_time: at(2 * DAY, T), end_time: at(3 * DAY, T) });
  expect((await call(env.ts, env.p.owner, 'DELETE', `/lease/v1/offers/${gone}`)).status).toBe(200);
}

describe('POST /v1/offers', () => {
  freshServer();

  it('owner: 201 with esi-leap fields; node properties without lease_uuid and capabilities', async () => {
    const r = await offer(env.p.owner, {
      resource_uuid: 'of-1',
      start_time: at(0, T),
      end_time: at(10 * DAY, T),
      name: 'open-1',
      properties: { note: 'x' },
    });
    expect(r.status, r.text).toBe(201);
    expect(r.body).toMatchObject({
      name: 'open-1',
      project_id: env.p.owner.projectId,
      project: 'o1',
      lessee_id: null,
      lessee: null,
      resource_type: 'ironic_node',
      resource_uuid: n1,
      resource: 'of-1',
      resource_class: 'gpu',
      resource_properties: { cpus: 8 },
      start_time: at(0, T),
      end_time: at(10 * DAY, T),
      status: 'available',
      properties: { note: 'x' },
      availabilities: [[at(0, T), at(10 * DAY, T)]],
      parent_lease_uuid: null,
    });
    expect(Object.keys(r.body).sort()).toEqual(
      [
        'availabilities',
        'end_time',
        'lessee',
        'lessee_id',
        'name',
        'parent_lease_uuid',
        'project',
        'project_id',
        'properties',
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

  it('owner: defaults are now and the end of time, which round-trips', async () => {
    const node = await enrolNode(env, 'of-defaults');
    const sent = Date.now();
    const r = await offer(env.p.owner, { resource_uuid: node, lessee_id: 'l1' });
    const answered = Date.now();
    expect(r.status, r.text).toBe(201);
    expect(r.body.end_time).toBe('9999-12-31T23:59:59.999999');
    // "Now": the server's clock while it handled the request (esi-leap times may drop the milliseconds).
    const start = Date.parse(`${r.body.start_time}Z`);
    expect(start).toBeGreaterThanOrEqual(Math.floor(sent / 1000) * 1000);
    expect(start).toBeLessThanOrEqual(answered);
    expect(r.body).toMatchObject({ lessee_id: env.p.lessee.projectId, lessee: 'l1' });
    const d = await call(env.ts, env.p.owner, 'DELETE', `/lease/v1/offers/${r.body.uuid}`);
    expect(d.status).toBe(200);
  });

  it('owner: an overlapping offer on the same node is 409 naming the holder; back-to-back is fine', async () => {
    const node = await enrolNode(env, 'of-overlap');
    const holder = await offer(env.p.owner, { resource_uuid: node, start_time: at(0, T), end_time: at(10 * DAY, T) });
    expect(holder.status, holder.text).toBe(201);
    const r = await offer(env.p.owner, { resource_uuid: node, start_time: at(5 * DAY, T), end_time: at(12 * DAY, T) });
    expectFault(
      r,
      409,
      `Time conflict for ironic_node ${node}. Offer ${holder.body.uuid} holds it from ${at(0, T)} to ${at(10 * DAY, T)}.`,
    );
    const next = await offer(env.p.owner, {
      resource_uuid: node,
      start_time: at(10 * DAY, T),
      end_time: at(20 * DAY, T),
      lessee_id: env.p.lessee.projectId,
    });
    expect(next.status, next.text).toBe(201);
  });

  it('admin: may offer a node it does not own', async () => {
    const r = await offer(env.p.admin, { resource_uuid: n2, start_time: at(0, T), end_time: at(DAY, T), name: 'admin-offer' });
    expect(r.status, r.text).toBe(201);
    expect(r.body.project).toBe('admin');
  });

  it('lessee: 403 (no owner role)', async () => {
    expectFault(
      await offer(env.p.lessee, { resource_uuid: n2, start_time: at(2 * DAY, T), end_time: at(3 * DAY, T) }),
      403,
      'Access was denied to esi_leap:offer:create.',
    );
  });

  it('another project: 404 for a node it cannot see', async () => {
    expectFault(await offer(env.p.other, { resource_uuid: n2, start_time: at(2 * DAY, T), end_time: at(3 * DAY, T) }), 404, 'Node');
  });

  it('anonymous: 401 with a Keystone WWW-Authenticate header', async () => {
    const r = await offer(env.p.anonymous, { resource_uuid: n2 });
    expectFault(r, 401);
    expect(r.headers.get('www-authenticate')).toMatch(/^Keystone uri=".*\/identity"$/);
  });
});

describe('GET /v1/offers', () => {
  freshServer(withOffers);

  const uuids = async (persona: Persona, query = '') => {
    const r = await call(env.ts, persona, 'GET', `/lease/v1/offers${query}`);
    expect(r.status, r.text).toBe(200);
    return r.body.offers.map((o: any) => o.name ?? o.uuid).sort();
  };

  it('admin sees every offer; the owner its own and open ones; lessee l1 the open ones and those limited to l1', async () => {
    expect(await uuids(env.p.admin)).toEqual(['admin-offer', 'for-l1', 'open-1']);
    expect(await uuids(env.p.owner)).toEqual(['admin-offer', 'for-l1', 'open-1']);
    expect(await uuids(env.p.owner, '?project_id=o1')).toEqual(['for-l1', 'open-1']);
    expect(await uuids(env.p.lessee)).toEqual(['admin-offer', 'for-l1', 'open-1']);
  });

  it('another project sees only unrestricted offers; a child project of l1 also sees those limited to l1', async () => {
    expect(await uuids(env.p.other)).toEqual(['admin-offer', 'open-1']);
    expect(await uuids(childLessee)).toEqual(['admin-offer', 'for-l1', 'open-1']);
  });

  it('anonymous: 401', async () => {
    expectFault(await call(env.ts, env.p.anonymous, 'GET', '/lease/v1/offers'), 401);
  });

  it('filters: project, node by name, class, status, containment and availability windows', async () => {
    expect(await uuids(env.p.lessee, '?project_id=o1')).toEqual(['for-l1', 'open-1']);
    expect(await uuids(env.p.lessee, '?resource_uuid=of-2')).toEqual(['admin-offer']);
    expect(await uuids(env.p.lessee, '?resource_uuid=no-such-node')).toEqual([]);
    expect(await uuids(env.p.lessee, '?resource_class=gpu')).toEqual(['for-l1', 'open-1']);
    expect(await uuids(env.p.admin, '?status=deleted')).toHaveLength(1);
    expect((await uuids(env.p.admin, '?status=any')).length).toBe(4);
    expect(await uuids(env.p.lessee, `?start_time=${at(DAY, T)}&end_time=${at(2 * DAY, T)}`)).toEqual(['open-1']);
    expect(await uuids(env.p.lessee, `?available_start_time=${at(9 * DAY, T)}&available_end_time=${at(11 * DAY, T)}`)).toEqual([]);
    expect(await uuids(env.p.lessee, `?available_start_time=${at(11 * DAY, T)}&available_end_time=${at(12 * DAY, T)}`)).toEqual(['for-l1']);
    expect(await uuids(env.p.lessee, '?name=open-1')).toEqual(['open-1']);
  });

  it('bad filters are 400: lone start_time, start ≥ end, unknown status, unknown parameter, bad time', async () => {
    expectFault(
      await call(env.ts, env.p.lessee, 'GET', `/lease/v1/offers?start_time=${at(0, T)}`),
      400,
      /both a valid Start Time and End Time/,
    );
    expectFault(await call(env.ts, env.p.lessee, 'GET', `/lease/v1/offers?start_time=${at(DAY, T)}&end_time=${at(0, T)}`), 400);
    expectFault(await call(env.ts, env.p.lessee, 'GET', '/lease/v1/offers?status=sleeping'), 400, /Invalid status/);
    expectFault(await call(env.ts, env.p.lessee, 'GET', '/lease/v1/offers?colour=red'), 400, 'Unknown argument: "colour".');
    expectFault(
      await call(env.ts, env.p.lessee, 'GET', '/lease/v1/offers?available_start_time=soon&available_end_time=later'),
      400,
      /available_start_time/,
    );
    // Project filters of non-admins never confirm whether a project exists: an unknown one lists nothing.
    expect((await call(env.ts, env.p.lessee, 'GET', '/lease/v1/offers?project_id=nope')).body.offers).toEqual([]);
    expectFault(await call(env.ts, env.p.admin, 'GET', '/lease/v1/offers?project_id=nope'), 404, 'No project named nope.');
  });
});

describe('GET /v1/offers/{uuid_or_name}', () => {
  freshServer(withOffers);

  it('by UUID and by name for those who may see it', async () => {
    const list = await call(env.ts, env.p.admin, 'GET', '/lease/v1/offers?name=for-l1');
    const uuid = list.body.offers[0].uuid;
    for (const p of [env.p.admin, env.p.owner, env.p.lessee, childLessee]) {
      const r = await call(env.ts, p, 'GET', `/lease/v1/offers/${uuid}`);
      expect(r.status, p.name).toBe(200);
      expect((await call(env.ts, p, 'GET', '/lease/v1/offers/for-l1')).body.uuid, p.name).toBe(uuid);
    }
  });

  it('another project gets 404 for an offer limited to l1 (esi-leap: 403), 200 for an open one', async () => {
    expectFault(await call(env.ts, env.p.other, 'GET', '/lease/v1/offers/for-l1'), 404, 'Offer with name or uuid for-l1 not found.');
    expect((await call(env.ts, env.p.other, 'GET', '/lease/v1/offers/open-1')).status).toBe(200);
  });

  it('unknown UUIDs and names are 404; anonymous is 401', async () => {
    expectFault(await call(env.ts, env.p.admin, 'GET', '/lease/v1/offers/00000000-0000-4000-8000-000000000000'), 404);
    expectFault(await call(env.ts, env.p.admin, 'GET', '/lease/v1/offers/nothing'), 404);
    expectFault(await call(env.ts, env.p.anonymous, 'GET', '/lease/v1/offers/open-1'), 401);
  });
});

describe('POST /v1/offers/{id}/claim', () => {
  freshServer(withOffers);

  it('lessee: 201; default end is start + 7 days; the lease belongs to l1, owned by o1', async () => {
    const r = await call(env.ts, env.p.lessee, 'POST', '/lease/v1/offers/open-1/claim', {
      start_time: at(0, T),
      name: 'claim-1',
      purpose: 'ci',
      properties: { a: 1 },
    });
    expect(r.status, r.text).toBe(201);
    expect(r.body).toMatchObject({
      name: 'claim-1',
      project: 'l1',
      owner: 'o1',
      owner_id: env.p.owner.projectId,
      start_time: at(0, T),
      end_time: at(7 * DAY, T),
      status: 'created',
      purpose: 'ci',
      properties: { a: 1 },
      resource: 'of-1',
      parent_lease_uuid: null,
    });
  });

  it('default end stops at the offer end (and at the next lease)', async () => {
    const r = await call(env.ts, env.p.other, 'POST', '/lease/v1/offers/open-1/claim', { start_time: at(8 * DAY, T) });
    expect(r.status, r.text).toBe(201);
    expect(r.body.end_time).toBe(at(10 * DAY, T));
    const gap = await call(env.ts, env.p.other, 'POST', '/lease/v1/offers/open-1/claim', { start_time: at(7 * DAY, T) });
    expect(gap.status, gap.text).toBe(201);
    expect(gap.body.end_time).toBe(at(8 * DAY, T));
  });

  it('a claim that overlaps a lease or leaves the offer window is 409', async () => {
    expectFault(
      await call(env.ts, env.p.lessee, 'POST', '/lease/v1/offers/for-l1/claim', { start_time: at(19 * DAY, T), end_time: at(21 * DAY, T) }),
      409,
      /has no availabilities at given time range .* The offer runs from/,
    );
  });

  it('non-admins may not exceed the maximum length (403); admins may', async () => {
    await offer(env.p.owner, { resource_uuid: n1, start_time: at(20 * DAY, T), end_time: at(100 * DAY, T), name: 'long' });
    expectFault(
      await call(env.ts, env.p.lessee, 'POST', '/lease/v1/offers/long/claim', {
        start_time: at(20 * DAY, T),
        end_time: at(42 * DAY + 1, T),
      }),
      403,
      'The max time range is 21 days.',
    );
    const r = await call(env.ts, env.p.admin, 'POST', '/lease/v1/offers/long/claim', {
      start_time: at(20 * DAY, T),
      end_time: at(50 * DAY, T),
    });
    expect(r.status, r.text).toBe(201);
  });

  it('another project cannot claim an offer limited to l1 (404); anonymous 401', async () => {
    expectFault(
      await call(env.ts, env.p.other, 'POST', '/lease/v1/offers/for-l1/claim', { start_time: at(11 * DAY, T), end_time: at(12 * DAY, T) }),
      404,
    );
    expectFault(await call(env.ts, env.p.anonymous, 'POST', '/lease/v1/offers/for-l1/claim', {}), 401);
  });

  it('a child project of the limited lessee may claim', async () => {
    const r = await call(env.ts, childLessee, 'POST', '/lease/v1/offers/for-l1/claim', {
      start_time: at(11 * DAY, T),
      end_time: at(12 * DAY, T),
    });
    expect(r.status, r.text).toBe(201);
    expect(r.body.project).toBe('l1-child');
  });
});

describe('DELETE /v1/offers/{id}', () => {
  // The offers, a claim of l1-child on for-l1 and o1's offer `long` of of-1 for [T + 20 d, T + 100 d);
  // each test deletes some of them.
  freshServerEach(async () => {
    await withOffers();
    const claim = await call(env.ts, childLessee, 'POST', '/lease/v1/offers/for-l1/claim', {
      start_time: at(11 * DAY, T),
      end_time: at(12 * DAY, T),
    });
    expect(claim.status, claim.text).toBe(201);
    expect(
      (await offer(env.p.owner, { resource_uuid: n1, start_time: at(20 * DAY, T), end_time: at(100 * DAY, T), name: 'long' })).status,
    ).toBe(201);
  });

  it('lessee: 403 on an offer it can see but did not create; another project: 404 on one it cannot see', async () => {
    expectFault(await call(env.ts, env.p.lessee, 'DELETE', '/lease/v1/offers/for-l1'), 403, /^Access was denied to offer /);
    expectFault(await call(env.ts, env.p.other, 'DELETE', '/lease/v1/offers/for-l1'), 404);
    expectFault(await call(env.ts, env.p.anonymous, 'DELETE', '/lease/v1/offers/for-l1'), 401);
  });

  it('owner: 200 null; the offer and its leases are deleted; deleting again is 404', async () => {
    const leases = await call(env.ts, env.p.admin, 'GET', '/lease/v1/leases?view=all&resource_uuid=of-1');
    const onOffer = leases.body.leases.filter((l: any) => l.project === 'l1-child');
    expect(onOffer).toHaveLength(1);
    const r = await call(env.ts, env.p.owner, 'DELETE', '/lease/v1/offers/for-l1');
    expect(r.status, r.text).toBe(200);
    expect(r.body).toBeNull();
    const shown = await call(env.ts, env.p.owner, 'GET', `/lease/v1/offers/for-l1`);
    expect(shown.body).toMatchObject({ status: 'deleted', availabilities: [] });
    const lease = await call(env.ts, env.p.admin, 'GET', `/lease/v1/leases/${onOffer[0].uuid}`);
    expect(lease.body.status).toBe('deleted');
    expectFault(await call(env.ts, env.p.owner, 'DELETE', '/lease/v1/offers/for-l1'), 404);
  });

  it('admin may delete any offer', async () => {
    expect((await call(env.ts, env.p.admin, 'DELETE', '/lease/v1/offers/long')).status).toBe(200);
  });
});
