/**
 * Deploy templates applied on real (lab) Redfish BMCs: a template's BIOS step ranked before the
 * core step and its RAID step ranked after it run out of band during a deploy (the lab's BIOS
 * and volumes show them), a failing step fails the deploy naming it, and the agent deploy
 * records its whole plan — template steps and its own — in `driver_internal_info.deploy_steps`,
 * in Ironic's order, before it waits for the agent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bm, enrollRedfish, pick, provision, settled, startConductorEnv, waitNode, type ConductorEnv } from '../conductor/support.ts';
import { uploadImage } from '../deploy/support.ts';

let env: ConductorEnv;

beforeAll(async () => {
  env = await startConductorEnv(3, { env: { ESI_POWER_TIMEOUT: '5' } });
});
afterAll(async () => env?.close());

const ROOT = { logical_disks: [{ size_gb: 10, raid_level: '1', is_root_volume: true, volume_name: 'root' }] };

async function template(name: string, steps: unknown[]): Promise<void> {
  const r = await bm(env.ts, env.p.admin, 'POST', '/v1/deploy_templates', { name, steps });
  expect(r.status, r.text).toBe(201);
}

/** A redfish lab node with `traits`, `instance_info`, `extra` fields and `driver_info` keys, taken to available. */
async function available(
  system: string,
  traits: string[],
  instanceInfo: Record<string, unknown>,
  extra: Record<string, unknown> = {},
  info: Record<string, unknown> = {},
): Promise<any> {
  const n = await enrollRedfish(env, system, { automated_clean: false, ...extra }, info);
  expect((await bm(env.ts, env.p.admin, 'PUT', `/v1/nodes/${n.uuid}/traits`, { traits })).status).toBe(204);
  const p = await bm(env.ts, env.p.admin, 'PATCH', `/v1/nodes/${n.uuid}`, [{ op: 'add', path: '/instance_info', value: instanceInfo }]);
  expect(p.status, p.text).toBe(200);
  await provision(env, n.uuid, 'manage');
  expect(pick(await settled(env, n.uuid))).toMatchObject({ provision_state: 'manageable', last_error: null });
  await provision(env, n.uuid, 'provide');
  expect((await settled(env, n.uuid)).provision_state).toBe('available');
  return n;
}

describe('deploy templates on a redfish node (fake deploy interface)', () => {
  it('applies the BIOS step before the deploy and the RAID step after it; the node ends active', async () => {
    await template('CUSTOM_TUNED', [
      {
        interface: 'bios',
        step: 'apply_configuration',
        args: { settings: [{ name: 'ProcVirtualization', value: 'Disabled' }] },
        priority: 150,
      },
      { interface: 'raid', step: 'apply_configuration', args: { raid_config: ROOT }, priority: 10 },
    ]);
    await template('CUSTOM_UNUSED', [
      { interface: 'bios', step: 'apply_configuration', args: { settings: [{ name: 'AssetTag', value: 'not-me' }] }, priority: 150 },
    ]);
    const n = await available('node-0', ['CUSTOM_TUNED', 'CUSTOM_UNUSED'], { traits: ['CUSTOM_TUNED'] }, { deploy_interface: 'fake' });
    expect(env.lab.bios.attributes('node-0').ProcVirtualization).toBe('Enabled');
    await provision(env, n.uuid, 'active', {}, env.p.lessee);
    const done = await settled(env, n.uuid, 30_000);
    expect(pick(done)).toMatchObject({ provision_state: 'active', last_error: null, power_state: 'power on' });
    expect(done.deploy_step).toEqual({});
    expect(env.lab.bios.attributes('node-0')).toMatchObject({ ProcVirtualization: 'Disabled' });
    expect(env.lab.bios.attributes('node-0').AssetTag).not.toBe('not-me');
    expect(env.lab.raid.volumes('node-0').map((v) => ({ name: v.name, type: v.raidType }))).toEqual([{ name: 'root', type: 'RAID1' }]);
    expect(done.target_raid_config).toEqual(ROOT);
    expect(done.raid_config.logical_disks.map((d: any) => d.volume_name)).toEqual(['root']);
    const cached = await bm(env.ts, env.p.admin, 'GET', `/v1/nodes/${n.uuid}/bios/ProcVirtualization`);
    expect(cached.body.ProcVirtualization.value).toBe('Disabled');
  });

  it('a step the BMC refuses fails the deploy, naming the step', async () => {
    await template('CUSTOM_BAD_SETTING', [
      { interface: 'bios', step: 'apply_configuration', args: { settings: [{ name: 'NoSuchSetting', value: 'x' }] }, priority: 150 },
    ]);
    const n = await available('node-1', ['CUSTOM_BAD_SETTING'], { traits: ['CUSTOM_BAD_SETTING'] }, { deploy_interface: 'fake' });
    await provision(env, n.uuid, 'active');
    const failed = await settled(env, n.uuid, 30_000);
    expect(failed.provision_state).toBe('deploy failed');
    expect(failed.last_error).toMatch(new RegExp(`^Deploy step bios\\.apply_configuration failed for node ${n.uuid}: .*NoSuchSetting`));
    expect(failed.deploy_step).toEqual({});
  });
});

describe('the agent deploy plan', () => {
  it('records template steps among its own, in priority order, and runs those before deploy.deploy first', async () => {
    await template('CUSTOM_AGENT_PLAN', [
      { interface: 'bios', step: 'factory_reset', args: {}, priority: 120 },
      { interface: 'raid', step: 'delete_configuration', args: {}, priority: 10 },
      { interface: 'bios', step: 'apply_configuration', args: { settings: [{ name: 'AssetTag', value: 'a' }] }, priority: 0 },
    ]);
    const image = await uploadImage(env, new Uint8Array(1024 * 1024), 'plan-image');
    const n = await available(
      'node-2',
      ['CUSTOM_AGENT_PLAN'],
      { image_source: image, traits: ['CUSTOM_AGENT_PLAN'] },
      { deploy_interface: 'direct', boot_interface: 'redfish-virtual-media' },
      { deploy_iso: 'http://lab/esi-agent.iso' },
    );
    await provision(env, n.uuid, 'active');
    // No agent answers in this lab: the deploy waits for it, its plan recorded.
    const waiting = await waitNode(
      env,
      n.uuid,
      (x) => x.provision_state === 'wait call-back' || / failed$/.test(x.provision_state),
      30_000,
    );
    expect(waiting.provision_state, waiting.last_error).toBe('wait call-back');
    const plan = waiting.driver_internal_info.deploy_steps.map((s: any) => `${s.interface}.${s.step}@${s.priority}`);
    expect(plan).toEqual([
      'bios.factory_reset@120',
      'deploy.deploy@100',
      'deploy.write_image@80',
      'deploy.prepare_instance_boot@60',
      'deploy.tear_down_agent@40',
      'deploy.switch_to_tenant_network@30',
      'deploy.boot_instance@20',
      'raid.delete_configuration@10',
    ]);
    expect(waiting.deploy_step).toMatchObject({ interface: 'deploy', step: 'deploy' });
    await provision(env, n.uuid, 'deleted');
    await settled(env, n.uuid, 30_000);
  });
});
