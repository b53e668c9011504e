/**
 * The power sync against real Redfish BMCs of the lab beside BMCs that never answer
 * (docs/power-sync.md; Ironic `_sync_power_states`,
 * https://opendev.org/openstack/ironic ironic/conductor/manager.py): rounds are driven by hand
 * (`syncPowerStates()`), the interval being an hour.
 * - A hung BMC fails its read at the per-read deadline (`ESI_BMC_TIMEOUT_S=1`) while the
 *   healthy nodes of the same round are synced: with 2 lanes and 3 hung BMCs, every healthy
 *   node's change is still recorded by the end of the round.
 * - Past `ESI_POWER_SYNC_MAX_RETRIES` the node goes to maintenance with fault
 *   `power failure`, `last_error` set, reservation and target free; history has the ERROR and,
 *   when the BMC answers again, the INFO recovery.
 * - A mismatch is a WARNING `power sync` history entry; by default the BMC wins, with
 *   `ESI_FORCE_POWER_STATE_DURING_SYNC=true` the recorded state is pushed back to the BMC.
 * - A reading taken before the node was written to (here: a PATCH while the read is in flight)
 *   is dropped; the next round applies a fresh one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PowerSyncReport } from '../../../src/conductor/power-sync.ts';
import {
  bm,
  conductorOf,
  enrollRedfish,
  getNode,
  patchNode,
  provision,
  settled,
  startConductorEnv,
  type ConductorEnv,
} from '../conductor/support.ts';
import { gatedOnBmc, silentBmc, stuckOnBmc, type BadBmc } from './bad-bmcs.ts';

const SYNC_ENV = {
  ESI_POWER_SYNC_INTERVAL: '3600',
  ESI_POWER_SYNC_MAX_RETRIES: '1',
  ESI_BMC_TIMEOUT_S: '1',
  ESI_SYNC_POWER_STATE_WORKERS: '2',
};

async function managed(env: ConductorEnv, system: string): Promise<any> {
  const n = await enrollRedfish(env, system);
  await provision(env, n.uuid, 'manage');
  const m = await settled(env, n.uuid);
  expect(m.provision_state, JSON.stringify(m.last_error)).toBe('manageable');
  return m;
}

async function historyOf(env: ConductorEnv, uuid: string): Promise<any[]> {
  const r = await bm(env.ts, env.p.admin, 'GET', `/v1/nodes/${uuid}/history?detail=true`);
  expect(r.status, r.text).toBe(200);
  return r.body.history;
}

async function round(env: ConductorEnv): Promise<PowerSyncReport> {
  const r = await conductorOf(env.ts).syncPowerStates();
  expect(r).not.toBeNull();
  return r!;
}

describe('power sync with hung BMCs beside healthy ones (the BMC wins)', () => {
  let env: ConductorEnv;
  const hung: BadBmc[] = [];
  const healthy: any[] = [];
  const silent: any[] = [];

  beforeAll(async () => {
    env = await startConductorEnv(7, { env: SYNC_ENV });
    for (let i = 0; i < 7; i++) (i < 4 ? healthy : silent).push(await managed(env, `node-${i}`));
    // The hung ones: managed through the lab, then each pointed at its own silent BMC.
    for (const n of silent) {
      const b = await silentBmc();
      hung.push(b);
      expect((await patchNode(env, n.uuid, [{ op: 'replace', path: '/driver_info/redfish_address', value: b.url }])).status).toBe(200);
    }
  });
  afterAll(async () => {
    await env?.close();
    await Promise.all(hung.map((b) => b.close()));
  });

  it('syncs the healthy nodes in the round while the hung BMCs fail at the deadline', async () => {
    for (const n of healthy) env.lab.systems.setPowerState(n.name, 'On');
    const r = await round(env);
    expect(r).toMatchObject({ checked: 7, changed: 4, failed: 3, maintenance: 0 });
    for (const n of healthy) {
      const cur = await getNode(env, n.uuid);
      expect(cur.power_state).toBe('power on');
      const h = await historyOf(env, n.uuid);
      expect(h).toHaveLength(1);
      expect(h[0]).toMatchObject({ severity: 'WARNING', event_type: 'power sync' });
      expect(h[0].event).toMatch(/"power on" but "power off" was recorded; the recorded power state was updated/);
    }
    for (const b of hung) expect(b.hits()).toBeGreaterThanOrEqual(1);
    for (const n of silent) {
      const cur = await getNode(env, n.uuid);
      expect(cur).toMatchObject({ maintenance: false, power_state: 'power off', reservation: null, target_power_state: null });
    }
  });

  it('puts a hung node in maintenance (fault "power failure", last_error) past the retries, and recovers it', async () => {
    const r = await round(env);
    expect(r).toMatchObject({ failed: 3, maintenance: 3, changed: 0 });
    for (const n of silent) {
      const cur = await getNode(env, n.uuid);
      expect(cur).toMatchObject({
        maintenance: true,
        fault: 'power failure',
        power_state: null,
        reservation: null,
        target_power_state: null,
      });
      expect(cur.last_error).toMatch(/did not answer the power state read within 1 s/);
      expect(cur.maintenance_reason).toBe(cur.last_error);
      const h = await historyOf(env, n.uuid);
      expect(h.at(-1)).toMatchObject({ severity: 'ERROR', event_type: 'power sync', event: cur.last_error });
    }
    // The API still answers for the healthy nodes and the round never blocks them.
    const back = silent[0];
    expect((await patchNode(env, back.uuid, [{ op: 'replace', path: '/driver_info/redfish_address', value: env.lab.url }])).status).toBe(
      200,
    );
    const r2 = await round(env);
    expect(r2.recovered).toBe(1);
    const cur = await getNode(env, back.uuid);
    expect(cur).toMatchObject({ maintenance: false, fault: null, maintenance_reason: null, power_state: 'power off' });
    const h = await historyOf(env, back.uuid);
    expect(h.at(-1)).toMatchObject({ severity: 'INFO', event_type: 'power sync' });
    expect(h.at(-1).event).toMatch(/Fault "power failure" cleared and the node left maintenance; power state power off/);
  });
});

describe('power sync with force_power_state_during_sync', () => {
  let env: ConductorEnv;
  let stuck: BadBmc | undefined;
  beforeAll(async () => {
    env = await startConductorEnv(2, { env: { ...SYNC_ENV, ESI_FORCE_POWER_STATE_DURING_SYNC: 'true' } });
  });
  afterAll(async () => {
    await env?.close();
    await stuck?.close();
  });

  it('counts a refused push as a failure and ends in maintenance with the power-failure fault', async () => {
    const n = await managed(env, 'node-1');
    stuck = await stuckOnBmc();
    expect((await patchNode(env, n.uuid, [{ op: 'replace', path: '/driver_info/redfish_address', value: stuck.url }])).status).toBe(200);
    expect(await round(env)).toMatchObject({ forced: 0, failed: 1, maintenance: 0 });
    expect(await round(env)).toMatchObject({ failed: 1, maintenance: 1 });
    const cur = await getNode(env, n.uuid);
    expect(cur).toMatchObject({ maintenance: true, fault: 'power failure', reservation: null, target_power_state: null });
    expect(cur.last_error).toMatch(/could not change node .* from "power on" back to the recorded "power off".*HTTP 500/);
    const h = await historyOf(env, n.uuid);
    expect(h.at(-1)).toMatchObject({ severity: 'ERROR', event_type: 'power sync', event: cur.last_error });
  });

  it('pushes the recorded state back to the BMC and records the mismatch', async () => {
    const n = await managed(env, 'node-0');
    expect(n.power_state).toBe('power off');
    env.lab.systems.setPowerState('node-0', 'On');
    const r = await round(env);
    expect(r).toMatchObject({ forced: 1, changed: 0, failed: 0 });
    expect(env.lab.systems.get('node-0').powerState).toBe('Off');
    expect((await getNode(env, n.uuid)).power_state).toBe('power off');
    const h = await historyOf(env, n.uuid);
    expect(h).toHaveLength(1);
    expect(h[0]).toMatchObject({ severity: 'WARNING', event_type: 'power sync' });
    expect(h[0].event).toMatch(/the hardware was changed back to "power off"/);
  });
});

describe('power sync and a node written to during the read', () => {
  let env: ConductorEnv;
  let gated: Awaited<ReturnType<typeof gatedOnBmc>>;

  beforeAll(async () => {
    env = await startConductorEnv(1, { env: SYNC_ENV });
    gated = await gatedOnBmc();
  });
  afterAll(async () => {
    await env?.close();
    await gated?.close();
  });

  it('drops the stale reading, then applies a fresh one in the next round', async () => {
    const n = await managed(env, 'node-0');
    expect(n.power_state).toBe('power off');
    expect((await patchNode(env, n.uuid, [{ op: 'replace', path: '/driver_info/redfish_address', value: gated.url }])).status).toBe(200);
    const pending = round(env);
    await expect.poll(() => gated.hits(), { timeout: 5000 }).toBeGreaterThan(0);
    // The read is in flight: the node changes; then the BMC answers "On".
    expect((await patchNode(env, n.uuid, [{ op: 'add', path: '/extra/note', value: 'changed during the read' }])).status).toBe(200);
    gated.release();
    expect(await pending).toMatchObject({ checked: 1, changed: 0, failed: 0 });
    expect((await getNode(env, n.uuid)).power_state).toBe('power off');
    expect(await historyOf(env, n.uuid)).toEqual([]);
    expect(await round(env)).toMatchObject({ checked: 1, changed: 1 });
    expect((await getNode(env, n.uuid)).power_state).toBe('power on');
    expect((await historyOf(env, n.uuid)).map((h) => h.event_type)).toEqual(['power sync']);
  });
});
