/**
 * The periodic power sync against the lab's real Redfish BMCs (docs/power-sync.md; Ironic's
 * `_sync_power_states`, https://opendev.org/openstack/ironic ironic/conductor/manager.py):
 * a power change made behind esi's back is recorded; nodes in enroll or in operator
 * maintenance are left alone; a BMC that keeps failing puts the node in maintenance with
 * `fault = "power failure"`, and the node leaves it when the BMC answers again.
 * The sync runs every second here (`ESI_POWER_SYNC_INTERVAL=1`) and tolerates one failure
 * (`ESI_POWER_SYNC_MAX_RETRIES=1`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bm, enrollRedfish, getNode, patchNode, provision, settled, startConductorEnv, waitNode, type ConductorEnv } from './support.ts';

let env: ConductorEnv;

beforeAll(async () => {
  env = await startConductorEnv(4, { env: { ESI_POWER_SYNC_INTERVAL: '1', ESI_POWER_SYNC_MAX_RETRIES: '1', ESI_POWER_TIMEOUT: '3' } });
});
afterAll(async () => env?.close());

async function managed(system: string): Promise<any> {
  const n = await enrollRedfish(env, system);
  await provision(env, n.uuid, 'manage');
  const m = await settled(env, n.uuid);
  expect(m.provision_state).toBe('manageable');
  return m;
}

describe('power sync', () => {
  it('records a power change made at the machine, both ways', async () => {
    const n = await managed('node-0');
    expect(n.power_state).toBe('power off');
    env.lab.systems.setPowerState('node-0', 'On');
    const on = await waitNode(env, n.uuid, (x) => x.power_state === 'power on', 8000);
    expect(on.maintenance).toBe(false);
    expect(on.last_error).toBeNull();
    env.lab.systems.setPowerState('node-0', 'Off');
    await waitNode(env, n.uuid, (x) => x.power_state === 'power off', 8000);
  });

  it('leaves enrolled nodes and nodes in operator maintenance alone', async () => {
    const enrolled = await enrollRedfish(env, 'node-1');
    const n = await managed('node-2');
    expect((await bm(env.ts, env.p.admin, 'PUT', `/v1/nodes/${n.uuid}/maintenance`, { reason: 'operator at work' })).status).toBe(202);
    env.lab.systems.setPowerState('node-1', 'On');
    env.lab.systems.setPowerState('node-2', 'On');
    await new Promise((r) => setTimeout(r, 2500));
    expect((await getNode(env, enrolled.uuid)).power_state).toBeNull();
    const m = await getNode(env, n.uuid);
    expect(m.power_state).toBe('power off');
    expect(m).toMatchObject({ maintenance: true, maintenance_reason: 'operator at work', fault: null });
  });

  it('puts a node whose BMC keeps failing in maintenance (fault "power failure") and takes it out when the BMC answers', async () => {
    const n = await managed('node-3');
    const secret = 'Sync-Wrong-Secret-7';
    expect((await patchNode(env, n.uuid, [{ op: 'replace', path: '/driver_info/redfish_password', value: secret }])).status).toBe(200);
    const down = await waitNode(env, n.uuid, (x) => x.maintenance === true, 10_000);
    expect(down.fault).toBe('power failure');
    expect(down.power_state).toBeNull();
    expect(down.maintenance_reason).toMatch(/Power state sync failed 2 times/);
    expect(down.maintenance_reason).toMatch(/401/);
    expect(down.maintenance_reason).not.toContain(secret);

    expect((await patchNode(env, n.uuid, [{ op: 'replace', path: '/driver_info/redfish_password', value: 'password' }])).status).toBe(200);
    const up = await waitNode(env, n.uuid, (x) => x.maintenance === false, 10_000);
    expect(up).toMatchObject({ fault: null, maintenance_reason: null, power_state: 'power off' });
  });
});
