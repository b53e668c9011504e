/**
 * `esi node provision` / `esi node unprovision` as a lessee, end to end: the lessee uploads its
 * own OS image (a GPT disk with an ext4 file system labelled `lessee-os`), provisions the node
 * it holds with an SSH key, user data and its own network, watches the phases, and the lab's node boots the disk
 * and prints the OS label and the config drive's contents on its serial console. Then the node
 * is unprovisioned and its disk is blank again. Other callers cannot provision the node.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { inspectDisk } from '../../../src/lab/disk-report.ts';
import { osImage } from '../../helpers/os-image.ts';
import { esi, personaEnv } from '../cli/support.ts';
import { bm, waitNode, type ConductorEnv } from '../conductor/support.ts';
import { agentNode, cableToFakeSwitch, consoleLog, startDeployEnv, uploadImage } from './support.ts';

const LONG = 60_000;
const KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDvC3hT0l2fJ5kq3n7ZlVxq8YVw3pX6m8A0bq4b8wD1u lessee@laptop';

describe('esi node provision / unprovision', () => {
  let env: ConductorEnv;
  let node: any;
  let dir: string;

  // A fresh server and node B for each test: each test starts from an available, cabled node.
  beforeEach(async () => {
    env = await startDeployEnv(1);
    ({ node } = await agentNode(env, 'node-0', { name: 'B' }));
    await waitNode(env, node.uuid, (n) => n.provision_state === 'available' && n.reservation === null, LONG);
    // Cable the node's NIC to a switch (fake driver) so that --network can attach a network.
    await cableToFakeSwitch(env, node.uuid);
    await uploadImage(env, osImage('lessee-os', 8, 'qcow2'), 'my-os', { as: env.p.lessee, diskFormat: 'qcow2' });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-prov-'));
    fs.writeFileSync(path.join(dir, 'id.pub'), `${KEY}\n`);
    fs.writeFileSync(path.join(dir, 'user-data'), '#cloud-config\npackages: [htop]\n');
  }, LONG);
  afterEach(async () => {
    await env?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it(
    'refuses callers who do not hold the node, unknown images and bad keys, before changing anything',
    async () => {
      const other = await esi(['node', 'provision', 'B', '--image', 'my-os'], personaEnv(env.ts, 'other'));
      expect(other.code).toBe(1);
      expect(other.stderr).toMatch(/node B was not found/);
      const anon = await esi(['node', 'provision', 'B', '--image', 'my-os'], { OS_AUTH_URL: `${env.ts.url}/identity/v3` });
      expect(anon.code).toBe(1);
      expect(anon.stderr).toMatch(/OS_USERNAME/);
      // The lessee's private image is invisible to the owner.
      const owner = await esi(['node', 'provision', 'B', '--image', 'my-os'], personaEnv(env.ts, 'owner'));
      expect(owner.code).toBe(1);
      expect(owner.stderr).toMatch(/no image named my-os/);
      const badKey = path.join(dir, 'bad.pub');
      fs.writeFileSync(badKey, 'not a key');
      const bad = await esi(['node', 'provision', 'B', '--image', 'my-os', '--ssh-key', badKey], personaEnv(env.ts, 'lessee'));
      expect(bad.code).toBe(1);
      expect(bad.stderr).toMatch(/not an OpenSSH public key/);
      const shown = await waitNode(env, node.uuid, () => true);
      expect(shown.provision_state).toBe('available');
      expect(shown.instance_info).toEqual({});
    },
    LONG,
  );

  it(
    'provisions as the lessee with --wait (phases on stderr, the node boots the OS with the config drive), then unprovisions with --wait (the instance removed, the disk wiped)',
    async () => {
      const r = await esi(
        [
          'node',
          'provision',
          'B',
          '--image',
          'my-os',
          '--ssh-key',
          path.join(dir, 'id.pub'),
          '--user-data',
          path.join(dir, 'user-data'),
          '--hostname',
          'web1',
          '--network',
          'lnet',
          '--wait',
          '120',
          '-f',
          'json',
        ],
        personaEnv(env.ts, 'lessee'),
      );
      expect(r.code, r.stderr).toBe(0);
      const out = JSON.parse(r.stdout);
      expect(out).toMatchObject({
        node: 'B',
        provision_state: 'active',
        power_state: 'power on',
        image: 'my-os',
        hostname: 'web1',
        networks: ['esi-B-lnet'],
      });
      const vifs = (await bm(env.ts, env.p.lessee, 'GET', `/v1/nodes/${node.uuid}/vifs`)).body.vifs;
      expect(vifs).toHaveLength(1);
      expect(r.stderr).toMatch(/esi: B: booting the deploy agent/);
      // The phases after the first show only when a poll lands in them: a lab deploy can go from
      // booting the agent to active between two polls. Whatever phases did show are known ones.
      for (const line of r.stderr.split('\n').filter((l) => l.startsWith('esi: B: '))) {
        expect(line).toMatch(
          /^esi: B: (booting the deploy agent|waiting for the deploy agent|deploying$|writing the image|converting the image|booting the instance|active)/,
        );
      }
      const report = await inspectDisk(env.lab.agents!.diskPath('node-0'));
      expect(report.filesystems).toContainEqual({ partition: 1, type: 'ext2/3/4', label: 'lessee-os' });
      expect(report.metaData).toMatchObject({ hostname: 'web1', public_keys: { default: KEY } });
      expect(report.userDataBytes).toBe(Buffer.byteLength('#cloud-config\npackages: [htop]\n'));
      await expect
        .poll(() => consoleLog(env, 'node-0'), { timeout: 10_000 })
        .toMatch(/file system: ext2\/3\/4 label "lessee-os" on partition 1/);
      expect(consoleLog(env, 'node-0')).toMatch(/config drive: config-2 hostname web1 uuid .*1 public key\(s\), user_data \d+ bytes/);

      // step: unprovision the node just provisioned.
      const un = await esi(['node', 'unprovision', 'B', '--wait', '120', '-f', 'json'], personaEnv(env.ts, 'lessee'));
      expect(un.code, un.stderr).toBe(0);
      expect(JSON.parse(un.stdout)).toMatchObject({ node: 'B', provision_state: 'available' });
      // Progress is drawn (a metadata erase can end between two polls, so the cleaning line may not
      // show); that the disk was cleaned is checked on the disk itself below.
      expect(un.stderr).toMatch(/esi: B: (tearing down the instance|cleaning)/);
      const wiped = await inspectDisk(env.lab.agents!.diskPath('node-0'));
      expect(wiped.blank).toBe(true);
      expect(wiped.filesystems).toEqual([]);
      expect(wiped.metaData).toBeNull();
    },
    2 * LONG,
  );

  it(
    'refuses a node that is not available',
    async () => {
      await esi(['node', 'provision', 'B', '--image', 'my-os'], personaEnv(env.ts, 'lessee'));
      const again = await esi(['node', 'provision', 'B', '--image', 'my-os'], personaEnv(env.ts, 'lessee'));
      expect(again.code).toBe(1);
      expect(again.stderr).toMatch(/node B is (deploying|wait call-back|active); it must be available/);
      await waitNode(env, node.uuid, (n) => n.provision_state === 'active' || / failed$/.test(n.provision_state), LONG);
    },
    LONG,
  );
});
