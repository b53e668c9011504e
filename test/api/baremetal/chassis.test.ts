/**
 * Chassis endpoints (https://docs.openstack.org/api-ref/baremetal/#chassis-chassis; Ironic 21.4
 * `ChassisController`) for every persona: system-level (admin only; project members 403,
 * anonymous 401), fields/detail/pagination/sorting, Ironic's 400s for bad input (writing
 * nothing), nodes naming a chassis, `/v1/chassis/{id}/nodes`, and ChassisNotEmpty.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPersonas, startTestServer, type Personas, type TestServer } from '../../helpers/harness.ts';
import { bm, createNode, expectError, fault } from './helpers.ts';

let ts: TestServer;
let p: Personas;

beforeAll(async () => {
  ts = await startTestServer({ env: { ESI_CONDUCTOR_WORKERS: '0' } });
  p = await createPersonas(ts);
});
afterAll(async () => ts?.close());

const chassisRows = async (): Promise<number> =>
  Number(
    (
      await ts.server.services.store.db
        .selectFrom('chassis')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

async function createChassis(body: Record<string, unknown> = {}): Promise<any> {
  const res = await bm(ts, p.admin, 'POST', '/v1/chassis', body);
  expect(res.status, res.text).toBe(201);
  return res.body;
}

describe('chassis CRUD as admin', () => {
  it('creates with 201, Location and the full shape; shows, patches and deletes', async () => {
    const res = await bm(ts, p.admin, 'POST', '/v1/chassis', { description: 'rack 1', extra: { row: 'A' } });
    expect(res.status, res.text).toBe(201);
    const c = res.body;
    expect(res.headers.get('location')).toMatch(new RegExp(`/baremetal/v1/chassis/${c.uuid}$`));
    expect(Object.keys(c).sort()).toEqual(['created_at', 'description', 'extra', 'links', 'nodes', 'updated_at', 'uuid']);
    expect(c.description).toBe('rack 1');
    expect(c.extra).toEqual({ row: 'A' });
    expect(c.updated_at).toBeNull();
    expect(c.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/);
    expect(c.links.map((l: any) => l.rel)).toEqual(['self', 'bookmark']);
    expect(c.nodes).toEqual([
      { href: expect.stringMatching(new RegExp(`/baremetal/v1/chassis/${c.uuid}/nodes$`)), rel: 'self' },
      { href: expect.stringMatching(new RegExp(`/baremetal/chassis/${c.uuid}/nodes$`)), rel: 'bookmark' },
    ]);

    const shown = await bm(ts, p.admin, 'GET', `/v1/chassis/${c.uuid}`, undefined, '1.1');
    expect(shown.status).toBe(200);
    expect(shown.body.uuid).toBe(c.uuid);
    expect((await bm(ts, p.admin, 'GET', `/v1/chassis/${c.uuid}?fields=description`)).body).toEqual({
      description: 'rack 1',
      links: c.links,
    });

    const patched = await bm(ts, p.admin, 'PATCH', `/v1/chassis/${c.uuid}`, [
      { op: 'replace', path: '/description', value: 'rack 2' },
      { op: 'add', path: '/extra/slot', value: 4 },
    ]);
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.description).toBe('rack 2');
    expect(patched.body.extra).toEqual({ row: 'A', slot: 4 });
    expect(patched.body.updated_at).not.toBeNull();
    const removed = await bm(ts, p.admin, 'PATCH', `/v1/chassis/${c.uuid}`, [{ op: 'remove', path: '/description' }]);
    expect(removed.body.description).toBeNull();

    const del = await bm(ts, p.admin, 'DELETE', `/v1/chassis/${c.uuid}`);
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expectError(await bm(ts, p.admin, 'GET', `/v1/chassis/${c.uuid}`), 404, /Chassis .* could not be found/);
  });

  it('a chosen uuid is kept; a duplicate one is a 409', async () => {
    const uuid = '0d9b4a24-5c2c-4c8e-8f6e-2a7c2b1e0001';
    expect((await createChassis({ uuid })).uuid).toBe(uuid);
    const before = await chassisRows();
    expectError(await bm(ts, p.admin, 'POST', '/v1/chassis', { uuid }), 409, /already exists/);
    expect(await chassisRows()).toBe(before);
  });
});

describe('chassis policy: system-level, admin only', () => {
  let c: any;
  beforeAll(async () => {
    c = await createChassis({ description: 'policy' });
  });

  it('project members (owner, lessee, other) get 403 on every chassis call; anonymous 401; nothing written', async () => {
    const before = await chassisRows();
    for (const who of [p.owner, p.lessee, p.other]) {
      expectError(await bm(ts, who, 'GET', '/v1/chassis'), 403);
      expectError(await bm(ts, who, 'GET', '/v1/chassis/detail'), 403);
      expectError(await bm(ts, who, 'GET', `/v1/chassis/${c.uuid}`), 403);
      expectError(await bm(ts, who, 'POST', '/v1/chassis', { description: 'x' }), 403);
      expectError(await bm(ts, who, 'PATCH', `/v1/chassis/${c.uuid}`, [{ op: 'replace', path: '/description', value: 'x' }]), 403);
      expectError(await bm(ts, who, 'DELETE', `/v1/chassis/${c.uuid}`), 403);
    }
    for (const [m, path] of [
      ['GET', '/v1/chassis'],
      ['POST', '/v1/chassis'],
      ['DELETE', `/v1/chassis/${c.uuid}`],
    ] as const) {
      expectError(await bm(ts, p.anonymous, m, path, m === 'POST' ? {} : undefined), 401);
    }
    expect(await chassisRows()).toBe(before);
    expect((await bm(ts, p.admin, 'GET', `/v1/chassis/${c.uuid}`)).body.description).toBe('policy');
  });
});

describe('chassis lists', () => {
  let uuids: string[];
  beforeAll(async () => {
    await ts.server.services.store.db.deleteFrom('chassis').execute();
    uuids = [];
    for (const d of ['c', 'a', 'b']) uuids.push((await createChassis({ description: `list-${d}` })).uuid);
  });

  it('default fields are uuid and description; detail (path or query) shows all; fields selects', async () => {
    const list = (await bm(ts, p.admin, 'GET', '/v1/chassis')).body;
    expect(list.chassis).toHaveLength(3);
    expect(Object.keys(list.chassis[0]).sort()).toEqual(['description', 'links', 'uuid']);
    const detail = (await bm(ts, p.admin, 'GET', '/v1/chassis/detail')).body.chassis[0];
    expect(Object.keys(detail).sort()).toEqual(['created_at', 'description', 'extra', 'links', 'nodes', 'updated_at', 'uuid']);
    expect((await bm(ts, p.admin, 'GET', '/v1/chassis?detail=true')).body.chassis[0]).toEqual(detail);
    expect(Object.keys((await bm(ts, p.admin, 'GET', '/v1/chassis?fields=extra')).body.chassis[0]).sort()).toEqual(['extra', 'links']);
  });

  it('pages with limit and marker, with a next link; sorts by description both ways', async () => {
    const first = (await bm(ts, p.admin, 'GET', '/v1/chassis?limit=2')).body;
    expect(first.chassis.map((c: any) => c.uuid)).toEqual(uuids.slice(0, 2));
    expect(first.next).toMatch(new RegExp(`/baremetal/v1/chassis\\?limit=2&marker=${uuids[1]}$`));
    const second = (await bm(ts, p.admin, 'GET', `/v1/chassis?limit=2&marker=${uuids[1]}`)).body;
    expect(second.chassis.map((c: any) => c.uuid)).toEqual([uuids[2]]);
    expect(second.next).toBeUndefined();
    const asc = (await bm(ts, p.admin, 'GET', '/v1/chassis?sort_key=description')).body.chassis.map((c: any) => c.description);
    expect(asc).toEqual(['list-a', 'list-b', 'list-c']);
    const desc = (await bm(ts, p.admin, 'GET', '/v1/chassis?sort_key=description&sort_dir=desc&limit=1')).body;
    expect(desc.chassis[0].description).toBe('list-c');
    expect(desc.next).toContain('sort_key=description&sort_dir=desc&limit=1&marker=');
  });

  it("refuses Ironic's bad list requests with 400 (406 for fields before 1.8)", async () => {
    expectError(await bm(ts, p.admin, 'GET', '/v1/chassis?sort_key=extra'), 400, /invalid field for sorting/);
    expectError(await bm(ts, p.admin, 'GET', '/v1/chassis?sort_dir=up'), 400, /sort direction/);
    expectError(await bm(ts, p.admin, 'GET', '/v1/chassis?fields=colour'), 400, /"colour" are not valid/);
    expectError(await bm(ts, p.admin, 'GET', '/v1/chassis?fields=uuid&detail=true'), 400);
    expectError(await bm(ts, p.admin, 'GET', '/v1/chassis?detail=true', undefined, '1.42'), 400, /detail/);
    expectError(await bm(ts, p.admin, 'GET', '/v1/chassis?fields=uuid', undefined, '1.7'), 406);
    expectError(await bm(ts, p.admin, 'GET', '/v1/chassis?marker=nope'), 400, /UUID/);
    expectError(await bm(ts, p.admin, 'GET', '/v1/chassis?limit=0'), 400, /Limit must be positive/);
    expectError(await bm(ts, p.admin, 'GET', '/v1/chassis?colour=red'), 400, /Unexpected arguments: colour/);
    expectError(await bm(ts, p.admin, 'GET', '/v1/chassis/detail?fields=uuid'), 400, /Unexpected arguments/);
  });
});

describe('chassis bad input writes nothing', () => {
  it('malformed UUIDs, unknown fields, read-only patch paths, long descriptions, bad patches', async () => {
    const c = await createChassis({ description: 'keep' });
    const before = await chassisRows();
    expectError(await bm(ts, p.admin, 'GET', '/v1/chassis/not-a-uuid'), 400, /Expected UUID for chassis_uuid: not-a-uuid/);
    expectError(await bm(ts, p.admin, 'DELETE', '/v1/chassis/not-a-uuid'), 400);
    expectError(await bm(ts, p.admin, 'POST', '/v1/chassis', { colour: 'red' }), 400, /colour/);
    expectError(await bm(ts, p.admin, 'POST', '/v1/chassis', { description: 'x'.repeat(256) }), 400);
    expectError(await bm(ts, p.admin, 'POST', '/v1/chassis', { extra: 'no' }), 400);
    expectError(await bm(ts, p.admin, 'POST', '/v1/chassis', { uuid: 'nope' }), 400, /UUID/);
    expectError(await bm(ts, p.admin, 'POST', '/v1/chassis', [1]), 400);
    for (const path of ['/uuid', '/created_at', '/nodes', '/colour']) {
      expectError(
        await bm(ts, p.admin, 'PATCH', `/v1/chassis/${c.uuid}`, [{ op: 'replace', path, value: 'x' }]),
        400,
        /Cannot patch .* Only the following can be updated: description, extra/,
      );
    }
    expectError(
      await bm(ts, p.admin, 'PATCH', `/v1/chassis/${c.uuid}`, [{ op: 'replace', path: '/description', value: 'x'.repeat(256) }]),
      400,
    );
    expectError(await bm(ts, p.admin, 'PATCH', `/v1/chassis/${c.uuid}`, [{ op: 'move', path: '/description', from: '/extra' }]), 400);
    expectError(await bm(ts, p.admin, 'PATCH', `/v1/chassis/${c.uuid}`, [{ op: 'remove', path: '/extra/missing' }]), 400);
    expectError(
      await bm(ts, p.admin, 'PATCH', '/v1/chassis/0d9b4a24-5c2c-4c8e-8f6e-2a7c2b1effff', [{ op: 'remove', path: '/description' }]),
      404,
    );
    expect(await chassisRows()).toBe(before);
    const after = (await bm(ts, p.admin, 'GET', `/v1/chassis/${c.uuid}`)).body;
    expect(after.description).toBe('keep');
    expect(after.updated_at).toBeNull();
  });
});

describe('nodes in a chassis', () => {
  it('a node names an existing chassis only; the chassis lists its nodes; a chassis with nodes cannot be deleted', async () => {
    const c = await createChassis({ description: 'with nodes' });
    const missing = '0d9b4a24-5c2c-4c8e-8f6e-2a7c2b1e0404';
    expectError(await createNodeRaw({ chassis_uuid: missing }), 400, new RegExp(`Chassis ${missing} could not be found`));
    const n1 = await createNode(ts, p, { name: 'cn1', chassis_uuid: c.uuid });
    const n2 = await createNode(ts, p, { name: 'cn2', owner: p.other.projectId, lessee: null });
    expect(n1.chassis_uuid).toBe(c.uuid);
    const patched = await bm(ts, p.admin, 'PATCH', `/v1/nodes/${n2.uuid}`, [{ op: 'add', path: '/chassis_uuid', value: c.uuid }]);
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.chassis_uuid).toBe(c.uuid);
    expectError(
      await bm(ts, p.admin, 'PATCH', `/v1/nodes/${n2.uuid}`, [{ op: 'replace', path: '/chassis_uuid', value: missing }]),
      400,
      /Chassis/,
    );

    const names = async (who: typeof p.admin, path: string): Promise<string[]> => {
      const res = await bm(ts, who, 'GET', path);
      expect(res.status, res.text).toBe(200);
      return res.body.nodes.map((n: any) => n.name).sort();
    };
    expect(await names(p.admin, `/v1/chassis/${c.uuid}/nodes`)).toEqual(['cn1', 'cn2']);
    expect(await names(p.admin, `/v1/chassis/${c.uuid}/nodes/detail`)).toEqual(['cn1', 'cn2']);
    expect(await names(p.admin, `/v1/nodes?chassis_uuid=${c.uuid}`)).toEqual(['cn1', 'cn2']);
    // The node rules apply: each project sees its own nodes of the chassis.
    expect(await names(p.owner, `/v1/chassis/${c.uuid}/nodes`)).toEqual(['cn1']);
    expect(await names(p.lessee, `/v1/chassis/${c.uuid}/nodes`)).toEqual(['cn1']);
    expect(await names(p.other, `/v1/chassis/${c.uuid}/nodes`)).toEqual(['cn2']);
    expectError(await bm(ts, p.anonymous, 'GET', `/v1/chassis/${c.uuid}/nodes`), 401);
    const page = (await bm(ts, p.admin, 'GET', `/v1/chassis/${c.uuid}/nodes?limit=1`)).body;
    expect(page.next).toMatch(new RegExp(`/v1/chassis/${c.uuid}/nodes\\?limit=1&marker=`));
    expectError(await bm(ts, p.admin, 'GET', `/v1/chassis/${missing}/nodes`), 404, /Chassis/);
    expectError(await bm(ts, p.admin, 'GET', `/v1/nodes?chassis_uuid=${missing}`), 404, /Chassis/);
    expectError(await bm(ts, p.admin, 'GET', `/v1/chassis/${c.uuid}/nodes?chassis_uuid=${c.uuid}`), 400);
    expectError(await bm(ts, p.admin, 'GET', `/v1/chassis/${c.uuid}/nodes/${n1.uuid}`), 403, /Operation not permitted/);

    const del = await bm(ts, p.admin, 'DELETE', `/v1/chassis/${c.uuid}`);
    expectError(del, 400, new RegExp(`chassis ${c.uuid} contains nodes`));
    // Removing a node's chassis needs 1.25 (406 before).
    expectError(await bm(ts, p.admin, 'PATCH', `/v1/nodes/${n1.uuid}`, [{ op: 'remove', path: '/chassis_uuid' }], '1.24'), 406);
    for (const n of [n1, n2]) {
      const r = await bm(ts, p.admin, 'PATCH', `/v1/nodes/${n.uuid}`, [{ op: 'remove', path: '/chassis_uuid' }], '1.25');
      expect(r.status, r.text).toBe(200);
      expect(r.body.chassis_uuid).toBeNull();
    }
    expect((await bm(ts, p.admin, 'DELETE', `/v1/chassis/${c.uuid}`)).status).toBe(204);
    expect(fault(await bm(ts, p.admin, 'GET', `/v1/chassis/${c.uuid}/nodes`)).faultstring).toMatch(/could not be found/);
  });
});

/** POST a node as admin, returning the raw response. */
function createNodeRaw(body: Record<string, unknown>) {
  return bm(ts, p.admin, 'POST', '/v1/nodes', { driver: 'fake-hardware', ...body });
}
