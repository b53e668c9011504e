/**
 * Long agent commands hold no conductor task (src/conductor/agent/command-watch.ts): with ONE
 * conductor worker, two nodes write their images at the same time; while they write, the
 * node waits in `wait call-back` with the command recorded, unlocked, and its progress shows
 * to the lessee (not to other projects); a heartbeat does not resume it; and
 * when the writes end both nodes go `active`. Also: an agent that stops answering during a
 * write → `deploy failed` naming the step.
 */
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bm, provision, waitNode, type ConductorEnv } from '../conductor/support.ts';
import { agentNode, startDeployEnv } from './support.ts';

const MIB = 1024 * 1024;
const LONG = 60_000;

describe('long agent commands run while their nodes wait', () => {
  let env: ConductorEnv;
  const image = randomBytes(2 * MIB);
  const digest = createHash('sha256').update(image).digest('hex');
  // An image server that sends the first MiB and holds the rest until released.
  const held = new Set<http.ServerResponse>();
  let release = false;
  const images = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(image.length) });
    res.write(image.subarray(0, MIB));
    if (release) res.end(image.subarray(MIB));
    else held.add(res);
  });
  let url = '';

  beforeAll(async () => {
    env = await startDeployEnv(3, {
      env: { ESI_CONDUCTOR_WORKERS: '1', ESI_DEPLOY_CALLBACK_TIMEOUT: '600', ESI_CHECK_PROVISION_STATE_INTERVAL: '1' },
    });
    await new Promise<void>((r) => images.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(images.address() as AddressInfo).port}/disk.raw`;
  }, LONG);
  afterAll(async () => {
    for (const res of held) res.destroy();
    await new Promise((r) => images.close(r));
    await env?.close();
  });

  it(
    'one worker, two writes at once: both wait unlocked with progress, then both go active',
    async () => {
      const nodes: string[] = [];
      for (const system of ['node-0', 'node-1']) {
        const { node } = await agentNode(env, system);
        await waitNode(
          env,
          node.uuid,
          (x) => (x.provision_state === 'available' && x.reservation === null) || / failed$/.test(x.provision_state),
          LONG,
        );
        const info = { image_source: url, image_os_hash_algo: 'sha256', image_os_hash_value: digest };
        expect(
          (await bm(env.ts, env.p.admin, 'PATCH', `/v1/nodes/${node.uuid}`, [{ op: 'add', path: '/instance_info', value: info }])).status,
        ).toBe(200);
        nodes.push(node.uuid);
      }
      for (const u of nodes) await provision(env, u, 'active');
      const writing = await Promise.all(
        nodes.map((u) => waitNode(env, u, (x) => x.deploy_step?.progress?.bytes === MIB || / failed$/.test(x.provision_state), LONG)),
      );
      for (const n of writing) {
        expect(n.provision_state, n.last_error).toBe('wait call-back');
        expect(n.reservation).toBeNull();
        expect(n.deploy_step.step).toBe('write_image');
        expect(n.driver_internal_info.agent_command).toMatchObject({ name: 'deploy.execute_deploy_step' });
      }
      // The lessee sees the progress; other projects and anonymous callers see nothing.
      const lessee = await bm(env.ts, env.p.lessee, 'GET', `/v1/nodes/${nodes[0]}`);
      expect(lessee.body.deploy_step.progress).toEqual({ phase: 'download', bytes: MIB, total: image.length });
      const other = await bm(env.ts, env.p.other, 'GET', `/v1/nodes/${nodes[0]}`);
      expect(other.status).toBe(404);
      const anonymous = await bm(env.ts, env.p.anonymous, 'GET', `/v1/nodes/${nodes[0]}`);
      expect(anonymous.status).toBe(401);
      // Heartbeats go on (1 s) but do not resume a node whose command runs.
      await new Promise((r) => setTimeout(r, 2500));
      for (const u of nodes) expect((await bm(env.ts, env.p.admin, 'GET', `/v1/nodes/${u}`)).body.provision_state).toBe('wait call-back');
      release = true;
      for (const res of held) res.end(image.subarray(MIB));
      held.clear();
      const done = await Promise.all(
        nodes.map((u) => waitNode(env, u, (x) => x.provision_state === 'active' || / failed$/.test(x.provision_state), LONG)),
      );
      for (const n of done) {
        expect(n.provision_state, n.last_error).toBe('active');
        expect(n.deploy_step).toEqual({});
        expect(n.driver_internal_info.agent_command).toBeUndefined();
      }
    },
    2 * LONG,
  );

  it(
    'an agent that stops answering during a write: deploy failed naming the step, node powered off',
    async () => {
      release = false;
      const { node } = await agentNode(env, 'node-2');
      await waitNode(
        env,
        node.uuid,
        (x) => (x.provision_state === 'available' && x.reservation === null) || / failed$/.test(x.provision_state),
        LONG,
      );
      const info = { image_source: url, image_os_hash_algo: 'sha256', image_os_hash_value: digest };
      expect(
        (await bm(env.ts, env.p.admin, 'PATCH', `/v1/nodes/${node.uuid}`, [{ op: 'add', path: '/instance_info', value: info }])).status,
      ).toBe(200);
      await provision(env, node.uuid, 'active');
      await waitNode(env, node.uuid, (x) => x.deploy_step?.progress?.bytes === MIB || / failed$/.test(x.provision_state), LONG);
      env.lab.agents!.kill('node-2');
      const n = await waitNode(env, node.uuid, (x) => x.provision_state === 'deploy failed' || x.provision_state === 'active', LONG);
      expect(n.provision_state).toBe('deploy failed');
      expect(n.last_error).toMatch(/deploy\.write_image.*could not be reached/);
      expect(n.power_state).toBe('power off');
      expect(n.driver_internal_info.agent_command).toBeUndefined();
    },
    LONG,
  );
});
