/**
 * Boot settings of redfish nodes through the baremetal API against the lab: the boot mode
 * (`PUT /v1/nodes/{id}/states/boot_mode`, 1.76; node `boot_mode`, 1.75) for the five
 * personas, and the boot device override once or continuous (`PUT …/management/boot_device`
 * with `persistent`) as the lab's BMC records it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forceNode } from '../baremetal/helpers.ts';
import { bm, enrollRedfish, expectError, startConductorEnv, type ConductorEnv } from '../conductor/support.ts';

let env: ConductorEnv;

// Each test enrols a lab system of its own (node-0 … node-3): the BMC's boot settings and power
// state are as the lab starts them, whatever ran before.
beforeAll(async () => {
  env = await startConductorEnv(4);
});
afterAll(async () => env?.close());

const setMode = (node: any, target: unknown, who = env.p.admin, version = '1.78') =>
  bm(env.ts, who, 'PUT', `/v1/nodes/${node.uuid}/states/boot_mode`, { target }, version);

describe('boot mode', () => {
  it('admin, owner and lessee set it at the BMC (202) and the node shows it; another project 404; anonymous 401', async () => {
    const node = await enrollRedfish(env, 'node-0');
    expect(env.lab.systems.get('node-0').boot.mode).toBe('UEFI');
    const res = await setMode(node, 'bios');
    expect(res.status, res.text).toBe(202);
    expect(env.lab.systems.get('node-0').boot.mode).toBe('Legacy');
    expect((await bm(env.ts, env.p.admin, 'GET', `/v1/nodes/${node.uuid}`)).body.boot_mode).toBe('bios');
    expect((await setMode(node, 'uefi', env.p.owner)).status).toBe(202);
    expect(env.lab.systems.get('node-0').boot.mode).toBe('UEFI');
    expect((await setMode(node, 'bios', env.p.lessee)).status).toBe(202);
    expect(env.lab.systems.get('node-0').boot.mode).toBe('Legacy');
    expectError(await setMode(node, 'uefi', env.p.other), 404);
    expect((await setMode(node, 'uefi', env.p.anonymous)).status).toBe(401);
    expect(env.lab.systems.get('node-0').boot.mode).toBe('Legacy');
    const states = await bm(env.ts, env.p.lessee, 'GET', `/v1/nodes/${node.uuid}/states`);
    expect(states.body.boot_mode).toBe('bios');
  });

  it('refuses bad targets (400), old microversions (404), drivers without boot mode control (400) and nodes in transition (409)', async () => {
    const node = await enrollRedfish(env, 'node-1');
    expectError(await setMode(node, 'efi'), 400, /expected one of uefi, bios/);
    expectError(await setMode(node, undefined), 400);
    expectError(
      await bm(env.ts, env.p.admin, 'PUT', `/v1/nodes/${node.uuid}/states/boot_mode`, { target: 'uefi', now: true }),
      400,
      /unexpected key/,
    );
    expectError(await setMode(node, 'uefi', env.p.admin, '1.75'), 404);
    const fake = await bm(env.ts, env.p.admin, 'POST', '/v1/nodes', { driver: 'fake-hardware', name: 'fake-boot' });
    expectError(
      await bm(env.ts, env.p.admin, 'PUT', `/v1/nodes/${fake.body.uuid}/states/boot_mode`, { target: 'uefi' }),
      400,
      /cannot set the boot mode/,
    );
    // A node in a transition (here: waiting for the agent during cleaning) answers 409.
    const was = (await bm(env.ts, env.p.admin, 'GET', `/v1/nodes/${node.uuid}`)).body;
    await forceNode(env.ts, node.uuid, { provision_state: 'clean wait', target_provision_state: 'manageable' });
    try {
      expectError(await setMode(node, 'uefi'), 409, /in a transition/);
    } finally {
      await forceNode(env.ts, node.uuid, { provision_state: was.provision_state, target_provision_state: was.target_provision_state });
    }
  });
});

describe('boot device override', () => {
  it('persistent true is Continuous, false is Once, and reads back as Ironic reports it', async () => {
    const node = await enrollRedfish(env, 'node-2');
    const put = (body: unknown) => bm(env.ts, env.p.admin, 'PUT', `/v1/nodes/${node.uuid}/management/boot_device`, body);
    expect((await put({ boot_device: 'pxe', persistent: true })).status).toBe(204);
    expect(env.lab.systems.get('node-2').boot).toMatchObject({ target: 'Pxe', enabled: 'Continuous' });
    expect((await bm(env.ts, env.p.owner, 'GET', `/v1/nodes/${node.uuid}/management/boot_device`)).body).toEqual({
      boot_device: 'pxe',
      persistent: true,
    });
    expect((await put({ boot_device: 'cdrom' })).status).toBe(204);
    expect(env.lab.systems.get('node-2').boot).toMatchObject({ target: 'Cd', enabled: 'Once' });
    expect((await bm(env.ts, env.p.admin, 'GET', `/v1/nodes/${node.uuid}/management/boot_device`)).body).toEqual({
      boot_device: 'cdrom',
      persistent: false,
    });
    // A one-time override is used by the next boot and then cleared by the BMC.
    env.lab.systems.setPowerState('node-2', 'On');
    expect(env.lab.systems.get('node-2').lastBootOverride).toBe('Cd');
    expect(env.lab.systems.get('node-2').boot.enabled).toBe('Disabled');
    // The lessee may set it too (ESI: bring your own provisioning); another project may not see the node.
    const byLessee = await bm(env.ts, env.p.lessee, 'PUT', `/v1/nodes/${node.uuid}/management/boot_device`, { boot_device: 'pxe' });
    expect(byLessee.status, byLessee.text).toBe(204);
    expect(env.lab.systems.get('node-2').boot).toMatchObject({ target: 'Pxe', enabled: 'Once' });
    expectError(await bm(env.ts, env.p.other, 'PUT', `/v1/nodes/${node.uuid}/management/boot_device`, { boot_device: 'pxe' }), 404);
  });
});

describe('boot mode in the conductor', () => {
  it('manage caches the BMC boot mode; a deployment sets the mode its capabilities ask for', async () => {
    const { provision, settled } = await import('../conductor/support.ts');
    // The fake deploy interface: the BMC's part of a deployment (boot mode, boot device, power), nothing written.
    // Two nodes on one lab system: the boot mode is changed at the BMC through the first, behind
    // the back of the second, which manage must then read.
    const node = await enrollRedfish(env, 'node-3');
    const n = await enrollRedfish(env, 'node-3', { name: 'boot-mode-deploy', deploy_interface: 'fake' });
    await bm(env.ts, env.p.admin, 'PUT', `/v1/nodes/${node.uuid}/states/boot_mode`, { target: 'bios' });
    await provision(env, n.uuid, 'manage');
    expect((await settled(env, n.uuid)).boot_mode).toBe('bios');
    const patched = await bm(env.ts, env.p.admin, 'PATCH', `/v1/nodes/${n.uuid}`, [
      { op: 'add', path: '/properties/capabilities', value: 'boot_mode:uefi,cpu_vt:true' },
      { op: 'add', path: '/instance_info/image_source', value: 'http://images.example/os.qcow2' },
    ]);
    expect(patched.status, patched.text).toBe(200);
    await provision(env, n.uuid, 'provide');
    expect((await settled(env, n.uuid)).provision_state).toBe('available');
    await provision(env, n.uuid, 'active');
    const active = await settled(env, n.uuid);
    expect(active).toMatchObject({ provision_state: 'active', boot_mode: 'uefi', last_error: null });
    expect(active.driver_internal_info.deploy_boot_mode).toBe('uefi');
    expect(env.lab.systems.get('node-3').boot).toMatchObject({ mode: 'UEFI', target: 'Hdd', enabled: 'Continuous' });
  });
});
