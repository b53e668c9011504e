/**
 * Every node is wiped before its next lease, even one the lessee never deployed through esi
 * (ESI wipes the nodes at the end of a lease): a lessee claims an offered lab
 * node, writes its disk "with its own provisioning" (the test writes the disk file, as the
 * lessee's OS would), and when the lease ends the node is cleaned through the deploy agent —
 * partition tables and signatures by default, the whole disk when the owner's lease policy has
 * `erase_devices`.
 */
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inspectDisk } from '../../../src/lab/disk-report.ts';
import { call } from '../../helpers/harness.ts';
import { osImage } from '../../helpers/os-image.ts';
import { bm, waitNode, type ConductorEnv } from '../conductor/support.ts';
import { agentNode, consoleLog, startDeployEnv } from './support.ts';

const LONG = 60_000;
const MIB = 1024 * 1024;
const iso = (ms: number) => new Date(ms).toISOString().slice(0, 19);

/** Write the lessee's "own OS" onto the node's disk, plus a marker at 512 MiB. */
function lesseeWritesDisk(file: string): void {
  const fd = fs.openSync(file, 'r+');
  try {
    const img = osImage('byo-os', 8);
    fs.writeSync(fd, img, 0, img.length, 0);
    fs.writeSync(fd, Buffer.alloc(MIB, 0x5a), 0, MIB, 512 * MIB);
  } finally {
    fs.closeSync(fd);
  }
}

function markerAt512MiB(file: string): boolean {
  const fd = fs.openSync(file, 'r');
  try {
    const b = Buffer.alloc(16);
    fs.readSync(fd, b, 0, 16, 512 * MIB);
    return b.every((x) => x === 0x5a);
  } finally {
    fs.closeSync(fd);
  }
}

describe('lease end wipes a node that was never deployed', () => {
  let env: ConductorEnv;

  beforeAll(async () => {
    env = await startDeployEnv(2);
  }, LONG);
  afterAll(async () => {
    await env?.close();
  });

  /**
   * A node of its own for the test (a lease policy and the wipes stay with the node): lab system
   * `system` enrolled as an agent node, cleaned, without lessee, offered by its owner for the
   * next hour; returns the node and the offer.
   */
  async function offeredNode(system: string, name: string): Promise<{ node: any; offer: string }> {
    const { node } = await agentNode(env, system, { name });
    await waitNode(env, node.uuid, (n) => n.provision_state === 'available' && n.reservation === null, LONG);
    expect((await bm(env.ts, env.p.admin, 'PATCH', `/v1/nodes/${node.uuid}`, [{ op: 'remove', path: '/lessee' }])).status).toBe(200);
    const now = Date.now();
    const created = await call(env.ts, env.p.owner, 'POST', '/lease/v1/offers', {
      resource_uuid: node.uuid,
      start_time: iso(now - 1000),
      end_time: iso(now + 3600_000),
    });
    expect(created.status, created.text).toBe(201);
    return { node, offer: created.body.uuid };
  }

  /** The lessee claims `seconds` of the owner's offer; resolves once the lessee holds the node. */
  async function leaseFor(node: any, offer: string, seconds: number): Promise<string> {
    const now = Date.now();
    const lease = await call(env.ts, env.p.lessee, 'POST', `/lease/v1/offers/${offer}/claim`, {
      start_time: iso(now),
      end_time: iso(now + seconds * 1000),
    });
    expect(lease.status, lease.text).toBe(201);
    await waitNode(env, node.uuid, (n) => n.lessee === env.p.lessee.projectId, LONG);
    return lease.body.uuid;
  }

  it(
    'default policy: at lease end the node is cleaned (erase_devices_metadata) and the lessee loses it',
    async () => {
      const { node, offer } = await offeredNode('node-0', 'byo');
      await leaseFor(node, offer, 4);
      const disk = env.lab.agents!.diskPath('node-0');
      lesseeWritesDisk(disk);
      expect((await inspectDisk(disk)).filesystems).toContainEqual({ partition: 1, type: 'ext2/3/4', label: 'byo-os' });
      const cleaning = await waitNode(env, node.uuid, (n) => n.lessee === null, LONG);
      expect(['cleaning', 'clean wait', 'available']).toContain(cleaning.provision_state);
      expect((await bm(env.ts, env.p.lessee, 'GET', `/v1/nodes/${node.uuid}`)).status).toBe(404);
      const n = await waitNode(
        env,
        node.uuid,
        (x) => (x.provision_state === 'available' && x.reservation === null) || / failed$/.test(x.provision_state),
        LONG,
      );
      expect(n.provision_state, n.last_error).toBe('available');
      const report = await inspectDisk(disk);
      expect(report.blank).toBe(true);
      expect(report.filesystems).toEqual([]);
      expect(markerAt512MiB(disk)).toBe(true); // metadata erase leaves data blocks
    },
    LONG,
  );

  it(
    "owner's lease policy erase_devices: the whole disk is erased at lease end",
    async () => {
      const { node, offer } = await offeredNode('node-1', 'byo-erase');
      const pol = await call(env.ts, env.p.owner, 'POST', '/lease/v1/lease_policies', { resource_uuid: node.uuid, erase_devices: true });
      expect(pol.status, pol.text).toBe(201);
      expect(pol.body.erase_devices).toBe(true);
      await leaseFor(node, offer, 4);
      const disk = env.lab.agents!.diskPath('node-1');
      lesseeWritesDisk(disk);
      await waitNode(env, node.uuid, (n) => n.lessee === null, LONG);
      const n = await waitNode(
        env,
        node.uuid,
        (x) => (x.provision_state === 'available' && x.reservation === null) || / failed$/.test(x.provision_state),
        LONG,
      );
      expect(n.provision_state, n.last_error).toBe('available');
      expect((await inspectDisk(disk)).blank).toBe(true);
      expect(markerAt512MiB(disk)).toBe(false);
      await expect
        .poll(() => consoleLog(env, 'node-1'), { timeout: 5000 })
        .toMatch(/command clean.execute_clean_step erase_devices succeeded/);
    },
    LONG,
  );
});
