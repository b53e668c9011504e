/**
 * Two esi processes (two conductors) on one PostgreSQL database (README "Running at scale"):
 * nodes are partitioned between the conductors by hashing (`conductor` field of the node);
 * work recorded through either API is done by the conductor the node maps to (the other
 * process finds it by its poll); when one conductor stops, the other takes all nodes.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describePostgresOnly, startTestServer, type TestServer } from '../../helpers/harness.ts';
import { bm, enroll, getNode, startConductorEnv, waitNode, type ConductorEnv } from './support.ts';

describePostgresOnly('two conductors on one PostgreSQL database', () => {
  let env: ConductorEnv;
  let second: TestServer;

  beforeAll(async () => {
    env = await startConductorEnv(0, { env: { ESI_CONDUCTOR_HOSTNAME: 'cond-a' } });
    second = await startTestServer({ reuse: env.ts, env: { ESI_CONDUCTOR_HOSTNAME: 'cond-b' } });
  });
  afterAll(async () => {
    await second?.close({ keepData: true });
    await env?.close();
  });

  it('partitions the nodes and does all the work, whichever API recorded it; one conductor takes all when the other stops', async () => {
    const nodes: string[] = [];
    for (let i = 0; i < 16; i++) nodes.push((await enroll(env, { driver: 'fake-hardware', name: `multi-${i}` })).uuid);
    const onB = { ...env, ts: second };
    for (const uuid of nodes) {
      const r = await bm(second, env.p.admin, 'PUT', `/v1/nodes/${uuid}/states/provision`, { target: 'manage' });
      expect(r.status, r.text).toBe(202);
    }
    const owners = new Set<string>();
    for (const uuid of nodes) {
      const n = await waitNode(onB, uuid, (x) => x.provision_state === 'manageable' && x.reservation === null);
      owners.add(n.conductor);
    }
    expect([...owners].sort()).toEqual(['cond-a', 'cond-b']);

    await second.close({ keepData: true });
    env.ts.server.services.inventory.conductors.invalidate();
    for (const uuid of nodes) {
      const r = await bm(env.ts, env.p.admin, 'PUT', `/v1/nodes/${uuid}/states/power`, { target: 'power on' });
      expect(r.status, r.text).toBe(202);
    }
    for (const uuid of nodes) {
      const n = await waitNode(env, uuid, (x) => x.power_state === 'power on' && x.target_power_state === null);
      expect(n.conductor).toBe('cond-a');
    }
    expect((await getNode(env, nodes[0]!)).last_error).toBeNull();
  });
});
