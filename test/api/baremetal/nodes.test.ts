/**
 * Node collection and resource endpoints for every persona: admin, owner (o1), lessee (l1),
 * another project (o2) and anonymous (https://docs.openstack.org/api-ref/baremetal/#nodes-nodes;
 * https://docs.openstack.org/ironic/latest/admin/secure-rbac.html).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPersonas, startTestServer, type Personas, type TestServer } from '../../helpers/harness.ts';
import { REDACTION_TEXT } from '../../../src/domain/inventory/presentation.ts';
import { bm, countRows, createNode, createPort, expectError, forceNode } from './helpers.ts';

let ts: TestServer;
let p: Personas;
let n1: any; // owner o1, lessee l1
let n2: any; // owner o1, no lessee
let n3: any; // no owner

/** A fresh server with nodes n1, n2 and n3 for the tests of one describe block (the writing blocks change them). */
function freshServer(): void {
  beforeAll(async () => {
    // These tests check the intent the API records; no conductor may act on it meanwhile.
    ts = await startTestServer({ env: { ESI_CONDUCTOR_WORKERS: '0' } });
    p = await createPersonas(ts);
    // Conductors for the groups the nodes use (a node in a group nobody serves is refused).
    await serveGroup(ts, 'group-a');
    await serveGroup(ts, 'group-b');
    n1 = await createNode(ts, p, { name: 'n1', resource_class: 'gold', description: 'Rack 7 GPU box', properties: { cpus: 8 } });
    n2 = await createNode(ts, p, { name: 'n2', lessee: null, resource_class: 'silver', conductor_group: 'Group-A' });
    n3 = await createNode(ts, p, { name: 'n3', owner: null, lessee: null, maintenance: true });
  });
  afterAll(async () => ts?.close());
}

/** Register a conductor (heartbeat in the future: alive for the whole test) serving `group`. */
async function serveGroup(on: TestServer, group: string): Promise<void> {
  const inventory = on.server.services.inventory;
  await inventory.conductorRepository.upsert(`conductor-${group}`, group, ['fake-hardware'], Date.now() + 3_600_000);
  inventory.conductors.invalidate();
}

const names = (body: any): string[] => body.nodes.map((n: any) => n.name).sort();

describe('GET /v1/nodes', () => {
  freshServer();

  it('admin sees every node, with the default fields', async () => {
    const r = await bm(ts, p.admin, 'GET', '/v1/nodes');
    expect(r.status).toBe(200);
    expect(names(r.body)).toEqual(['n1', 'n2', 'n3']);
    expect(r.body.nodes.find((n: any) => n.name === 'n3').uuid).toBe(n3.uuid);
    expect(Object.keys(r.body.nodes[0]).sort()).toEqual([
      'instance_uuid',
      'links',
      'maintenance',
      'name',
      'power_state',
      'provision_state',
      'uuid',
    ]);
    expect(r.body.next).toBeUndefined();
  });

  it('owner sees the nodes it owns, lessee the node it leases, another project nothing', async () => {
    expect(names((await bm(ts, p.owner, 'GET', '/v1/nodes')).body)).toEqual(['n1', 'n2']);
    expect(names((await bm(ts, p.lessee, 'GET', '/v1/nodes')).body)).toEqual(['n1']);
    const other = await bm(ts, p.other, 'GET', '/v1/nodes');
    expect(other.status).toBe(200);
    expect(other.body).toEqual({ nodes: [] });
  });

  it('anonymous gets 401', async () => {
    expectError(await bm(ts, p.anonymous, 'GET', '/v1/nodes'), 401, /authentication/);
  });

  it('refuses a project-scoped caller asking for another owner or project (403), allows its own', async () => {
    expectError(await bm(ts, p.lessee, 'GET', `/v1/nodes?owner=${p.owner.projectId}`), 403);
    expectError(await bm(ts, p.other, 'GET', `/v1/nodes?project=${p.owner.projectId}`), 403);
    expect(names((await bm(ts, p.owner, 'GET', `/v1/nodes?owner=${p.owner.projectId}`)).body)).toEqual(['n1', 'n2']);
    expect(names((await bm(ts, p.lessee, 'GET', `/v1/nodes?project=${p.lessee.projectId}`)).body)).toEqual(['n1']);
    expect(names((await bm(ts, p.owner, 'GET', `/v1/nodes?lessee=${p.lessee.projectId}`)).body)).toEqual(['n1']);
  });

  it('filters', async () => {
    const q = async (query: string) => names((await bm(ts, p.admin, 'GET', `/v1/nodes?${query}`)).body);
    expect(await q('maintenance=true')).toEqual(['n3']);
    expect(await q('maintenance=False')).toEqual(['n1', 'n2']);
    expect(await q('resource_class=gold')).toEqual(['n1']);
    expect(await q('provision_state=enroll')).toEqual(['n1', 'n2', 'n3']);
    expect(await q('provision_state=active')).toEqual([]);
    expect(await q('driver=fake-hardware')).toEqual(['n1', 'n2', 'n3']);
    expect(await q('driver=redfish')).toEqual([]);
    expect(await q(`owner=${p.owner.projectId}`)).toEqual(['n1', 'n2']);
    expect(await q(`lessee=${p.lessee.projectId}`)).toEqual(['n1']);
    expect(await q(`project=${p.lessee.projectId}`)).toEqual(['n1']);
    expect(await q('associated=false')).toEqual(['n1', 'n2', 'n3']);
    expect(await q('associated=true')).toEqual([]);
    expect(await q('description_contains=gpu')).toEqual(['n1']);
    expect(await q('description_contains=%25')).toEqual([]);
    expect(await q('conductor_group=group-a')).toEqual(['n2']);
    expect(await q('instance_uuid=2f9c3c1e-7d8a-4c35-9c1c-2f1a0d0b5e11')).toEqual([]);
  });

  it('refuses bad filter values with 400', async () => {
    expectError(await bm(ts, p.admin, 'GET', '/v1/nodes?maintenance=maybe'), 400, /boolean/);
    expectError(await bm(ts, p.admin, 'GET', '/v1/nodes?provision_state=bogus'), 400, /not valid/);
    expectError(await bm(ts, p.admin, 'GET', '/v1/nodes?instance_uuid=nope'), 400, /UUID/);
    expectError(await bm(ts, p.admin, 'GET', '/v1/nodes?fault=melted'), 400, /fault/);
    expectError(await bm(ts, p.admin, 'GET', '/v1/nodes?colour=red'), 400, /Unexpected arguments: colour/);
    expectError(await bm(ts, p.admin, 'GET', '/v1/nodes?sort_key=properties'), 400, /sort_key/);
    expectError(await bm(ts, p.admin, 'GET', '/v1/nodes?sort_dir=up'), 400, /sort direction/);
    expectError(await bm(ts, p.admin, 'GET', '/v1/nodes?limit=0'), 400, /Limit must be positive/);
    expectError(await bm(ts, p.admin, 'GET', '/v1/nodes?limit=x'), 400);
    expectError(await bm(ts, p.admin, 'GET', '/v1/nodes?fields=uuid,colour'), 400, /colour/);
    expectError(await bm(ts, p.admin, 'GET', '/v1/nodes?fields=uuid&detail=true'), 400);
  });

  it('supports fields and detail', async () => {
    const f = await bm(ts, p.admin, 'GET', '/v1/nodes?fields=uuid,owner,conductor');
    expect(Object.keys(f.body.nodes[0]).sort()).toEqual(['conductor', 'links', 'owner', 'uuid']);
    expect(typeof f.body.nodes[0].conductor).toBe('string');
    const d = await bm(ts, p.admin, 'GET', '/v1/nodes?detail=True');
    expect(d.body.nodes[0].driver).toBe('fake-hardware');
    expect(d.body.nodes[0].ports).toHaveLength(2);
  });
});

describe('GET /v1/nodes/detail', () => {
  freshServer();

  it('admin sees full nodes; lessee gets redactions; other nothing; anonymous 401', async () => {
    const a = await bm(ts, p.admin, 'GET', '/v1/nodes/detail');
    expect(a.status).toBe(200);
    expect(a.body.nodes).toHaveLength(3);
    const ln = (await bm(ts, p.lessee, 'GET', '/v1/nodes/detail')).body.nodes;
    expect(ln).toHaveLength(1);
    expect(ln[0].driver_info).toEqual({ content: REDACTION_TEXT.driver_info });
    expect(ln[0].driver_internal_info).toEqual({ content: REDACTION_TEXT.driver_internal_info });
    expect(ln[0].last_error).toBe(REDACTION_TEXT.last_error);
    expect(ln[0].reservation).toBe(REDACTION_TEXT.reservation);
    const on = (await bm(ts, p.owner, 'GET', '/v1/nodes/detail')).body.nodes;
    expect(on.map((n: any) => n.name).sort()).toEqual(['n1', 'n2']);
    expect(on[0].driver_info).toEqual({});
    expect((await bm(ts, p.other, 'GET', '/v1/nodes/detail')).body).toEqual({ nodes: [] });
    expectError(await bm(ts, p.anonymous, 'GET', '/v1/nodes/detail'), 401);
    expectError(await bm(ts, p.admin, 'GET', '/v1/nodes/detail?fields=uuid'), 400, /Unexpected/);
  });
});

describe('GET /v1/nodes/{ident}', () => {
  freshServer();

  it('by uuid and name for admin, owner and lessee; 404 for another project; 401 anonymous', async () => {
    for (const who of [p.admin, p.owner, p.lessee]) {
      for (const ident of [n1.uuid, 'n1']) {
        const r = await bm(ts, who, 'GET', `/v1/nodes/${ident}`);
        expect(r.status, `${who.name} ${ident}`).toBe(200);
        expect(r.body.uuid).toBe(n1.uuid);
      }
    }
    expectError(await bm(ts, p.other, 'GET', `/v1/nodes/${n1.uuid}`), 404, /could not be found/);
    expectError(await bm(ts, p.other, 'GET', '/v1/nodes/n1'), 404);
    expectError(await bm(ts, p.lessee, 'GET', '/v1/nodes/n2'), 404);
    expectError(await bm(ts, p.anonymous, 'GET', '/v1/nodes/n1'), 401);
    expectError(await bm(ts, p.admin, 'GET', '/v1/nodes/no-such-node'), 404);
    expectError(await bm(ts, p.admin, 'GET', '/v1/nodes/bad%20name'), 400);
  });

  it('shows the full Ironic node with links', async () => {
    const r = await bm(ts, p.owner, 'GET', '/v1/nodes/n1');
    const n = r.body;
    expect(n.provision_state).toBe('enroll');
    expect(n.owner).toBe(p.owner.projectId);
    expect(n.lessee).toBe(p.lessee.projectId);
    expect(n.properties).toEqual({ cpus: 8 });
    expect(n.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?\+00:00$/);
    expect(n.updated_at).toBeNull();
    expect(n.links[0]).toEqual({ href: `${ts.url}/baremetal/v1/nodes/${n1.uuid}`, rel: 'self' });
    expect(n.links[1]).toEqual({ href: `${ts.url}/baremetal/nodes/${n1.uuid}`, rel: 'bookmark' });
    expect(n.states[0].href).toMatch(/\/states$/);
    const f = await bm(ts, p.owner, 'GET', '/v1/nodes/n1?fields=name,maintenance');
    expect(f.body).toEqual({ name: 'n1', maintenance: false, links: expect.any(Array) });
  });

  it('accepts a .json suffix and paths without /v1', async () => {
    expect((await bm(ts, p.admin, 'GET', '/v1/nodes/n1.json')).body.uuid).toBe(n1.uuid);
    expect((await bm(ts, p.admin, 'GET', `/v1/nodes/${n1.uuid}.json`)).body.uuid).toBe(n1.uuid);
    expect((await bm(ts, p.admin, 'GET', '/nodes/n1')).body.uuid).toBe(n1.uuid);
    expect(names((await bm(ts, p.admin, 'GET', '/v1/nodes.json')).body)).toHaveLength(3);
  });
});

describe('POST /v1/nodes', () => {
  freshServer();

  it('admin creates (201, Location, enroll, defaults); others are refused and nothing is written', async () => {
    const before = await countRows(ts, 'nodes');
    for (const [who, status] of [
      [p.owner, 403],
      [p.lessee, 403],
      [p.other, 403],
      [p.anonymous, 401],
    ] as const) {
      expectError(await bm(ts, who, 'POST', '/v1/nodes', { driver: 'fake-hardware', name: `x-${who.name}` }), status);
    }
    expect(await countRows(ts, 'nodes')).toBe(before);
    const r = await bm(ts, p.admin, 'POST', '/v1/nodes', {
      driver: 'fake-hardware',
      name: 'created',
      uuid: '6ED0F1B0-4C4A-4A11-9C0A-000000000001',
    });
    expect(r.status).toBe(201);
    expect(r.headers.get('location')).toBe(`${ts.url}/baremetal/v1/nodes/6ed0f1b0-4c4a-4a11-9c0a-000000000001`);
    expect(r.body).toMatchObject({
      uuid: '6ed0f1b0-4c4a-4a11-9c0a-000000000001',
      provision_state: 'enroll',
      power_state: null,
      maintenance: false,
      conductor_group: '',
      boot_interface: 'fake',
    });
    expect(await countRows(ts, 'nodes')).toBe(before + 1);
  });

  it('refuses duplicates with 409', async () => {
    expectError(await bm(ts, p.admin, 'POST', '/v1/nodes', { driver: 'fake-hardware', name: 'n1' }), 409, /name n1/);
    expectError(await bm(ts, p.admin, 'POST', '/v1/nodes', { driver: 'fake-hardware', uuid: n1.uuid }), 409, /UUID/);
  });

  it('refuses unknown drivers, interfaces and bad values with 400', async () => {
    const before = await countRows(ts, 'nodes');
    expectError(await bm(ts, p.admin, 'POST', '/v1/nodes', { driver: 'ipmi-nope' }), 400, /hardware type/);
    expectError(await bm(ts, p.admin, 'POST', '/v1/nodes', { driver: 'fake-hardware', power_interface: 'redfish' }), 400, /not enabled/);
    expectError(await bm(ts, p.admin, 'POST', '/v1/nodes', { driver: 'fake-hardware', name: 'detail' }), 400, /reserved/);
    expectError(await bm(ts, p.admin, 'POST', '/v1/nodes', { driver: 'fake-hardware', uuid: 'not-a-uuid' }), 400, /UUID/);
    expectError(await bm(ts, p.admin, 'POST', '/v1/nodes', { driver: 'fake-hardware', chassis_uuid: n1.uuid }), 400, /Chassis/);
    expectError(await bm(ts, p.admin, 'POST', '/v1/nodes', { driver: 'fake-hardware', conductor_group: 'a b' }), 400);
    expect(await countRows(ts, 'nodes')).toBe(before);
  });

  it('refuses a driver and conductor group no live conductor serves (400 NoValidHost, as Ironic)', async () => {
    const before = await countRows(ts, 'nodes');
    const r = await bm(ts, p.admin, 'POST', '/v1/nodes', { driver: 'fake-hardware', name: 'nowhere', conductor_group: 'Nobody' });
    expectError(r, 400, /No conductor service registered which supports driver fake-hardware for conductor group "nobody"/);
    // The group's conductor serves fake-hardware only.
    expectError(await bm(ts, p.admin, 'POST', '/v1/nodes', { driver: 'ipmi', conductor_group: 'group-a' }), 400, /driver ipmi/);
    // Authorisation comes first: the others learn nothing about conductors.
    for (const [who, status] of [
      [p.owner, 403],
      [p.lessee, 403],
      [p.other, 403],
      [p.anonymous, 401],
    ] as const) {
      expectError(await bm(ts, who, 'POST', '/v1/nodes', { driver: 'fake-hardware', conductor_group: 'nobody' }), status);
    }
    expect(await countRows(ts, 'nodes')).toBe(before);
    expect((await bm(ts, p.admin, 'POST', '/v1/nodes', { driver: 'fake-hardware', conductor_group: 'GROUP-A' })).status).toBe(201);
  });
});

describe('PATCH /v1/nodes/{ident}', () => {
  freshServer();

  it('admin may patch anything patchable', async () => {
    const r = await bm(ts, p.admin, 'PATCH', '/v1/nodes/n2', [
      { op: 'replace', path: '/description', value: 'patched' },
      { op: 'add', path: '/properties/memory_mb', value: 4096 },
      { op: 'replace', path: '/conductor_group', value: 'Group-B' },
    ]);
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({ description: 'patched', properties: { memory_mb: 4096 }, conductor_group: 'group-b' });
    expect(r.body.updated_at).not.toBeNull();
    // A group nobody serves is refused and nothing changes.
    const moved = await bm(ts, p.admin, 'PATCH', '/v1/nodes/n2', [
      { op: 'replace', path: '/conductor_group', value: 'nobody' },
      { op: 'replace', path: '/description', value: 'not written' },
    ]);
    expectError(moved, 400, /NoValidHost|No valid host/);
    expect((await bm(ts, p.admin, 'GET', '/v1/nodes/n2')).body).toMatchObject({ conductor_group: 'group-b', description: 'patched' });
  });

  it('owner may set properties but not the owner; lessee may set instance_info and extra only', async () => {
    const o = await bm(ts, p.owner, 'PATCH', '/v1/nodes/n1', [{ op: 'add', path: '/properties/cpus', value: 16 }]);
    expect(o.status, o.text).toBe(200);
    expect(o.body.properties.cpus).toBe(16);
    expectError(
      await bm(ts, p.owner, 'PATCH', '/v1/nodes/n1', [{ op: 'replace', path: '/owner', value: p.other.projectId }]),
      403,
      /update:owner/,
    );
    expectError(
      await bm(ts, p.lessee, 'PATCH', '/v1/nodes/n1', [{ op: 'add', path: '/properties/cpus', value: 1 }]),
      403,
      /update:properties/,
    );
    expectError(await bm(ts, p.lessee, 'PATCH', '/v1/nodes/n1', [{ op: 'replace', path: '/description', value: 'mine' }]), 403);
    const li = await bm(ts, p.lessee, 'PATCH', '/v1/nodes/n1', [
      { op: 'add', path: '/instance_info/image_source', value: 'http://img/x.qcow2' },
      { op: 'add', path: '/extra/tag', value: 'lessee' },
    ]);
    expect(li.status, li.text).toBe(200);
    expect(li.body.instance_info).toEqual({ image_source: 'http://img/x.qcow2' });
    expect(li.body.extra).toEqual({ tag: 'lessee' });
    expect(li.body.driver_info).toEqual({ content: REDACTION_TEXT.driver_info });
  });

  it('another project gets 404, anonymous 401, and nothing changes', async () => {
    const before = (await bm(ts, p.admin, 'GET', '/v1/nodes/n1')).body;
    expectError(await bm(ts, p.other, 'PATCH', '/v1/nodes/n1', [{ op: 'add', path: '/extra/x', value: 1 }]), 404);
    expectError(await bm(ts, p.anonymous, 'PATCH', '/v1/nodes/n1', [{ op: 'add', path: '/extra/x', value: 1 }]), 401);
    const after = (await bm(ts, p.admin, 'GET', '/v1/nodes/n1')).body;
    expect(after.extra).toEqual(before.extra);
    expect(after.updated_at).toBe(before.updated_at);
  });

  it('applies Ironic patch rules', async () => {
    expectError(await bm(ts, p.admin, 'PATCH', '/v1/nodes/n1', [{ op: 'add', path: '/traits', value: ['CUSTOM_A'] }]), 400, /traits API/);
    expectError(await bm(ts, p.admin, 'PATCH', '/v1/nodes/n1', [{ op: 'add', path: '/foo', value: 1 }]), 400, /Cannot patch \/foo/);
    expectError(await bm(ts, p.admin, 'PATCH', '/v1/nodes/n1', [{ op: 'replace', path: '/uuid', value: n2.uuid }]), 400, /Cannot patch/);
    expectError(await bm(ts, p.admin, 'PATCH', '/v1/nodes/n1', [{ op: 'remove', path: '/driver' }]), 400, /driver/);
    expectError(
      await bm(ts, p.admin, 'PATCH', '/v1/nodes/n1', [{ op: 'remove', path: '/extra/nope' }]),
      400,
      /PatchError|Couldn't apply|non-existent/,
    );
    expectError(await bm(ts, p.admin, 'PATCH', '/v1/nodes/n1', [{ op: 'replace', path: '/name', value: 'n2' }]), 409, /name n2/);
    expectError(await bm(ts, p.admin, 'PATCH', '/v1/nodes/n1', [{ op: 'replace', path: '/maintenance', value: 'perhaps' }]), 400);
    expectError(
      await bm(ts, p.admin, 'PATCH', '/v1/nodes/n1?reset_interfaces=true', [{ op: 'add', path: '/extra/a', value: 1 }]),
      400,
      /reset_interfaces/,
    );
    expectError(await bm(ts, p.admin, 'PATCH', '/v1/nodes/n1', [{ op: 'replace', path: '/protected', value: true }]), 409, /protected/);
    const m = await bm(ts, p.admin, 'PATCH', '/v1/nodes/n3', [{ op: 'replace', path: '/maintenance', value: 'false' }]);
    expect(m.body).toMatchObject({ maintenance: false, maintenance_reason: null });
    const iu = await bm(ts, p.admin, 'PATCH', '/v1/nodes/n3', [
      { op: 'add', path: '/instance_uuid', value: '11111111-2222-3333-4444-555555555555' },
    ]);
    expect(iu.status).toBe(200);
    expectError(
      await bm(ts, p.admin, 'PATCH', '/v1/nodes/n3', [
        { op: 'replace', path: '/instance_uuid', value: '11111111-2222-3333-4444-555555555556' },
      ]),
      409,
      /associated/,
    );
    expect((await bm(ts, p.admin, 'PATCH', '/v1/nodes/n3', [{ op: 'remove', path: '/instance_uuid' }])).body.instance_uuid).toBeNull();
  });

  it('refuses patches while a transition is in progress (409)', async () => {
    const n = await createNode(ts, p, { name: 'busy' });
    // verifying is one of Ironic's update-allowed states: patches pass there.
    expect((await bm(ts, p.admin, 'PUT', '/v1/nodes/busy/states/provision', { target: 'manage' })).status).toBe(202);
    expect((await bm(ts, p.admin, 'PATCH', '/v1/nodes/busy', [{ op: 'add', path: '/extra/a', value: 1 }])).status).toBe(200);
    await forceNode(ts, n.uuid, { provision_state: 'cleaning', target_provision_state: 'available' });
    expectError(await bm(ts, p.admin, 'PATCH', '/v1/nodes/busy', [{ op: 'add', path: '/extra/b', value: 1 }]), 409, /transition/);
    // ... except removing instance_uuid from a node in maintenance.
    await forceNode(ts, n.uuid, { maintenance: true, instance_uuid: '21111111-2222-3333-4444-555555555555' });
    expect((await bm(ts, p.admin, 'PATCH', '/v1/nodes/busy', [{ op: 'remove', path: '/instance_uuid' }])).body.instance_uuid).toBeNull();
  });
});

describe('DELETE /v1/nodes/{ident}', () => {
  freshServer();

  it('only admin deletes; others 403/404/401; ports go with the node', async () => {
    const n = await createNode(ts, p, { name: 'doomed' });
    await createPort(ts, p, n.uuid, '52:54:00:00:00:99');
    expectError(await bm(ts, p.owner, 'DELETE', '/v1/nodes/doomed'), 403);
    expectError(await bm(ts, p.lessee, 'DELETE', '/v1/nodes/doomed'), 403);
    expectError(await bm(ts, p.other, 'DELETE', '/v1/nodes/doomed'), 404);
    expectError(await bm(ts, p.anonymous, 'DELETE', '/v1/nodes/doomed'), 401);
    const portsBefore = await countRows(ts, 'ports');
    // python-ironicclient sends Content-Type: application/octet-stream on bodiless DELETEs.
    const r = await bm(ts, p.admin, 'DELETE', '/v1/nodes/doomed', undefined, '1.78', { 'content-type': 'application/octet-stream' });
    expect(r.status).toBe(204);
    expect(r.text).toBe('');
    expect(r.headers.get('content-type')).toBeNull();
    expect(await countRows(ts, 'ports')).toBe(portsBefore - 1);
    expectError(await bm(ts, p.admin, 'GET', '/v1/nodes/doomed'), 404);
  });

  it('refuses nodes in states that do not allow deletion, unless in maintenance', async () => {
    await createNode(ts, p, { name: 'verifying1' });
    await bm(ts, p.admin, 'PUT', '/v1/nodes/verifying1/states/provision', { target: 'manage' });
    expectError(await bm(ts, p.admin, 'DELETE', '/v1/nodes/verifying1'), 409, /provision state "verifying"/);
    expect((await bm(ts, p.admin, 'PUT', '/v1/nodes/verifying1/maintenance', { reason: 'stuck' })).status).toBe(202);
    expect((await bm(ts, p.admin, 'DELETE', '/v1/nodes/verifying1')).status).toBe(204);
  });

  it('refuses protected nodes (403) and nodes with an instance outside maintenance (409)', async () => {
    const n = await createNode(ts, p, { name: 'guarded' });
    await forceNode(ts, n.uuid, { provision_state: 'active' });
    expect(
      (
        await bm(ts, p.admin, 'PATCH', '/v1/nodes/guarded', [
          { op: 'replace', path: '/protected', value: true },
          { op: 'replace', path: '/protected_reason', value: 'prod' },
        ])
      ).status,
    ).toBe(200);
    await bm(ts, p.admin, 'PUT', '/v1/nodes/guarded/maintenance');
    expectError(await bm(ts, p.admin, 'DELETE', '/v1/nodes/guarded'), 403, /protected/);
    await bm(ts, p.admin, 'PATCH', '/v1/nodes/guarded', [{ op: 'replace', path: '/protected', value: false }]);
    await bm(ts, p.admin, 'DELETE', '/v1/nodes/guarded/maintenance');
    await forceNode(ts, n.uuid, { provision_state: 'manageable', instance_uuid: '31111111-2222-3333-4444-555555555555' });
    expectError(await bm(ts, p.admin, 'DELETE', '/v1/nodes/guarded'), 409, /associated/);
    await bm(ts, p.admin, 'PUT', '/v1/nodes/guarded/maintenance');
    expect((await bm(ts, p.admin, 'DELETE', '/v1/nodes/guarded')).status).toBe(204);
  });
});
