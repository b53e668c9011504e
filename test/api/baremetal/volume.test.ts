/**
 * Volume connector and target endpoints (https://docs.openstack.org/api-ref/baremetal/#volume-volume;
 * Ironic 21.4 `VolumeConnectorsController`, `VolumeTargetsController`) for every persona:
 * visibility through the node (owner and lessee see and change them, another project gets 404,
 * anonymous 401), the 1.32 gate, uniqueness (type + connector_id; node + boot_index), changes
 * only while the node is powered off, target properties masked or redacted, bad input.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPersonas, startTestServer, type Personas, type TestServer } from '../../helpers/harness.ts';
import { bm, createNode, expectError, forceNode } from './helpers.ts';

let ts: TestServer;
let p: Personas;
let n1: any; // owner o1, lessee l1; powered off
let n2: any; // owner o2 (p.other); powered off
let n3: any; // owner o1; powered on

beforeAll(async () => {
  ts = await startTestServer({ env: { ESI_CONDUCTOR_WORKERS: '0' } });
  p = await createPersonas(ts);
  n1 = await createNode(ts, p, { name: 'vn1' });
  n2 = await createNode(ts, p, { name: 'vn2', owner: p.other.projectId, lessee: null });
  n3 = await createNode(ts, p, { name: 'vn3', lessee: null });
  await forceNode(ts, n1.uuid, { power_state: 'power off' });
  await forceNode(ts, n2.uuid, { power_state: 'power off' });
  await forceNode(ts, n3.uuid, { power_state: 'power on' });
});
afterAll(async () => ts?.close());

let seq = 0;
const iqn = (): string => `iqn.2024-01.org.example:vol-${++seq}`;

async function connector(body: Record<string, unknown>, who = p.admin): Promise<any> {
  const res = await bm(ts, who, 'POST', '/v1/volume/connectors', { type: 'iqn', connector_id: iqn(), ...body });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

async function target(body: Record<string, unknown>, who = p.admin): Promise<any> {
  const res = await bm(ts, who, 'POST', '/v1/volume/targets', { volume_type: 'iscsi', volume_id: `v-${++seq}`, ...body });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

const rows = async (table: 'volume_connectors' | 'volume_targets'): Promise<number> =>
  Number(
    (
      await ts.server.services.store.db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

describe('volume root and gates', () => {
  it('everything is 404 before 1.32; /v1/volume links its collections; a node’s volume document follows the node', async () => {
    for (const path of [
      '/v1/volume',
      '/v1/volume/connectors',
      '/v1/volume/targets',
      `/v1/nodes/${n1.uuid}/volume`,
      `/v1/nodes/${n1.uuid}/volume/targets`,
    ]) {
      expectError(await bm(ts, p.admin, 'GET', path, undefined, '1.31'), 404);
    }
    expectError(
      await bm(ts, p.admin, 'POST', '/v1/volume/connectors', { node_uuid: n1.uuid, type: 'iqn', connector_id: iqn() }, '1.31'),
      404,
    );
    const root = (await bm(ts, p.admin, 'GET', '/v1/volume', undefined, '1.32')).body;
    expect(Object.keys(root).sort()).toEqual(['connectors', 'links', 'targets']);
    expect(root.connectors[0]).toEqual({ href: expect.stringMatching(/\/baremetal\/v1\/volume\/connectors$/), rel: 'self' });
    expect(root.links[1].href).toMatch(/\/baremetal\/volume\/$/);
    expectError(await bm(ts, p.owner, 'GET', '/v1/volume'), 403);
    const mine = (await bm(ts, p.lessee, 'GET', '/v1/nodes/vn1/volume')).body;
    expect(mine.targets[0].href).toMatch(/\/baremetal\/v1\/nodes\/vn1\/volume\/targets$/);
    expectError(await bm(ts, p.other, 'GET', '/v1/nodes/vn1/volume'), 404);
    expectError(await bm(ts, p.anonymous, 'GET', '/v1/volume'), 401);
  });
});

describe('volume connectors', () => {
  it('admin, owner and lessee create on the node (201, Location); another project gets 400; anonymous 401', async () => {
    const res = await bm(ts, p.admin, 'POST', '/v1/volume/connectors', {
      node_uuid: n1.uuid,
      type: 'iqn',
      connector_id: iqn(),
      extra: { a: 1 },
    });
    expect(res.status, res.text).toBe(201);
    expect(res.headers.get('location')).toMatch(new RegExp(`/baremetal/v1/volume/connectors/${res.body.uuid}$`));
    expect(Object.keys(res.body).sort()).toEqual([
      'connector_id',
      'created_at',
      'extra',
      'links',
      'node_uuid',
      'type',
      'updated_at',
      'uuid',
    ]);
    expect(res.body).toMatchObject({ node_uuid: n1.uuid, type: 'iqn', extra: { a: 1 }, updated_at: null });
    await connector({ node_uuid: n1.uuid }, p.owner);
    await connector({ node_uuid: n1.uuid, type: 'ip', connector_id: '10.0.0.7' }, p.lessee);
    // Creating does not need the node powered off (as Ironic).
    await connector({ node_uuid: n3.uuid }, p.owner);
    const before = await rows('volume_connectors');
    expectError(
      await bm(ts, p.other, 'POST', '/v1/volume/connectors', { node_uuid: n1.uuid, type: 'iqn', connector_id: iqn() }),
      400,
      /Invalid input for field\/attribute node_uuid/,
    );
    expectError(await bm(ts, p.lessee, 'POST', '/v1/volume/connectors', { node_uuid: n3.uuid, type: 'iqn', connector_id: iqn() }), 400);
    expectError(await bm(ts, p.anonymous, 'POST', '/v1/volume/connectors', { node_uuid: n1.uuid, type: 'iqn', connector_id: iqn() }), 401);
    expect(await rows('volume_connectors')).toBe(before);
  });

  it("refuses Ironic's bad input (400/409) and writes nothing", async () => {
    const c = await connector({ node_uuid: n1.uuid });
    const before = await rows('volume_connectors');
    const post = (body: Record<string, unknown>) => bm(ts, p.admin, 'POST', '/v1/volume/connectors', body);
    expectError(await post({ node_uuid: n1.uuid, type: 'iqn' }), 400, /connector_id/);
    expectError(await post({ node_uuid: n1.uuid, type: 'iqn', connector_id: 'x', colour: 1 }), 400, /colour/);
    expectError(await post({ node_uuid: 'nope', type: 'iqn', connector_id: 'x' }), 400, /UUID/);
    expectError(await post({ node_uuid: n1.uuid, type: 'iqn', connector_id: 'x', uuid: 'nope' }), 400, /UUID/);
    expectError(
      await post({ node_uuid: n2.uuid, type: 'iqn', connector_id: c.connector_id }),
      409,
      /type iqn and connector ID .* already exists/,
    );
    expectError(await post({ node_uuid: n1.uuid, type: 'ip', connector_id: 'x', uuid: c.uuid }), 409, /already exists/);
    expectError(await bm(ts, p.admin, 'GET', '/v1/volume/connectors/not-a-uuid'), 400, /Expected UUID for connector_uuid/);
    expectError(await bm(ts, p.admin, 'GET', '/v1/volume/connectors/detail'), 400);
    const patch = (ops: unknown[]) => bm(ts, p.admin, 'PATCH', `/v1/volume/connectors/${c.uuid}`, ops);
    expectError(await patch([{ op: 'replace', path: '/uuid', value: 'x' }]), 400, /Cannot patch \/uuid/);
    expectError(await patch([{ op: 'replace', path: '/created_at', value: 'x' }]), 400, /Cannot patch/);
    expectError(await patch([{ op: 'replace', path: '/node_uuid', value: 'vn2' }]), 400, /Expected a UUID for node_uuid/);
    expectError(await patch([{ op: 'remove', path: '/type' }]), 400, /type/);
    expectError(await patch([{ op: 'replace', path: '/extra', value: 'x' }]), 400, /extra/);
    expect(await rows('volume_connectors')).toBe(before);
    expect((await bm(ts, p.admin, 'GET', `/v1/volume/connectors/${c.uuid}`)).body.updated_at).toBeNull();
  });

  it('owner and lessee see, change and delete their node’s connectors; another project gets 404', async () => {
    const c = await connector({ node_uuid: n1.uuid });
    for (const who of [p.admin, p.owner, p.lessee]) expect((await bm(ts, who, 'GET', `/v1/volume/connectors/${c.uuid}`)).status).toBe(200);
    expectError(await bm(ts, p.other, 'GET', `/v1/volume/connectors/${c.uuid}`), 404, /Volume connector .* could not be found/);
    expectError(await bm(ts, p.anonymous, 'GET', `/v1/volume/connectors/${c.uuid}`), 401);
    const id = iqn();
    const patched = await bm(ts, p.lessee, 'PATCH', `/v1/volume/connectors/${c.uuid}`, [
      { op: 'replace', path: '/connector_id', value: id },
    ]);
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.connector_id).toBe(id);
    expect(patched.body.updated_at).not.toBeNull();
    expectError(await bm(ts, p.other, 'PATCH', `/v1/volume/connectors/${c.uuid}`, [{ op: 'add', path: '/extra/x', value: 1 }]), 404);
    expectError(await bm(ts, p.other, 'DELETE', `/v1/volume/connectors/${c.uuid}`), 404);
    // Moving to a node the caller may not see is a 400 (its node_uuid names nothing it knows).
    expectError(
      await bm(ts, p.owner, 'PATCH', `/v1/volume/connectors/${c.uuid}`, [{ op: 'replace', path: '/node_uuid', value: n2.uuid }]),
      400,
    );
    expect((await bm(ts, p.lessee, 'DELETE', `/v1/volume/connectors/${c.uuid}`)).status).toBe(204);
    expectError(await bm(ts, p.admin, 'GET', `/v1/volume/connectors/${c.uuid}`), 404);
  });

  it('updates and deletes need the node powered off (400 InvalidStateRequested)', async () => {
    const c = await connector({ node_uuid: n3.uuid });
    const before = (await bm(ts, p.admin, 'GET', `/v1/volume/connectors/${c.uuid}`)).body;
    expectError(
      await bm(ts, p.owner, 'PATCH', `/v1/volume/connectors/${c.uuid}`, [{ op: 'add', path: '/extra/x', value: 1 }]),
      400,
      new RegExp(`"volume connector update" can not be performed on node "${n3.uuid}" while it is in state "power on"`),
    );
    expectError(await bm(ts, p.owner, 'DELETE', `/v1/volume/connectors/${c.uuid}`), 400, /volume connector deletion/);
    // Moving a connector of a powered-off node onto a powered-on node is refused too.
    const off = await connector({ node_uuid: n1.uuid });
    expectError(
      await bm(ts, p.owner, 'PATCH', `/v1/volume/connectors/${off.uuid}`, [{ op: 'replace', path: '/node_uuid', value: n3.uuid }]),
      400,
      /power on/,
    );
    expect((await bm(ts, p.admin, 'GET', `/v1/volume/connectors/${c.uuid}`)).body).toEqual(before);
    await forceNode(ts, n3.uuid, { power_state: 'power off' });
    try {
      expect((await bm(ts, p.owner, 'PATCH', `/v1/volume/connectors/${c.uuid}`, [{ op: 'add', path: '/extra/x', value: 1 }])).status).toBe(
        200,
      );
      expect((await bm(ts, p.owner, 'DELETE', `/v1/volume/connectors/${c.uuid}`)).status).toBe(204);
    } finally {
      await forceNode(ts, n3.uuid, { power_state: 'power on' });
    }
  });

  it('lists: filtered to visible nodes, node filter and sub-collection, detail from 1.32, fields, sorting, pages', async () => {
    const mine = await connector({ node_uuid: n1.uuid });
    const theirs = await connector({ node_uuid: n2.uuid }, p.other);
    const uuids = async (who: typeof p.admin, path: string): Promise<string[]> => {
      const res = await bm(ts, who, 'GET', path);
      expect(res.status, res.text).toBe(200);
      return res.body.connectors.map((x: any) => x.uuid);
    };
    expect(await uuids(p.admin, '/v1/volume/connectors')).toEqual(expect.arrayContaining([mine.uuid, theirs.uuid]));
    for (const who of [p.owner, p.lessee]) {
      const seen = await uuids(who, '/v1/volume/connectors');
      expect(seen).toContain(mine.uuid);
      expect(seen).not.toContain(theirs.uuid);
    }
    expect(await uuids(p.other, '/v1/volume/connectors')).toEqual([theirs.uuid]);
    expect(await uuids(p.admin, '/v1/volume/connectors?node=vn2')).toEqual([theirs.uuid]);
    expect(await uuids(p.other, `/v1/nodes/${n2.uuid}/volume/connectors`)).toEqual([theirs.uuid]);
    expectError(await bm(ts, p.other, 'GET', '/v1/nodes/vn1/volume/connectors'), 404);
    expectError(await bm(ts, p.other, 'GET', '/v1/volume/connectors?node=vn1'), 404);
    expectError(await bm(ts, p.anonymous, 'GET', '/v1/volume/connectors'), 401);

    const list = (await bm(ts, p.admin, 'GET', '/v1/volume/connectors')).body.connectors[0];
    expect(Object.keys(list).sort()).toEqual(['connector_id', 'links', 'node_uuid', 'type', 'uuid']);
    const detail = (await bm(ts, p.admin, 'GET', '/v1/volume/connectors?detail=True', undefined, '1.32')).body.connectors[0];
    expect(Object.keys(detail).sort()).toEqual(['connector_id', 'created_at', 'extra', 'links', 'node_uuid', 'type', 'updated_at', 'uuid']);
    expectError(
      await bm(ts, p.admin, 'GET', '/v1/volume/connectors?detail=True&fields=uuid'),
      400,
      /Can't fetch a subset of fields with 'detail' set/,
    );
    expectError(await bm(ts, p.admin, 'GET', '/v1/volume/connectors?fields=uuid,bogus'), 400, /"bogus" are not valid/);
    expectError(await bm(ts, p.admin, 'GET', '/v1/volume/connectors?sort_key=extra'), 400, /invalid field for sorting/);
    expect(Object.keys((await bm(ts, p.admin, 'GET', `/v1/volume/connectors/${mine.uuid}?fields=type`)).body).sort()).toEqual([
      'links',
      'type',
    ]);
    const ids = (await bm(ts, p.admin, 'GET', '/v1/volume/connectors?sort_key=connector_id&sort_dir=desc')).body.connectors.map(
      (x: any) => x.connector_id,
    );
    expect(ids).toEqual([...ids].sort().reverse());
    const page = (await bm(ts, p.admin, 'GET', '/v1/volume/connectors?limit=1')).body;
    expect(page.connectors).toHaveLength(1);
    expect(page.next).toMatch(/\/baremetal\/v1\/volume\/connectors\?limit=1&marker=/);
    const page2 = (await bm(ts, p.admin, 'GET', page.next.replace(/^.*\/baremetal/, ''))).body;
    expect(page2.connectors[0].uuid).not.toBe(page.connectors[0].uuid);
    expectError(await bm(ts, p.owner, 'GET', `/v1/volume/connectors?marker=${theirs.uuid}`), 404);
    // Writes and single objects below a node are not permitted (Ironic's OperationNotPermitted).
    // (after Ironic's own checks: the body's schema, the object's lookup).
    expectError(
      await bm(ts, p.admin, 'POST', `/v1/nodes/${n1.uuid}/volume/connectors`, { type: 'iqn', connector_id: iqn() }),
      400,
      /node_uuid/,
    );
    expectError(
      await bm(ts, p.admin, 'POST', `/v1/nodes/${n1.uuid}/volume/connectors`, { node_uuid: n1.uuid, type: 'iqn', connector_id: iqn() }),
      403,
      /Operation not permitted/,
    );
    expectError(await bm(ts, p.other, 'GET', `/v1/nodes/${n2.uuid}/volume/connectors/${mine.uuid}`), 404);
    expectError(await bm(ts, p.admin, 'GET', `/v1/nodes/${n1.uuid}/volume/connectors/${mine.uuid}`), 403);
  });
});

describe('volume targets', () => {
  it('create, uniqueness of the boot index per node, integer boot_index, and nothing written on error', async () => {
    const t = await target({ node_uuid: n1.uuid, boot_index: 0 }, p.lessee);
    expect(Object.keys(t).sort()).toEqual(
      ['boot_index', 'created_at', 'extra', 'links', 'node_uuid', 'properties', 'updated_at', 'uuid', 'volume_id', 'volume_type'].sort(),
    );
    await target({ node_uuid: n2.uuid, boot_index: 0 }, p.other);
    const before = await rows('volume_targets');
    const post = (body: Record<string, unknown>) =>
      bm(ts, p.admin, 'POST', '/v1/volume/targets', { volume_type: 'iscsi', volume_id: 'x', ...body });
    expectError(await post({ node_uuid: n1.uuid, boot_index: 0 }), 409, /boot index '0' for the same node already exists/);
    expectError(await post({ node_uuid: n1.uuid, boot_index: '2' }), 400, /boot_index/);
    expectError(await post({ node_uuid: n1.uuid, boot_index: 1.5 }), 400, /boot_index/);
    expectError(await post({ node_uuid: n1.uuid }), 400, /boot_index/);
    expectError(await post({ node_uuid: n1.uuid, boot_index: 3, properties: [] }), 400, /properties/);
    expectError(
      await bm(ts, p.other, 'POST', '/v1/volume/targets', { node_uuid: n1.uuid, volume_type: 'iscsi', volume_id: 'x', boot_index: 5 }),
      400,
    );
    expect(await rows('volume_targets')).toBe(before);
    const second = await target({ node_uuid: n1.uuid, boot_index: 1 });
    expectError(
      await bm(ts, p.admin, 'PATCH', `/v1/volume/targets/${second.uuid}`, [{ op: 'replace', path: '/boot_index', value: 0 }]),
      409,
    );
    expectError(
      await bm(ts, p.admin, 'PATCH', `/v1/volume/targets/${second.uuid}`, [{ op: 'replace', path: '/properties', value: 'x' }]),
      400,
    );
    expect((await bm(ts, p.admin, 'GET', `/v1/volume/targets/${second.uuid}`)).body.boot_index).toBe(1);
  });

  it('properties: secrets masked for everyone; redacted for callers without view_target_properties (owner, lessee)', async () => {
    const props = { target_iqn: 'iqn.2024-01.org.example:t1', auth_password: 's3cret', auth_username: 'u' };
    const t = await target({ node_uuid: n1.uuid, boot_index: 7, properties: props }, p.owner);
    expect(t.properties).toEqual({ ...props, auth_password: '******' });
    const admin = (await bm(ts, p.admin, 'GET', `/v1/volume/targets/${t.uuid}`)).body;
    expect(admin.properties).toEqual({ ...props, auth_password: '******' });
    const notice = {
      redacted_contents: '** Value redacted: Requires permission baremetal:volume:view_target_properties access. Permission denied. **',
    };
    for (const who of [p.owner, p.lessee]) {
      expect((await bm(ts, who, 'GET', `/v1/volume/targets/${t.uuid}`)).body.properties).toEqual(notice);
      const listed = (await bm(ts, who, 'GET', '/v1/volume/targets?detail=True')).body.targets.find((x: any) => x.uuid === t.uuid);
      expect(listed.properties).toEqual(notice);
    }
    const patched = await bm(ts, p.lessee, 'PATCH', `/v1/volume/targets/${t.uuid}`, [
      { op: 'replace', path: '/volume_id', value: 'v-renamed' },
    ]);
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.properties).toEqual(notice);
    expect(patched.body.volume_id).toBe('v-renamed');
    // The stored properties are untouched by redaction.
    const row = await ts.server.services.store.db
      .selectFrom('volume_targets')
      .select('properties')
      .where('uuid', '=', t.uuid)
      .executeTakeFirstOrThrow();
    expect(JSON.parse(row.properties)).toEqual(props);
  });

  it('lists, node sub-collection, visibility and power rules; targets go with their node', async () => {
    const node = await createNode(ts, p, { name: 'vn-gone' });
    await forceNode(ts, node.uuid, { power_state: 'power off' });
    const t = await target({ node_uuid: node.uuid, boot_index: 0 });
    const c = await connector({ node_uuid: node.uuid });
    const list = (await bm(ts, p.owner, 'GET', `/v1/nodes/vn-gone/volume/targets`)).body.targets;
    expect(list.map((x: any) => x.uuid)).toEqual([t.uuid]);
    expect(Object.keys(list[0]).sort()).toEqual(['boot_index', 'links', 'node_uuid', 'uuid', 'volume_id', 'volume_type']);
    expect((await bm(ts, p.other, 'GET', '/v1/volume/targets')).body.targets.map((x: any) => x.node_uuid)).not.toContain(node.uuid);
    expectError(await bm(ts, p.other, 'GET', `/v1/volume/targets/${t.uuid}`), 404, /Volume target .* could not be found/);
    expectError(await bm(ts, p.other, 'DELETE', `/v1/volume/targets/${t.uuid}`), 404);
    const onNode = await target({ node_uuid: n3.uuid, boot_index: 0 });
    expectError(await bm(ts, p.owner, 'DELETE', `/v1/volume/targets/${onNode.uuid}`), 400, /volume target deletion/);
    expect((await bm(ts, p.admin, 'DELETE', `/v1/nodes/${node.uuid}`)).status).toBe(204);
    expectError(await bm(ts, p.admin, 'GET', `/v1/volume/targets/${t.uuid}`), 404);
    expectError(await bm(ts, p.admin, 'GET', `/v1/volume/connectors/${c.uuid}`), 404);
  });
});
