/**
 * Portgroup endpoints (https://docs.openstack.org/api-ref/baremetal/#portgroups-portgroups;
 * Ironic 21.4 `PortgroupsController`) for every persona: visibility through the portgroup's node
 * (owner and lessee see it, another project gets 404, anonymous 401), microversion gates (1.23,
 * 1.24, 1.26), name/MAC rules and uniqueness, the wiring fields only owner and admin may change,
 * member ports (`portgroup_uuid`, physical network, standalone ports), PortgroupNotEmpty, lists.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPersonas, startTestServer, type Personas, type TestServer } from '../../helpers/harness.ts';
import { bm, createNode, createPort, expectError } from './helpers.ts';

let ts: TestServer;
let p: Personas;
let n1: any; // owner o1, lessee l1
let n2: any; // owner o2 (p.other)
let pg1: any; // on n1, named pg1

beforeAll(async () => {
  ts = await startTestServer({ env: { ESI_CONDUCTOR_WORKERS: '0' } });
  p = await createPersonas(ts);
  n1 = await createNode(ts, p, { name: 'gn1' });
  n2 = await createNode(ts, p, { name: 'gn2', owner: p.other.projectId, lessee: null });
  pg1 = await createPortgroup({ node_uuid: n1.uuid, name: 'pg1', address: '52:54:00:AA:00:01' });
});
afterAll(async () => ts?.close());

async function createPortgroup(body: Record<string, unknown>, who = p.admin): Promise<any> {
  const res = await bm(ts, who, 'POST', '/v1/portgroups', body);
  expect(res.status, res.text).toBe(201);
  return res.body;
}

const pgRows = async (): Promise<number> =>
  Number(
    (
      await ts.server.services.store.db
        .selectFrom('portgroups')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

const names = (body: any): string[] => body.portgroups.map((x: any) => x.name).sort();

describe('portgroup create', () => {
  it('admin creates with 201, Location, defaults and the full shape (MAC lower-cased)', async () => {
    const res = await bm(ts, p.admin, 'POST', '/v1/portgroups', { node_uuid: n1.uuid, name: 'pg-shape', address: '52:54:00:AA:0F:01' });
    expect(res.status, res.text).toBe(201);
    const pg = res.body;
    expect(res.headers.get('location')).toMatch(new RegExp(`/baremetal/v1/portgroups/${pg.uuid}$`));
    expect(Object.keys(pg).sort()).toEqual(
      [
        'address',
        'created_at',
        'extra',
        'internal_info',
        'links',
        'mode',
        'name',
        'node_uuid',
        'ports',
        'properties',
        'standalone_ports_supported',
        'updated_at',
        'uuid',
      ].sort(),
    );
    expect(pg).toMatchObject({
      address: '52:54:00:aa:0f:01',
      mode: 'active-backup',
      standalone_ports_supported: true,
      properties: {},
      extra: {},
      internal_info: {},
      node_uuid: n1.uuid,
    });
    expect(pg.ports[0].href).toMatch(new RegExp(`/baremetal/v1/portgroups/${pg.uuid}/ports$`));
  });

  it('the owner creates on its node; the lessee may not (403); another project names an invisible node (400); anonymous 401', async () => {
    const own = await createPortgroup({ node_uuid: n1.uuid, name: 'pg-owner', mode: '802.3ad', properties: { miimon: 100 } }, p.owner);
    expect(own.mode).toBe('802.3ad');
    const before = await pgRows();
    expectError(await bm(ts, p.lessee, 'POST', '/v1/portgroups', { node_uuid: n1.uuid }), 403);
    expectError(
      await bm(ts, p.other, 'POST', '/v1/portgroups', { node_uuid: n1.uuid }),
      400,
      new RegExp(`Node ${n1.uuid} could not be found`),
    );
    expectError(await bm(ts, p.anonymous, 'POST', '/v1/portgroups', { node_uuid: n1.uuid }), 401);
    expect(await pgRows()).toBe(before);
  });

  it("refuses Ironic's bad input with 400/409 and writes nothing", async () => {
    const before = await pgRows();
    const bad: Array<[Record<string, unknown>, number, RegExp]> = [
      [{ name: 'x' }, 400, /node_uuid/],
      [{ node_uuid: 'nope' }, 400, /UUID/],
      [{ node_uuid: '0d9b4a24-5c2c-4c8e-8f6e-2a7c2b1e0404' }, 400, /could not be found/],
      [{ node_uuid: n1.uuid, colour: 'red' }, 400, /colour/],
      [{ node_uuid: n1.uuid, name: 'bad name' }, 400, /Cannot create portgroup with invalid name 'bad name'/],
      [{ node_uuid: n1.uuid, name: '0d9b4a24-5c2c-4c8e-8f6e-2a7c2b1e0001' }, 400, /invalid name/],
      [{ node_uuid: n1.uuid, address: 'zz' }, 400, /MAC/],
      [{ node_uuid: n1.uuid, standalone_ports_supported: 'maybe' }, 400, /standalone_ports_supported/],
      [{ node_uuid: n1.uuid, extra: [] }, 400, /extra/],
      [{ node_uuid: n1.uuid, name: 'pg1' }, 409, /A portgroup with name pg1 already exists/],
      [{ node_uuid: n1.uuid, address: '52:54:00:aa:00:01' }, 409, /MAC address 52:54:00:aa:00:01 already exists/],
      [{ node_uuid: n1.uuid, uuid: pg1.uuid }, 409, /already exists/],
    ];
    for (const [body, status, msg] of bad) expectError(await bm(ts, p.admin, 'POST', '/v1/portgroups', body), status, msg);
    expect(await pgRows()).toBe(before);
  });
});

describe('portgroup visibility and lists', () => {
  let pgOther: any;
  beforeAll(async () => {
    pgOther = await createPortgroup({ node_uuid: n2.uuid, name: 'pg-other' });
  });

  it('owner and lessee see their node’s portgroup by UUID and name; another project gets 404; anonymous 401', async () => {
    for (const who of [p.admin, p.owner, p.lessee]) {
      for (const ident of [pg1.uuid, 'pg1']) expect((await bm(ts, who, 'GET', `/v1/portgroups/${ident}`)).body.uuid).toBe(pg1.uuid);
    }
    expectError(await bm(ts, p.other, 'GET', `/v1/portgroups/${pg1.uuid}`), 404, /Portgroup .* could not be found/);
    expectError(await bm(ts, p.other, 'GET', '/v1/portgroups/pg1'), 404);
    expect((await bm(ts, p.other, 'GET', `/v1/portgroups/${pgOther.uuid}`)).status).toBe(200);
    expectError(await bm(ts, p.owner, 'GET', `/v1/portgroups/${pgOther.uuid}`), 404);
    expectError(await bm(ts, p.anonymous, 'GET', `/v1/portgroups/${pg1.uuid}`), 401);
    expectError(await bm(ts, p.admin, 'GET', '/v1/portgroups/bad%20name'), 400, /Expected UUID or name for portgroup/);
    expectError(await bm(ts, p.admin, 'GET', '/v1/portgroups/no-such-group'), 404);
    expect(Object.keys((await bm(ts, p.admin, 'GET', '/v1/portgroups/pg1?fields=name,mode')).body).sort()).toEqual([
      'links',
      'mode',
      'name',
    ]);
  });

  it('lists are filtered to visible nodes, by node (UUID or name) and address; node sub-collections', async () => {
    const all = names((await bm(ts, p.admin, 'GET', '/v1/portgroups')).body);
    expect(all).toContain('pg1');
    expect(all).toContain('pg-other');
    expect(names((await bm(ts, p.owner, 'GET', '/v1/portgroups')).body)).not.toContain('pg-other');
    expect(names((await bm(ts, p.lessee, 'GET', '/v1/portgroups/detail')).body)).toContain('pg1');
    // Other tests may add portgroups to gn2: check the nodes of what is listed, not an exact list.
    const nodesOf = async (who: typeof p.admin, path: string): Promise<Set<string>> =>
      new Set((await bm(ts, who, 'GET', path)).body.portgroups.map((x: any) => x.node_uuid));
    expect(names((await bm(ts, p.other, 'GET', '/v1/portgroups')).body)).toContain('pg-other');
    expect(await nodesOf(p.other, '/v1/portgroups?fields=name,node_uuid')).toEqual(new Set([n2.uuid]));
    expect(await nodesOf(p.admin, '/v1/portgroups?node=gn2&fields=node_uuid')).toEqual(new Set([n2.uuid]));
    expect(await nodesOf(p.owner, '/v1/portgroups?fields=node_uuid')).toEqual(new Set([n1.uuid]));
    expect(names((await bm(ts, p.admin, 'GET', '/v1/portgroups?address=52:54:00:AA:00:01')).body)).toEqual(['pg1']);
    expectError(await bm(ts, p.admin, 'GET', '/v1/portgroups?address=zz'), 400, /MAC/);
    expectError(await bm(ts, p.other, 'GET', '/v1/portgroups?node=gn1'), 404);
    expect(names((await bm(ts, p.admin, 'GET', '/v1/nodes/gn2/portgroups')).body)).toContain('pg-other');
    expect(await nodesOf(p.other, `/v1/nodes/${n2.uuid}/portgroups/detail`)).toEqual(new Set([n2.uuid]));
    expectError(await bm(ts, p.other, 'GET', '/v1/nodes/gn1/portgroups'), 404);
    expectError(await bm(ts, p.anonymous, 'GET', '/v1/portgroups'), 401);
    // Writes and single portgroups below a node are Ironic's OperationNotPermitted, after its lookups.
    expectError(await bm(ts, p.admin, 'POST', `/v1/nodes/${n1.uuid}/portgroups`, { node_uuid: n1.uuid }), 403, /Operation not permitted/);
    expectError(await bm(ts, p.admin, 'POST', `/v1/nodes/${n1.uuid}/portgroups`, {}), 400, /node_uuid/);
    expectError(await bm(ts, p.admin, 'GET', `/v1/nodes/${n1.uuid}/portgroups/pg1`), 403);
    expectError(await bm(ts, p.admin, 'DELETE', `/v1/nodes/${n1.uuid}/portgroups/no-such-group`), 404);
  });

  it('default fields, detail, fields, sorting and pagination with next links', async () => {
    const list = (await bm(ts, p.admin, 'GET', `/v1/nodes/${n1.uuid}/portgroups`)).body.portgroups;
    expect(Object.keys(list[0]).sort()).toEqual(['address', 'links', 'name', 'uuid']);
    const detail = (await bm(ts, p.admin, 'GET', '/v1/portgroups?detail=true')).body.portgroups[0];
    expect(detail.ports).toBeDefined();
    expect(detail.standalone_ports_supported).toBeDefined();
    expectError(await bm(ts, p.admin, 'GET', '/v1/portgroups?detail=true&fields=name'), 400);
    expectError(await bm(ts, p.admin, 'GET', '/v1/portgroups?fields=colour'), 400);
    expectError(await bm(ts, p.admin, 'GET', '/v1/portgroups?sort_key=properties'), 400, /invalid field for sorting/);
    const sorted = (await bm(ts, p.admin, 'GET', '/v1/portgroups?sort_key=name&sort_dir=desc')).body.portgroups.map((x: any) => x.name);
    expect(sorted).toEqual([...sorted].sort().reverse());
    const page1 = (await bm(ts, p.admin, 'GET', '/v1/portgroups?limit=1&sort_key=name')).body;
    expect(page1.portgroups).toHaveLength(1);
    expect(page1.next).toMatch(/\/baremetal\/v1\/portgroups\?sort_key=name&limit=1&marker=/);
    const page2 = (await bm(ts, p.admin, 'GET', page1.next.replace(/^.*\/baremetal/, ''))).body;
    expect(page2.portgroups[0].name > page1.portgroups[0].name).toBe(true);
    expectError(await bm(ts, p.other, 'GET', `/v1/portgroups?marker=${pg1.uuid}`), 404);
  });
});

describe('portgroup microversions', () => {
  it('404 before 1.23 (sub-collections before 1.24); mode and properties 406 before 1.26', async () => {
    expectError(await bm(ts, p.admin, 'GET', '/v1/portgroups', undefined, '1.22'), 404);
    expectError(await bm(ts, p.admin, 'POST', '/v1/portgroups', { node_uuid: n1.uuid }, '1.22'), 404);
    expectError(await bm(ts, p.admin, 'GET', `/v1/portgroups/${pg1.uuid}`, undefined, '1.22'), 404);
    expectError(await bm(ts, p.admin, 'GET', '/v1/portgroups', undefined, null), 404);
    expect((await bm(ts, p.admin, 'GET', '/v1/portgroups', undefined, '1.23')).status).toBe(200);
    expectError(await bm(ts, p.admin, 'GET', `/v1/nodes/${n1.uuid}/portgroups`, undefined, '1.23'), 404);
    expectError(await bm(ts, p.admin, 'GET', `/v1/portgroups/${pg1.uuid}/ports`, undefined, '1.23'), 404);
    expect((await bm(ts, p.admin, 'GET', `/v1/nodes/${n1.uuid}/portgroups`, undefined, '1.24')).status).toBe(200);
    const before = await pgRows();
    expectError(await bm(ts, p.admin, 'POST', '/v1/portgroups', { node_uuid: n1.uuid, mode: '802.3ad' }, '1.25'), 406);
    expectError(await bm(ts, p.admin, 'POST', '/v1/portgroups', { node_uuid: n1.uuid, properties: { a: 1 } }, '1.25'), 406);
    expect(await pgRows()).toBe(before);
    expectError(
      await bm(ts, p.admin, 'PATCH', `/v1/portgroups/${pg1.uuid}`, [{ op: 'add', path: '/properties/a', value: 1 }], '1.25'),
      406,
    );
    expectError(await bm(ts, p.admin, 'GET', `/v1/portgroups/${pg1.uuid}?fields=mode`, undefined, '1.25'), 406);
    expectError(await bm(ts, p.admin, 'GET', '/v1/portgroups?sort_key=mode', undefined, '1.25'), 406);
    expectError(await bm(ts, p.admin, 'GET', '/v1/portgroups?detail=true', undefined, '1.42'), 400);
    // Ironic 21.4 shows mode and properties at every version that has portgroups.
    expect((await bm(ts, p.admin, 'GET', `/v1/portgroups/${pg1.uuid}`, undefined, '1.23')).body.mode).toBe('active-backup');
  });
});

describe('portgroup PATCH', () => {
  it('the lessee may change name and extra but not the wiring (403); the owner may; nothing written when refused', async () => {
    const pg = await createPortgroup({ node_uuid: n1.uuid, name: 'pg-patch' });
    const ok = await bm(ts, p.lessee, 'PATCH', `/v1/portgroups/${pg.uuid}`, [
      { op: 'add', path: '/extra/tag', value: 'l1' },
      { op: 'replace', path: '/name', value: 'pg-patched' },
    ]);
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body).toMatchObject({ name: 'pg-patched', extra: { tag: 'l1' } });
    for (const op of [
      { op: 'replace', path: '/address', value: '52:54:00:aa:0e:01' },
      { op: 'replace', path: '/mode', value: '802.3ad' },
      { op: 'add', path: '/properties/miimon', value: 100 },
      { op: 'replace', path: '/standalone_ports_supported', value: false },
    ]) {
      expectError(await bm(ts, p.lessee, 'PATCH', `/v1/portgroups/${pg.uuid}`, [op]), 403, /baremetal:portgroup:update:/);
    }
    expectError(await bm(ts, p.other, 'PATCH', `/v1/portgroups/${pg.uuid}`, [{ op: 'add', path: '/extra/x', value: 1 }]), 404);
    const owner = await bm(ts, p.owner, 'PATCH', '/v1/portgroups/pg-patched', [
      { op: 'replace', path: '/mode', value: '802.3ad' },
      { op: 'replace', path: '/standalone_ports_supported', value: 'false' },
      { op: 'replace', path: '/address', value: '52:54:00:AA:0E:02' },
    ]);
    expect(owner.status, owner.text).toBe(200);
    expect(owner.body).toMatchObject({ mode: '802.3ad', standalone_ports_supported: false, address: '52:54:00:aa:0e:02' });
  });

  it("refuses Ironic's bad patches with 400 and writes nothing", async () => {
    const pg = await createPortgroup({ node_uuid: n1.uuid, name: 'pg-bad' });
    const bad: Array<[unknown[], RegExp]> = [
      [[{ op: 'remove', path: '/mode' }], /'mode' is a mandatory attribute/],
      [[{ op: 'replace', path: '/internal_info', value: {} }], /Cannot patch \/internal_info/],
      [[{ op: 'replace', path: '/uuid', value: pg1.uuid }], /Cannot patch \/uuid/],
      [[{ op: 'replace', path: '/name', value: 'bad name' }], /Cannot change name to invalid name 'bad name'/],
      [[{ op: 'replace', path: '/address', value: 'zz' }], /MAC/],
      [[{ op: 'replace', path: '/node_uuid', value: 'nope' }], /UUID/],
      [[{ op: 'replace', path: '/standalone_ports_supported', value: 'maybe' }], /standalone_ports_supported/],
    ];
    for (const [ops, msg] of bad) expectError(await bm(ts, p.admin, 'PATCH', `/v1/portgroups/${pg.uuid}`, ops), 400, msg);
    expectError(await bm(ts, p.admin, 'PATCH', `/v1/portgroups/${pg.uuid}`, [{ op: 'replace', path: '/name', value: 'pg1' }]), 409);
    const after = (await bm(ts, p.admin, 'GET', `/v1/portgroups/${pg.uuid}`)).body;
    expect(after).toMatchObject({ name: 'pg-bad', mode: 'active-backup', updated_at: null });
  });

  it('moves to another node only without ports, and only to a node the caller may create on', async () => {
    const pg = await createPortgroup({ node_uuid: n1.uuid, name: 'pg-move' });
    expectError(
      await bm(ts, p.owner, 'PATCH', `/v1/portgroups/${pg.uuid}`, [{ op: 'replace', path: '/node_uuid', value: n2.uuid }]),
      400,
      /could not be found/,
    );
    await createPort(ts, p, n1.uuid, '52:54:00:bb:0c:01', { portgroup_uuid: pg.uuid });
    expectError(
      await bm(ts, p.admin, 'PATCH', `/v1/portgroups/${pg.uuid}`, [{ op: 'replace', path: '/node_uuid', value: n2.uuid }]),
      400,
      /there are ports associated with this portgroup/,
    );
    const empty = await createPortgroup({ node_uuid: n1.uuid, name: 'pg-move2' });
    const moved = await bm(ts, p.admin, 'PATCH', `/v1/portgroups/${empty.uuid}`, [{ op: 'replace', path: '/node_uuid', value: n2.uuid }]);
    expect(moved.status, moved.text).toBe(200);
    expect(moved.body.node_uuid).toBe(n2.uuid);
    expectError(await bm(ts, p.owner, 'GET', `/v1/portgroups/${empty.uuid}`), 404);
  });
});

describe('member ports', () => {
  it('ports join a portgroup of their own node, share its physical network and respect standalone ports', async () => {
    const pg = await createPortgroup({ node_uuid: n1.uuid, name: 'pg-members' });
    const other = await createPortgroup({ node_uuid: n2.uuid, name: 'pg-members-other' });
    const port = await createPort(ts, p, n1.uuid, '52:54:00:bb:0a:01', { portgroup_uuid: pg.uuid, physical_network: 'physnet1' });
    expect(port.portgroup_uuid).toBe(pg.uuid);
    expect((await bm(ts, p.admin, 'GET', `/v1/ports/${port.uuid}`, undefined, '1.23')).body.portgroup_uuid).toBeUndefined();
    const post = (body: Record<string, unknown>) => bm(ts, p.admin, 'POST', '/v1/ports', { node_uuid: n1.uuid, ...body });
    expectError(await post({ address: '52:54:00:bb:0a:02', portgroup_uuid: other.uuid }), 400, /belonging to a different node/);
    expectError(
      await post({ address: '52:54:00:bb:0a:02', portgroup_uuid: '0d9b4a24-5c2c-4c8e-8f6e-2a7c2b1e0404' }),
      400,
      /Portgroup .* could not be found/,
    );
    expectError(
      await post({ address: '52:54:00:bb:0a:02', portgroup_uuid: pg.uuid, physical_network: 'physnet2' }),
      409,
      /physical network/,
    );
    const second = await createPort(ts, p, n1.uuid, '52:54:00:bb:0a:03', {
      portgroup_uuid: pg.uuid,
      physical_network: 'physnet1',
      pxe_enabled: false,
    });
    expectError(
      await bm(ts, p.admin, 'PATCH', `/v1/portgroups/${pg.uuid}`, [{ op: 'replace', path: '/standalone_ports_supported', value: false }]),
      409,
      /standalone_ports_supported can not be set to False/,
    );
    await bm(ts, p.admin, 'PATCH', `/v1/ports/${port.uuid}`, [{ op: 'replace', path: '/pxe_enabled', value: false }]);
    const set = await bm(ts, p.admin, 'PATCH', `/v1/portgroups/${pg.uuid}`, [
      { op: 'replace', path: '/standalone_ports_supported', value: false },
    ]);
    expect(set.status, set.text).toBe(200);
    expectError(
      await post({ address: '52:54:00:bb:0a:04', portgroup_uuid: pg.uuid, physical_network: 'physnet1' }),
      409,
      /doesn't support standalone ports/,
    );
    expectError(
      await bm(ts, p.admin, 'PATCH', `/v1/ports/${second.uuid}`, [{ op: 'replace', path: '/pxe_enabled', value: true }]),
      409,
      /standalone ports/,
    );

    const members = async (path: string, who = p.admin): Promise<string[]> => {
      const res = await bm(ts, who, 'GET', path);
      expect(res.status, res.text).toBe(200);
      return res.body.ports.map((x: any) => x.address).sort();
    };
    const expected = ['52:54:00:bb:0a:01', '52:54:00:bb:0a:03'];
    expect(await members(`/v1/portgroups/${pg.uuid}/ports`)).toEqual(expected);
    expect(await members('/v1/portgroups/pg-members/ports/detail', p.lessee)).toEqual(expected);
    expect(await members('/v1/ports?portgroup=pg-members', p.owner)).toEqual(expected);
    expectError(await bm(ts, p.other, 'GET', `/v1/portgroups/${pg.uuid}/ports`), 404);
    expectError(await bm(ts, p.admin, 'GET', `/v1/ports?portgroup=pg-members&node=${n1.uuid}`), 403, /Operation not permitted/);
    expectError(await bm(ts, p.admin, 'GET', '/v1/ports?portgroup=pg-members', undefined, '1.23'), 406);

    // A portgroup with ports cannot be deleted (400); the lessee may not delete (403), another project sees nothing (404).
    expectError(await bm(ts, p.admin, 'DELETE', `/v1/portgroups/${pg.uuid}`), 400, new RegExp(`portgroup ${pg.uuid} contains ports`));
    expectError(await bm(ts, p.lessee, 'DELETE', `/v1/portgroups/${pg.uuid}`), 403);
    expectError(await bm(ts, p.other, 'DELETE', `/v1/portgroups/${pg.uuid}`), 404);
    for (const x of [port, second]) expect((await bm(ts, p.admin, 'DELETE', `/v1/ports/${x.uuid}`)).status).toBe(204);
    expect((await bm(ts, p.owner, 'DELETE', '/v1/portgroups/pg-members')).status).toBe(204);
    expectError(await bm(ts, p.admin, 'GET', `/v1/portgroups/${pg.uuid}`), 404);
  });

  it('a node’s portgroups go with it', async () => {
    const node = await createNode(ts, p, { name: 'gn-gone' });
    const pg = await createPortgroup({ node_uuid: node.uuid, name: 'pg-gone' });
    await createPort(ts, p, node.uuid, '52:54:00:bb:0d:01', { portgroup_uuid: pg.uuid });
    expect((await bm(ts, p.admin, 'DELETE', `/v1/nodes/${node.uuid}`)).status).toBe(204);
    expectError(await bm(ts, p.admin, 'GET', `/v1/portgroups/${pg.uuid}`), 404);
  });
});
