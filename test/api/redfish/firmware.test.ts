/**
 * Firmware updates as clean steps (`management.update_firmware` with `firmware_images`, and
 * `firmware.update` with `settings`) against the lab's UpdateService/TaskService: images
 * served from a loopback HTTP server, checksums checked by the conductor before the BMC sees
 * them, the BMC's task polled to its end, the new versions visible in the lab and recorded in
 * `driver_internal_info.firmware_versions`; bad checksums, bad packages and bad arguments fail
 * clearly.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bm, enrollRedfish, expectError, pick, provision, settled, startConductorEnv, type ConductorEnv } from '../conductor/support.ts';
import { waitFor } from '../../helpers/wait-for.ts';

let env: ConductorEnv;
let files: http.Server;
let base: string;
const IMAGES: Record<string, Buffer> = {
  '/bios-2.1.0.bin': Buffer.concat([Buffer.from('ESI-FIRMWARE BIOS 2.1.0\n'), crypto.randomBytes(4096)]),
  '/bmc-3.0.1.bin': Buffer.concat([Buffer.from('ESI-FIRMWARE BMC 3.0.1\n'), crypto.randomBytes(1024)]),
  '/junk.bin': crypto.randomBytes(2048),
};
/** Requests for /slow-bios.bin wait until this opens. */
let openGate: () => void = () => undefined;
let gate: Promise<void> = new Promise((r) => (openGate = r));
const sha256 = (b: Buffer) => crypto.createHash('sha256').update(b).digest('hex');

beforeAll(async () => {
  files = http.createServer((req, res) => {
    if (req.url === '/slow-bios.bin') {
      const body = Buffer.from('ESI-FIRMWARE BIOS 2.2.0\n');
      return void gate.then(() => res.writeHead(200, { 'content-length': body.length }).end(body));
    }
    const body = IMAGES[req.url ?? ''];
    if (body === undefined) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': body.length }).end(body);
  });
  await new Promise<void>((r) => files.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
  // One lab system per test (node-0 … node-5): each starts from the factory versions.
  env = await startConductorEnv(6, { env: { ESI_POWER_TIMEOUT: '5' } });
});
afterAll(async () => {
  await env?.close();
  await new Promise((r) => files?.close(r));
});

async function clean(uuid: string, steps: unknown[]): Promise<any> {
  await provision(env, uuid, 'clean', { clean_steps: steps });
  return settled(env, uuid);
}

/** Enrol lab system `system` and manage it. */
async function managed(system: string): Promise<any> {
  const node = await enrollRedfish(env, system);
  await provision(env, node.uuid, 'manage');
  expect((await settled(env, node.uuid)).provision_state).toBe('manageable');
  return node;
}

describe('firmware update clean steps', () => {
  it('management.update_firmware applies a checked image through SimpleUpdate and a task', async () => {
    const node = await managed('node-0');
    // The lab's task list is shared by every system: this test's tasks are those it adds.
    const tasksBefore = env.lab.firmware.tasks().length;
    const url = `${base}/bios-2.1.0.bin`;
    const done = await clean(node.uuid, [
      {
        interface: 'management',
        step: 'update_firmware',
        args: { firmware_images: [{ url, checksum: sha256(IMAGES['/bios-2.1.0.bin']!) }] },
      },
    ]);
    expect(pick(done)).toMatchObject({ provision_state: 'manageable', last_error: null });
    expect(env.lab.systems.get('node-0').firmwareVersions).toEqual({ BIOS: '2.1.0', BMC: '1.0.0' });
    expect(done.driver_internal_info.firmware_versions).toEqual({ bios: '2.1.0', bmc: '1.0.0' });
    const tasks = env.lab.firmware.tasks().slice(tasksBefore);
    expect(tasks.map((t) => [t.systemId, t.image, t.state])).toEqual([['node-0', url, 'Completed']]);
  });

  it('firmware.update with settings updates another component', async () => {
    const node = await managed('node-1');
    const done = await clean(node.uuid, [
      { interface: 'firmware', step: 'update', args: { settings: [{ component: 'bmc', url: `${base}/bmc-3.0.1.bin` }] } },
    ]);
    expect(pick(done)).toMatchObject({ provision_state: 'manageable', last_error: null });
    expect(env.lab.systems.get('node-1').firmwareVersions).toEqual({ BIOS: '1.0.0', BMC: '3.0.1' });
    expect(done.driver_internal_info.firmware_versions).toEqual({ bios: '1.0.0', bmc: '3.0.1' });
  });

  it('shows the running step in clean_step while the BMC task runs', async () => {
    const node = await managed('node-2');
    await provision(env, node.uuid, 'clean', {
      clean_steps: [{ interface: 'management', step: 'update_firmware', args: { firmware_images: [{ url: `${base}/slow-bios.bin` }] } }],
    });
    const seen = await waitFor(
      async () => (await bm(env.ts, env.p.admin, 'GET', `/v1/nodes/${node.uuid}`)).body,
      (n) => n.clean_step?.step === 'update_firmware',
      { timeoutMs: 5_000, intervalMs: 25, what: 'clean_step update_firmware', show: (n) => n.clean_step },
    );
    expect(seen.provision_state).toBe('cleaning');
    expect(seen.clean_step).toMatchObject({ interface: 'management', step: 'update_firmware', priority: 0 });
    openGate();
    const done = await settled(env, node.uuid);
    expect(pick(done)).toMatchObject({ provision_state: 'manageable', last_error: null });
    expect(done.clean_step).toEqual({});
    expect(env.lab.systems.get('node-2').firmwareVersions.BIOS).toBe('2.2.0');
    gate = Promise.resolve();
  });

  it('a checksum mismatch refuses the image before the BMC sees it (clean failed, no maintenance)', async () => {
    const node = await managed('node-3');
    const before = env.lab.firmware.tasks().length;
    const failed = await clean(node.uuid, [
      {
        interface: 'management',
        step: 'update_firmware',
        args: { firmware_images: [{ url: `${base}/bios-2.1.0.bin`, checksum: 'a'.repeat(64) }] },
      },
    ]);
    expect(pick(failed)).toMatchObject({ provision_state: 'clean failed', maintenance: false });
    expect(failed.last_error).toMatch(/management\.update_firmware.*not the expected a{64}/);
    expect(env.lab.firmware.tasks()).toHaveLength(before);
    await provision(env, node.uuid, 'manage');
    expect((await settled(env, node.uuid)).provision_state).toBe('manageable');
  });

  it('an image the BMC rejects fails the task; the reason reaches last_error and the node recovers', async () => {
    const node = await managed('node-4');
    const failed = await clean(node.uuid, [
      { interface: 'management', step: 'update_firmware', args: { firmware_images: [{ url: `${base}/junk.bin` }] } },
    ]);
    expect(pick(failed)).toMatchObject({ provision_state: 'clean failed', maintenance: true, fault: 'clean failure' });
    expect(failed.last_error).toMatch(/task Exception.*not a firmware package/);
    expect(env.lab.systems.get('node-4').firmwareVersions).toEqual({ BIOS: '1.0.0', BMC: '1.0.0' });
    expect(env.lab.firmware.tasks().at(-1)).toMatchObject({ state: 'Exception', image: `${base}/junk.bin` });
    expect((await bm(env.ts, env.p.admin, 'DELETE', `/v1/nodes/${node.uuid}/maintenance`)).status).toBe(202);
    await provision(env, node.uuid, 'manage');
    expect(pick(await settled(env, node.uuid))).toMatchObject({ provision_state: 'manageable', maintenance: false });
  });

  it('the API refuses bad firmware arguments with 400', async () => {
    const node = await managed('node-5');
    const put = (steps: unknown) =>
      bm(env.ts, env.p.admin, 'PUT', `/v1/nodes/${node.uuid}/states/provision`, { target: 'clean', clean_steps: steps });
    expectError(
      await put([{ interface: 'management', step: 'update_firmware', args: { firmware_images: [{ url: 'ftp://x/y' }] } }]),
      400,
      /http\(s\) "url"/,
    );
    expectError(await put([{ interface: 'management', step: 'update_firmware', args: {} }]), 400, /needs "firmware_images"/);
    expectError(
      await put([{ interface: 'management', step: 'update_firmware', args: { firmware_images: [{ url: `${base}/x`, checksum: 'xyz' }] } }]),
      400,
      /hex digest/,
    );
    expectError(await put([{ interface: 'management', step: 'reflash' }]), 400, /management\.reflash is not a clean step/);
  });
});
