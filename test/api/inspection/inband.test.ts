/**
 * In-band inspection (`inspect_interface` = `agent`) of lab nodes of each shipped model: the
 * conductor boots esi's agent, which posts an IPA inventory built from the node's lab hardware
 * description to `POST /v1/continue_inspection`; what inspection recorded (properties, ports,
 * local_link_connection, traits and resource class from the rules, the stored inventory) is
 * compared with the lab's truth. Also: inventory visibility per persona, wrong states,
 * malformed inspection data.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bm, expectError, getNode, provision, waitNode, type ConductorEnv } from '../conductor/support.ts';
import { expectedLlc, expectedProperties, inspectableNode, portsOf, startInspectionEnv } from './support.ts';

let env: ConductorEnv;

// Each test inspects or enrols lab systems of its own (node-0 … node-7): a node's ports, inventory
// and state are only what the test did to it.
beforeAll(async () => {
  env = await startInspectionEnv(8);
}, 60_000);

afterAll(async () => {
  await env?.close();
});

/** Inspect lab system `system` in band and wait for the outcome. */
async function inspect(system: string): Promise<any> {
  const node = await inspectableNode(env, system);
  await provision(env, node.uuid, 'inspect');
  return waitNode(
    env,
    node.uuid,
    (n) => (n.provision_state === 'manageable' || n.provision_state === 'inspect failed') && n.reservation === null,
    60_000,
  );
}

describe('in-band inspection of each lab model', () => {
  /** Inspect `system` and compare what inspection recorded with the lab's description of it; returns the node. */
  async function inspectAndCompare(system: string, model: string, traits: string[], rc: string | null): Promise<any> {
    const hw = env.lab.systems.get(system).machine;
    expect(hw.model).toBe(model);
    const done = await inspect(system);
    expect(done.provision_state, JSON.stringify(done.last_error)).toBe('manageable');
    expect(done.last_error).toBeNull();
    expect(done.power_state).toBe('power off');
    expect(env.lab.systems.powerState(system)).toBe('Off');
    expect(done.inspection_started_at).not.toBeNull();
    expect(done.inspection_finished_at).not.toBeNull();
    expect(done.properties).toMatchObject(expectedProperties(hw));
    expect(String(done.properties.capabilities)).toContain(`boot_mode:${hw.bootMode}`);
    expect(done.traits).toEqual(traits);
    expect(done.resource_class).toBe(rc);
    expect(Object.keys(done.driver_internal_info)).not.toContain('agent_boot');

    const ports = await portsOf(env, done.uuid);
    expect(ports.map((p) => p.address).sort()).toEqual(hw.nics.map((n) => n.mac).sort());
    for (const nic of hw.nics) {
      const port = ports.find((p) => p.address === nic.mac);
      expect(port.pxe_enabled, nic.name).toBe(nic.pxe);
      expect(port.local_link_connection, nic.name).toEqual(expectedLlc(nic));
    }

    const inv = await bm(env.ts, env.p.admin, 'GET', `/v1/nodes/${done.uuid}/inventory`, undefined, '1.81');
    expect(inv.status, inv.text).toBe(200);
    const i = inv.body.inventory;
    expect(i.cpu.count).toBe(expectedProperties(hw).cpus);
    expect(i.cpu.model_name).toBe(hw.cpu.model);
    expect(i.memory.physical_mb).toBe(hw.memoryMiB);
    expect(i.disks.map((d: any) => [d.name, d.size, d.rotational, d.serial, d.wwn])).toEqual(
      hw.disks.map((d) => [d.name, d.sizeBytes, d.rotational, d.serial, d.wwn]),
    );
    expect(i.interfaces.map((n: any) => n.mac_address)).toEqual(hw.nics.map((n) => n.mac));
    expect(i.system_vendor).toEqual({
      product_name: hw.system.product,
      serial_number: hw.system.serial,
      manufacturer: hw.system.manufacturer,
    });
    expect(i.boot.current_boot_mode).toBe(hw.bootMode);
    expect(inv.body.plugin_data.gpus).toBe(hw.gpus.length);
    expect(inv.body.plugin_data.macs.sort()).toEqual(hw.nics.map((n) => n.mac).sort());
    return done;
  }

  const cases: Array<[string, string, string[], string | null]> = [
    ['node-0', 'gpu', ['CUSTOM_GPU'], 'baremetal.gpu'],
    ['node-1', 'storage', ['CUSTOM_STORAGE'], 'baremetal.storage'],
    ['node-3', 'default', [], null],
  ];
  it.each(cases)(
    '%s (%s): properties, ports, LLDP, rules and inventory match the lab description',
    async (system, model, traits, rc) => {
      await inspectAndCompare(system, model, traits, rc);
    },
    90_000,
  );

  it('node-2 (small): properties, ports, LLDP, rules and inventory match the lab description; a second inspection keeps the ports (no duplicates) and stays consistent', async () => {
    // step: the first inspection, checked as for the other models
    const node = await inspectAndCompare('node-2', 'small', ['CUSTOM_LEGACY_BIOS'], null);

    // step: a second inspection of the same node
    await provision(env, node.uuid, 'inspect');
    const done = await waitNode(
      env,
      node.uuid,
      (n) => n.provision_state === 'manageable' && n.reservation === null && n.inspection_finished_at !== node.inspection_finished_at,
      60_000,
    );
    expect(done.last_error).toBeNull();
    const ports = await portsOf(env, node.uuid);
    expect(ports).toHaveLength(env.lab.systems.get('node-2').machine.nics.length);
  }, 90_000);
});

describe('inventory API: personas and versions', () => {
  it('admin and owner read it; the lessee 403; another project 404; anonymous 401; before 1.81 404', async () => {
    const node = await inspect('node-5');
    expect(node.provision_state, JSON.stringify(node.last_error)).toBe('manageable');
    const url = `/v1/nodes/${node.uuid}/inventory`;
    expect((await bm(env.ts, env.p.admin, 'GET', url, undefined, '1.81')).status).toBe(200);
    expect((await bm(env.ts, env.p.owner, 'GET', url, undefined, '1.81')).status).toBe(200);
    expectError(await bm(env.ts, env.p.lessee, 'GET', url, undefined, '1.81'), 403);
    expectError(await bm(env.ts, env.p.other, 'GET', url, undefined, '1.81'), 404);
    expect((await bm(env.ts, env.p.anonymous, 'GET', url, undefined, '1.81')).status).toBe(401);
    expectError(await bm(env.ts, env.p.admin, 'GET', url, undefined, '1.80'), 404);
  }, 90_000);

  it('a node never inspected has no inventory: 404 NodeInventoryNotFound', async () => {
    const node = await inspectableNode(env, 'node-4');
    const res = await bm(env.ts, env.p.admin, 'GET', `/v1/nodes/${node.uuid}/inventory`, undefined, '1.81');
    expectError(res, 404, /inventory/i);
  });
});

describe('bad input', () => {
  it('inspect from a state that does not allow it: 400 in Ironic format, nothing changes', async () => {
    const created = await bm(env.ts, env.p.admin, 'POST', '/v1/nodes', { driver: 'fake-hardware', name: 'enrolled-only' });
    expect(created.status, created.text).toBe(201);
    const res = await bm(env.ts, env.p.admin, 'PUT', `/v1/nodes/${created.body.uuid}/states/provision`, { target: 'inspect' });
    expectError(res, 400, /inspect/);
    expect((await getNode(env, created.body.uuid)).provision_state).toBe('enroll');
  });

  it('the callback is public: every caller gets the same answers', async () => {
    for (const who of [env.p.admin, env.p.owner, env.p.lessee, env.p.other, env.p.anonymous]) {
      expectError(await bm(env.ts, who, 'POST', '/v1/continue_inspection', { inventory: {} }), 400, /cpu/);
      expectError(
        await bm(env.ts, who, 'POST', '/v1/continue_inspection', {
          inventory: {
            cpu: { count: 1, architecture: 'x86_64' },
            memory: { physical_mb: 1 },
            interfaces: [{ mac_address: '52:54:00:fe:fe:fe' }],
            disks: [],
          },
        }),
        404,
      );
    }
  });

  it('inspect verb: the owner may start it; another project 404; anonymous 401', async () => {
    const node = await inspectableNode(env, 'node-6');
    expectError(await bm(env.ts, env.p.other, 'PUT', `/v1/nodes/${node.uuid}/states/provision`, { target: 'inspect' }), 404);
    expect((await bm(env.ts, env.p.anonymous, 'PUT', `/v1/nodes/${node.uuid}/states/provision`, { target: 'inspect' })).status).toBe(401);
    expect((await getNode(env, node.uuid)).provision_state).toBe('manageable');
    const owner = await bm(env.ts, env.p.owner, 'PUT', `/v1/nodes/${node.uuid}/states/provision`, { target: 'inspect' });
    expect(owner.status, owner.text).toBe(202);
    const done = await waitNode(
      env,
      node.uuid,
      (n) => n.provision_state === 'manageable' && n.reservation === null && n.inspection_finished_at !== null,
      60_000,
    );
    expect(done.properties).toMatchObject(expectedProperties(env.lab.systems.get('node-6').machine));
  }, 90_000);

  it('malformed inspection data: 400; data for no waiting node: 404', async () => {
    // An inspected node that waits for nothing: unsolicited data must leave its inventory alone.
    const node = await inspect('node-7');
    expect(node.provision_state, JSON.stringify(node.last_error)).toBe('manageable');
    const post = (body: unknown) => bm(env.ts, null, 'POST', '/v1/continue_inspection', body);
    expectError(await post('not an object'), 400);
    expectError(await post({ inventory: [] }), 400, /inventory/);
    expectError(
      await post({ inventory: { cpu: { count: 0, architecture: 'x86_64' }, memory: { physical_mb: 1 }, interfaces: [], disks: [] } }),
      400,
      /cpu\.count/,
    );
    expectError(
      await post({
        inventory: {
          cpu: { count: 2, architecture: 'x86_64' },
          memory: { physical_mb: 1 },
          interfaces: [{ mac_address: 'zz' }],
          disks: [],
        },
      }),
      400,
      /mac_address/,
    );
    expectError(
      await post({ inventory: { cpu: { count: 2, architecture: 'x86_64' }, memory: {}, interfaces: [], disks: [] } }),
      400,
      /memory/,
    );
    expectError(
      await post({
        inventory: { cpu: { count: 2, architecture: 'x86_64' }, memory: { physical_mb: 1 }, interfaces: [], disks: [] },
        root_disk: { name: '/dev/sda', size: 'big' },
      }),
      400,
      /root_disk/,
    );
    const mac = env.lab.systems.get('node-7').mac;
    const valid = {
      inventory: {
        cpu: { count: 2, architecture: 'x86_64' },
        memory: { physical_mb: 4096 },
        interfaces: [{ mac_address: mac }],
        disks: [{ name: '/dev/vda', size: 10 * 1024 ** 3 }],
      },
    };
    const before = await bm(env.ts, env.p.admin, 'GET', `/v1/nodes/${node.uuid}/inventory`, undefined, '1.81');
    expect(before.status, before.text).toBe(200);
    expectError(await post(valid), 404);
    expect((await getNode(env, node.uuid)).provision_state).toBe('manageable');
    const after = await bm(env.ts, env.p.admin, 'GET', `/v1/nodes/${node.uuid}/inventory`, undefined, '1.81');
    expect(after.status).toBe(before.status);
    expect(after.body).toEqual(before.body);
  }, 90_000);
});
