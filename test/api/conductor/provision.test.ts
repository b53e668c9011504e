/**
 * Provisioning through the HTTP API, carried out by the conductor (https://docs.openstack.org/api-ref/baremetal/#change-node-provision-state,
 * https://docs.openstack.org/ironic/latest/user/states.html): enroll → manage → provide → deploy → undeploy on redfish nodes against the lab's real
 * BMCs and on fake-hardware nodes; manual clean, inspect, adopt, rescue/unrescue, rebuild;
 * failures (wrong BMC password on manage, BMC down on deploy and on teardown) going to the
 * FSM's fail states with `last_error`; automated cleaning switched off per node; who may ask.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bm,
  deadUrl,
  enroll,
  enrollRedfish,
  expectError,
  getNode,
  patchNode,
  pick,
  power,
  provision,
  settled,
  startConductorEnv,
  type ConductorEnv,
} from './support.ts';
import type { Persona } from '../../helpers/harness.ts';

let env: ConductorEnv;

beforeAll(async () => {
  env = await startConductorEnv(7, { env: { ESI_POWER_TIMEOUT: '3' } });
});
afterAll(async () => env?.close());

/** Request `verb` and wait until the node is settled; returns the node. */
async function step(ident: string, verb: string, extra: Record<string, unknown> = {}): Promise<any> {
  await provision(env, ident, verb, extra);
  return settled(env, ident);
}

// The BMC's part of the life cycle: the `fake` deploy interface writes nothing (Ironic FakeDeploy),
// so these nodes need no agent ramdisk; the agent flows are test/api/deploy/*.
const FAKE_DEPLOY = { deploy_interface: 'fake' };

describe('the life cycle of a redfish node with the fake deploy interface', () => {
  it('enroll → manage → provide → deploy → undeploy ends available, with the BMC powered as expected', async () => {
    const n = await enrollRedfish(env, 'node-0', FAKE_DEPLOY);
    expect(n.provision_state).toBe('enroll');
    env.lab.systems.setPowerState('node-0', 'On');

    const managed = await step(n.uuid, 'manage');
    expect(pick(managed)).toMatchObject({
      provision_state: 'manageable',
      target_provision_state: null,
      power_state: 'power on',
      last_error: null,
    });
    expect(managed.provision_updated_at).not.toBeNull();

    const available = await step(n.uuid, 'provide');
    expect(pick(available)).toMatchObject({
      provision_state: 'available',
      target_provision_state: null,
      power_state: 'power off',
      last_error: null,
    });
    expect(env.lab.systems.powerState('node-0')).toBe('Off');

    const instance = '4e6a3c0e-7b1b-4c55-8d8b-0f3a1b2c3d4e';
    expect(
      (
        await bm(env.ts, env.p.admin, 'PATCH', `/v1/nodes/${n.uuid}`, [
          { op: 'add', path: '/instance_info/image_source', value: 'http://images.example/fedora.qcow2' },
          { op: 'add', path: '/instance_uuid', value: instance },
        ])
      ).status,
    ).toBe(200);
    const active = await step(n.uuid, 'active', { configdrive: { meta_data: { hostname: 'h1' } } });
    expect(pick(active)).toMatchObject({
      provision_state: 'active',
      target_provision_state: null,
      power_state: 'power on',
      last_error: null,
    });
    expect(active.instance_info.image_source).toBe('http://images.example/fedora.qcow2');
    expect(active.instance_info.configdrive).toBe('******');
    expect(active.instance_uuid).toBe(instance);
    expect(env.lab.systems.powerState('node-0')).toBe('On');
    expect(env.lab.systems.get('node-0').boot).toMatchObject({ target: 'Hdd', enabled: 'Continuous' });

    const undeployed = await step(n.uuid, 'undeploy');
    expect(pick(undeployed)).toMatchObject({
      provision_state: 'available',
      target_provision_state: null,
      power_state: 'power off',
      last_error: null,
    });
    expect(undeployed.instance_info).toEqual({});
    expect(undeployed.instance_uuid).toBeNull();
    expect(env.lab.systems.powerState('node-0')).toBe('Off');
  });

  it('manage with a wrong BMC password goes back to enroll with last_error (no secret in it)', async () => {
    const n = await enrollRedfish(env, 'node-1', {}, { redfish_password: 'not-the-Secret-9' });
    const back = await step(n.uuid, 'manage');
    expect(pick(back)).toMatchObject({ provision_state: 'enroll', target_provision_state: null, power_state: null });
    expect(back.last_error).toMatch(/power state/);
    expect(back.last_error).toMatch(/401/);
    expect(back.last_error).not.toContain('not-the-Secret-9');
    // Fixing the password makes manage succeed.
    expect(
      (
        await bm(env.ts, env.p.admin, 'PATCH', `/v1/nodes/${n.uuid}`, [
          { op: 'replace', path: '/driver_info/redfish_password', value: 'password' },
        ])
      ).status,
    ).toBe(200);
    expect((await step(n.uuid, 'manage')).provision_state).toBe('manageable');
  });

  it('manage with incomplete driver_info fails validation and stays in enroll', async () => {
    const n = await enroll(env, {
      driver: 'redfish',
      name: 'no-address',
      driver_info: { redfish_system_id: '/redfish/v1/Systems/node-1' },
    });
    const back = await step(n.uuid, 'manage');
    expect(back.provision_state).toBe('enroll');
    expect(back.last_error).toMatch(/redfish_address/);
  });

  it('a deploy whose BMC is down ends in deploy failed; undeploy of it, also unreachable, ends in error', async () => {
    const n = await enrollRedfish(env, 'node-2', FAKE_DEPLOY);
    await step(n.uuid, 'manage');
    await step(n.uuid, 'provide');
    expect(
      (
        await bm(env.ts, env.p.admin, 'PATCH', `/v1/nodes/${n.uuid}`, [
          { op: 'replace', path: '/driver_info/redfish_address', value: await deadUrl() },
        ])
      ).status,
    ).toBe(200);
    const failed = await step(n.uuid, 'active');
    expect(pick(failed)).toMatchObject({ provision_state: 'deploy failed', target_provision_state: 'active' });
    expect(failed.last_error).toMatch(/Failed to deploy/);
    expect(failed.last_error).toMatch(/unreachable|ECONNREFUSED/);
    const torn = await step(n.uuid, 'deleted');
    expect(pick(torn)).toMatchObject({ provision_state: 'error', target_provision_state: null });
    expect(torn.last_error).toMatch(/tear down/);
    expect(torn.instance_info).toEqual({});
  });

  it('provide with automated cleaning off for the node goes straight to available without touching power', async () => {
    const n = await enrollRedfish(env, 'node-3', { automated_clean: false });
    env.lab.systems.setPowerState('node-3', 'On');
    await step(n.uuid, 'manage');
    const available = await step(n.uuid, 'provide');
    expect(pick(available)).toMatchObject({ provision_state: 'available', power_state: 'power on', last_error: null });
    expect(env.lab.systems.powerState('node-3')).toBe('On');
  });

  it('the lessee and the owner may provision their node; another project gets 404 and nothing moves', async () => {
    const n = await enrollRedfish(env, 'node-4', FAKE_DEPLOY);
    await provision(env, n.uuid, 'manage', {}, env.p.owner);
    expect((await settled(env, n.uuid)).provision_state).toBe('manageable');
    await provision(env, n.uuid, 'provide', {}, env.p.owner);
    expect((await settled(env, n.uuid)).provision_state).toBe('available');
    await provision(env, n.uuid, 'active', {}, env.p.lessee);
    expect((await settled(env, n.uuid)).provision_state).toBe('active');
    expectError(await bm(env.ts, env.p.other, 'PUT', `/v1/nodes/${n.uuid}/states/provision`, { target: 'deleted' }), 404);
    expectError(await bm(env.ts, env.p.anonymous, 'PUT', `/v1/nodes/${n.uuid}/states/provision`, { target: 'deleted' }), 401);
    expect((await getNode(env, n.uuid)).provision_state).toBe('active');
    expect(env.lab.systems.powerState('node-4')).toBe('On');
    await provision(env, n.uuid, 'deleted', {}, env.p.lessee);
    expect(pick(await settled(env, n.uuid))).toMatchObject({ provision_state: 'available', power_state: 'power off' });
  });
});

describe('the life cycle of a fake-hardware node', () => {
  it('manage, provide, deploy, rebuild, rescue, unrescue, undeploy, manage, clean, inspect, adopt', async () => {
    const n = await enroll(env, { driver: 'fake-hardware', name: 'fake-life' });
    expect(pick(await step(n.uuid, 'manage'))).toMatchObject({ provision_state: 'manageable', power_state: 'power off', last_error: null });
    expect((await step(n.uuid, 'provide')).provision_state).toBe('available');
    expect(pick(await step(n.uuid, 'active'))).toMatchObject({ provision_state: 'active', power_state: 'power on' });
    expect(pick(await step(n.uuid, 'rebuild'))).toMatchObject({ provision_state: 'active', power_state: 'power on', last_error: null });
    const rescued = await step(n.uuid, 'rescue', { rescue_password: 'rescue-Pass-1' });
    expect(pick(rescued)).toMatchObject({ provision_state: 'rescue', target_provision_state: null, last_error: null });
    const unrescued = await step(n.uuid, 'unrescue');
    expect(pick(unrescued)).toMatchObject({ provision_state: 'active', last_error: null });
    expect(unrescued.instance_info.rescue_password).toBeUndefined();
    expect(pick(await step(n.uuid, 'undeploy'))).toMatchObject({ provision_state: 'available', power_state: 'power off' });
    expect((await step(n.uuid, 'manage')).provision_state).toBe('manageable');

    await power(env, n.uuid, 'power on');
    await settled(env, n.uuid);
    const cleaned = await step(n.uuid, 'clean', { clean_steps: [{ interface: 'deploy', step: 'erase_devices_metadata' }] });
    expect(pick(cleaned)).toMatchObject({
      provision_state: 'manageable',
      target_provision_state: null,
      power_state: 'power off',
      last_error: null,
    });
    expect(cleaned.driver_internal_info.clean_steps).toBeUndefined();

    const inspected = await step(n.uuid, 'inspect');
    expect(pick(inspected)).toMatchObject({ provision_state: 'manageable', last_error: null });
    expect(inspected.inspection_finished_at).not.toBeNull();

    expect(pick(await step(n.uuid, 'adopt'))).toMatchObject({ provision_state: 'active', power_state: 'power off', last_error: null });
  });
});

describe('manual cleaning of a redfish node', () => {
  it('a clean step that needs the agent is refused (400, the missing driver_info keys) on a direct node without a ramdisk; nothing changes', async () => {
    const n = await enrollRedfish(env, 'node-5', { deploy_interface: 'direct' });
    await step(n.uuid, 'manage');
    for (const who of [env.p.admin, env.p.owner]) {
      const res = await bm(env.ts, who, 'PUT', `/v1/nodes/${n.uuid}/states/provision`, {
        target: 'clean',
        clean_steps: [{ interface: 'deploy', step: 'erase_devices' }],
      });
      expectError(res, 400);
      expect(res.text).toMatch(/Missing are: \['deploy_kernel', 'deploy_ramdisk'\]/);
    }
    expect(pick(await getNode(env, n.uuid))).toMatchObject({
      provision_state: 'manageable',
      target_provision_state: null,
      last_error: null,
    });
    // A step the conductor runs out of band needs no agent.
    const bios = await bm(env.ts, env.p.admin, 'PUT', `/v1/nodes/${n.uuid}/states/provision`, {
      target: 'clean',
      clean_steps: [{ interface: 'bios', step: 'factory_reset' }],
    });
    expect(bios.status, bios.text).toBe(202);
    expect((await settled(env, n.uuid)).provision_state).toBe('manageable');
  });

  it('a failure while the clean step runs puts the node in maintenance with fault "clean failure"', async () => {
    const n = await enrollRedfish(env, 'node-5', { name: 'node-5b', ...FAKE_DEPLOY });
    env.lab.systems.setPowerState('node-5', 'On');
    await step(n.uuid, 'manage');
    env.lab.systems.setIgnoreResets('node-5', true);
    try {
      const failed = await step(n.uuid, 'provide');
      expect(pick(failed)).toMatchObject({
        provision_state: 'clean failed',
        maintenance: true,
        fault: 'clean failure',
        power_state: 'power on',
      });
      expect(failed.last_error).toMatch(/Failed to clean/);
      expect(failed.maintenance_reason).toBe(failed.last_error);
    } finally {
      env.lab.systems.setIgnoreResets('node-5', false);
    }
  });
});

describe('honest provisioning: a direct node without an agent ramdisk is refused before anything changes', () => {
  it('deploy and provide answer 400 naming the missing keys for admin, owner and lessee; another project 404; anonymous 401; validate says why', async () => {
    const n = await enrollRedfish(env, 'node-6', {
      deploy_interface: 'direct',
      boot_interface: 'redfish-virtual-media',
      name: 'no-ramdisk',
    });
    await step(n.uuid, 'manage');
    const put = (who: Persona, target: string) => bm(env.ts, who, 'PUT', `/v1/nodes/${n.uuid}/states/provision`, { target });
    for (const who of [env.p.admin, env.p.owner, env.p.lessee]) {
      const res = await put(who, 'provide');
      expectError(res, 400);
      expect(res.text).toContain("Missing are: ['deploy_iso'] (or 'deploy_kernel' and 'deploy_ramdisk')");
    }
    expectError(await put(env.p.other, 'provide'), 404);
    expectError(await put(env.p.anonymous, 'provide'), 401);
    expect(pick(await getNode(env, n.uuid))).toMatchObject({
      provision_state: 'manageable',
      target_provision_state: null,
      last_error: null,
    });

    const validate = await bm(env.ts, env.p.owner, 'GET', `/v1/nodes/${n.uuid}/validate`);
    expect(validate.status, validate.text).toBe(200);
    expect(validate.body.deploy).toEqual({ result: false, reason: expect.stringContaining("Missing are: ['deploy_iso']") });
    expect(validate.body.boot).toEqual({ result: false, reason: expect.stringContaining("Missing are: ['deploy_iso']") });

    // Without automated cleaning `provide` owes no wipe; the deploy is still refused.
    expect((await patchNode(env, n.uuid, [{ op: 'add', path: '/automated_clean', value: false }])).status).toBe(200);
    expect((await step(n.uuid, 'provide')).provision_state).toBe('available');
    expect(
      (await patchNode(env, n.uuid, [{ op: 'add', path: '/instance_info/image_source', value: 'http://images.example/os.raw' }])).status,
    ).toBe(200);
    for (const who of [env.p.admin, env.p.owner, env.p.lessee]) {
      const res = await put(who, 'active');
      expectError(res, 400);
      expect(res.text).toMatch(/deploy needs the deploy agent ramdisk/);
    }
    expectError(await put(env.p.other, 'active'), 404);
    expectError(await put(env.p.anonymous, 'active'), 401);
    expect(pick(await getNode(env, n.uuid))).toMatchObject({
      provision_state: 'available',
      target_provision_state: null,
      last_error: null,
    });

    // With the ISO the same node validates and deploys through the agent (test/api/deploy/*).
    expect((await patchNode(env, n.uuid, [{ op: 'add', path: '/driver_info/deploy_iso', value: 'http://lab/esi-agent.iso' }])).status).toBe(
      200,
    );
    const ok = await bm(env.ts, env.p.owner, 'GET', `/v1/nodes/${n.uuid}/validate`);
    expect(ok.body.deploy).toEqual({ result: true });
    expect(ok.body.boot).toEqual({ result: true });
  });
});
