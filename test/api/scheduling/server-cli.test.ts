/**
 * `esi server create|list|show|delete` end to end on the lab, as a lessee: the scheduler picks
 * the node the lessee leases, esi's deploy agent writes the lessee's OS image with a config
 * drive carrying the key pair's public key, the host name and the user data (read back from the
 * node's disk), its network is attached to the node as a VIF, the phases are drawn with
 * `--wait`; delete undeploys and cleans the node (its disk blank again), frees the allocation
 * and removes the server's network port. Another project finds no node, and is told why.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inspectDisk } from '../../../src/lab/disk-report.ts';
import { call } from '../../helpers/harness.ts';
import { osImage } from '../../helpers/os-image.ts';
import { esi, personaEnv } from '../cli/support.ts';
import { bm, waitNode, type ConductorEnv } from '../conductor/support.ts';
import { agentNode, cableToFakeSwitch, startDeployEnv, uploadImage } from '../deploy/support.ts';

const LONG = 90_000;
const KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDvC3hT0l2fJ5kq3n7ZlVxq8YVw3pX6m8A0bq4b8wD1u lessee@laptop';
const USER_DATA = '#cloud-config\npackages: [htop]\n';

describe('esi server create / list / show / delete on the lab', () => {
  let env: ConductorEnv;
  let node: any;
  let dir: string;

  beforeAll(async () => {
    env = await startDeployEnv(1);
    ({ node } = await agentNode(env, 'node-0', { name: 'L0', resource_class: 'lab' }));
    await waitNode(env, node.uuid, (n) => n.provision_state === 'available' && n.reservation === null, LONG);
    await uploadImage(env, osImage('lessee-os', 8, 'qcow2'), 'my-os', { as: env.p.lessee, diskFormat: 'qcow2' });
    const nova = { 'x-openstack-nova-api-version': '2.90' };
    const f = await call(
      env.ts,
      env.p.admin,
      'POST',
      '/compute/v2.1/flavors',
      { flavor: { name: 'bm.lab', ram: 4096, vcpus: 2, disk: 1 } },
      nova,
    );
    expect(f.status, f.text).toBe(200);
    await call(
      env.ts,
      env.p.admin,
      'POST',
      `/compute/v2.1/flavors/${f.body.flavor.id}/os-extra_specs`,
      { extra_specs: { 'resources:CUSTOM_LAB': '1', 'esi:match:memory_mb': 'exact' } },
      nova,
    );
    const k = await call(env.ts, env.p.lessee, 'POST', '/compute/v2.1/os-keypairs', { keypair: { name: 'laptop', public_key: KEY } }, nova);
    expect(k.status, k.text).toBe(201);
    // The node's NIC is cabled to a switch (fake driver); the lessee has a network of its own.
    await cableToFakeSwitch(env, node.uuid);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-srv-'));
    fs.writeFileSync(path.join(dir, 'user-data'), USER_DATA);
  }, LONG);
  afterAll(async () => {
    await env?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it(
    'another project has no node for the flavor: refused with the explanation',
    async () => {
      const r = await esi(['server', 'create', 'x', '--flavor', 'bm.lab', '--image', 'my-os'], personaEnv(env.ts, 'other'));
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/no image named my-os/);
      const admin = await esi(['server', 'create', 'x', '--flavor', 'bm.lab', '--image', 'my-os'], personaEnv(env.ts, 'admin'));
      expect(admin.stderr).toMatch(/No valid host was found\. .*there are no nodes to consider/);
      const net = await esi(
        ['server', 'create', 'x', '--flavor', 'bm.lab', '--image', 'my-os', '--network', 'n1'],
        personaEnv(env.ts, 'lessee'),
      );
      expect(net.stderr).toMatch(/no network named n1/);
    },
    LONG,
  );

  it(
    'creates a server with --wait (phases on stderr; the node boots the OS with the config drive), then deletes it with --wait (undeployed, cleaned, the allocation freed, the disk blank)',
    async () => {
      // step: create web1 with --wait
      const r = await esi(
        [
          'server',
          'create',
          'web1',
          '--flavor',
          'bm.lab',
          '--image',
          'my-os',
          '--key-name',
          'laptop',
          '--user-data',
          path.join(dir, 'user-data'),
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
      expect(out).toMatchObject({ name: 'web1', status: 'ACTIVE', node: node.uuid, flavor: 'bm.lab', key_name: 'laptop' });
      // The phases after the first show only when a poll lands in them: a lab deploy can go from
      // booting the agent to active between two polls. Whatever phases did show are known ones.
      expect(r.stderr).toMatch(/esi: web1: (booting the deploy agent|waiting for the deploy agent to call back)/);
      for (const line of r.stderr.split('\n').filter((l) => l.startsWith('esi: web1: '))) {
        expect(line).toMatch(
          /^esi: web1: (booting the deploy agent|waiting for the deploy agent|deploying$|writing the image|converting the image|booting the instance|active)/,
        );
      }
      const report = await inspectDisk(env.lab.agents!.diskPath('node-0'));
      expect(report.filesystems).toContainEqual({ partition: 1, type: 'ext2/3/4', label: 'lessee-os' });
      expect(report.metaData).toMatchObject({ hostname: 'web1', uuid: out.id, public_keys: { laptop: KEY } });
      expect(report.userDataBytes).toBe(Buffer.byteLength(USER_DATA));
      const list = JSON.parse((await esi(['server', 'list', '--long', '-f', 'json'], personaEnv(env.ts, 'lessee'))).stdout);
      expect(list).toEqual([expect.objectContaining({ Name: 'web1', Status: 'ACTIVE', Node: node.uuid, Flavor: 'bm.lab' })]);
      const shown = JSON.parse((await esi(['server', 'show', 'web1', '-f', 'json'], personaEnv(env.ts, 'lessee'))).stdout);
      expect(shown).toMatchObject({ id: out.id, status: 'ACTIVE' });
      const owner = await esi(['server', 'show', 'web1'], personaEnv(env.ts, 'owner'));
      expect(owner.stderr).toMatch(/server web1 was not found/);
      // The server's network: a port of the lessee on lnet, attached to the node as its VIF.
      const vifs = (await bm(env.ts, env.p.lessee, 'GET', `/v1/nodes/${node.uuid}/vifs`)).body.vifs;
      expect(vifs).toHaveLength(1);
      const port = await call(env.ts, env.p.lessee, 'GET', `/network/v2.0/ports/${vifs[0].id}`);
      expect(port.body.port).toMatchObject({ device_id: out.id, device_owner: 'compute:esi', network_id: expect.any(String) });

      // step: delete web1 with --wait
      const del = await esi(['server', 'delete', 'web1', '--wait', '120'], personaEnv(env.ts, 'lessee'));
      expect(del.code, del.stderr).toBe(0);
      expect(del.stdout).toMatch(/Deleted server web1 .*; node .* is available/);
      // A metadata erase can end between two polls, so the cleaning line may not show; that the
      // disk was cleaned is checked on the disk itself below.
      expect(del.stderr).toMatch(/esi: web1: (undeploying|tearing down the instance|cleaning)/);
      const n = await waitNode(env, node.uuid, () => true);
      expect(n).toMatchObject({ provision_state: 'available', instance_uuid: null, allocation_uuid: null, instance_info: {} });
      // Its network port was detached and deleted with it.
      expect((await bm(env.ts, env.p.lessee, 'GET', `/v1/nodes/${node.uuid}/vifs`)).body.vifs).toEqual([]);
      expect((await call(env.ts, env.p.lessee, 'GET', '/network/v2.0/ports?device_owner=compute:esi')).body.ports).toEqual([]);
      expect((await inspectDisk(env.lab.agents!.diskPath('node-0'))).blank).toBe(true);
      const deleted = JSON.parse((await esi(['server', 'list', '--deleted', '-f', 'json'], personaEnv(env.ts, 'lessee'))).stdout);
      expect(deleted).toEqual([expect.objectContaining({ Name: 'web1', Status: 'DELETED' })]);
    },
    2 * LONG,
  );
});
