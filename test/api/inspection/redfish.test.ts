/**
 * Out-of-band inspection (`inspect_interface` = `redfish`): properties, ports (from the
 * EthernetInterfaces MACs, none enrolled before; `local_link_connection` from the chassis
 * network adapter ports' LLDPReceive), rules and the stored inventory come from the lab's
 * Redfish resources, without booting the agent; compared with the lab description. Also
 * a BMC that is down → `inspect failed` with a clear `last_error`, and resource paths in any
 * case (a lower-case `redfish_system_id`, lower-case URIs), which the lab answers as real BMCs do.
 * Ironic's rules on payloads the lab does not produce (RAID volumes, NICs that are disabled or
 * unhealthy, no boot mode, IA-64, BIOS values that are objects, an unreadable BIOS): ./redfish-mockup.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bm, deadUrl, enrollRedfish, provision, waitNode, type ConductorEnv } from '../conductor/support.ts';
import { expectedLlc, expectedProperties, inspectableNode, portsOf, startInspectionEnv } from './support.ts';

let env: ConductorEnv;

beforeAll(async () => {
  env = await startInspectionEnv(4);
}, 60_000);

afterAll(async () => {
  await env?.close();
});

describe('redfish out-of-band inspection', () => {
  it.each([
    ['node-0', ['CUSTOM_GPU'], 'baremetal.gpu'],
    ['node-1', ['CUSTOM_STORAGE'], 'baremetal.storage'],
    ['node-2', ['CUSTOM_LEGACY_BIOS'], null],
  ])(
    '%s: properties, ports, traits and inventory from the BMC; no boot',
    async (system, traits, rc) => {
      const hw = env.lab.systems.get(system).machine;
      const bootsBefore = env.lab.systems.get(system).bootCount;
      const node = await inspectableNode(env, system, 'redfish', false);
      expect(await portsOf(env, node.uuid)).toEqual([]);
      await provision(env, node.uuid, 'inspect');
      const done = await waitNode(
        env,
        node.uuid,
        (n) => (n.provision_state === 'manageable' || n.provision_state === 'inspect failed') && n.reservation === null,
        30_000,
      );
      expect(done.provision_state, JSON.stringify(done.last_error)).toBe('manageable');
      expect(done.properties).toMatchObject(expectedProperties(hw));
      expect(done.traits).toEqual(traits);
      expect(done.resource_class).toBe(rc);
      expect(env.lab.systems.get(system).bootCount).toBe(bootsBefore);
      const ports = await portsOf(env, node.uuid);
      expect(ports.map((p) => p.address).sort()).toEqual(hw.nics.map((n) => n.mac).sort());
      for (const nic of hw.nics) expect(ports.find((p) => p.address === nic.mac).local_link_connection, nic.name).toEqual(expectedLlc(nic));
      const inv = await bm(env.ts, env.p.owner, 'GET', `/v1/nodes/${node.uuid}/inventory`, undefined, '1.81');
      expect(inv.status, inv.text).toBe(200);
      expect(inv.body.inventory.disks.map((d: any) => [d.name, d.size, d.rotational, d.serial])).toEqual(
        hw.disks.map((d) => [d.name, d.sizeBytes, d.rotational, d.serial]),
      );
      expect(inv.body.inventory.system_vendor.serial_number).toBe(hw.system.serial);
      expect(inv.body.plugin_data.gpus).toBe(hw.gpus.length);
    },
    60_000,
  );

  it('a BMC that is down: inspect failed with last_error, the node stays usable', async () => {
    const node = await enrollRedfish(env, 'node-3', { inspect_interface: 'redfish', name: 'dead-bmc' });
    await provision(env, node.uuid, 'manage');
    await waitNode(env, node.uuid, (n) => n.provision_state === 'manageable' && n.reservation === null);
    const dead = await bm(env.ts, env.p.admin, 'PATCH', `/v1/nodes/${node.uuid}`, [
      { op: 'replace', path: '/driver_info/redfish_address', value: await deadUrl() },
    ]);
    expect(dead.status, dead.text).toBe(200);
    await provision(env, node.uuid, 'inspect');
    const failed = await waitNode(env, node.uuid, (n) => n.provision_state === 'inspect failed' && n.reservation === null, 30_000);
    expect(failed.last_error).toMatch(/inspect/i);
    expect(failed.last_error).not.toContain('password');
    await provision(env, node.uuid, 'manage');
    expect((await waitNode(env, node.uuid, (n) => n.reservation === null && n.provision_state === 'manageable')).provision_state).toBe(
      'manageable',
    );
    expect((await bm(env.ts, env.p.admin, 'GET', `/v1/nodes/${node.uuid}/inventory`, undefined, '1.81')).status).toBe(404);
  }, 60_000);

  it('paths in any case: a lower-case redfish_system_id inspects like the canonical one, as on real BMCs', async () => {
    const hw = env.lab.systems.get('node-3').machine;
    const node = await enrollRedfish(
      env,
      'node-3',
      { inspect_interface: 'redfish', name: 'lower-case-path' },
      { redfish_system_id: '/redfish/v1/systems/NODE-3' },
    );
    await provision(env, node.uuid, 'manage');
    const managed = await waitNode(env, node.uuid, (n) => n.provision_state !== 'verifying' && n.provision_state !== 'enroll');
    expect(managed.provision_state, JSON.stringify(managed.last_error)).toBe('manageable');
    expect(managed.last_error).toBeNull();
    await provision(env, node.uuid, 'inspect');
    const done = await waitNode(
      env,
      node.uuid,
      (n) => (n.provision_state === 'manageable' || n.provision_state === 'inspect failed') && n.reservation === null,
      30_000,
    );
    expect(done.provision_state, JSON.stringify(done.last_error)).toBe('manageable');
    expect(done.properties).toMatchObject(expectedProperties(hw));
    expect((await portsOf(env, node.uuid)).map((p) => p.address).sort()).toEqual(hw.nics.map((n) => n.mac).sort());

    const auth = { authorization: `Basic ${Buffer.from('admin:password').toString('base64')}` };
    const get = (p: string) => fetch(`${env.lab.url}${p}`, { headers: auth });
    for (const [p, id] of [
      ['/redfish/v1/systems/node-3/processors/cpu0', 'CPU0'],
      ['/redfish/v1/SYSTEMS/node-3/storage/raid.integrated.1-1/drives/disk.bay.0', 'Disk.Bay.0'],
      ['/redfish/v1/managers/BMC-node-3/virtualmedia/cd', 'Cd'],
      ['/redfish/v1/chassis/chassis-node-3/networkadapters/nic.1/ports/0', '0'],
      ['/redfish/v1/systems/node-3/bios', 'BIOS'],
    ] as const) {
      const res = await get(p);
      expect(res.status, p).toBe(200);
      expect(((await res.json()) as { Id: string }).Id, p).toBe(id);
    }
    expect((await get('/redfish/v1/systems/node-3/processors/cpu9')).status).toBe(404);
    expect((await fetch(`${env.lab.url}/REDFISH/v1/`)).status).toBe(200);
  }, 60_000);

  it('validate: inspect agent needs an agent ramdisk in driver_info; redfish needs none', async () => {
    const a = await enrollRedfish(env, 'node-3', { inspect_interface: 'agent', name: 'no-ramdisk' });
    const va = await bm(env.ts, env.p.admin, 'GET', `/v1/nodes/${a.uuid}/validate`);
    expect(va.body.inspect).toEqual({ result: false, reason: expect.stringMatching(/Missing are: \['deploy_kernel', 'deploy_ramdisk'\]/) });
    const ok = await bm(env.ts, env.p.admin, 'PATCH', `/v1/nodes/${a.uuid}`, [
      { op: 'add', path: '/driver_info/deploy_iso', value: 'http://lab/esi-agent.iso' },
    ]);
    expect(ok.status, ok.text).toBe(200);
    expect((await bm(env.ts, env.p.admin, 'GET', `/v1/nodes/${a.uuid}/validate`)).body.inspect).toEqual({ result: true });
    const r = await enrollRedfish(env, 'node-3', { inspect_interface: 'redfish', name: 'oob-validate' });
    expect((await bm(env.ts, env.p.admin, 'GET', `/v1/nodes/${r.uuid}/validate`)).body.inspect).toEqual({ result: true });
  });

  it('the redfish driver lists the agent and redfish inspect interfaces', async () => {
    const res = await bm(env.ts, env.p.admin, 'GET', '/v1/drivers/redfish', undefined, '1.81');
    expect(res.status, res.text).toBe(200);
    expect(res.body.enabled_inspect_interfaces).toEqual(expect.arrayContaining(['agent', 'redfish', 'no-inspect']));
  });
});
