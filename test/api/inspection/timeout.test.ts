/**
 * An agent that never reports its inventory: the node waits in `inspect wait` and the
 * conductor's wait timeout (`ESI_INSPECT_WAIT_TIMEOUT`) fails it to `inspect failed` with
 * `last_error`. Here the node's enrolled port does not match any lab NIC, so the agent's data
 * finds no node (404) — as a mis-cabled or mis-enrolled machine in Ironic. The node is
 * powered off (the agent ends).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { bm, enrollRedfish, provision, waitNode, type ConductorEnv } from '../conductor/support.ts';
import { startInspectionEnv } from './support.ts';

let env: ConductorEnv;

beforeAll(async () => {
  env = await startInspectionEnv(2, { env: { ESI_INSPECT_WAIT_TIMEOUT: '3', ESI_CHECK_PROVISION_STATE_INTERVAL: '1' } });
}, 60_000);

afterAll(async () => {
  await env?.close();
});

it('inspect wait times out to inspect failed; the node can be managed again', async () => {
  const node = await enrollRedfish(env, 'node-0', { inspect_interface: 'agent' }, { deploy_iso: 'http://lab/esi-agent.iso' });
  const port = await bm(env.ts, env.p.admin, 'POST', '/v1/ports', { node_uuid: node.uuid, address: '52:54:00:ff:ff:01' });
  expect(port.status, port.text).toBe(201);
  await provision(env, node.uuid, 'manage');
  await waitNode(env, node.uuid, (n) => n.provision_state === 'manageable' && n.reservation === null);
  await provision(env, node.uuid, 'inspect');
  await waitNode(env, node.uuid, (n) => n.provision_state === 'inspect wait', 15_000);
  const failed = await waitNode(env, node.uuid, (n) => n.provision_state === 'inspect failed' && n.reservation === null, 30_000);
  expect(failed.last_error).toMatch(/timed out|timeout/i);
  expect(failed.power_state).toBe('power off');
  expect(env.lab.systems.powerState('node-0')).toBe('Off');
  expect(failed.driver_internal_info.agent_boot).toBeUndefined();
  expect((await bm(env.ts, env.p.admin, 'GET', `/v1/nodes/${node.uuid}/inventory`, undefined, '1.81')).status).toBe(404);
  await provision(env, node.uuid, 'manage');
  await waitNode(env, node.uuid, (n) => n.provision_state === 'manageable' && n.reservation === null);
}, 60_000);

it('abort in inspect wait: inspect failed, the node powered off (the agent ends)', async () => {
  const node = await enrollRedfish(env, 'node-1', { inspect_interface: 'agent' }, { deploy_iso: 'http://lab/esi-agent.iso' });
  const port = await bm(env.ts, env.p.admin, 'POST', '/v1/ports', { node_uuid: node.uuid, address: '52:54:00:ff:ff:02' });
  expect(port.status, port.text).toBe(201);
  await provision(env, node.uuid, 'manage');
  await waitNode(env, node.uuid, (n) => n.provision_state === 'manageable' && n.reservation === null);
  await provision(env, node.uuid, 'inspect');
  await waitNode(env, node.uuid, (n) => n.provision_state === 'inspect wait' && n.reservation === null, 15_000);
  expect(env.lab.systems.powerState('node-1')).toBe('On');
  const res = await bm(env.ts, env.p.admin, 'PUT', `/v1/nodes/${node.uuid}/states/provision`, { target: 'abort' }, '1.41');
  expect(res.status, res.text).toBe(202);
  const failed = await waitNode(
    env,
    node.uuid,
    (n) => n.provision_state === 'inspect failed' && n.target_power_state === null && n.reservation === null,
    15_000,
  );
  expect(failed.power_state).toBe('power off');
  expect(env.lab.systems.powerState('node-1')).toBe('Off');
}, 60_000);
