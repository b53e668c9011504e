/**
 * Issue 21, item 3: take-over in seconds, with real processes on PostgreSQL. One API replica
 * and two conductors (`--roles conductor`, heartbeat 2 s, dead-after by default three beats);
 * conductor c1 is deploying nodes (its reservation on them, as a task in flight leaves them)
 * when it is killed with SIGKILL. Within 15 s every one of those nodes is usable again —
 * unlocked and moved to `deploy failed` with a `last_error` naming c1 — and the API replica,
 * which runs no conductor and has no heartbeat setting of its own, shows c1 dead by then while
 * it showed it alive before. And a conductor paused with SIGSTOP for longer than its dead-after
 * is taken over the same way; resumed, it heartbeats again, logs that it had been taken for
 * dead, and leaves the nodes it no longer holds as the taker left them. (PostgreSQL only:
 * SQLite is one process by design.)
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describePostgresOnly } from '../../helpers/harness.ts';
import { http } from '../lease/processes.ts';
import {
  IRONIC_VERSION,
  conductorsShown,
  createNodes,
  heldBy,
  holdNodes,
  killConductor,
  startCluster,
  waitReleased,
  waitUntil,
  type Cluster,
} from './cluster.ts';

const NODES = 12;

describePostgresOnly('take-over after kill -9 (real processes)', () => {
  let c: Cluster;

  beforeAll(async () => {
    // Only the conductors get the heartbeat setting: the API replica reads dead-after from the database.
    c = await startCluster({ conductors: ['c1', 'c2', 'c3'], env: { ESI_CONDUCTOR_HEARTBEAT_INTERVAL: '2' } });
  }, 120_000);
  afterAll(async () => c?.close());

  it('every node of a killed conductor is usable again within 15 s, and the API shows it dead by then', async () => {
    const nodes = await createNodes(c, NODES);
    await holdNodes(c, 'c1', nodes);
    // c1 is alive and holds them: nobody takes them over while it heartbeats.
    await new Promise((r) => setTimeout(r, 5_000));
    expect(await heldBy(c, 'c1', nodes)).toBe(NODES);
    expect((await conductorsShown(c)).get('c1')).toBe(true);

    const killed = killConductor(c, 'c1');
    const released = await waitReleased(c, 'c1', nodes, 20_000);
    const seconds = (released - killed) / 1000;
    console.log(`take-over: ${NODES} nodes of a kill -9-ed conductor usable again after ${seconds.toFixed(1)} s`);
    expect(seconds).toBeLessThan(15);
    expect((await conductorsShown(c)).get('c1')).toBe(false);
    expect((await conductorsShown(c)).get('c2')).toBe(true);

    for (const uuid of nodes) {
      const n = await http(`${c.api.url}/baremetal/v1/nodes/${uuid}`, 'GET', c.adminToken, undefined, IRONIC_VERSION);
      expect(n.body).toMatchObject({ provision_state: 'deploy failed', target_provision_state: 'active', reservation: null });
      expect(n.body.last_error).toMatch(/conductor c1 stopped while working on it \(taken over by c[23]\)/);
    }
    // Usable: the failed deployment can be undeployed, and c2 does it.
    const first = nodes[0]!;
    const r = await http(
      `${c.api.url}/baremetal/v1/nodes/${first}/states/provision`,
      'PUT',
      c.adminToken,
      { target: 'deleted' },
      IRONIC_VERSION,
    );
    expect(r.status, JSON.stringify(r.body)).toBe(202);
  }, 90_000);

  it('a conductor paused past its dead-after is taken over; resumed, it notices and leaves those nodes alone', async () => {
    const nodes = await createNodes(c, 6, 'paused');
    await holdNodes(c, 'c3', nodes);
    const c3 = c.conductors.get('c3')!;
    c3.child.kill('SIGSTOP');
    try {
      await waitReleased(c, 'c3', nodes, 20_000);
      expect((await conductorsShown(c)).get('c3')).toBe(false);
    } finally {
      c3.child.kill('SIGCONT');
    }
    await waitUntil(async () => (await conductorsShown(c)).get('c3') === true, 10_000);
    await waitUntil(async () => /silent for longer than its dead-after/.test(c3.output()), 10_000);
    // Two more heartbeats of c3: the nodes stay as c2 left them.
    await new Promise((r) => setTimeout(r, 4_000));
    for (const uuid of nodes) {
      const n = await http(`${c.api.url}/baremetal/v1/nodes/${uuid}`, 'GET', c.adminToken, undefined, IRONIC_VERSION);
      expect(n.body).toMatchObject({ provision_state: 'deploy failed', reservation: null });
      expect(n.body.last_error).toMatch(/conductor c3 stopped while working on it \(taken over by c2\)/);
    }
    expect(c3.child.exitCode).toBeNull();
  }, 90_000);
});
