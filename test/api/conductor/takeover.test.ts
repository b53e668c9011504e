/**
 * Take-over and wait timeouts (docs/architecture.md "State and concurrency"; Ironic's
 * conductor take-over, https://opendev.org/openstack/ironic ironic/conductor/manager.py): nodes locked by a
 * conductor whose heartbeat stopped are unlocked and failed safely (each working state to its
 * failed state, a pending power change aborted, with a `last_error` naming the dead conductor);
 * a live conductor's lock is respected; a conductor that restarts fails the nodes it still held;
 * waits for the deploy agent time out. The state is set up straight in the database (as a
 * crashed conductor would leave it) and observed through the API.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../helpers/harness.ts';
import { bm, conductorOf, enroll, getNode, pick, startConductorEnv, waitNode, type ConductorEnv } from './support.ts';
import { waitFor } from '../../helpers/wait-for.ts';

const HOST = 'conductor-under-test';
/** The settings of the tests' servers: a 1 s periodic check, 2 s agent call-back timeouts. */
const SETTINGS = {
  env: {
    ESI_CONDUCTOR_HOSTNAME: HOST,
    ESI_CHECK_PROVISION_STATE_INTERVAL: '1',
    ESI_DEPLOY_CALLBACK_TIMEOUT: '2',
    ESI_CLEAN_CALLBACK_TIMEOUT: '2',
  },
};
let env: ConductorEnv;

beforeAll(async () => {
  env = await startConductorEnv(0, SETTINGS);
});
afterAll(async () => env?.close());

/** Register a conductor that last heartbeated `ageMs` ago. */
async function register(ts: TestServer, host: string, ageMs: number, drivers: string[]): Promise<void> {
  await ts.server.services.inventory.conductorRepository.upsert(host, '', drivers, Date.now() - ageMs);
  ts.server.services.inventory.conductors.invalidate();
}

/** A fake-hardware node of `on` locked by `host` and left with `changes` (as a crashed task leaves it). */
async function lockedNode(on: ConductorEnv, name: string, host: string, changes: Record<string, unknown>): Promise<any> {
  const n = await enroll(on, { driver: 'fake-hardware', name });
  const repo = on.ts.server.services.inventory.nodeRepository;
  expect(await repo.reserve(n.uuid, host)).toBe(true);
  expect(await repo.applyConductorResult(n.uuid, changes as never, Date.now())).not.toBeNull();
  return n;
}

describe('take-over of nodes locked by a dead conductor', () => {
  it('unlocks them and moves each to its failed state with a last_error; a live lock is left alone', async () => {
    const ts = env.ts;
    // The conductor is alive while its locks are set up, then stops heartbeating: the 1 s
    // periodic check cannot take over a half-built set-up before the explicit check below.
    await register(ts, 'dead-conductor', 0, ['fake-hardware', 'redfish']);
    await register(ts, 'live-conductor', 0, ['ipmi']);
    const deploying = await lockedNode(env, 'to-deploy', 'dead-conductor', {
      provision_state: 'deploying',
      target_provision_state: 'active',
    });
    const verifying = await lockedNode(env, 'to-verify', 'dead-conductor', {
      provision_state: 'verifying',
      target_provision_state: 'manageable',
    });
    const cleaning = await lockedNode(env, 'to-clean', 'dead-conductor', {
      provision_state: 'cleaning',
      target_provision_state: 'available',
    });
    const deleting = await lockedNode(env, 'to-delete', 'dead-conductor', {
      provision_state: 'deleting',
      target_provision_state: 'available',
    });
    const powering = await lockedNode(env, 'to-power', 'dead-conductor', { provision_state: 'manageable', target_power_state: 'power on' });
    const idle = await lockedNode(env, 'idle-lock', 'dead-conductor', {});
    const live = await lockedNode(env, 'live-lock', 'live-conductor', { provision_state: 'cleaning', target_provision_state: 'available' });

    await register(ts, 'dead-conductor', 10 * 60_000, ['fake-hardware', 'redfish']);
    await register(ts, 'live-conductor', 0, ['ipmi']);
    // null means the periodic check is running at this moment: call again once it is done.
    const result = await waitFor(
      () => conductorOf(ts).checkProvisionStates(),
      (r) => r !== null,
      { timeoutMs: 5_000, what: 'a provision-state check of its own' },
    );
    // The periodic check (every second here) may have run in between and taken some over
    // itself; the states below prove that all six were, and the live lock was not.
    expect(result?.takenOver).toBeGreaterThanOrEqual(0);
    expect(result?.takenOver).toBeLessThanOrEqual(6);

    const d = await getNode(env, deploying.uuid);
    expect(pick(d)).toMatchObject({ provision_state: 'deploy failed', target_provision_state: 'active', reservation: null });
    expect(d.last_error).toMatch(/dead-conductor/);
    expect(d.last_error).toMatch(/deploying/);
    expect(pick(await getNode(env, verifying.uuid))).toMatchObject({
      provision_state: 'enroll',
      target_provision_state: null,
      reservation: null,
    });
    expect(pick(await getNode(env, cleaning.uuid))).toMatchObject({
      provision_state: 'clean failed',
      maintenance: true,
      fault: 'clean failure',
      reservation: null,
    });
    expect(pick(await getNode(env, deleting.uuid))).toMatchObject({
      provision_state: 'error',
      target_provision_state: null,
      reservation: null,
    });
    const p = await getNode(env, powering.uuid);
    expect(pick(p)).toMatchObject({ provision_state: 'manageable', target_power_state: null, reservation: null });
    expect(p.last_error).toMatch(/power on.*aborted/);
    expect(pick(await getNode(env, idle.uuid))).toMatchObject({ provision_state: 'enroll', reservation: null, last_error: null });

    const l = await getNode(env, live.uuid);
    expect(pick(l)).toMatchObject({ provision_state: 'cleaning', reservation: 'live-conductor', last_error: null });
  });

  it('the periodic check takes over on its own, and the node is usable afterwards', async () => {
    // Alive while the lock is set up (two writes the periodic check must not split), then dead.
    await register(env.ts, 'dead-conductor', 0, ['fake-hardware', 'redfish']);
    const n = await lockedNode(env, 'periodic', 'dead-conductor', {
      provision_state: 'verifying',
      target_provision_state: 'manageable',
    });
    await register(env.ts, 'dead-conductor', 10 * 60_000, ['fake-hardware', 'redfish']);
    const failed = await waitNode(env, n.uuid, (x) => x.reservation === null, 8000);
    expect(failed.provision_state).toBe('enroll');
    expect((await bm(env.ts, env.p.admin, 'PUT', `/v1/nodes/${n.uuid}/states/provision`, { target: 'manage' })).status).toBe(202);
    expect((await waitNode(env, n.uuid, (x) => x.target_provision_state === null && x.reservation === null)).provision_state).toBe(
      'manageable',
    );
  });
});

describe('wait timeouts', () => {
  it('fail waits for the deploy agent older than the timeout; recent ones are left alone', async () => {
    const repo = env.ts.server.services.inventory.nodeRepository;
    const old = Date.now() - 10_000;
    const make = async (name: string, changes: Record<string, unknown>): Promise<string> => {
      const n = await enroll(env, { driver: 'fake-hardware', name });
      await repo.applyConductorResult(n.uuid, changes, Date.now());
      return n.uuid;
    };
    const deployWait = await make('deploy-wait', {
      provision_state: 'wait call-back',
      target_provision_state: 'active',
      provision_updated_at: old,
    });
    const cleanWait = await make('clean-wait', {
      provision_state: 'clean wait',
      target_provision_state: 'available',
      provision_updated_at: old,
    });
    const fresh = await make('fresh-wait', {
      provision_state: 'wait call-back',
      target_provision_state: 'active',
      provision_updated_at: Date.now() + 60_000,
    });
    const inspectWait = await make('inspect-wait', {
      provision_state: 'inspect wait',
      target_provision_state: 'manageable',
      provision_updated_at: old,
    });

    // null means the periodic check is running at this moment: call again once it is done.
    await waitFor(
      () => conductorOf(env.ts).checkProvisionStates(),
      (r) => r !== null,
      { timeoutMs: 5_000, what: 'a provision-state check of its own' },
    );
    const d = await getNode(env, deployWait);
    expect(pick(d)).toMatchObject({ provision_state: 'deploy failed', target_provision_state: 'active' });
    expect(d.last_error).toMatch(/Timed out after 2 s/);
    const c = await getNode(env, cleanWait);
    expect(pick(c)).toMatchObject({ provision_state: 'clean failed', maintenance: true, fault: 'clean failure', power_state: 'power off' });
    expect((await getNode(env, fresh)).provision_state).toBe('wait call-back');
    // inspect_wait_timeout keeps its default (1800 s).
    expect((await getNode(env, inspectWait)).provision_state).toBe('inspect wait');
  });
});

describe('restart of a conductor', () => {
  it('fails the nodes it held when it stopped, on start', async () => {
    // A server of its own: this test stops it, and the other tests' server must stay up.
    const own = await startConductorEnv(0, SETTINGS);
    let restarted: TestServer | undefined;
    try {
      const n = await lockedNode(own, 'held-by-me', HOST, {
        provision_state: 'deploying',
        target_provision_state: 'active',
        target_power_state: 'power on',
      });
      // The running conductor does not touch a lock it did not take in this process...
      await new Promise((r) => setTimeout(r, 1500));
      expect((await getNode(own, n.uuid)).reservation).toBe(HOST);
      // ...but after a restart with the same hostname, it fails the node safely.
      await own.ts.close({ keepData: true });
      restarted = await startTestServer({ reuse: own.ts, env: { ESI_CONDUCTOR_HOSTNAME: HOST } });
      const node = await getNode({ ...own, ts: restarted }, n.uuid);
      expect(pick(node)).toMatchObject({ provision_state: 'deploy failed', target_power_state: null, reservation: null });
      expect(node.last_error).toMatch(/restarted/);
    } finally {
      await restarted?.close({ keepData: true });
      // Closing the first server (again) removes the data, and stops the lab.
      await own.close();
    }
  });
});
