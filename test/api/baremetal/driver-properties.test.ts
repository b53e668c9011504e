/**
 * Driver properties (`GET /v1/drivers/{driver}/properties`) and RAID logical disk properties
 * (`GET /v1/drivers/{driver}/raid/logical_disk_properties`, ≥ 1.12), as Ironic 21.4 answers them:
 * the `driver_info` keys of the driver's default interfaces with their descriptions, the keys of
 * a logical disk; 404 for a driver no conductor serves; system-level (project callers 403).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPersonas, startTestServer, type Personas, type TestServer } from '../../helpers/harness.ts';
import { bm, expectError } from './helpers.ts';

let ts: TestServer;
let p: Personas;

beforeAll(async () => {
  ts = await startTestServer();
  p = await createPersonas(ts);
});
afterAll(async () => ts?.close());

const LOGICAL_DISK_KEYS = [
  'controller',
  'disk_type',
  'interface_type',
  'is_root_volume',
  'number_of_physical_disks',
  'physical_disks',
  'raid_level',
  'share_physical_disks',
  'size_gb',
  'volume_name',
];

describe('GET /v1/drivers/{driver}/properties', () => {
  it('fake-hardware: its default fake vendor interface’s B1 and B2, as Ironic answers', async () => {
    const r = await bm(ts, p.admin, 'GET', '/v1/drivers/fake-hardware/properties');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ B1: 'B1 description. Required.', B2: 'B2 description. Required.' });
    expect((await bm(ts, p.admin, 'GET', '/v1/drivers/fake-hardware/properties', undefined, '1.1')).body).toEqual(r.body);
  });

  it('redfish and ipmi: the BMC keys with the deploy agent keys of the default boot and deploy interfaces', async () => {
    const redfish = (await bm(ts, p.admin, 'GET', '/v1/drivers/redfish/properties')).body;
    expect(Object.keys(redfish).sort()).toEqual([
      'deploy_kernel',
      'deploy_ramdisk',
      'redfish_address',
      'redfish_auth_type',
      'redfish_password',
      'redfish_system_id',
      'redfish_username',
      'redfish_verify_ca',
    ]);
    expect(redfish.redfish_address).toMatch(/Required\.$/);
    expect(redfish.deploy_kernel).toMatch(/file:\/\//);
    for (const v of Object.values(redfish)) expect(typeof v).toBe('string');
    const ipmi = (await bm(ts, p.admin, 'GET', '/v1/drivers/ipmi/properties')).body;
    expect(ipmi).toMatchObject({ ipmi_address: expect.stringMatching(/Required/), deploy_ramdisk: expect.any(String) });
    expect(Object.keys(ipmi).filter((k) => !k.startsWith('ipmi_') && !k.startsWith('deploy_'))).toEqual([]);
  });

  it('404 for a driver no conductor serves; 400 for query parameters; project callers 403, anonymous 401', async () => {
    expectError(await bm(ts, p.admin, 'GET', '/v1/drivers/idrac/properties'), 404, /^The driver 'idrac' is unknown\.$/);
    expectError(await bm(ts, p.admin, 'GET', '/v1/drivers/redfish/properties?x=1'), 400, /Unexpected arguments: x/);
    for (const who of [p.owner, p.lessee, p.other]) expectError(await bm(ts, who, 'GET', '/v1/drivers/redfish/properties'), 403);
    expectError(await bm(ts, p.anonymous, 'GET', '/v1/drivers/redfish/properties'), 401);
  });
});

describe('GET /v1/drivers/{driver}/raid/logical_disk_properties', () => {
  it('lists the keys of a logical disk, the same for every driver, with the RAID levels esi builds', async () => {
    for (const driver of ['fake-hardware', 'ipmi', 'redfish']) {
      const r = await bm(ts, p.admin, 'GET', `/v1/drivers/${driver}/raid/logical_disk_properties`);
      expect(r.status, r.text).toBe(200);
      expect(Object.keys(r.body).sort()).toEqual(LOGICAL_DISK_KEYS);
      expect(r.body.size_gb).toBe(
        "Size in GiB (Integer) for the logical disk. Use 'MAX' as size_gb if this logical disk is supposed to use the rest of the space available. Required.",
      );
      expect(r.body.raid_level).toBe("RAID level for the logical disk. Valid values are '0', '1', '5', '6' and '1+0'. Required.");
    }
  });

  it('is 406 before 1.12, 404 for an unknown driver; project callers 403, anonymous 401', async () => {
    const old = await bm(ts, p.admin, 'GET', '/v1/drivers/redfish/raid/logical_disk_properties', undefined, '1.11');
    expectError(old, 406, /^Request not acceptable\.$/);
    expect((await bm(ts, p.admin, 'GET', '/v1/drivers/redfish/raid/logical_disk_properties', undefined, '1.12')).status).toBe(200);
    expectError(await bm(ts, p.admin, 'GET', '/v1/drivers/nope/raid/logical_disk_properties'), 404, /The driver 'nope' is unknown/);
    for (const who of [p.owner, p.lessee, p.other]) {
      expectError(await bm(ts, who, 'GET', '/v1/drivers/fake-hardware/raid/logical_disk_properties'), 403);
    }
    expectError(await bm(ts, p.anonymous, 'GET', '/v1/drivers/fake-hardware/raid/logical_disk_properties'), 401);
  });
});
