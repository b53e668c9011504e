/**
 * Bad input to a deploy, end to end through the API with lab nodes running the real agent
 * process (issue 4, "Bad input"): an image URL served by the test that is truncated, a corrupt
 * qcow2, or too large for the 1 GiB disk; an image of an unsupported disk_format (refused
 * before the agent boots); an image deleted while the agent boots; malformed config drives
 * (400 at the API, or refused by the agent before it writes anything). Each ends in
 * `deploy failed` with a `last_error` saying what happened, the node powered off, the disk's
 * head zeroed (or untouched when nothing was written), and the image store unchanged.
 */
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../../helpers/harness.ts';
import { bm, expectError, waitNode, type ConductorEnv } from '../conductor/support.ts';
import { agentNode, consoleLog, startDeployEnv, uploadImage } from './support.ts';

const MIB = 1024 * 1024;
const LONG = 30_000;
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
/** The lab systems: each test deploys a node of its own (a failed deploy leaves its node and disk behind). */
const SYSTEMS = ['node-0', 'node-1', 'node-2', 'node-3', 'node-4', 'node-5'];

/** The bytes at the start of a disk file. */
function readHead(file: string, n = MIB): Buffer {
  const fd = fs.openSync(file, 'r');
  try {
    const buf = Buffer.alloc(n);
    return buf.subarray(0, fs.readSync(fd, buf, 0, n, 0));
  } finally {
    fs.closeSync(fd);
  }
}

/** Put an "old system" (1 MiB of 0xee) at the head of a powered-off node's disk. */
function dirtyHead(file: string): void {
  const fd = fs.openSync(file, 'r+');
  try {
    fs.writeSync(fd, Buffer.alloc(MIB, 0xee), 0, MIB, 0);
  } finally {
    fs.closeSync(fd);
  }
}

/** Every file under `dir` with its size, sorted. */
function listFiles(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => {
      const f = path.join(e.parentPath, e.name);
      return `${path.relative(dir, f)} ${fs.statSync(f).size}`;
    })
    .sort();
}

describe('deploy bad input', () => {
  let env: ConductorEnv;
  let images: http.Server;
  let imagesUrl: string;
  let nodes: Record<string, any>;
  let goodImageId: string;
  let isoImageId: string;
  const served = new Map<string, (req: http.IncomingMessage, res: http.ServerResponse) => void>();
  const full = randomBytes(4 * MIB);
  const corrupt = Buffer.concat([Buffer.from([0x51, 0x46, 0x49, 0xfb]), randomBytes(512 * 1024)]);
  let hugeQcow2: Buffer;

  /** The images as the admin lists them: id → status, size, hashes. */
  async function imageList(): Promise<Map<string, unknown>> {
    const res = await call(env.ts, env.p.admin, 'GET', '/image/v2/images?limit=100');
    expect(res.status, res.text).toBe(200);
    return new Map(
      (res.body.images as any[]).map((i) => [
        i.id,
        { status: i.status, size: i.size, checksum: i.checksum, os_hash_value: i.os_hash_value },
      ]),
    );
  }

  /** What the image service holds: the images as the admin lists them, and its store's files. */
  async function imageStore(): Promise<{ list: Map<string, unknown>; files: string[] }> {
    const store = { list: await imageList(), files: listFiles(path.join(env.ts.dataDir, 'images')) };
    expect(store.files.length).toBeGreaterThan(0);
    return store;
  }

  /** The image service holds what it held `before` (`gone`: images deleted by the test since). */
  async function storeUnchanged(before: { list: Map<string, unknown>; files: string[] }, ...gone: string[]): Promise<void> {
    const expected = new Map(before.list);
    for (const id of gone) expected.delete(id);
    expect(await imageList()).toEqual(expected);
    const files = listFiles(path.join(env.ts.dataDir, 'images'));
    expect(files).toEqual(before.files.filter((f) => !gone.some((id) => f.includes(id))));
  }

  /** Set the node's instance_info, deploy (optionally with a config drive), wait for the end. */
  async function deploy(system: string, instanceInfo: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<any> {
    const uuid = nodes[system].uuid;
    const patched = await bm(env.ts, env.p.admin, 'PATCH', `/v1/nodes/${uuid}`, [
      { op: 'add', path: '/instance_info', value: instanceInfo },
    ]);
    expect(patched.status, patched.text).toBe(200);
    const res = await bm(env.ts, env.p.owner, 'PUT', `/v1/nodes/${uuid}/states/provision`, { target: 'active', ...extra });
    expect(res.status, res.text).toBe(202);
    return waitNode(
      env,
      uuid,
      (n) => (n.provision_state === 'deploy failed' || n.provision_state === 'active') && n.reservation === null,
      LONG,
    );
  }

  /** The common end of a failed deploy. */
  function expectFailed(n: any, system: string, lastError: RegExp): void {
    expect(n.provision_state, n.last_error).toBe('deploy failed');
    expect(n.last_error).toMatch(lastError);
    expect(n.power_state).toBe('power off');
    // As in Ironic, a failed deploy keeps its target.
    expect(n.target_provision_state).toBe('active');
    expect(n.deploy_step).toEqual({});
    expect(n.driver_internal_info.agent_url).toBeUndefined();
    expect(env.lab.agents!.running(system)).toBe(false);
    expect(n.last_error).not.toMatch(/temp_url_sig=/);
  }

  /** An image URL served by the test at `name` with instance_info hash fields. */
  function urlInfo(name: string, digestOf: Buffer, extra: Record<string, unknown> = {}): Record<string, unknown> {
    return { image_source: `${imagesUrl}/${name}`, image_os_hash_algo: 'sha256', image_os_hash_value: sha256(digestOf), ...extra };
  }

  beforeAll(async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-bad-'));
    try {
      execFileSync('qemu-img', ['create', '-q', '-f', 'qcow2', path.join(dir, 'huge.qcow2'), '2G']);
      hugeQcow2 = fs.readFileSync(path.join(dir, 'huge.qcow2'));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
    served.set('/truncated.raw', (req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(full.length) });
      res.write(full.subarray(0, 2 * MIB), () => req.socket.end());
    });
    served.set('/corrupt.qcow2', (_req, res) => res.writeHead(200, { 'content-length': String(corrupt.length) }).end(corrupt));
    served.set('/huge.qcow2', (_req, res) => res.writeHead(200, { 'content-length': String(hugeQcow2.length) }).end(hugeQcow2));
    served.set('/huge.raw', (_req, res) => {
      res.writeHead(200, { 'content-length': String(2 * 1024 * MIB) });
      res.write(full);
    });
    images = http.createServer((req, res) => {
      const route = served.get(req.url ?? '');
      if (route) return route(req, res);
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => images.listen(0, '127.0.0.1', r));
    imagesUrl = `http://127.0.0.1:${(images.address() as AddressInfo).port}`;

    env = await startDeployEnv(SYSTEMS.length, { env: { ESI_CHECK_PROVISION_STATE_INTERVAL: '1' } });
    goodImageId = await uploadImage(env, randomBytes(MIB), 'good');
    const created = await call(env.ts, env.p.admin, 'POST', '/image/v2/images', {
      name: 'an-iso',
      disk_format: 'iso',
      container_format: 'bare',
      visibility: 'public',
    });
    expect(created.status, created.text).toBe(201);
    isoImageId = created.body.id;
    const up = await fetch(`${env.ts.url}/image/v2/images/${isoImageId}/file`, {
      method: 'PUT',
      headers: { 'x-auth-token': env.p.admin.token!, 'content-type': 'application/octet-stream' },
      body: randomBytes(64 * 1024),
    });
    expect(up.status).toBe(204);
    const enrolled = await Promise.all(SYSTEMS.map((s) => agentNode(env, s)));
    nodes = Object.fromEntries(enrolled.map((e, i) => [SYSTEMS[i], e.node]));
    await Promise.all(
      Object.values(nodes).map((n) => waitNode(env, n.uuid, (x) => x.provision_state === 'available' && x.reservation === null, LONG)),
    );
    expect((await imageStore()).list.size).toBe(2);
  }, 60_000);
  afterAll(async () => {
    await env?.close();
    images?.closeAllConnections();
    await new Promise((r) => images?.close(r));
  });

  it(
    'a truncated image (fewer bytes than its Content-Length): deploy failed, download error, disk head zeroed',
    async () => {
      const store = await imageStore();
      const disk = env.lab.agents!.diskPath('node-0');
      dirtyHead(disk);
      const n = await deploy('node-0', urlInfo('truncated.raw', full));
      expectFailed(
        n,
        'node-0',
        /Deploy step deploy\.write_image failed .*ImageDownloadError.*download of http:\/\/127\.0\.0\.1:\d+\/truncated\.raw broke off after \d+ bytes/,
      );
      expect(readHead(disk).every((b) => b === 0)).toBe(true);
      await expect.poll(() => consoleLog(env, 'node-0'), { timeout: 5000 }).toMatch(/image write failed, zeroed the first MiB of the disk/);
      await storeUnchanged(store);
    },
    LONG,
  );

  it(
    'a corrupt qcow2 (the magic, then garbage): deploy failed naming qemu-img, disk head zeroed',
    async () => {
      const store = await imageStore();
      const disk = env.lab.agents!.diskPath('node-1');
      dirtyHead(disk);
      const n = await deploy('node-1', urlInfo('corrupt.qcow2', corrupt, { image_disk_format: 'qcow2' }));
      expectFailed(n, 'node-1', /ImageWriteError.*qemu-img info failed/);
      expect(readHead(disk).every((b) => b === 0)).toBe(true);
      await storeUnchanged(store);
    },
    LONG,
  );

  it(
    'images too large for the 1 GiB disk (a raw Content-Length, a qcow2 virtual size): deploy failed, disk head zeroed',
    async () => {
      const store = await imageStore();
      const disk = env.lab.agents!.diskPath('node-2');
      dirtyHead(disk);
      const raw = await deploy('node-2', urlInfo('huge.raw', full));
      expectFailed(raw, 'node-2', /ImageWriteError.*the image \(2147483648 bytes\) is larger than the disk \(1073741824 bytes\)/);
      expect(readHead(disk).every((b) => b === 0)).toBe(true);
      dirtyHead(disk);
      const q = await deploy('node-2', urlInfo('huge.qcow2', hugeQcow2, { image_disk_format: 'qcow2' }));
      expectFailed(q, 'node-2', /ImageWriteError.*virtual size 2147483648 bytes\) is larger than the disk \(1073741824 bytes\)/);
      expect(readHead(disk).every((b) => b === 0)).toBe(true);
      await storeUnchanged(store);
    },
    LONG,
  );

  it(
    'an image of an unsupported disk_format is refused before the agent boots',
    async () => {
      const store = await imageStore();
      const boots: string[] = [];
      const off = env.lab.subscribe((e) => {
        if (e.type === 'boot' && e.systemId === 'node-3') boots.push(String(e.override));
      });
      try {
        const disk = env.lab.agents!.diskPath('node-3');
        dirtyHead(disk);
        const before = consoleLog(env, 'node-3');
        const n = await deploy('node-3', { image_source: isoImageId });
        expectFailed(
          n,
          'node-3',
          new RegExp(
            `Failed to deploy node ${nodes['node-3'].uuid} \\(validate\\): .*Image ${isoImageId} has disk_format iso: the deploy agent writes raw or qcow2 images only`,
          ),
        );
        const url = await deploy('node-3', urlInfo('huge.raw', full, { image_disk_format: 'vmdk' }));
        expectFailed(url, 'node-3', /\(validate\).*disk_format vmdk.*raw or qcow2/);
        expect(boots).toEqual([]);
        expect(consoleLog(env, 'node-3')).toBe(before);
        // Nothing touched the disk.
        expect(readHead(disk).equals(Buffer.alloc(MIB, 0xee))).toBe(true);
        await storeUnchanged(store);
      } finally {
        off();
      }
    },
    LONG,
  );

  it(
    'an image deleted while the agent boots: deploy failed saying so, nothing written',
    async () => {
      const store = await imageStore();
      const disk = env.lab.agents!.diskPath('node-4');
      dirtyHead(disk);
      // Set by the lab's event handler (an object, so the later read is not narrowed away).
      const seen: { deleted: Promise<number> | null } = { deleted: null };
      const off = env.lab.subscribe((e) => {
        if (e.type === 'boot' && e.systemId === 'node-4' && e.override !== null && seen.deleted === null) {
          seen.deleted = call(env.ts, env.p.admin, 'DELETE', `/image/v2/images/${goodImageId}`).then((r) => r.status);
        }
      });
      try {
        const n = await deploy('node-4', { image_source: goodImageId });
        expect(await seen.deleted).toBe(204);
        expectFailed(
          n,
          'node-4',
          new RegExp(`Deploy step deploy\\.write_image failed .*Image ${goodImageId} .*was not found in the image service`),
        );
        expect(readHead(disk).equals(Buffer.alloc(MIB, 0xee))).toBe(true);
        await storeUnchanged(store, goodImageId);
      } finally {
        off();
      }
    },
    LONG,
  );

  it(
    'malformed config drives: 400 at the API with nothing recorded; a base64 non-ISO fails in the agent before anything is written',
    async () => {
      const store = await imageStore();
      const uuid = nodes['node-5'].uuid;
      const before = (await bm(env.ts, env.p.admin, 'GET', `/v1/nodes/${uuid}`)).body;
      const bad: Array<[unknown, RegExp]> = [
        ['not base64 at all!', /neither a JSON, nor a URL, nor a base64 string/],
        [{ meta_data: { hostname: 'x' }, private_key: 'k' }, /unexpected key private_key/],
        [{ meta_data: 'hostname=x' }, /meta_data must be an object/],
        [{ user_data: 42 }, /bad user_data/],
        [{ network_data: [] }, /network_data must be an object/],
      ];
      for (const [configdrive, message] of bad) {
        const res = await bm(env.ts, env.p.owner, 'PUT', `/v1/nodes/${uuid}/states/provision`, { target: 'active', configdrive });
        expectError(res, 400, message);
      }
      const after = (await bm(env.ts, env.p.admin, 'GET', `/v1/nodes/${uuid}`)).body;
      expect(after.provision_state).toBe(before.provision_state);
      expect(after.instance_info).toEqual(before.instance_info);
      expect(after.instance_info.configdrive).toBeUndefined();

      // Base64 the API cannot judge: the agent refuses it before writing the image.
      const disk = env.lab.agents!.diskPath('node-5');
      dirtyHead(disk);
      const n = await deploy('node-5', urlInfo('truncated.raw', full), { configdrive: randomBytes(48 * 1024).toString('base64') });
      expectFailed(n, 'node-5', /InvalidCommandParamsError.*configdrive is not an ISO9660 image/);
      expect(readHead(disk).equals(Buffer.alloc(MIB, 0xee))).toBe(true);
      expect(n.instance_info.configdrive).toBe('******');
      await storeUnchanged(store);
    },
    LONG,
  );
});
