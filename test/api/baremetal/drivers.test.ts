/**
 * Drivers and conductors (https://docs.openstack.org/api-ref/baremetal/#drivers-drivers,
 * https://docs.openstack.org/api-ref/baremetal/#conductors-conductors): system-level resources, readable by the
 * admin only among the personas; drivers are listed when a live conductor serves them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPersonas, startTestServer, type Personas, type TestServer } from '../../helpers/harness.ts';
import { bm, expectError } from './helpers.ts';

let ts: TestServer;
let p: Personas;
const host = (): string => ts.server.services.config.conductor.hostname;

beforeAll(async () => {
  ts = await startTestServer();
  p = await createPersonas(ts);
});
afterAll(async () => ts?.close());

describe('GET /v1/drivers', () => {
  it('admin lists the drivers this conductor serves; project callers 403; anonymous 401', async () => {
    const r = await bm(ts, p.admin, 'GET', '/v1/drivers');
    expect(r.status).toBe(200);
    expect(r.body.drivers.map((d: any) => d.name)).toEqual(['fake-hardware', 'ipmi', 'redfish']);
    expect(r.body.drivers[0]).toMatchObject({ name: 'fake-hardware', hosts: [host()], type: 'dynamic' });
    expect(r.body.drivers[0].properties[0].href).toBe(`${ts.url}/baremetal/v1/drivers/fake-hardware/properties`);
    expect(r.body.drivers[0].default_power_interface).toBeUndefined();
    const d = await bm(ts, p.admin, 'GET', '/v1/drivers?detail=true');
    expect(d.body.drivers[0]).toMatchObject({ default_power_interface: 'fake', enabled_network_interfaces: ['noop', 'flat'] });
    expect((await bm(ts, p.admin, 'GET', '/v1/drivers?type=classic')).body).toEqual({ drivers: [] });
    expectError(await bm(ts, p.admin, 'GET', '/v1/drivers?type=weird'), 400);
    expectError(await bm(ts, p.admin, 'GET', '/v1/drivers?detail=true', undefined, '1.29'), 406);
    for (const who of [p.owner, p.lessee, p.other]) expectError(await bm(ts, who, 'GET', '/v1/drivers'), 403);
    expectError(await bm(ts, p.anonymous, 'GET', '/v1/drivers'), 401);
  });

  it('shows one driver and its properties', async () => {
    const r = await bm(ts, p.admin, 'GET', '/v1/drivers/redfish');
    expect(r.body).toMatchObject({ name: 'redfish', hosts: [host()], type: 'dynamic' });
    expect(typeof r.body.default_management_interface).toBe('string');
    const props = await bm(ts, p.admin, 'GET', '/v1/drivers/redfish/properties');
    expect(props.body.redfish_address).toMatch(/Required/);
    expect((await bm(ts, p.admin, 'GET', '/v1/drivers/fake-hardware/properties')).body).toEqual({
      B1: 'B1 description. Required.',
      B2: 'B2 description. Required.',
    });
    const ipmi = await bm(ts, p.admin, 'GET', '/v1/drivers/ipmi');
    expect(ipmi.body).toMatchObject({ name: 'ipmi', default_power_interface: 'ipmitool', default_management_interface: 'ipmitool' });
    expect((await bm(ts, p.admin, 'GET', '/v1/drivers/ipmi/properties')).body.ipmi_address).toMatch(/Required/);
    expectError(await bm(ts, p.admin, 'GET', '/v1/drivers/idrac'), 404, /idrac/);
    expectError(await bm(ts, p.owner, 'GET', '/v1/drivers/redfish'), 403);
    expectError(await bm(ts, p.lessee, 'GET', '/v1/drivers/redfish/properties'), 403);
    expectError(await bm(ts, p.other, 'GET', '/v1/drivers/redfish'), 403);
    expectError(await bm(ts, p.anonymous, 'GET', '/v1/drivers/redfish'), 401);
  });
});

describe('driver fields and interface gates', () => {
  it('fields (≥1.77) keeps the fields asked for and links; refuses fields a driver does not show and fields with detail', async () => {
    const list = await bm(ts, p.admin, 'GET', '/v1/drivers?fields=name');
    expect(list.status, list.text).toBe(200);
    expect(list.body.drivers[0]).toEqual({ name: 'fake-hardware', links: expect.any(Array) });
    expectError(
      await bm(ts, p.admin, 'GET', '/v1/drivers?fields=name,default_boot_interface'),
      400,
      /"default_boot_interface" are not valid/,
    );
    expectError(await bm(ts, p.admin, 'GET', '/v1/drivers?fields=name&detail=true'), 400, /Can not specify \?detail=True and fields/);
    expectError(await bm(ts, p.admin, 'GET', '/v1/drivers?fields=name', undefined, '1.76'), 406);
    const one = await bm(ts, p.admin, 'GET', '/v1/drivers/fake-hardware?fields=hosts,default_boot_interface');
    expect(one.body).toEqual({ hosts: [host()], default_boot_interface: 'fake', links: expect.any(Array) });
    expectError(await bm(ts, p.admin, 'GET', '/v1/drivers/fake-hardware?fields=colour'), 400, /"colour" are not valid/);
  });

  it('shows the storage, rescue and bios interfaces from 1.33, 1.38 and 1.40, as Ironic', async () => {
    const keys = async (v: string) => Object.keys((await bm(ts, p.admin, 'GET', '/v1/drivers/fake-hardware', undefined, v)).body);
    expect(await keys('1.32')).not.toContain('default_storage_interface');
    expect(await keys('1.33')).toContain('enabled_storage_interfaces');
    expect(await keys('1.37')).not.toContain('default_rescue_interface');
    expect(await keys('1.38')).toContain('default_rescue_interface');
    expect(await keys('1.39')).not.toContain('enabled_bios_interfaces');
    expect(await keys('1.40')).toContain('default_bios_interface');
    expect(await keys('1.30')).toContain('default_power_interface');
  });
});

describe('GET /v1/conductors', () => {
  it('admin sees this process as a live conductor; project callers 403; anonymous 401; 404 before 1.49', async () => {
    const r = await bm(ts, p.admin, 'GET', '/v1/conductors');
    expect(r.body.conductors).toEqual([{ hostname: host(), conductor_group: '', alive: true, links: expect.any(Array) }]);
    const d = await bm(ts, p.admin, 'GET', '/v1/conductors?detail=True');
    expect(d.body.conductors[0].drivers).toEqual(['fake-hardware', 'ipmi', 'redfish']);
    const one = await bm(ts, p.admin, 'GET', `/v1/conductors/${host()}`);
    expect(one.body).toMatchObject({ hostname: host(), alive: true, drivers: ['fake-hardware', 'ipmi', 'redfish'] });
    expect(one.body.updated_at).toMatch(/\+00:00$/);
    expectError(await bm(ts, p.admin, 'GET', '/v1/conductors/nobody'), 404);
    expectError(await bm(ts, p.admin, 'GET', '/v1/conductors', undefined, '1.48'), 404);
    for (const who of [p.owner, p.lessee, p.other]) expectError(await bm(ts, who, 'GET', '/v1/conductors'), 403);
    expectError(await bm(ts, p.anonymous, 'GET', '/v1/conductors'), 401);
  });

  it('a conductor whose heartbeat is stale is dead and serves no driver', async () => {
    const repo = ts.server.services.inventory.conductorRepository;
    await repo.upsert('old-host', '', ['fake-hardware'], Date.now() - 3_600_000);
    const list = (await bm(ts, p.admin, 'GET', '/v1/conductors')).body.conductors;
    expect(list.find((c: any) => c.hostname === 'old-host')).toMatchObject({ alive: false });
    ts.server.services.inventory.conductors.invalidate();
    expect((await bm(ts, p.admin, 'GET', '/v1/drivers/fake-hardware')).body.hosts).toEqual([host()]);
    await repo.remove('old-host');
  });
});
