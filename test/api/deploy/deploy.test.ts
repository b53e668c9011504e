/**
 * End to end through the API: a lab node whose BMC boots a real agent process (src/lab/agents.ts)
 * is cleaned, deployed with an image uploaded to esi's image service and a config drive, torn
 * down and cleaned again — and the node's disk file shows each step. Failures: a wrong image
 * checksum (`deploy failed`), an agent that dies before calling back (callback timeout).
 */
import { randomBytes, createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inspectDisk } from '../../../src/lab/disk-report.ts';
import { bm, provision, waitNode, type ConductorEnv } from '../conductor/support.ts';
import { agentNode, consoleLog, startDeployEnv, uploadImage } from './support.ts';

const MIB = 1024 * 1024;

/** The first `n` bytes of a (sparse, large) disk file. */
function readHead(file: string, n: number): Buffer {
  const fd = fs.openSync(file, 'r');
  try {
    const buf = Buffer.alloc(n);
    const got = fs.readSync(fd, buf, 0, n, 0);
    return buf.subarray(0, got);
  } finally {
    fs.closeSync(fd);
  }
}
const LONG = 45_000;

describe('agent deploy and cleaning of lab nodes', () => {
  let env: ConductorEnv;
  let image: Buffer;
  let imageId: string;

  beforeAll(async () => {
    env = await startDeployEnv(3, { env: { ESI_DEPLOY_CALLBACK_TIMEOUT: '6', ESI_CHECK_PROVISION_STATE_INTERVAL: '1' } });
    image = randomBytes(3 * MIB);
    imageId = await uploadImage(env, image);
  }, LONG);
  afterAll(async () => {
    await env?.close();
  });

  it(
    'a node through the agent: automated cleaning (available, powered off); a deploy of an image of the image service with a config drive (the disk holds both, the node boots its disk); undeploy (disk cleaned, node available); manual cleaning with an agent step that other projects cannot start',
    async () => {
      // Automated cleaning runs through the agent: clean wait → cleaning → available, powered off.
      const { node } = await agentNode(env, 'node-0');
      const cleaned = await waitNode(
        env,
        node.uuid,
        (x) => (x.provision_state === 'available' && x.reservation === null) || / failed$/.test(x.provision_state),
        LONG,
      );
      expect(cleaned.provision_state, cleaned.last_error).toBe('available');
      expect(cleaned.power_state).toBe('power off');
      expect(cleaned.clean_step).toEqual({});
      expect(cleaned.driver_internal_info.agent_url).toBeUndefined();
      await expect.poll(() => consoleLog(env, 'node-0'), { timeout: 5000 }).toMatch(/erase_devices_metadata/);
      expect(env.lab.agents!.running('node-0')).toBe(false);

      // Deploy an image of the image service with a config drive: the disk holds both; the node boots its disk.
      const owner = env.p.owner;
      const patched = await bm(env.ts, owner, 'PATCH', `/v1/nodes/${node.uuid}`, [
        { op: 'add', path: '/instance_info', value: { image_source: imageId } },
      ]);
      expect(patched.status, patched.text).toBe(200);
      await provision(env, node.uuid, 'active', { configdrive: { meta_data: { hostname: 'h1' } } }, owner);
      const waiting = await waitNode(env, node.uuid, (x) => x.provision_state !== 'available', LONG);
      expect(['deploying', 'wait call-back', 'active']).toContain(waiting.provision_state);
      const deployed = await waitNode(env, node.uuid, (x) => x.provision_state === 'active' || / failed$/.test(x.provision_state), LONG);
      expect(deployed.provision_state, deployed.last_error).toBe('active');
      expect(deployed.power_state).toBe('power on');
      expect(deployed.deploy_step).toEqual({});
      expect(deployed.instance_info.configdrive).toBe('******');
      const disk = readHead(env.lab.agents!.diskPath('node-0'), image.length);
      expect(createHash('sha256').update(disk).digest('hex')).toBe(createHash('sha256').update(image).digest('hex'));
      const written = await inspectDisk(env.lab.agents!.diskPath('node-0'));
      expect(written.metaData?.hostname).toBe('h1');
      expect(env.lab.systems.get('node-0').lastBootOverride).not.toBe('Cd');
      await expect.poll(() => consoleLog(env, 'node-0'), { timeout: 5000 }).toMatch(/config-2 hostname h1/);

      // Undeploy cleans the disk through the agent: partition data and config drive gone, node available.
      await provision(env, node.uuid, 'deleted', {}, env.p.owner);
      const undeployed = await waitNode(
        env,
        node.uuid,
        (x) => (x.provision_state === 'available' && x.reservation === null) || / failed$/.test(x.provision_state),
        LONG,
      );
      expect(undeployed.provision_state, undeployed.last_error).toBe('available');
      expect(undeployed.instance_info).toEqual({});
      const wiped = await inspectDisk(env.lab.agents!.diskPath('node-0'));
      expect(wiped.blank).toBe(true);
      expect(wiped.metaData).toBeNull();

      // Manual cleaning with an agent step: manageable → clean wait → cleaning → manageable; other projects see nothing.
      await provision(env, node.uuid, 'manage');
      await waitNode(env, node.uuid, (x) => x.provision_state === 'manageable' && x.reservation === null);
      const steps = [{ interface: 'deploy', step: 'erase_devices_metadata' }];
      const hidden = await bm(env.ts, env.p.other, 'PUT', `/v1/nodes/${node.uuid}/states/provision`, {
        target: 'clean',
        clean_steps: steps,
      });
      expect(hidden.status).toBe(404);
      const anon = await bm(env.ts, env.p.anonymous, 'PUT', `/v1/nodes/${node.uuid}/states/provision`, {
        target: 'clean',
        clean_steps: steps,
      });
      expect(anon.status).toBe(401);
      await provision(env, node.uuid, 'clean', { clean_steps: steps });
      const n = await waitNode(
        env,
        node.uuid,
        (x) => (x.provision_state === 'manageable' && x.reservation === null) || / failed$/.test(x.provision_state),
        LONG,
      );
      expect(n.provision_state, n.last_error).toBe('manageable');
      expect(n.last_error).toBeNull();
      await expect
        .poll(() => consoleLog(env, 'node-0').match(/erase_devices_metadata/g)?.length ?? 0, { timeout: 5000 })
        .toBeGreaterThanOrEqual(3);
    },
    4 * LONG,
  );

  it(
    'a wrong image checksum fails the deploy with the agent error, the node powered off; torn down and deployed again, an agent killed while it writes the image: deploy failed naming the step, node powered off',
    async () => {
      // A wrong image checksum fails the deploy with the agent error; the node is powered off.
      const { node } = await agentNode(env, 'node-1');
      const n1 = node.uuid;
      await waitNode(env, n1, (x) => x.provision_state === 'available' && x.reservation === null, LONG);
      const signed = env.ts.server.services.imageTempUrls.sign(imageId, 600);
      const wrongSum = { image_source: signed, image_os_hash_algo: 'sha256', image_os_hash_value: '0'.repeat(64) };
      expect(
        (await bm(env.ts, env.p.admin, 'PATCH', `/v1/nodes/${n1}`, [{ op: 'add', path: '/instance_info', value: wrongSum }])).status,
      ).toBe(200);
      await provision(env, n1, 'active');
      const failed = await waitNode(env, n1, (x) => x.provision_state === 'deploy failed' || x.provision_state === 'active', LONG);
      expect(failed.provision_state).toBe('deploy failed');
      expect(failed.last_error).toMatch(/deploy\.write_image/);
      expect(failed.last_error).toMatch(/checksum/i);
      expect(failed.power_state).toBe('power off');
      const head = readHead(env.lab.agents!.diskPath('node-1'), MIB);
      expect(head.every((b) => b === 0)).toBe(true);

      // Torn down and deployed again: an agent killed while it writes the image.
      // An image server that sends half the image and then stalls: the write is in progress.
      const stalled = new Set<http.ServerResponse>();
      const images = http.createServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(image.length) });
        res.write(image.subarray(0, MIB));
        stalled.add(res);
      });
      await new Promise<void>((r) => images.listen(0, '127.0.0.1', r));
      try {
        await provision(env, n1, 'deleted');
        await waitNode(env, n1, (x) => x.provision_state === 'available' && x.reservation === null, LONG);
        const url = `http://127.0.0.1:${(images.address() as AddressInfo).port}/disk.raw`;
        const info = {
          image_source: url,
          image_os_hash_algo: 'sha256',
          image_os_hash_value: createHash('sha256').update(image).digest('hex'),
        };
        expect(
          (await bm(env.ts, env.p.admin, 'PATCH', `/v1/nodes/${n1}`, [{ op: 'add', path: '/instance_info', value: info }])).status,
        ).toBe(200);
        await provision(env, n1, 'active');
        const writing = await waitNode(
          env,
          n1,
          (x) => (x.deploy_step?.step === 'write_image' && x.provision_state !== 'deploying') || / failed$/.test(x.provision_state),
          LONG,
        );
        // The write holds no conductor task: the node waits for it, unlocked.
        expect(writing.provision_state).toBe('wait call-back');
        await expect.poll(() => stalled.size, { timeout: 10_000 }).toBeGreaterThan(0);
        // The agent's progress shows on the node: the first MiB of the image arrived.
        const progressing = await waitNode(env, n1, (x) => x.deploy_step?.progress?.bytes === MIB, LONG);
        expect(progressing.deploy_step.progress).toEqual({ phase: 'download', bytes: MIB, total: image.length });
        const lesseeView = await bm(env.ts, env.p.lessee, 'GET', `/v1/nodes/${n1}`);
        expect(lesseeView.body.deploy_step.progress.bytes).toBe(MIB);
        env.lab.agents!.kill('node-1');
        const n = await waitNode(env, n1, (x) => x.provision_state === 'deploy failed' || x.provision_state === 'active', LONG);
        expect(n.provision_state).toBe('deploy failed');
        expect(n.last_error).toMatch(/deploy\.write_image.*could not be reached/);
        expect(n.power_state).toBe('power off');
        expect(n.deploy_step).toEqual({});
      } finally {
        for (const res of stalled) res.destroy();
        await new Promise((r) => images.close(r));
      }
    },
    2 * LONG,
  );

  it(
    'an agent that dies before calling back: deploy failed after the callback timeout',
    async () => {
      const { node: n2 } = await agentNode(env, 'node-2');
      await waitNode(env, n2.uuid, (x) => x.provision_state === 'available' && x.reservation === null, LONG);
      expect(
        (
          await bm(env.ts, env.p.admin, 'PATCH', `/v1/nodes/${n2.uuid}`, [
            { op: 'add', path: '/instance_info', value: { image_source: imageId } },
          ])
        ).status,
      ).toBe(200);
      // Kill the agent the moment the BMC boots it.
      const off = env.lab.subscribe((e) => {
        if (e.type === 'boot' && e.systemId === 'node-2' && e.override !== null) setImmediate(() => env.lab.agents!.kill('node-2'));
      });
      try {
        await provision(env, n2.uuid, 'active');
        await waitNode(env, n2.uuid, (x) => x.provision_state === 'wait call-back', LONG);
        const n = await waitNode(env, n2.uuid, (x) => x.provision_state === 'deploy failed', LONG);
        expect(n.last_error).toMatch(/Timed out after 6 s in "wait call-back"/);
        expect(n.power_state).toBe('power off');
        expect(n.driver_internal_info.agent_boot).toBeUndefined();
        expect(env.lab.systems.powerState('node-2')).toBe('Off');
      } finally {
        off();
      }
    },
    LONG,
  );
});
