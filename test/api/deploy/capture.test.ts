/**
 * Image capture (an image made from a leased, provisioned node): the lessee
 * deploys its OS, changes the running instance (the test writes into its root partition, as the
 * OS would), captures the node with `esi node capture --wait` into a new private qcow2 image —
 * streamed by the agent into the image service — and deploys that image again: the change is
 * there, the old config drive (with its user data) is not in the image. Every persona on the
 * capture endpoint; bad requests change nothing.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inspectDisk } from '../../../src/lab/disk-report.ts';
import { call } from '../../helpers/harness.ts';
import { osImage } from '../../helpers/os-image.ts';
import { esi, personaEnv } from '../cli/support.ts';
import { bm, provision, waitNode, type ConductorEnv } from '../conductor/support.ts';
import { agentNode, consoleLog, startDeployEnv, uploadImage } from './support.ts';

const LONG = 60_000;
const MIB = 1024 * 1024;
const MARKER = Buffer.from('written by the running instance');
const SECRET = 'user-data-secret-7f3a';

function readDisk(file: string, offset: number, length: number): Buffer {
  const fd = fs.openSync(file, 'r');
  try {
    const b = Buffer.alloc(length);
    const n = fs.readSync(fd, b, 0, length, offset);
    return b.subarray(0, n);
  } finally {
    fs.closeSync(fd);
  }
}

describe('image capture of a provisioned node', () => {
  let env: ConductorEnv;
  let dir: string;
  let base: string;

  beforeAll(async () => {
    env = await startDeployEnv(2);
    base = await uploadImage(env, osImage('base-os', 8), 'base-os', { as: env.p.lessee });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-cap-'));
  }, LONG);
  afterAll(async () => {
    await env?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  /**
   * A node of the test's own, named `name` on lab system `system`: provisioned by the lessee with
   * the base OS and a config drive (with user data), its root file system then changed by the
   * running instance.
   */
  async function provisionedNode(system: string, name: string): Promise<any> {
    const { node } = await agentNode(env, system, { name });
    await waitNode(env, node.uuid, (n) => n.provision_state === 'available' && n.reservation === null, LONG);
    expect(
      (await bm(env.ts, env.p.lessee, 'PATCH', `/v1/nodes/${node.uuid}`, [{ op: 'add', path: '/instance_info/image_source', value: base }]))
        .status,
    ).toBe(200);
    await provision(env, node.uuid, 'active', { configdrive: { meta_data: { hostname: 'c1' }, user_data: SECRET } }, env.p.lessee);
    const n = await waitNode(env, node.uuid, (x) => x.provision_state === 'active' || / failed$/.test(x.provision_state), LONG);
    expect(n.provision_state, n.last_error).toBe('active');
    // The running instance changes its root file system.
    const fd = fs.openSync(env.lab.agents!.diskPath(system), 'r+');
    fs.writeSync(fd, MARKER, 0, MARKER.length, 5 * MIB);
    fs.closeSync(fd);
    return node;
  }

  /** A new queued image of `who`'s project. */
  async function queued(who: keyof ConductorEnv['p'], format = 'qcow2'): Promise<string> {
    const r = await call(env.ts, env.p[who], 'POST', '/image/v2/images', {
      name: `t-${who}`,
      disk_format: format,
      container_format: 'bare',
    });
    expect(r.status, r.text).toBe(201);
    return r.body.id;
  }

  it(
    'refuses anonymous (401), other projects (404), bad bodies and images; nothing changes',
    async () => {
      const node = await provisionedNode('node-1', 'R');
      const mine = await queued('lessee');
      const url = `/v1/nodes/${node.uuid}/capture`;
      expect((await bm(env.ts, env.p.anonymous, 'POST', url, { image_id: mine })).status).toBe(401);
      expect((await bm(env.ts, env.p.other, 'POST', url, { image_id: await queued('other') })).status).toBe(404);
      const bad = async (body: unknown, status: number, re: RegExp) => {
        const r = await bm(env.ts, env.p.lessee, 'POST', url, body);
        expect(r.status, r.text).toBe(status);
        expect(r.text).toMatch(re);
      };
      await bad({}, 400, /image_id/);
      await bad({ image_id: mine, colour: 1 }, 400, /Unknown attribute/);
      await bad({ image_id: 'not-a-uuid' }, 400, /image_id/);
      await bad({ image_id: '4f4c8a3e-0000-4000-8000-000000000000' }, 404, /No image found|not found/i);
      await bad({ image_id: await queued('owner') }, 404, /No image found|not found/i); // the owner's private image is invisible to the lessee
      // A public image the lessee sees but may not upload into (Glance's image:upload_image).
      const pub = await call(env.ts, env.p.admin, 'POST', '/image/v2/images', {
        name: 'pub-queued',
        disk_format: 'qcow2',
        container_format: 'bare',
        visibility: 'public',
      });
      await bad({ image_id: pub.body.id }, 403, /not authorized/);
      const active = await uploadImage(env, Buffer.alloc(MIB), 'has-data', { as: env.p.lessee });
      await bad({ image_id: active }, 409, /already|queued/);
      await bad({ image_id: await queued('lessee', 'iso') }, 400, /disk_format/);
      const n = (await bm(env.ts, env.p.admin, 'GET', `/v1/nodes/${node.uuid}`)).body;
      expect(n.provision_state).toBe('active');
      expect(n.driver_internal_info.capture).toBeUndefined();
    },
    LONG,
  );

  it(
    'esi node capture --wait as the lessee: a private qcow2 image of the instance, without its config drive, that deploys again with the instance change',
    async () => {
      const node = await provisionedNode('node-0', 'C');
      // Capture the running instance.
      const r = await esi(['node', 'capture', 'C', '--name', 'snap', '--wait', '120', '-f', 'json'], personaEnv(env.ts, 'lessee'));
      expect(r.code, r.stderr).toBe(0);
      const out = JSON.parse(r.stdout);
      expect(out).toMatchObject({ name: 'snap', status: 'active', disk_format: 'qcow2', node: 'C', os_hash_algo: 'sha512' });
      expect(r.stderr).toMatch(/esi: C: (booting the deploy agent|waiting for the deploy agent|converting|uploading)/);
      const snapId = out.id;
      const n = (await bm(env.ts, env.p.lessee, 'GET', `/v1/nodes/${node.uuid}`)).body;
      expect([n.provision_state, n.power_state, n.deploy_step]).toEqual(['active', 'power on', {}]);
      // The image: private to the lessee, the instance's bytes.
      const img = await call(env.ts, env.p.lessee, 'GET', `/image/v2/images/${snapId}`);
      expect(img.body).toMatchObject({ visibility: 'private', owner: env.p.lessee.projectId, virtual_size: 7 * MIB });
      expect((await call(env.ts, env.p.other, 'GET', `/image/v2/images/${snapId}`)).status).toBe(404);
      const data = Buffer.from(
        await (
          await fetch(`${env.ts.url}/image/v2/images/${snapId}/file`, { headers: { 'x-auth-token': env.p.lessee.token! } })
        ).arrayBuffer(),
      );
      fs.writeFileSync(path.join(dir, 'snap.qcow2'), data);
      execFileSync('qemu-img', ['convert', '-q', '-f', 'qcow2', '-O', 'raw', path.join(dir, 'snap.qcow2'), path.join(dir, 'snap.raw')]);
      const raw = fs.readFileSync(path.join(dir, 'snap.raw'));
      expect(raw.length).toBe(7 * MIB);
      expect(raw.equals(readDisk(env.lab.agents!.diskPath('node-0'), 0, 7 * MIB))).toBe(true);
      expect(raw.includes(MARKER)).toBe(true);
      expect(raw.includes(Buffer.from(SECRET))).toBe(false);
      await expect
        .poll(() => consoleLog(env, 'node-0'), { timeout: 5000 })
        .toMatch(/command standby.capture_image succeeded[\s\S]*C? ?boots from disk/);

      // The captured image deploys: the instance change is there.
      const un = await esi(['node', 'unprovision', 'C', '--wait', '120'], personaEnv(env.ts, 'lessee'));
      expect(un.code, un.stderr).toBe(0);
      expect((await inspectDisk(env.lab.agents!.diskPath('node-0'))).blank).toBe(true);
      const again = await esi(['node', 'provision', 'C', '--image', 'snap', '--wait', '120'], personaEnv(env.ts, 'lessee'));
      expect(again.code, again.stderr).toBe(0);
      const disk = env.lab.agents!.diskPath('node-0');
      expect((await inspectDisk(disk)).filesystems).toContainEqual({ partition: 1, type: 'ext2/3/4', label: 'base-os' });
      expect(readDisk(disk, 5 * MIB, MARKER.length).equals(MARKER)).toBe(true);
    },
    3 * LONG,
  );
});
