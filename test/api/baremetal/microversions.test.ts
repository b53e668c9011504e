/**
 * Microversion negotiation, headers and version-gated behaviour (https://docs.openstack.org/api-ref/baremetal/#api-versions,
 * https://docs.openstack.org/ironic/latest/contributor/webapi-version-history.html), including what python-ironicclient 5.0.1 relies on to negotiate down from 1.78.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPersonas, startTestServer, type Personas, type TestServer } from '../../helpers/harness.ts';
import { bm, createNode, expectError, forceNode } from './helpers.ts';

let ts: TestServer;
let p: Personas;
let node: any;

beforeAll(async () => {
  ts = await startTestServer();
  p = await createPersonas(ts);
  node = await createNode(ts, p, { name: 'mv' });
});
afterAll(async () => ts?.close());

describe('negotiation', () => {
  it('defaults to 1.1, echoes the requested version, maps latest to 1.82', async () => {
    const none = await bm(ts, p.admin, 'GET', '/v1/nodes', undefined, null);
    expect(none.headers.get('x-openstack-ironic-api-version')).toBe('1.1');
    expect(none.headers.get('x-openstack-ironic-api-minimum-version')).toBe('1.1');
    expect(none.headers.get('x-openstack-ironic-api-maximum-version')).toBe('1.82');
    expect((await bm(ts, p.admin, 'GET', '/v1/nodes', undefined, '1.78')).headers.get('x-openstack-ironic-api-version')).toBe('1.78');
    expect((await bm(ts, p.admin, 'GET', '/v1/nodes', undefined, 'latest')).headers.get('x-openstack-ironic-api-version')).toBe('1.82');
  });

  it.each(['1.83', '2.0', '1.0'])('406 for %s, with min/max headers and no version header; webob’s error shape on resources', async (v) => {
    const r = await bm(ts, p.admin, 'GET', '/v1/nodes', undefined, v);
    expect(r.status).toBe(406);
    expect(r.headers.get('x-openstack-ironic-api-minimum-version')).toBe('1.1');
    expect(r.headers.get('x-openstack-ironic-api-maximum-version')).toBe('1.82');
    expect(r.headers.get('x-openstack-ironic-api-version')).toBeNull();
    const inner = JSON.parse(r.body.error_message);
    expect(inner).toEqual({ code: 406, title: 'Not Acceptable', description: expect.stringMatching(/\[1\.1, 1\.82\]\.$/) });
    // The version document answers with Ironic's usual fault shape.
    expectError(await bm(ts, p.admin, 'GET', '/v1', undefined, v), 406, /The supported version range is: \[1\.1, 1\.82\]\./);
  });

  it('words refused versions as Ironic, a malformed header too (with the range headers, which Ironic omits there)', async () => {
    const major = await bm(ts, p.admin, 'GET', '/v1/nodes', undefined, '2.0');
    expect(JSON.parse(major.body.error_message).description).toBe(
      'Mutually exclusive versions requested. Version 2.0 requested but not supported by this service. The supported version range is: [1.1, 1.82].',
    );
    for (const v of ['banana', '1.x', '1']) {
      const r = await bm(ts, p.admin, 'GET', '/v1/nodes', undefined, v);
      expect(r.status).toBe(406);
      expect(JSON.parse(r.body.error_message)).toEqual({
        code: 406,
        title: 'Not Acceptable',
        description: 'Invalid value for X-OpenStack-Ironic-API-Version header',
      });
      expect(r.headers.get('x-openstack-ironic-api-maximum-version')).toBe('1.82');
      expect(r.headers.get('x-openstack-ironic-api-version')).toBeNull();
    }
  });

  it('puts version headers on error responses too, and none on the root document', async () => {
    const e = await bm(ts, p.admin, 'GET', '/v1/nodes/missing', undefined, '1.60');
    expectError(e, 404);
    expect(e.headers.get('x-openstack-ironic-api-version')).toBe('1.60');
    const u = await bm(ts, p.anonymous, 'GET', '/v1/nodes', undefined, '1.60');
    expectError(u, 401);
    expect(u.headers.get('x-openstack-ironic-api-version')).toBe('1.60');
    const root = await bm(ts, p.anonymous, 'GET', '/', undefined, '1.99');
    expect(root.status).toBe(200);
    expect(root.headers.get('x-openstack-ironic-api-maximum-version')).toBeNull();
    expect(root.body.default_version).toMatchObject({ id: 'v1', status: 'CURRENT', min_version: '1.1', version: '1.82' });
    expect(root.body.default_version.links[0].href).toBe(`${ts.url}/baremetal/v1/`);
  });

  it('serves /v1 publicly with version-dependent keys; other methods are 405', async () => {
    const old = await bm(ts, p.anonymous, 'GET', '/v1', undefined, '1.1');
    expect(old.status).toBe(200);
    expect(old.body.media_types).toEqual({ base: 'application/json', type: 'application/vnd.openstack.ironic.v1+json' });
    expect(old.body.conductors).toBeUndefined();
    const cur = await bm(ts, p.anonymous, 'GET', '/v1/', undefined, '1.78');
    expect(cur.body.conductors[0].href).toBe(`${ts.url}/baremetal/v1/conductors/`);
    expect(cur.body.shards).toBeUndefined();
    expectError(await bm(ts, p.admin, 'POST', '/v1', {}), 405);
  });
});

describe('version-gated node behaviour', () => {
  it('creates in available below 1.11 (shown as null at 1.1) and in enroll from 1.11', async () => {
    const at1 = await bm(ts, p.admin, 'POST', '/v1/nodes', { driver: 'fake-hardware' }, null);
    expect(at1.status).toBe(201);
    expect(at1.body.provision_state).toBeNull();
    expect(at1.body.name).toBeUndefined();
    expect((await bm(ts, p.admin, 'GET', `/v1/nodes/${at1.body.uuid}`, undefined, '1.2')).body.provision_state).toBe('available');
    expect((await bm(ts, p.admin, 'POST', '/v1/nodes', { driver: 'fake-hardware' }, '1.10')).body.provision_state).toBe('available');
    expect((await bm(ts, p.admin, 'POST', '/v1/nodes', { driver: 'fake-hardware' }, '1.11')).body.provision_state).toBe('enroll');
  });

  it('hides fields newer than the version', async () => {
    const at = async (v: string) => Object.keys((await bm(ts, p.admin, 'GET', `/v1/nodes/${node.uuid}`, undefined, v)).body);
    const v1 = await at('1.1');
    expect(v1).toContain('driver_info');
    for (const f of ['name', 'driver_internal_info', 'resource_class', 'traits', 'owner', 'lessee', 'conductor', 'states'])
      expect(v1).not.toContain(f);
    const v50 = await at('1.50');
    expect(v50).toContain('owner');
    expect(v50).toContain('conductor');
    expect(v50).not.toContain('lessee');
    expect(v50).not.toContain('boot_mode');
    expect(await at('1.65')).toContain('lessee');
    expect(await at('1.82')).toContain('shard');
    expect(await at('1.78')).not.toContain('shard');
  });

  it('shows inspect wait as inspecting before 1.39', async () => {
    const n = await createNode(ts, p, { name: 'inspect-wait' });
    await forceNode(ts, n.uuid, { provision_state: 'inspect wait', target_provision_state: 'manageable' });
    expect((await bm(ts, p.admin, 'GET', `/v1/nodes/${n.uuid}`, undefined, '1.38')).body.provision_state).toBe('inspecting');
    expect((await bm(ts, p.admin, 'GET', `/v1/nodes/${n.uuid}`, undefined, '1.39')).body.provision_state).toBe('inspect wait');
  });

  it('refuses newer fields in create and patch bodies (406), and old-style names before 1.10', async () => {
    expectError(await bm(ts, p.admin, 'POST', '/v1/nodes', { driver: 'fake-hardware', owner: 'x' }, '1.49'), 406);
    expectError(await bm(ts, p.admin, 'POST', '/v1/nodes', { driver: 'fake-hardware', name: 'x' }, '1.4'), 406);
    expectError(await bm(ts, p.admin, 'POST', '/v1/nodes', { driver: 'fake-hardware', name: 'Upper_Case' }, '1.9'), 400);
    expect((await bm(ts, p.admin, 'POST', '/v1/nodes', { driver: 'fake-hardware', name: 'Upper_Case' }, '1.10')).status).toBe(201);
    expectError(await bm(ts, p.admin, 'PATCH', `/v1/nodes/${node.uuid}`, [{ op: 'add', path: '/lessee', value: 'x' }], '1.64'), 406);
    expect((await bm(ts, p.admin, 'PATCH', `/v1/nodes/${node.uuid}`, [{ op: 'remove', path: '/lessee' }], '1.64')).status).toBe(200);
    expectError(
      await bm(
        ts,
        p.admin,
        'PATCH',
        `/v1/nodes/${node.uuid}?reset_interfaces=true`,
        [{ op: 'replace', path: '/driver', value: 'fake-hardware' }],
        '1.44',
      ),
      406,
    );
  });

  it('gates filters, fields, detail and sort keys', async () => {
    expectError(await bm(ts, p.admin, 'GET', '/v1/nodes?owner=x', undefined, '1.49'), 406);
    expectError(await bm(ts, p.admin, 'GET', '/v1/nodes?resource_class=x', undefined, '1.20'), 406);
    expectError(await bm(ts, p.admin, 'GET', '/v1/nodes?provision_state=enroll', undefined, '1.8'), 406);
    expectError(await bm(ts, p.admin, 'GET', '/v1/nodes?fields=uuid', undefined, '1.7'), 406);
    expectError(await bm(ts, p.admin, 'GET', '/v1/nodes?fields=lessee', undefined, '1.64'), 406);
    expectError(await bm(ts, p.admin, 'GET', '/v1/nodes?detail=true', undefined, '1.42'), 400, /detail/);
    expectError(await bm(ts, p.admin, 'GET', '/v1/nodes?sort_key=lessee', undefined, '1.64'), 406);
    expect((await bm(ts, p.admin, 'GET', '/v1/nodes?sort_key=lessee', undefined, '1.65')).status).toBe(200);
  });

  it('finds nodes by name only from 1.5', async () => {
    expectError(await bm(ts, p.admin, 'GET', '/v1/nodes/mv', undefined, '1.4'), 404);
    expect((await bm(ts, p.admin, 'GET', '/v1/nodes/mv', undefined, '1.5')).status).toBe(200);
    expect((await bm(ts, p.admin, 'GET', `/v1/nodes/${node.uuid}`, undefined, '1.4')).status).toBe(200);
  });
});

describe('methods a resource lacks', () => {
  it('are 405 with Allow, as Ironic; unknown paths stay 404', async () => {
    for (const [method, path, allow] of [
      ['POST', '/v1/conductors', 'GET, HEAD'],
      ['DELETE', '/v1/conductors/some-host', 'GET, HEAD'],
      ['PUT', '/v1/nodes', 'GET, HEAD, POST'],
      ['POST', `/v1/nodes/${node.uuid}/states/power`, 'PUT'],
    ] as const) {
      const r = await bm(ts, p.admin, method, path);
      expectError(r, 405, new RegExp(`The method ${method} is not allowed`));
      expect(r.headers.get('allow')).toBe(allow);
    }
    expectError(await bm(ts, p.admin, 'GET', '/v1/nothing-here'), 404);
    expectError(await bm(ts, p.admin, 'POST', '/v1/nothing-here/x'), 404);
    // Authentication still comes first.
    expect((await bm(ts, null, 'POST', '/v1/conductors')).status).toBe(401);
  });
});
