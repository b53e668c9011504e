/**
 * Power changes through the HTTP API, carried out by the conductor against the lab's real
 * Redfish BMCs (and the fake-hardware driver): 202 with the target recorded, then the final
 * state on the node and on the BMC; reboot; failures (wrong password, BMC down, a BMC that
 * ignores resets) with a clear `last_error` and no secret; the lock held while a change runs;
 * who may ask (admin, owner, lessee: yes; another project: 404; anonymous: 401).
 * Source: https://docs.openstack.org/api-ref/baremetal/#change-node-power-state.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPersonas, startTestServer } from '../../helpers/harness.ts';
import {
  bm,
  conductorOf,
  deadUrl,
  enroll,
  enrollRedfish,
  expectError,
  getNode,
  power,
  settled,
  startConductorEnv,
  waitNode,
  type ConductorEnv,
} from './support.ts';

let env: ConductorEnv;

beforeAll(async () => {
  env = await startConductorEnv(6, { env: { ESI_POWER_TIMEOUT: '2' } });
});
afterAll(async () => env?.close());

describe('power changes on redfish nodes', () => {
  it('power on: 202 with the target recorded, then power_state "power on" and the BMC On', async () => {
    const n = await enrollRedfish(env, 'node-0');
    expect(env.lab.systems.powerState('node-0')).toBe('Off');
    const res = await bm(env.ts, env.p.admin, 'PUT', `/v1/nodes/${n.uuid}/states/power`, { target: 'power on' });
    expect(res.status, res.text).toBe(202);
    // the result is written before the lock goes: wait for both
    const done = await waitNode(
      env,
      n.uuid,
      (x) => x.power_state === 'power on' && x.target_power_state === null && x.reservation === null,
    );
    expect(done.last_error).toBeNull();
    expect(env.lab.systems.powerState('node-0')).toBe('On');

    await power(env, n.uuid, 'power off');
    const off = await waitNode(env, n.uuid, (x) => x.power_state === 'power off' && x.target_power_state === null);
    expect(off.last_error).toBeNull();
    expect(env.lab.systems.powerState('node-0')).toBe('Off');
  });

  it('rebooting ends in "power on" and boots the system again', async () => {
    const n = await enrollRedfish(env, 'node-1');
    env.lab.systems.setPowerState('node-1', 'On');
    const boots = env.lab.systems.get('node-1').bootCount;
    await power(env, n.uuid, 'rebooting');
    const done = await settled(env, n.uuid);
    expect(done.power_state).toBe('power on');
    expect(done.last_error).toBeNull();
    expect(env.lab.systems.powerState('node-1')).toBe('On');
    expect(env.lab.systems.get('node-1').bootCount).toBeGreaterThan(boots);
  });

  it('the target stays recorded and the node locked while the BMC works; a timeout ends it with last_error', async () => {
    const n = await enrollRedfish(env, 'node-2');
    env.lab.systems.setIgnoreResets('node-2', true);
    try {
      await power(env, n.uuid, 'power on', env.p.admin, { timeout: 1 });
      const busy = await waitNode(env, n.uuid, (x) => x.reservation !== null);
      expect(busy.target_power_state).toBe('power on');
      // While the conductor holds the node, writes are refused with 409 (Ironic NodeLocked).
      expectError(
        await bm(env.ts, env.p.admin, 'PATCH', `/v1/nodes/${n.uuid}`, [{ op: 'add', path: '/extra/x', value: 1 }]),
        409,
        /locked/,
      );
      const done = await settled(env, n.uuid);
      expect(done.target_power_state).toBeNull();
      expect(done.power_state).toBe('power off');
      expect(done.last_error).toMatch(/power on/);
      expect(done.last_error).toMatch(/[Tt]imed out/);
      expect(done.driver_internal_info.power_timeout_s).toBeUndefined();
    } finally {
      env.lab.systems.setIgnoreResets('node-2', false);
    }
  });

  it('a wrong BMC password: last_error says the BMC refused, and no password appears anywhere', async () => {
    const secret = 'Wr0ng-Secret-Value-42';
    const n = await enrollRedfish(env, 'node-3', {}, { redfish_password: secret });
    await power(env, n.uuid, 'power on');
    const done = await settled(env, n.uuid);
    expect(done.power_state).toBeNull();
    expect(done.last_error).toMatch(/power on/);
    expect(done.last_error).toMatch(/401|refused|credentials/i);
    expect(done.last_error).not.toContain(secret);
    expect(done.last_error).not.toContain('password');
    const raw = await bm(env.ts, env.p.admin, 'GET', `/v1/nodes/${n.uuid}`);
    expect(raw.text).not.toContain(secret);
    expect(env.lab.systems.powerState('node-3')).toBe('Off');
  });

  it('a BMC that is down: last_error says it cannot be reached; the node stays usable', async () => {
    const n = await enrollRedfish(env, 'node-4', {}, { redfish_address: await deadUrl() });
    await power(env, n.uuid, 'power on');
    const done = await settled(env, n.uuid);
    expect(done.target_power_state).toBeNull();
    expect(done.last_error).toMatch(/power on/);
    expect(done.last_error).toMatch(/reach|connect|refused/i);
    expect(done.last_error).not.toContain('password');
    // A new request is accepted (nothing is left pending or locked) and clears last_error first.
    const again = await bm(env.ts, env.p.admin, 'PUT', `/v1/nodes/${n.uuid}/states/power`, { target: 'power off' });
    expect(again.status, again.text).toBe(202);
    await settled(env, n.uuid);
  });
});

describe('who may change the power of a node', () => {
  it('the owner and the lessee: 202 and the change happens; another project: 404; anonymous: 401; nothing recorded for them', async () => {
    const n = await enrollRedfish(env, 'node-5');
    await power(env, n.uuid, 'power on', env.p.owner);
    await waitNode(env, n.uuid, (x) => x.power_state === 'power on' && x.target_power_state === null);
    expect(env.lab.systems.powerState('node-5')).toBe('On');
    await power(env, n.uuid, 'power off', env.p.lessee);
    await waitNode(env, n.uuid, (x) => x.power_state === 'power off' && x.target_power_state === null);
    expect(env.lab.systems.powerState('node-5')).toBe('Off');

    expectError(await bm(env.ts, env.p.other, 'PUT', `/v1/nodes/${n.uuid}/states/power`, { target: 'power on' }), 404);
    expectError(await bm(env.ts, env.p.anonymous, 'PUT', `/v1/nodes/${n.uuid}/states/power`, { target: 'power on' }), 401);
    await conductorOf(env.ts).idle();
    const after = await getNode(env, n.uuid);
    expect(after.target_power_state).toBeNull();
    expect(after.power_state).toBe('power off');
    expect(env.lab.systems.powerState('node-5')).toBe('Off');
    // The lessee and the owner see the result; another project does not see the node at all.
    expect((await getNode(env, n.uuid, env.p.lessee)).power_state).toBe('power off');
    expectError(await bm(env.ts, env.p.other, 'GET', `/v1/nodes/${n.uuid}`), 404);
  });
});

describe('power changes on fake-hardware nodes', () => {
  it('power on, soft power off, soft rebooting: each ends in its final state', async () => {
    const n = await enroll(env, { driver: 'fake-hardware', name: 'fake-power' });
    for (const [target, final] of [
      ['power on', 'power on'],
      ['soft power off', 'power off'],
      ['soft rebooting', 'power on'],
    ] as const) {
      await power(env, n.uuid, target);
      const done = await settled(env, n.uuid);
      expect(done.power_state, target).toBe(final);
      expect(done.last_error).toBeNull();
    }
  });
});

describe('a paused conductor (ESI_CONDUCTOR_WORKERS=0)', () => {
  it('leaves the recorded intent pending', async () => {
    const ts = await startTestServer({ env: { ESI_CONDUCTOR_WORKERS: '0' } });
    try {
      const p = await createPersonas(ts);
      const created = await bm(ts, p.admin, 'POST', '/v1/nodes', { driver: 'fake-hardware' });
      expect(created.status, created.text).toBe(201);
      expect((await bm(ts, p.admin, 'PUT', `/v1/nodes/${created.body.uuid}/states/power`, { target: 'power on' })).status).toBe(202);
      await new Promise((r) => setTimeout(r, 1500));
      const n = (await bm(ts, p.admin, 'GET', `/v1/nodes/${created.body.uuid}`)).body;
      expect(n).toMatchObject({ target_power_state: 'power on', power_state: null, reservation: null });
    } finally {
      await ts.close();
    }
  });
});
