/**
 * Node management sub-resources for every persona: boot device (through the real fake-hardware
 * driver), traits, validate, VIFs and the node's ports (https://docs.openstack.org/api-ref/baremetal/#node-management-nodes).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPersonas, startTestServer, type Personas, type TestServer } from '../../helpers/harness.ts';
import { bm, createNode, createPort, expectError } from './helpers.ts';

let ts: TestServer;
let p: Personas;
let n: any;

beforeAll(async () => {
  // These tests check the intent the API records; no conductor may act on it meanwhile.
  ts = await startTestServer({ env: { ESI_CONDUCTOR_WORKERS: '0' } });
  p = await createPersonas(ts);
  n = await createNode(ts, p, { name: 'mgmt' });
});
afterAll(async () => ts?.close());

describe('boot device', () => {
  it('admin, owner and lessee (bring-your-own provisioning) read and set it; others 404/401', async () => {
    const url = `/v1/nodes/${n.uuid}/management/boot_device`;
    expect((await bm(ts, p.admin, 'GET', url)).body).toEqual({ boot_device: 'pxe', persistent: false });
    const set = await bm(ts, p.owner, 'PUT', url, { boot_device: 'disk', persistent: true });
    expect(set.status, set.text).toBe(204);
    expect(set.text).toBe('');
    expect((await bm(ts, p.owner, 'GET', url)).body).toEqual({ boot_device: 'disk', persistent: true });
    expect((await bm(ts, p.admin, 'GET', `${url}/supported`)).body).toEqual({ supported_boot_devices: ['pxe', 'disk', 'cdrom', 'bios'] });
    // ESI's design: a lessee may set its leased node's boot device (PXE or disk), seed 000.
    const byLessee = await bm(ts, p.lessee, 'PUT', url, { boot_device: 'pxe' });
    expect(byLessee.status, byLessee.text).toBe(204);
    expect((await bm(ts, p.lessee, 'GET', url)).body).toEqual({ boot_device: 'pxe', persistent: false });
    expect((await bm(ts, p.lessee, 'GET', `${url}/supported`)).body.supported_boot_devices).toContain('pxe');
    expectError(await bm(ts, p.other, 'GET', url), 404);
    expectError(await bm(ts, p.other, 'PUT', url, { boot_device: 'pxe' }), 404);
    expectError(await bm(ts, p.anonymous, 'GET', url), 401);
    expectError(await bm(ts, p.admin, 'PUT', url, { boot_device: 'floppy-of-doom' }), 400, /valid boot devices/);
    expectError(await bm(ts, p.admin, 'PUT', url, { boot_device: 'pxe', persistent: 'sometimes' }), 400);
    expectError(await bm(ts, p.admin, 'PUT', url, { device: 'pxe' }), 400);
  });
});

describe('traits', () => {
  it('admin and owner set, add and remove; lessee lists only; others 404/401', async () => {
    const url = `/v1/nodes/${n.uuid}/traits`;
    expect((await bm(ts, p.lessee, 'GET', url)).body).toEqual({ traits: [] });
    expect((await bm(ts, p.owner, 'PUT', url, { traits: ['CUSTOM_B', 'CUSTOM_A'] })).status).toBe(204);
    expect((await bm(ts, p.lessee, 'GET', url)).body).toEqual({ traits: ['CUSTOM_A', 'CUSTOM_B'] });
    const add = await bm(ts, p.admin, 'PUT', `${url}/CUSTOM_GPU`);
    expect(add.status).toBe(204);
    expect(add.headers.get('location')).toBe(`${ts.url}/baremetal/v1/nodes/${n.uuid}/traits/CUSTOM_GPU`);
    expect((await bm(ts, p.admin, 'GET', `/v1/nodes/${n.uuid}`)).body.traits).toEqual(['CUSTOM_A', 'CUSTOM_B', 'CUSTOM_GPU']);
    expect((await bm(ts, p.owner, 'DELETE', `${url}/CUSTOM_A`)).status).toBe(204);
    expectError(await bm(ts, p.owner, 'DELETE', `${url}/CUSTOM_A`), 404, /doesn't have a trait CUSTOM_A/);
    expectError(await bm(ts, p.lessee, 'PUT', url, { traits: [] }), 403);
    expectError(await bm(ts, p.lessee, 'PUT', `${url}/CUSTOM_X`), 403);
    expectError(await bm(ts, p.lessee, 'DELETE', `${url}/CUSTOM_B`), 403);
    expectError(await bm(ts, p.other, 'GET', url), 404);
    expectError(await bm(ts, p.other, 'PUT', url, { traits: [] }), 404);
    expectError(await bm(ts, p.anonymous, 'GET', url), 401);
    expectError(await bm(ts, p.admin, 'PUT', url, { traits: ['not-a-trait'] }), 400, /Invalid trait/);
    expectError(await bm(ts, p.admin, 'PUT', url, { traits: Array.from({ length: 51 }, (_, i) => `CUSTOM_T${i}`) }), 400, /at most 50/);
    expectError(await bm(ts, p.admin, 'PUT', `${url}/lowercase`), 400, /Invalid trait/);
    expectError(await bm(ts, p.admin, 'PUT', `${url}/CUSTOM_Y`, { traits: ['CUSTOM_Y'] }), 400, /No body/);
    expect((await bm(ts, p.admin, 'GET', url)).body).toEqual({ traits: ['CUSTOM_B', 'CUSTOM_GPU'] });
    expect((await bm(ts, p.admin, 'DELETE', url)).status).toBe(204);
    expect((await bm(ts, p.admin, 'GET', url)).body).toEqual({ traits: [] });
    expectError(await bm(ts, p.admin, 'GET', url, undefined, '1.36'), 404);
  });
});

describe('validate and vifs', () => {
  it('validate: admin, owner, lessee; per-interface results; others 404/401', async () => {
    for (const who of [p.admin, p.owner, p.lessee]) {
      const r = await bm(ts, who, 'GET', `/v1/nodes/${n.uuid}/validate`);
      expect(r.status).toBe(200);
      expect(Object.keys(r.body).sort()).toEqual([
        'bios',
        'boot',
        'console',
        'deploy',
        'inspect',
        'management',
        'network',
        'power',
        'raid',
        'rescue',
        'storage',
      ]);
      expect(r.body.power).toEqual({ result: true });
    }
    expect((await bm(ts, p.admin, 'GET', `/v1/nodes/validate?node=${n.uuid}`)).body.power.result).toBe(true);
    const rf = await createNode(ts, p, { name: 'rf', driver: 'redfish' });
    const v = (await bm(ts, p.admin, 'GET', `/v1/nodes/${rf.uuid}/validate`)).body;
    expect(v.power.result).toBe(false);
    expect(v.power.reason).toMatch(/redfish_address/);
    expect(v.deploy.result).toBe(false);
    expectError(await bm(ts, p.other, 'GET', `/v1/nodes/${n.uuid}/validate`), 404);
    expectError(await bm(ts, p.anonymous, 'GET', `/v1/nodes/${n.uuid}/validate`), 401);
  });

  it('vifs: empty list for admin, owner, lessee; others 404/401; 404 before 1.28', async () => {
    for (const who of [p.admin, p.owner, p.lessee])
      expect((await bm(ts, who, 'GET', `/v1/nodes/${n.uuid}/vifs`)).body).toEqual({ vifs: [] });
    expectError(await bm(ts, p.other, 'GET', `/v1/nodes/${n.uuid}/vifs`), 404);
    expectError(await bm(ts, p.anonymous, 'GET', `/v1/nodes/${n.uuid}/vifs`), 401);
    expectError(await bm(ts, p.admin, 'GET', `/v1/nodes/${n.uuid}/vifs`, undefined, '1.27'), 404);
  });
});

describe('GET /v1/nodes/{id}/ports', () => {
  it('lists the node ports for those who see the node', async () => {
    await createPort(ts, p, n.uuid, '52:54:00:aa:00:01');
    await createPort(ts, p, n.uuid, '52:54:00:aa:00:02');
    for (const who of [p.admin, p.owner, p.lessee]) {
      const r = await bm(ts, who, 'GET', `/v1/nodes/${n.uuid}/ports`);
      expect(r.body.ports.map((x: any) => x.address)).toEqual(['52:54:00:aa:00:01', '52:54:00:aa:00:02']);
      expect(Object.keys(r.body.ports[0]).sort()).toEqual(['address', 'links', 'uuid']);
    }
    const d = await bm(ts, p.owner, 'GET', '/v1/nodes/mgmt/ports/detail');
    expect(d.body.ports[0].node_uuid).toBe(n.uuid);
    expectError(await bm(ts, p.other, 'GET', `/v1/nodes/${n.uuid}/ports`), 404);
    expectError(await bm(ts, p.anonymous, 'GET', `/v1/nodes/${n.uuid}/ports`), 401);
    expectError(await bm(ts, p.admin, 'GET', `/v1/nodes/${n.uuid}/ports?node=x`), 400, /Unexpected/);
  });
});
