/**
 * The conductor tasks run against the real drivers (fake-hardware in memory; redfish for
 * driver_info validation), returning the node changes of each outcome (https://docs.openstack.org/api-ref/baremetal/#change-node-provision-state,
 * https://docs.openstack.org/ironic/latest/user/states.html). End-to-end runs against real Redfish BMCs are in test/api/conductor/.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { runPowerTask } from '../../../src/conductor/tasks/power.ts';
import { runProvisionStage } from '../../../src/conductor/tasks/provision.ts';
import { sealDriverInfo } from '../../../src/domain/inventory/driver-secrets.ts';
import type { Node } from '../../../src/domain/inventory/model.ts';
import { SecretBox } from '../../../src/domain/secrets.ts';
import { makeEnv, makeNode } from './fixtures.ts';

const NOW = Date.UTC(2030, 0, 1);
const env = makeEnv({ now: NOW });
afterAll(() => env.hardware.close());

/** Apply changes to a node (as the repository would). */
function apply(node: Node, changes: Partial<Node>): Node {
  return { ...node, ...changes };
}

describe('power task', () => {
  it('fake-hardware: sets the state, reads it back, clears target and last_error, drops the request timeout', async () => {
    let node = makeNode({ target_power_state: 'power on', last_error: 'old', driver_internal_info: { power_timeout_s: 5, keep: true } });
    const c = await runPowerTask(env, node);
    expect(c).toEqual({ target_power_state: null, driver_internal_info: { keep: true }, power_state: 'power on', last_error: null });
    node = apply(node, c);
    expect(await runPowerTask(env, { ...node, target_power_state: 'soft power off' })).toMatchObject({ power_state: 'power off' });
    expect(await runPowerTask(env, { ...node, target_power_state: 'rebooting' })).toMatchObject({ power_state: 'power on' });
  });

  it('an unknown target, an unknown driver and undecryptable secrets fail with a clear last_error', async () => {
    expect((await runPowerTask(env, makeNode({ target_power_state: 'explode' }))).last_error).toMatch(
      /"explode" is not a power state target/,
    );
    const noDriver = await runPowerTask(env, makeNode({ driver: 'ipmi', target_power_state: 'power on' }));
    expect(noDriver).toMatchObject({ target_power_state: null });
    expect(noDriver.last_error).toMatch(/ipmi/);
    const otherKey = new SecretBox(randomBytes(32));
    const sealed = sealDriverInfo(otherKey, { redfish_address: 'http://127.0.0.1:1', redfish_password: 'Hidden-1' }, {});
    const c = await runPowerTask(env, makeNode({ driver: 'redfish', driver_info: sealed, target_power_state: 'power on' }));
    expect(c.last_error).toMatch(/cannot be decrypted/);
    expect(c.last_error).not.toContain('Hidden-1');
    expect(c.power_state).toBeUndefined();
  });
});

describe('provision stages', () => {
  it('verifying: fake-hardware → manageable with the power state; redfish without an address → enroll', async () => {
    const ok = await runProvisionStage(env, makeNode({ provision_state: 'verifying', target_provision_state: 'manageable' }));
    expect(ok).toEqual({
      provision_state: 'manageable',
      target_provision_state: null,
      provision_updated_at: NOW,
      power_state: 'power off',
      last_error: null,
    });
    const bad = await runProvisionStage(
      env,
      makeNode({
        driver: 'redfish',
        provision_state: 'verifying',
        target_provision_state: 'manageable',
        driver_info: { redfish_system_id: '/x' },
      }),
    );
    expect(bad).toMatchObject({ provision_state: 'enroll', target_provision_state: null });
    expect(bad.last_error).toMatch(/redfish_address/);
  });

  it('cleaning: automated cleaning off → available without touching power; a retired node ends manageable', async () => {
    const quiet = makeEnv({ automatedClean: false, now: NOW });
    try {
      const node = makeNode({
        provision_state: 'cleaning',
        target_provision_state: 'available',
        power_state: 'power on',
        driver_internal_info: { clean_steps: null, agent_url: 'x', keep: 1 },
      });
      const fakePower = quiet.hardware.get('fake-hardware').power;
      await fakePower.setPowerState({ uuid: node.uuid, driverInfo: {} }, 'power on');
      const c = await runProvisionStage(quiet, node);
      expect(c).toEqual({
        provision_state: 'available',
        target_provision_state: null,
        provision_updated_at: NOW,
        clean_step: {},
        driver_internal_info: { keep: 1 },
        last_error: null,
      });
      expect(await fakePower.getPowerState({ uuid: node.uuid, driverInfo: {} })).toBe('power on');
    } finally {
      await quiet.hardware.close();
    }
    const retired = await runProvisionStage(
      env,
      makeNode({ provision_state: 'cleaning', target_provision_state: 'available', retired: true }),
    );
    expect(retired).toMatchObject({ provision_state: 'manageable', power_state: 'power off', last_error: null });
  });

  it('manual cleaning: fake steps run and end manageable; a step of a real interface is refused before anything runs', async () => {
    const steps = { clean_steps: [{ interface: 'raid', step: 'delete_configuration' }], disable_ramdisk: true };
    const fake = await runProvisionStage(
      env,
      makeNode({ provision_state: 'cleaning', target_provision_state: 'manageable', power_state: 'power on', driver_internal_info: steps }),
    );
    // disable_ramdisk: no power action, the power state is kept.
    expect(fake).toMatchObject({ provision_state: 'manageable', power_state: 'power on', driver_internal_info: {} });
    const real = await runProvisionStage(
      env,
      makeNode({
        provision_state: 'cleaning',
        target_provision_state: 'manageable',
        raid_interface: 'no-raid',
        driver_internal_info: steps,
      }),
    );
    expect(real).toMatchObject({ provision_state: 'clean failed' });
    expect(real.last_error).toMatch(/raid\.delete_configuration \(raid interface "no-raid"\)/);
    expect(real.maintenance).toBeUndefined();
  });

  it('deploying → active powered on; deleting → cleaning with the instance cleared', async () => {
    const node = makeNode({
      provision_state: 'deploying',
      target_provision_state: 'active',
      instance_info: { image_source: 'http://i' },
      driver_internal_info: { user_deploy_steps: [], keep: 1 },
    });
    const deployed = await runProvisionStage(env, node);
    expect(deployed).toEqual({
      provision_state: 'active',
      target_provision_state: null,
      provision_updated_at: NOW,
      deploy_step: {},
      driver_internal_info: { keep: 1 },
      power_state: 'power on',
      last_error: null,
    });
    const boot = await env.hardware.get('fake-hardware').management.getBootDevice({ uuid: node.uuid, driverInfo: {} });
    expect(boot).toEqual({ bootDevice: 'disk', persistent: true });

    const active = apply(node, {
      ...(deployed as Partial<Node>),
      instance_uuid: 'i-1',
      provision_state: 'deleting',
      target_provision_state: 'available',
    });
    const torn = await runProvisionStage(env, active);
    expect(torn).toMatchObject({
      provision_state: 'cleaning',
      target_provision_state: 'available',
      instance_info: {},
      instance_uuid: null,
      power_state: 'power off',
      last_error: null,
    });
  });

  it('rescuing needs a rescue interface that can rescue', async () => {
    const ok = await runProvisionStage(
      env,
      makeNode({ provision_state: 'rescuing', target_provision_state: 'rescue', instance_info: { rescue_password: 'r' } }),
    );
    expect(ok).toMatchObject({ provision_state: 'rescue', target_provision_state: null, last_error: null });
    const no = await runProvisionStage(
      env,
      makeNode({ provision_state: 'rescuing', target_provision_state: 'rescue', rescue_interface: 'no-rescue' }),
    );
    expect(no).toMatchObject({ provision_state: 'rescue failed' });
    expect(no.last_error).toMatch(/no-rescue/);
    const back = await runProvisionStage(
      env,
      makeNode({ provision_state: 'unrescuing', target_provision_state: 'active', instance_info: { rescue_password: 'r', x: 1 } }),
    );
    expect(back).toMatchObject({ provision_state: 'active', instance_info: { x: 1 } });
  });

  it('refuses a state without a stage (a caller bug)', async () => {
    await expect(runProvisionStage(env, makeNode({ provision_state: 'active' }))).rejects.toThrow(/No conductor stage/);
  });
});
