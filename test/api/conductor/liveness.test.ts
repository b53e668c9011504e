/**
 * Conductor liveness and fencing (issue 21, item 3):
 * - a conductor's node writes are fenced: once another conductor took a node over (its own
 *   heartbeat was late beyond its dead-after, as after a pause), a write of the old holder is
 *   refused with `NodeLockLost` and the node keeps what the taker recorded;
 * - each registration carries its own dead-after, and the API judges every conductor by it;
 * - (PostgreSQL, two servers on one database) processes whose clocks are 8 s apart both see
 *   each other alive and take over nothing: liveness is the database's clock.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fencedNodes, NodeLockLost } from '../../../src/conductor/fence.ts';
import { createPersonas, describePostgresOnly, startTestServer, type TestServer } from '../../helpers/harness.ts';
import { bm, conductorOf, enroll, getNode, pick, startConductorEnv, type ConductorEnv } from './support.ts';
import { waitFor } from '../../helpers/wait-for.ts';

describe('fenced conductor writes', () => {
  let env: ConductorEnv;
  beforeAll(async () => {
    env = await startConductorEnv(0, { env: { ESI_CONDUCTOR_HOSTNAME: 'taker', ESI_CHECK_PROVISION_STATE_INTERVAL: '3600' } });
  });
  afterAll(async () => env?.close());

  it("a paused conductor's write after its node was taken over is refused; the taker's result stays", async () => {
    const { inventory } = env.ts.server.services;
    const repo = inventory.nodeRepository;
    // "paused" registered with a 2 s dead-after, last heard from 10 s ago: dead.
    await inventory.conductorRepository.upsert('paused', '', ['fake-hardware'], Date.now() - 10_000, 2_000);
    const n = await enroll(env, { driver: 'fake-hardware', name: 'fenced' });
    expect(await repo.reserve(n.uuid, 'paused')).toBe(true);
    await repo.applyConductorResult(n.uuid, { provision_state: 'deploying', target_provision_state: 'active' }, Date.now());
    const paused = fencedNodes(repo, 'paused');
    // While it holds the node its writes go through.
    expect((await paused.applyConductorResult(n.uuid, { deploy_step: { step: 'write_image' } }, Date.now()))?.reservation).toBe('paused');

    inventory.conductors.invalidate();
    await waitFor(
      () => conductorOf(env.ts).checkProvisionStates(),
      (r) => r !== null,
      { timeoutMs: 5_000, what: 'a provision-state check' },
    );
    const taken = await getNode(env, n.uuid);
    expect(pick(taken)).toMatchObject({ provision_state: 'deploy failed', reservation: null });
    expect(taken.last_error).toMatch(/conductor paused stopped while working on it \(taken over by taker\)/);

    // The paused conductor resumes and writes the end of its deployment: refused.
    await expect(
      paused.applyConductorResult(n.uuid, { provision_state: 'active', target_provision_state: null }, Date.now()),
    ).rejects.toThrow(NodeLockLost);
    expect(pick(await getNode(env, n.uuid))).toMatchObject({ provision_state: 'deploy failed', reservation: null });
    // A node that is gone is no lost lock: null, as before.
    expect(await paused.applyConductorResult('00000000-0000-4000-8000-000000000000', {}, Date.now())).toBeNull();
  });

  it('the API judges each conductor by the dead-after stored with it', async () => {
    const { inventory } = env.ts.server.services;
    await inventory.conductorRepository.upsert('patient', '', ['fake-hardware'], Date.now() - 10_000, 60_000);
    await inventory.conductorRepository.upsert('hasty', '', ['fake-hardware'], Date.now() - 10_000, 5_000);
    const list = await bm(env.ts, env.p.admin, 'GET', '/v1/conductors', undefined, '1.82');
    const alive = Object.fromEntries(
      (list.body.conductors as Array<{ hostname: string; alive: boolean }>).map((c) => [c.hostname, c.alive]),
    );
    expect(alive).toMatchObject({ patient: true, hasty: false, taker: true });
  });
});

describePostgresOnly('clock skew between processes', () => {
  let a: TestServer;
  let b: TestServer;
  const settings = (name: string) => ({
    ESI_CONDUCTOR_HOSTNAME: name,
    ESI_CONDUCTOR_HEARTBEAT_INTERVAL: '1',
    ESI_CONDUCTOR_DEAD_AFTER: '3',
    ESI_CHECK_PROVISION_STATE_INTERVAL: '1',
  });
  beforeAll(async () => {
    a = await startTestServer({ env: settings('ahead'), clock: { now: () => Date.now() + 8_000 } });
    b = await startTestServer({ env: settings('behind'), clock: { now: () => Date.now() - 8_000 }, reuse: a });
  });
  afterAll(async () => {
    await b?.close({ keepData: true });
    await a?.close();
  });

  it('processes 16 s apart see each other alive and take over nothing', async () => {
    const p = await createPersonas(a);
    // A node held by "behind" (as a task in flight holds it), watched by the checks of "ahead".
    const node = await enroll({ ts: a, p } as ConductorEnv, { driver: 'fake-hardware', name: 'skewed' });
    expect(await a.server.services.inventory.nodeRepository.reserve(node.uuid, 'behind')).toBe(true);
    await new Promise((r) => setTimeout(r, 5_000));
    for (const ts of [a, b]) {
      const list = await ts.server.services.inventory.conductors.list();
      expect(Object.fromEntries(list.map((c) => [c.hostname, c.alive]))).toMatchObject({ ahead: true, behind: true });
    }
    expect((await a.server.services.inventory.nodeRepository.get(node.uuid))?.reservation).toBe('behind');
    await a.server.services.inventory.nodeRepository.release(node.uuid, 'behind');
  });
});
