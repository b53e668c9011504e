/**
 * Port endpoints for every persona (https://docs.openstack.org/api-ref/baremetal/#ports-ports): visibility through the port's
 * node, MAC validation and normalisation, duplicate MAC → 409, local_link_connection rules,
 * read-only internal_info, filters.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPersonas, startTestServer, type Personas, type TestServer } from '../../helpers/harness.ts';
import { bm, countRows, createNode, createPort, expectError, forceNode } from './helpers.ts';

let ts: TestServer;
let p: Personas;
let n1: any; // owner o1, lessee l1
let n2: any; // no owner
let port1: any;
let port2: any;

/** A fresh server with nodes pn1, pn2 and a port on each for the tests of one describe block. */
function freshServer(): void {
  beforeAll(async () => {
    // These tests check the intent the API records; no conductor may act on it meanwhile.
    ts = await startTestServer({ env: { ESI_CONDUCTOR_WORKERS: '0' } });
    p = await createPersonas(ts);
    n1 = await createNode(ts, p, { name: 'pn1' });
    n2 = await createNode(ts, p, { name: 'pn2', owner: null, lessee: null });
    port1 = await createPort(ts, p, n1.uuid, '52:54:00:00:01:01', {
      local_link_connection: { port_id: 'Eth1/1', switch_id: '0A:00:00:00:00:01' },
      physical_network: 'physnet1',
    });
    port2 = await createPort(ts, p, n2.uuid, '52:54:00:00:02:01');
  });
  afterAll(async () => ts?.close());
}

const addresses = (body: any): string[] => body.ports.map((x: any) => x.address).sort();

describe('GET /v1/ports', () => {
  freshServer();

  it('admin sees all; owner and lessee the ports of their node; another project none; anonymous 401', async () => {
    expect(addresses((await bm(ts, p.admin, 'GET', '/v1/ports')).body)).toEqual(['52:54:00:00:01:01', '52:54:00:00:02:01']);
    expect(addresses((await bm(ts, p.owner, 'GET', '/v1/ports')).body)).toEqual(['52:54:00:00:01:01']);
    expect(addresses((await bm(ts, p.lessee, 'GET', '/v1/ports/detail')).body)).toEqual(['52:54:00:00:01:01']);
    expect((await bm(ts, p.other, 'GET', '/v1/ports')).body).toEqual({ ports: [] });
    expectError(await bm(ts, p.anonymous, 'GET', '/v1/ports'), 401);
  });

  it('filters by node, node_uuid and address (normalised)', async () => {
    expect(addresses((await bm(ts, p.admin, 'GET', '/v1/ports?node=pn2')).body)).toEqual(['52:54:00:00:02:01']);
    expect(addresses((await bm(ts, p.admin, 'GET', `/v1/ports?node_uuid=${n1.uuid}`)).body)).toEqual(['52:54:00:00:01:01']);
    expect(addresses((await bm(ts, p.admin, 'GET', '/v1/ports?address=52:54:00:00:02:01')).body)).toEqual(['52:54:00:00:02:01']);
    expect(addresses((await bm(ts, p.owner, 'GET', '/v1/ports?address=52:54:00:00:02:01')).body)).toEqual([]);
    expectError(await bm(ts, p.admin, 'GET', '/v1/ports?address=nope'), 400, /MAC/);
    expectError(await bm(ts, p.admin, 'GET', '/v1/ports?node_uuid=nope'), 400, /UUID/);
    expectError(await bm(ts, p.admin, 'GET', '/v1/ports?node=missing-node'), 404);
    expectError(await bm(ts, p.other, 'GET', '/v1/ports?node=pn1'), 404);
    const d = (await bm(ts, p.admin, 'GET', '/v1/ports?detail=true')).body.ports[0];
    expect(Object.keys(d).sort()).toEqual(
      [
        'address',
        'created_at',
        'extra',
        'internal_info',
        'is_smartnic',
        'links',
        'local_link_connection',
        'node_uuid',
        'physical_network',
        'portgroup_uuid',
        'pxe_enabled',
        'updated_at',
        'uuid',
      ].sort(),
    );
    expect(Object.keys((await bm(ts, p.admin, 'GET', '/v1/ports?fields=address,pxe_enabled')).body.ports[0]).sort()).toEqual([
      'address',
      'links',
      'pxe_enabled',
    ]);
    expectError(await bm(ts, p.admin, 'GET', '/v1/ports?fields=address,colour'), 400);
    expectError(await bm(ts, p.admin, 'GET', '/v1/ports?fields=physical_network', undefined, '1.33'), 406);
  });
});

describe('GET /v1/ports/{uuid}', () => {
  freshServer();

  it('visible through the node; 404 otherwise; 400 for a MAC', async () => {
    for (const who of [p.admin, p.owner, p.lessee]) {
      const r = await bm(ts, who, 'GET', `/v1/ports/${port1.uuid}`);
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({
        address: '52:54:00:00:01:01',
        node_uuid: n1.uuid,
        pxe_enabled: true,
        physical_network: 'physnet1',
        internal_info: {},
        local_link_connection: { port_id: 'Eth1/1', switch_id: '0a:00:00:00:00:01' },
      });
      expect(r.body.links[0].href).toBe(`${ts.url}/baremetal/v1/ports/${port1.uuid}`);
    }
    expectError(await bm(ts, p.other, 'GET', `/v1/ports/${port1.uuid}`), 404, /Port .* could not be found/);
    expectError(await bm(ts, p.owner, 'GET', `/v1/ports/${port2.uuid}`), 404);
    expectError(await bm(ts, p.anonymous, 'GET', `/v1/ports/${port1.uuid}`), 401);
    expectError(await bm(ts, p.admin, 'GET', '/v1/ports/52:54:00:00:01:01'), 400, /UUID/);
    const old = (await bm(ts, p.admin, 'GET', `/v1/ports/${port1.uuid}`, undefined, '1.18')).body;
    expect(old.local_link_connection).toBeUndefined();
    expect(old.internal_info).toEqual({});
  });
});

describe('POST /v1/ports', () => {
  freshServer();

  it('admin and owner create on the node; lessee 403; another project and unknown nodes 400; anonymous 401', async () => {
    const before = await countRows(ts, 'ports');
    const a = await bm(ts, p.owner, 'POST', '/v1/ports', {
      node_uuid: n1.uuid,
      address: 'AA:BB:CC:00:00:01',
      extra: { slot: 1 },
      pxe_enabled: 'false',
    });
    expect(a.status, a.text).toBe(201);
    expect(a.headers.get('location')).toBe(`${ts.url}/baremetal/v1/ports/${a.body.uuid}`);
    expect(a.body).toMatchObject({ address: 'aa:bb:cc:00:00:01', extra: { slot: 1 }, pxe_enabled: false, is_smartnic: false });
    expectError(await bm(ts, p.lessee, 'POST', '/v1/ports', { node_uuid: n1.uuid, address: 'aa:bb:cc:00:00:02' }), 403);
    expectError(
      await bm(ts, p.other, 'POST', '/v1/ports', { node_uuid: n1.uuid, address: 'aa:bb:cc:00:00:03' }),
      400,
      /could not be found/,
    );
    expectError(
      await bm(ts, p.owner, 'POST', '/v1/ports', { node_uuid: n2.uuid, address: 'aa:bb:cc:00:00:04' }),
      400,
      /could not be found/,
    );
    expectError(
      await bm(ts, p.admin, 'POST', '/v1/ports', { node_uuid: '0b7a0d0d-0000-4000-8000-000000000000', address: 'aa:bb:cc:00:00:05' }),
      400,
      /could not be found/,
    );
    expectError(await bm(ts, p.anonymous, 'POST', '/v1/ports', { node_uuid: n1.uuid, address: 'aa:bb:cc:00:00:06' }), 401);
    expect(await countRows(ts, 'ports')).toBe(before + 1);
  });

  it('validates: MAC, duplicates (409), local_link_connection, unknown fields, physical_network', async () => {
    const before = await countRows(ts, 'ports');
    const post = (body: Record<string, unknown>) => bm(ts, p.admin, 'POST', '/v1/ports', { node_uuid: n1.uuid, ...body });
    expectError(await post({ address: 'not-a-mac' }), 400, /MAC/);
    expectError(await post({ address: '52:54:00:00:01:01' }), 409, /already exists/);
    expectError(await post({ address: '52:54:00:00:01:01'.toUpperCase() }), 409);
    expectError(await post({ address: 'aa:bb:cc:00:01:01', local_link_connection: { port_id: 'x' } }), 400, /switch_id/);
    expectError(
      await post({ address: 'aa:bb:cc:00:01:02', local_link_connection: { port_id: 'x', switch_id: 'bogus' } }),
      400,
      /OpenFlow datapath ID/,
    );
    expectError(await post({ address: 'aa:bb:cc:00:01:03', colour: 'red' }), 400, /unexpected field "colour"/);
    expectError(await post({ address: 'aa:bb:cc:00:01:04', physical_network: '' }), 400, /physical_network/);
    expectError(await post({ address: 'aa:bb:cc:00:01:05', portgroup_uuid: n1.uuid }), 400, /Portgroup/);
    expectError(await post({ address: 'aa:bb:cc:00:01:06', internal_info: { a: 1 } }), 400);
    expectError(await bm(ts, p.admin, 'POST', '/v1/ports', { address: 'aa:bb:cc:00:01:07' }), 400, /node_uuid/);
    expectError(
      await bm(ts, p.admin, 'POST', '/v1/ports', { node_uuid: n1.uuid, address: 'aa:bb:cc:00:01:08', physical_network: 'p' }, '1.33'),
      406,
    );
    expect(await countRows(ts, 'ports')).toBe(before);
    const ok = await post({ address: 'aa:bb:cc:00:01:09', local_link_connection: { network_type: 'unmanaged' } });
    expect(ok.status).toBe(201);
  });
});

describe('PATCH and DELETE /v1/ports/{uuid}', () => {
  freshServer();

  it('admin, owner and lessee update; another project 404; anonymous 401; internal_info is read-only', async () => {
    const port = await createPort(ts, p, n1.uuid, '52:54:00:00:03:01');
    for (const who of [p.admin, p.owner, p.lessee]) {
      const r = await bm(ts, who, 'PATCH', `/v1/ports/${port.uuid}`, [{ op: 'add', path: `/extra/${who.name}`, value: true }]);
      expect(r.status, r.text).toBe(200);
      expect(r.body.extra[who.name]).toBe(true);
    }
    expectError(await bm(ts, p.other, 'PATCH', `/v1/ports/${port.uuid}`, [{ op: 'add', path: '/extra/x', value: 1 }]), 404);
    expectError(await bm(ts, p.anonymous, 'PATCH', `/v1/ports/${port.uuid}`, [{ op: 'add', path: '/extra/x', value: 1 }]), 401);
    expectError(
      await bm(ts, p.admin, 'PATCH', `/v1/ports/${port.uuid}`, [{ op: 'add', path: '/internal_info/x', value: 1 }]),
      400,
      /Cannot patch/,
    );
    expectError(
      await bm(ts, p.admin, 'PATCH', `/v1/ports/${port.uuid}`, [{ op: 'replace', path: '/address', value: '52:54:00:00:01:01' }]),
      409,
    );
    expectError(await bm(ts, p.admin, 'PATCH', `/v1/ports/${port.uuid}`, [{ op: 'replace', path: '/address', value: 'zz' }]), 400, /MAC/);
    const mac = await bm(ts, p.admin, 'PATCH', `/v1/ports/${port.uuid}`, [{ op: 'replace', path: '/address', value: '52:54:00:00:03:FF' }]);
    expect(mac.body.address).toBe('52:54:00:00:03:ff');
    expect(mac.body.extra).toEqual({ admin: true, owner: true, lessee: true });
  });

  it('refuses connectivity changes of a deployed node outside maintenance (409); moving needs the target node', async () => {
    const node = await createNode(ts, p, { name: 'deployed' });
    const port = await createPort(ts, p, node.uuid, '52:54:00:00:04:01');
    await forceNode(ts, node.uuid, { provision_state: 'active' });
    expectError(
      await bm(ts, p.admin, 'PATCH', `/v1/ports/${port.uuid}`, [{ op: 'replace', path: '/pxe_enabled', value: false }]),
      409,
      /connectivity/,
    );
    expectError(
      await bm(ts, p.admin, 'PATCH', `/v1/ports/${port.uuid}`, [{ op: 'replace', path: '/address', value: '52:54:00:00:04:02' }]),
      409,
      /active/,
    );
    expectError(
      await bm(ts, p.owner, 'PATCH', `/v1/ports/${port.uuid}`, [{ op: 'replace', path: '/node_uuid', value: n2.uuid }]),
      400,
      /could not be found/,
    );
    await forceNode(ts, node.uuid, { maintenance: true });
    expect(
      (await bm(ts, p.admin, 'PATCH', `/v1/ports/${port.uuid}`, [{ op: 'replace', path: '/pxe_enabled', value: false }])).body.pxe_enabled,
    ).toBe(false);
    const moved = await bm(ts, p.admin, 'PATCH', `/v1/ports/${port.uuid}`, [{ op: 'replace', path: '/node_uuid', value: n2.uuid }]);
    expect(moved.body.node_uuid).toBe(n2.uuid);
  });

  it('refuses port writes while a conductor holds the node (409)', async () => {
    const node = await createNode(ts, p, { name: 'reserved-ports' });
    const port = await createPort(ts, p, node.uuid, '52:54:00:00:05:01');
    await ts.server.services.inventory.nodeRepository.reserve(node.uuid, 'cond-1');
    expectError(await bm(ts, p.admin, 'POST', '/v1/ports', { node_uuid: node.uuid, address: '52:54:00:00:05:02' }), 409, /locked/);
    expectError(await bm(ts, p.admin, 'PATCH', `/v1/ports/${port.uuid}`, [{ op: 'add', path: '/extra/a', value: 1 }]), 409, /locked/);
    expectError(await bm(ts, p.admin, 'DELETE', `/v1/ports/${port.uuid}`), 409, /locked/);
    await ts.server.services.inventory.nodeRepository.release(node.uuid, 'cond-1');
    expect((await bm(ts, p.admin, 'DELETE', `/v1/ports/${port.uuid}`)).status).toBe(204);
  });

  it('delete: admin and owner 204; lessee 403; another project 404; anonymous 401', async () => {
    const a = await createPort(ts, p, n1.uuid, '52:54:00:00:06:01');
    const b = await createPort(ts, p, n1.uuid, '52:54:00:00:06:02');
    expectError(await bm(ts, p.lessee, 'DELETE', `/v1/ports/${a.uuid}`), 403);
    expectError(await bm(ts, p.other, 'DELETE', `/v1/ports/${a.uuid}`), 404);
    expectError(await bm(ts, p.anonymous, 'DELETE', `/v1/ports/${a.uuid}`), 401);
    const r = await bm(ts, p.owner, 'DELETE', `/v1/ports/${a.uuid}`);
    expect(r.status).toBe(204);
    expect(r.text).toBe('');
    expect((await bm(ts, p.admin, 'DELETE', `/v1/ports/${b.uuid}`)).status).toBe(204);
    expectError(await bm(ts, p.admin, 'GET', `/v1/ports/${b.uuid}`), 404);
    expectError(await bm(ts, p.admin, 'DELETE', `/v1/ports/${b.uuid}`), 404);
  });
});
