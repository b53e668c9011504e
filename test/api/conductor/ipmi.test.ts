/**
 * IPMI nodes through the baremetal API and the conductor, against real openipmi `ipmi_sim`
 * BMCs driven with Debian's ipmitool: enrolment of an `ipmi` node with Ironic's interface
 * names, `ipmi_password` sealed at rest and masked for every caller who sees the node,
 * validation, power on/off by the owner and the lessee, boot device set/get, a wrong password
 * and a BMC that does not answer in `last_error` without the secret. Others: 404; anonymous: 401.
 * Source: https://docs.openstack.org/api-ref/baremetal/#node-management-nodes; Ironic's ipmitool driver
 * (https://opendev.org/openstack/ironic ironic/drivers/modules/ipmitool.py).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createHardwareRegistry } from '../../../src/drivers/hardware/registry.ts';
import { createPersonas, startTestServer, type Personas, type TestServer } from '../../helpers/harness.ts';
import { ipmiSims, type IpmiSimBmc } from '../../helpers/ipmi-sim.ts';
import { describeNeeding, IPMI_TOOLS } from '../../helpers/tools.ts';
import { bm, expectError, nodeRow } from '../baremetal/helpers.ts';
import type { ConductorEnv } from './support.ts';
import { conductorOf, power, provision, settled, waitNode } from './support.ts';
import { Ipmitool } from '../../../src/drivers/hardware/ipmi/ipmitool.ts';
import { parseIpmiDriverInfo } from '../../../src/drivers/hardware/ipmi/driver-info.ts';

const PASSWORD = 'Ipmi-S3cret-Pw';

describeNeeding(IPMI_TOOLS, 'ipmi nodes through the API', () => {
  const sims = ipmiSims();
  let ts: TestServer;
  let p: Personas;
  let env: ConductorEnv;
  let bmc: [IpmiSimBmc, IpmiSimBmc];

  beforeAll(async () => {
    bmc = (await sims.start(2, { password: PASSWORD })) as [IpmiSimBmc, IpmiSimBmc];
    ts = await startTestServer({ env: { ESI_POWER_TIMEOUT: '15', ESI_POWER_SYNC_INTERVAL: '3600' } });
    p = await createPersonas(ts);
    // The support helpers only use ts and p.
    env = { ts, p, lab: null as never, close: async () => undefined };
  }, 60_000);
  afterAll(async () => {
    await ts?.close();
    await sims.stop();
  });

  async function enrollIpmi(name: string, b: IpmiSimBmc, info: Record<string, unknown> = {}): Promise<any> {
    const res = await bm(ts, p.admin, 'POST', '/v1/nodes', {
      name,
      driver: 'ipmi',
      owner: p.owner.projectId,
      lessee: p.lessee.projectId,
      driver_info: { ...b.driverInfo, ...info },
    });
    expect(res.status, res.text).toBe(201);
    return res.body;
  }

  /**
   * A node of the test's own on the first BMC (tests share no node: the order of the tests is
   * shuffled); the BMC's power and boot device are set by each test that asserts them.
   */
  const ownNode = (name: string): Promise<any> => enrollIpmi(name, bmc[0]);

  it('enrols with Ironic interface names; ipmi_password is sealed and masked for every caller who sees it (redacted for the lessee)', async () => {
    const n = await enrollIpmi('ipmi-a', bmc[0]);
    expect(n).toMatchObject({
      driver: 'ipmi',
      power_interface: 'ipmitool',
      management_interface: 'ipmitool',
      console_interface: 'ipmitool-socat',
    });
    expect(n.driver_info).toEqual({ ...bmc[0].driverInfo, ipmi_password: '******' });
    for (const who of [p.admin, p.owner, p.lessee]) {
      const r = await bm(ts, who, 'GET', `/v1/nodes/${n.uuid}`);
      expect(r.status, r.text).toBe(200);
      expect(r.text).not.toContain(PASSWORD);
      // Admin and owner see it masked; the lessee sees Ironic's redaction notice instead.
      if (who === p.lessee) expect(r.body.driver_info.content).toMatch(/Redacted/);
      else expect(r.body.driver_info).toEqual({ ...bmc[0].driverInfo, ipmi_password: '******' });
      const list = await bm(ts, who, 'GET', '/v1/nodes/detail');
      expect(list.text).not.toContain(PASSWORD);
    }
    expectError(await bm(ts, p.other, 'GET', `/v1/nodes/${n.uuid}`), 404);
    expectError(await bm(ts, p.anonymous, 'GET', `/v1/nodes/${n.uuid}`), 401);
    const row = await nodeRow(ts, n.uuid);
    expect(JSON.stringify(row)).not.toContain(PASSWORD);
    expect(JSON.parse(row!.driver_info as string).ipmi_password).toMatch(/^enc:v1:/);
    const patched = await bm(ts, p.admin, 'PATCH', `/v1/nodes/${n.uuid}`, [
      { op: 'add', path: '/driver_info/ipmi_priv_level', value: 'ADMINISTRATOR' },
    ]);
    expect(patched.status, patched.text).toBe(200);
    expect(patched.text).not.toContain(PASSWORD);
  });

  it('validate: power and management pass for admin, owner and lessee; a bad driver_info names the key; others 404/401', async () => {
    const n = await ownNode('ipmi-validate');
    for (const who of [p.admin, p.owner, p.lessee]) {
      const r = await bm(ts, who, 'GET', `/v1/nodes/${n.uuid}/validate`);
      expect(r.status, r.text).toBe(200);
      expect(r.body.power).toEqual({ result: true });
      expect(r.body.management).toEqual({ result: true });
    }
    const bad = await enrollIpmi('ipmi-bad', bmc[0], { ipmi_address: undefined, ipmi_cipher_suite: 99 });
    const v = (await bm(ts, p.admin, 'GET', `/v1/nodes/${bad.uuid}/validate`)).body;
    expect(v.power.result).toBe(false);
    expect(v.power.reason).toMatch(/ipmi_address/);
    expect(v.power.reason).toMatch(/ipmi_cipher_suite/);
    expect(JSON.stringify(v)).not.toContain(PASSWORD);
    expectError(await bm(ts, p.other, 'GET', `/v1/nodes/${n.uuid}/validate`), 404);
    expectError(await bm(ts, p.anonymous, 'GET', `/v1/nodes/${n.uuid}/validate`), 401);
  });

  it('power on by the owner and off by the lessee reach the BMC through the conductor; others 404/401', async () => {
    const n = await ownNode('ipmi-power');
    await settled(env, n.uuid, 30_000);
    await power(env, n.uuid, 'power on', p.owner);
    const on = await waitNode(
      env,
      n.uuid,
      (x) => x.power_state === 'power on' && x.target_power_state === null && x.reservation === null,
      30_000,
    );
    expect(on.last_error).toBeNull();
    expect(await bmc[0].power()).toBe('on');
    await power(env, n.uuid, 'power off', p.lessee);
    await waitNode(env, n.uuid, (x) => x.power_state === 'power off' && x.target_power_state === null && x.reservation === null, 30_000);
    expect(await bmc[0].power()).toBe('off');
    await power(env, n.uuid, 'rebooting', p.admin);
    const rebooted = await settled(env, n.uuid, 30_000);
    expect(rebooted.power_state).toBe('power on');
    expect(await bmc[0].power()).toBe('on');
    expectError(await bm(ts, p.other, 'PUT', `/v1/nodes/${n.uuid}/states/power`, { target: 'power off' }), 404);
    expectError(await bm(ts, p.anonymous, 'PUT', `/v1/nodes/${n.uuid}/states/power`, { target: 'power off' }), 401);
    expect(await bmc[0].power()).toBe('on');
  });

  it('boot device: admin, owner and lessee set and read it on the BMC; others 404/401', async () => {
    const n = await ownNode('ipmi-boot');
    const url = `/v1/nodes/${n.uuid}/management/boot_device`;
    await settled(env, n.uuid, 30_000);
    const set = await bm(ts, p.owner, 'PUT', url, { boot_device: 'pxe', persistent: true });
    expect(set.status, set.text).toBe(204);
    expect(await bmc[0].bootDevice()).toBe('pxe');
    // ipmi_sim keeps the device only, so persistence reads back as false (see docs/ipmi.md).
    expect((await bm(ts, p.owner, 'GET', url)).body).toEqual({ boot_device: 'pxe', persistent: false });
    expect((await bm(ts, p.admin, 'PUT', url, { boot_device: 'cdrom' })).status).toBe(204);
    expect(await bmc[0].bootDevice()).toBe('cdrom');
    expect((await bm(ts, p.admin, 'GET', url)).body).toEqual({ boot_device: 'cdrom', persistent: false });
    expect((await bm(ts, p.admin, 'GET', `${url}/supported`)).body).toEqual({ supported_boot_devices: ['pxe', 'disk', 'cdrom', 'bios'] });
    // ESI's bring-your-own provisioning: the lessee sets its leased node's boot device.
    expect((await bm(ts, p.lessee, 'PUT', url, { boot_device: 'pxe' })).status).toBe(204);
    expect(await bmc[0].bootDevice()).toBe('pxe');
    expect((await bm(ts, p.lessee, 'GET', url)).body).toEqual({ boot_device: 'pxe', persistent: false });
    expectError(await bm(ts, p.other, 'GET', url), 404);
    expectError(await bm(ts, p.anonymous, 'PUT', url, { boot_device: 'disk' }), 401);
    expectError(await bm(ts, p.admin, 'PUT', url, { boot_device: 'floppy' }), 400);
    expect(await bmc[0].bootDevice()).toBe('pxe');
  });

  it("the conductor's view of the node (password opened from its sealed form) opens a Serial-over-LAN console", async () => {
    const { uuid } = await ownNode('ipmi-sol');
    const driverNode = await ts.server.services.inventory.nodes.driverNode(uuid);
    expect(driverNode.driverInfo.ipmi_password).toBe(PASSWORD);
    const registry = createHardwareRegistry({ enabled: ['ipmi'] });
    const session = await registry.get('ipmi').console!.open(driverNode);
    try {
      const seen: Buffer[] = [];
      session.onData((c) => seen.push(c));
      bmc[0].serial.write('console via the conductor path\r\n');
      await expect.poll(() => Buffer.concat(seen).toString('latin1'), { timeout: 10_000 }).toContain('console via the conductor path');
    } finally {
      await session.close();
      await registry.close();
    }
  });

  it('a wrong password and a BMC that does not answer end in last_error without the secret', async () => {
    const wrong = 'Wr0ng-Ipmi-Pw';
    const w = await enrollIpmi('ipmi-wrong', bmc[1], { ipmi_password: wrong });
    await settled(env, w.uuid, 30_000);
    await power(env, w.uuid, 'power on');
    const done = await settled(env, w.uuid, 30_000);
    expect(done.last_error).toMatch(/refused power on/);
    expect(done.last_error).not.toContain(wrong);
    expect((await bm(ts, p.admin, 'GET', `/v1/nodes/${w.uuid}`)).text).not.toContain(wrong);
    expect(await bmc[1].power()).toBe('off');

    const dead = await enrollIpmi('ipmi-dead', bmc[1], { ipmi_port: '9' });
    await settled(env, dead.uuid, 30_000);
    await power(env, dead.uuid, 'power on');
    const down = await settled(env, dead.uuid, 30_000);
    expect(down.last_error).toMatch(/could not be reached for power on/);
    expect(down.last_error).not.toContain(PASSWORD);
  }, 60_000);

  it('the power sync reads ipmi nodes: a change made outside esi is recorded, with a history warning', async () => {
    const { uuid } = await ownNode('ipmi-sync');
    await settled(env, uuid, 30_000);
    // The sync skips enroll nodes (Ironic's rule); manage it: the conductor verifies it through the BMC.
    await provision(env, uuid, 'manage');
    const n = await settled(env, uuid, 30_000);
    expect(n.provision_state, JSON.stringify(n.last_error)).toBe('manageable');
    const recorded = n.power_state as string;
    const outside = recorded === 'power on' ? 'off' : 'on';
    // Someone uses the BMC directly (the console of a BMC, another tool).
    await new Ipmitool().run(parseIpmiDriverInfo(bmc[0].driverInfo), { nodeUuid: n.uuid, operation: 'test' }, [
      'chassis',
      'power',
      outside,
    ]);
    expect(await bmc[0].power()).toBe(outside);
    const report = await conductorOf(ts).syncPowerStates();
    expect(report).not.toBeNull();
    const after = (await bm(ts, p.admin, 'GET', `/v1/nodes/${n.uuid}`)).body;
    expect(after.power_state).toBe(`power ${outside}`);
    const history = (await bm(ts, p.admin, 'GET', `/v1/nodes/${n.uuid}/history?detail=true`)).body.history;
    expect(history.some((h: any) => h.event_type === 'power sync' && h.event.includes(`"power ${outside}"`))).toBe(true);
  }, 60_000);

  it('bad driver_info values never cause a 500: validate names them, power and boot requests get a 400', async () => {
    const bad = await enrollIpmi('ipmi-garbage', bmc[1], {
      ipmi_address: { nested: true },
      ipmi_port: 'abc',
      ipmi_password: 12345,
      ipmi_priv_level: 'ROOT',
    });
    const v = await bm(ts, p.owner, 'GET', `/v1/nodes/${bad.uuid}/validate`);
    expect(v.status, v.text).toBe(200);
    for (const key of ['ipmi_address', 'ipmi_port', 'ipmi_password', 'ipmi_priv_level']) expect(v.body.power.reason).toContain(key);
    await settled(env, bad.uuid, 30_000);
    const on = await bm(ts, p.owner, 'PUT', `/v1/nodes/${bad.uuid}/states/power`, { target: 'power on' });
    expectError(on, 400, /Invalid driver_info for the ipmi driver/);
    expect(on.text).not.toContain('12345');
    const boot = await bm(ts, p.owner, 'PUT', `/v1/nodes/${bad.uuid}/management/boot_device`, { boot_device: 'pxe' });
    expect(boot.status, boot.text).toBe(400);
    expect(boot.text).not.toContain('12345');
  }, 60_000);

  it('a server without ipmi in ESI_ENABLED_HARDWARE_TYPES refuses ipmi nodes', async () => {
    const other = await startTestServer({ env: { ESI_ENABLED_HARDWARE_TYPES: 'fake-hardware,redfish', ESI_CONDUCTOR_WORKERS: '0' } });
    try {
      const op = await createPersonas(other);
      const res = await bm(other, op.admin, 'POST', '/v1/nodes', { driver: 'ipmi', driver_info: bmc[0].driverInfo });
      expectError(res, 400, /ipmi/);
      expect(res.text).not.toContain(PASSWORD);
      expect((await bm(other, op.admin, 'GET', '/v1/drivers')).body.drivers.map((d: any) => d.name)).toEqual(['fake-hardware', 'redfish']);
    } finally {
      await other.close();
    }
  });
});
