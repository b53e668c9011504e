/**
 * Servers of the compute API on fake-hardware nodes (the conductor deploys them at once):
 * every persona, placement (exact match first, the explanation when nothing fits), the node's
 * instance_info and config drive, multi-server requests all or nothing, bad input (400 and
 * nothing written), delete (undeploy + clean + free the allocation), a delete that waits for its
 * node, lease end deleting the server, and concurrent creates never sharing a node.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  call,
  createPersonas,
  startTestServer,
  type Persona,
  type Personas,
  type TestResponse,
  type TestServer,
} from '../../helpers/harness.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import { bm, forceNode, freeNode, rows } from './support.ts';

let ts: TestServer;
let p: Personas;
let image: string;
let privateImage: string;
const nodes: Record<string, any> = {};
const KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDvC3hT0l2fJ5kq3n7ZlVxq8YVw3pX6m8A0bq4b8wD1u lessee@laptop';
const USER_DATA = '#cloud-config\npackages: [htop]\n';

function nova(who: Persona, method: string, path: string, body?: unknown, version = '2.90'): Promise<TestResponse> {
  return call(ts, who, method, `/compute/v2.1${path}`, body, { 'x-openstack-nova-api-version': version });
}

function novaError(res: TestResponse, status: number, message?: RegExp): void {
  expect(res.status, res.text).toBe(status);
  const [name] = Object.keys(res.body ?? {});
  expect(res.body[name!].code).toBe(status);
  if (message) expect(res.body[name!].message).toMatch(message);
}

async function uploadImage(who: Persona, name: string, visibility: string): Promise<string> {
  const c = await call(ts, who, 'POST', '/image/v2/images', { name, disk_format: 'raw', container_format: 'bare', visibility });
  expect(c.status, c.text).toBe(201);
  const up = await fetch(`${ts.url}/image/v2/images/${c.body.id}/file`, {
    method: 'PUT',
    headers: { 'x-auth-token': who.token!, 'content-type': 'application/octet-stream' },
    body: new Uint8Array(4096),
  });
  expect(up.status).toBe(204);
  return c.body.id;
}

/** Poll a server until `done` ({@link waitFor}). */
function waitServer(who: Persona, id: string, done: (s: any) => boolean, timeoutMs = 15_000): Promise<any> {
  return waitFor(() => nova(who, 'GET', `/servers/${id}`), done, { timeoutMs, what: `server ${id}`, show: (r) => r.text });
}

const serverBody = (name: string, extra: Record<string, unknown> = {}) => ({
  server: { name, flavorRef: 'bm.gold', imageRef: image, networks: 'none', ...extra },
});

/**
 * A fresh server for the tests of one describe block: a public image, o1's private image, gold
 * nodes leased-gold (leased to l1), exact-gold and big-gold with the boot_mode capability,
 * flavors bm.gold and bm.exact, l1's key pair `laptop`; then `fixture`.
 */
function freshServer(fixture: () => Promise<void> = async () => {}): void {
  beforeAll(async () => {
    await startServer();
    await fixture();
  });
  afterAll(async () => ts?.close());
}

async function startServer(): Promise<void> {
  ts = await startTestServer();
  p = await createPersonas(ts);
  image = await uploadImage(p.admin, 'os', 'public');
  privateImage = await uploadImage(p.owner, 'secret-os', 'private');
  nodes.leased = await freeNode(ts, p, { name: 'leased-gold', lessee: p.lessee.projectId });
  nodes.exact = await freeNode(ts, p, { name: 'exact-gold' });
  nodes.big = await freeNode(ts, p, { name: 'big-gold', properties: { cpus: 64, memory_mb: 131072, local_gb: 1000, cpu_arch: 'x86_64' } });
  const f = await nova(p.admin, 'POST', '/flavors', { flavor: { name: 'bm.gold', id: 'bm.gold', ram: 16384, vcpus: 8, disk: 100 } });
  expect(f.status, f.text).toBe(200);
  await nova(p.admin, 'POST', '/flavors/bm.gold/os-extra_specs', {
    extra_specs: { 'resources:CUSTOM_GOLD': '1', 'capabilities:boot_mode': 'uefi' },
  });
  await nova(p.admin, 'POST', '/flavors', { flavor: { name: 'bm.exact', id: 'bm.exact', ram: 16384, vcpus: 8, disk: 100 } });
  await nova(p.admin, 'POST', '/flavors/bm.exact/os-extra_specs', {
    extra_specs: { 'resources:CUSTOM_GOLD': '1', 'esi:match:memory_mb': 'exact' },
  });
  await nova(p.lessee, 'POST', '/os-keypairs', { keypair: { name: 'laptop', public_key: KEY } });
  // boot_mode capability on every gold node.
  for (const n of Object.values(nodes))
    await bm(ts, p.admin, 'PATCH', `/v1/nodes/${n.uuid}`, [{ op: 'add', path: '/properties/capabilities', value: 'boot_mode:uefi' }]);
}

let lesseeServer: string;
let lesseeCreated: TestResponse;

/** l1's server `web 1` on leased-gold (key pair, user data, metadata), created and ACTIVE. */
async function withLesseeServer(): Promise<void> {
  lesseeCreated = await nova(
    p.lessee,
    'POST',
    '/servers',
    serverBody('web 1', { key_name: 'laptop', user_data: Buffer.from(USER_DATA).toString('base64'), metadata: { role: 'web' } }),
  );
  expect(lesseeCreated.status, lesseeCreated.text).toBe(202);
  lesseeServer = lesseeCreated.body.server.id;
  await waitServer(p.lessee, lesseeServer, (s) => s.body.server?.status === 'ACTIVE');
}

describe('servers', () => {
  describe('the lessee’s server', () => {
    freshServer(withLesseeServer);

    it('anonymous callers get 401 everywhere', async () => {
      for (const [m, path] of [
        ['GET', '/servers'],
        ['GET', '/servers/detail'],
        ['POST', '/servers'],
        ['GET', '/servers/x'],
        ['DELETE', '/servers/x'],
      ] as const) {
        novaError(await nova(p.anonymous, m, path, m === 'POST' ? serverBody('x') : undefined), 401);
      }
    });

    it('the lessee creates a server on the node it leases: allocation, instance_info, config drive, ACTIVE', async () => {
      // Created by the block's fixture (withLesseeServer): its answer, then what it made.
      const r = lesseeCreated;
      expect(r.status, r.text).toBe(202);
      expect(r.headers.get('location')).toBe(`${ts.url}/compute/v2.1/servers/${r.body.server.id}`);
      expect(r.body.server).toMatchObject({ 'OS-DCF:diskConfig': 'MANUAL', security_groups: [{ name: 'default' }] });
      const active = await waitServer(p.lessee, lesseeServer, (s) => s.body.server?.status === 'ACTIVE');
      expect(active.body.server).toMatchObject({
        name: 'web 1',
        tenant_id: p.lessee.projectId,
        user_id: p.lessee.userId,
        key_name: 'laptop',
        metadata: { role: 'web' },
        'esi:node': nodes.leased.uuid,
        'OS-EXT-STS:vm_state': 'active',
        'OS-EXT-STS:power_state': 1,
        flavor: { original_name: 'bm.gold', ram: 16384, vcpus: 8, disk: 100 },
      });
      expect(active.body.server['OS-EXT-SRV-ATTR:hypervisor_hostname']).toBeUndefined();
      const node = await bm(ts, p.lessee, 'GET', `/v1/nodes/${nodes.leased.uuid}`);
      expect(node.body).toMatchObject({ provision_state: 'active', instance_uuid: lesseeServer, allocation_uuid: lesseeServer });
      expect(node.body.instance_info).toMatchObject({
        image_source: image,
        display_name: 'web 1',
        root_gb: '100',
        memory_mb: '16384',
        capabilities: '{"boot_mode":"uefi"}',
        configdrive: '******',
      });
      const alloc = await bm(ts, p.lessee, 'GET', `/v1/allocations/${lesseeServer}`);
      expect(alloc.body).toMatchObject({
        state: 'active',
        node_uuid: nodes.leased.uuid,
        owner: p.lessee.projectId,
        resource_class: 'gold',
      });
      const row = await ts.server.services.store.db
        .selectFrom('nodes')
        .select('instance_info')
        .where('uuid', '=', nodes.leased.uuid)
        .executeTakeFirstOrThrow();
      const drive = JSON.parse(row.instance_info).configdrive;
      expect(drive.meta_data).toMatchObject({
        uuid: lesseeServer,
        name: 'web 1',
        hostname: 'web-1',
        launch_index: 0,
        project_id: p.lessee.projectId,
        public_keys: { laptop: KEY },
        meta: { role: 'web' },
      });
      expect(drive.user_data).toBe(USER_DATA);
    });

    it('who sees the server: its project and admins; the owner of the node and others get 404', async () => {
      expect((await nova(p.lessee, 'GET', '/servers')).body.servers.map((s: any) => s.id)).toEqual([lesseeServer]);
      expect((await nova(p.owner, 'GET', '/servers')).body.servers).toEqual([]);
      novaError(await nova(p.owner, 'GET', `/servers/${lesseeServer}`), 404);
      novaError(await nova(p.other, 'GET', `/servers/${lesseeServer}`), 404);
      novaError(await nova(p.other, 'DELETE', `/servers/${lesseeServer}`), 404);
      expect((await nova(p.admin, 'GET', '/servers/detail')).body.servers).toEqual([]);
      const all = await nova(p.admin, 'GET', '/servers/detail?all_tenants=1');
      expect(all.body.servers[0]).toMatchObject({
        id: lesseeServer,
        'OS-EXT-SRV-ATTR:hypervisor_hostname': nodes.leased.uuid,
        'OS-EXT-SRV-ATTR:hostname': 'web-1',
      });
      novaError(await nova(p.lessee, 'GET', '/servers?all_tenants=1'), 403);
      const old = await nova(p.lessee, 'GET', `/servers/${lesseeServer}`, undefined, '2.1');
      expect(old.body.server.flavor).toEqual({ id: 'bm.gold', links: expect.any(Array) });
      expect(old.body.server.description).toBeUndefined();
    });
  });

  describe('placement, bad input and several servers at once', () => {
    freshServer();

    it('placement prefers the exact machine, then the bigger one; then explains why nothing fits', async () => {
      const first = await nova(p.owner, 'POST', '/servers', serverBody('o1-a'));
      expect(first.status, first.text).toBe(202);
      expect((await nova(p.owner, 'GET', `/servers/${first.body.server.id}`)).body.server['esi:node']).toBe(nodes.exact.uuid);
      // An exact-memory flavor does not take the big machine.
      const exact = await nova(p.owner, 'POST', '/servers', serverBody('o1-x', { flavorRef: 'bm.exact' }));
      novaError(exact, 409, /No valid host was found\..*big-gold \(memory_mb: memory_mb 131072 is not 16384\)/);
      const second = await nova(p.owner, 'POST', '/servers', serverBody('o1-b'));
      expect((await nova(p.owner, 'GET', `/servers/${second.body.server.id}`)).body.server['esi:node']).toBe(nodes.big.uuid);
      const none = await nova(p.owner, 'POST', '/servers', serverBody('o1-c'));
      novaError(none, 409, /No valid host was found\./);
      // The owner's node leased to l1 is never a candidate for o1.
      expect(none.body.conflictingRequest.message).toMatch(/leased-gold \(tenancy: leased to another project/);
      expect(none.body.conflictingRequest.message).not.toMatch(/secret/);
    });

    it('bad requests are 400 in Nova’s format and write nothing', async () => {
      const before = [await rows(ts, 'servers'), await rows(ts, 'allocations')];
      const bad: Array<[unknown, RegExp, string?]> = [
        [{ server: { name: 'x', imageRef: image, networks: 'none' } }, /flavorRef/],
        [serverBody('x', { flavorRef: 'nope' }), /Flavor nope could not be found/],
        [serverBody('x', { imageRef: '00000000-0000-4000-8000-000000000000' }), /could not be found/],
        [serverBody('x', { imageRef: privateImage }), /could not be found/],
        [serverBody('x', { user_data: 'not base64!' }), /valid base 64/],
        [serverBody('x', { key_name: 'nope' }), /Invalid key_name/],
        [serverBody('x', { networks: [{ uuid: '3c0e6a4e-7b1b-4c55-8d8b-0f3a1b2c3d4e' }] }), /could not be found/],
        [serverBody('x', { networks: [{ uuid: '3c0e6a4e-7b1b-4c55-8d8b-0f3a1b2c3d4e', fixed_ip: '10.0.0.5' }] }), /fixed IP/],
        [serverBody('x', { min_count: 3, max_count: 2 }), /min_count/],
        [serverBody('x', { max_count: 101 }), /at most 100/],
        [serverBody('x', { block_device_mapping_v2: [{ boot_index: 0 }] }), /block device mappings/],
        [serverBody('x', { availability_zone: 'elsewhere' }), /availability zone/],
        [serverBody('x', { colour: 'red' }), /Additional properties/],
        [serverBody(' x'), /name/],
        [{ server: { name: 'x', flavorRef: 'bm.gold', imageRef: image } }, /'networks' is a required property/],
        [{ server: { name: 'x', flavorRef: 'bm.gold', imageRef: image, networks: 'none' } }, /need microversion 2.37/, '2.36'],
      ];
      for (const [body, re, v] of bad) {
        const res = await nova(p.other, 'POST', '/servers', body, v);
        expect(res.status, `${JSON.stringify(body)} → ${res.text}`).toBe(400);
        novaError(res, 400, re);
      }
      novaError(await nova(p.other, 'POST', '/servers', '{"server": '), 400);
      expect([await rows(ts, 'servers'), await rows(ts, 'allocations')]).toEqual(before);
      novaError(await nova(p.other, 'GET', '/servers?status=SLEEPING'), 400);
      novaError(await nova(p.other, 'GET', '/servers?changes-since=yesterday'), 400);
    });

    it('several servers at once: named <name>-N, all placed or none', async () => {
      for (let i = 0; i < 3; i++) await freeNode(ts, p, { name: `multi-${i}`, owner: p.other.projectId, resource_class: 'multi' });
      await nova(p.admin, 'POST', '/flavors', { flavor: { name: 'bm.multi', id: 'bm.multi', ram: 1024, vcpus: 1, disk: 10 } });
      await nova(p.admin, 'POST', '/flavors/bm.multi/os-extra_specs', { extra_specs: { 'resources:CUSTOM_MULTI': '1' } });
      const before = [await rows(ts, 'servers'), await rows(ts, 'allocations')];
      const tooMany = await nova(p.other, 'POST', '/servers', serverBody('batch', { flavorRef: 'bm.multi', min_count: 4, max_count: 4 }));
      novaError(tooMany, 409, /Only 3 of the 4 servers asked for could be placed/);
      expect([await rows(ts, 'servers'), await rows(ts, 'allocations')]).toEqual(before);
      expect(
        (await bm(ts, p.other, 'GET', '/v1/nodes?resource_class=multi&fields=instance_uuid')).body.nodes.map((n: any) => n.instance_uuid),
      ).toEqual([null, null, null]);
      const r = await nova(
        p.other,
        'POST',
        '/servers',
        serverBody('batch', { flavorRef: 'bm.multi', min_count: 2, max_count: 5, return_reservation_id: true }),
      );
      expect(r.status, r.text).toBe(202);
      expect(r.body.reservation_id).toMatch(/^r-[0-9a-z]{8}$/);
      const listed = await nova(
        p.other,
        'GET',
        `/servers/detail?reservation_id=${r.body.reservation_id}&sort_key=display_name&sort_dir=asc`,
      );
      expect(listed.body.servers.map((s: any) => s.name)).toEqual(['batch-1', 'batch-2', 'batch-3']);
      expect(new Set(listed.body.servers.map((s: any) => s['esi:node'])).size).toBe(3);
    });
  });

  describe('deleting', () => {
    freshServer(withLesseeServer);

    it('delete undeploys, cleans and frees the allocation; the server is gone (404) and listed as DELETED since', async () => {
      const since = new Date(Date.now() - 1000).toISOString();
      const del = await nova(p.lessee, 'DELETE', `/servers/${lesseeServer}`);
      expect(del.status, del.text).toBe(204);
      await waitServer(p.lessee, lesseeServer, (s) => s.status === 404);
      const node = await bm(ts, p.lessee, 'GET', `/v1/nodes/${nodes.leased.uuid}`);
      expect(node.body).toMatchObject({ instance_uuid: null, allocation_uuid: null });
      expect(['cleaning', 'available']).toContain(node.body.provision_state);
      expect((await bm(ts, p.lessee, 'GET', `/v1/allocations/${lesseeServer}`)).status).toBe(404);
      const gone = await nova(p.lessee, 'GET', `/servers/detail?changes-since=${encodeURIComponent(since)}`);
      expect(gone.body.servers).toEqual([expect.objectContaining({ id: lesseeServer, status: 'DELETED' })]);
      expect(gone.body.servers[0].fault).toBeUndefined();
      novaError(await nova(p.lessee, 'DELETE', `/servers/${lesseeServer}`), 404);
    });

    it('a delete waits while a conductor holds the node, then finishes (compute sweep)', async () => {
      const n = await freeNode(ts, p, { name: 'held', owner: p.other.projectId, resource_class: 'held' });
      await nova(p.admin, 'POST', '/flavors', { flavor: { name: 'bm.held', id: 'bm.held', ram: 1, vcpus: 1, disk: 1 } });
      await nova(p.admin, 'POST', '/flavors/bm.held/os-extra_specs', { extra_specs: { 'resources:CUSTOM_HELD': '1' } });
      const r = await nova(p.other, 'POST', '/servers', serverBody('held', { flavorRef: 'bm.held' }));
      await waitServer(p.other, r.body.server.id, (s) => s.body.server?.status === 'ACTIVE');
      await forceNode(ts, n.uuid, { reservation: 'someone-else' });
      const del = await nova(p.other, 'DELETE', `/servers/${r.body.server.id}`);
      expect(del.status, del.text).toBe(204);
      const waiting = await nova(p.other, 'GET', `/servers/${r.body.server.id}`);
      expect(waiting.body.server).toMatchObject({ status: 'ACTIVE', 'OS-EXT-STS:task_state': 'deleting' });
      await forceNode(ts, n.uuid, { reservation: null });
      await waitServer(p.other, r.body.server.id, (s) => s.status === 404, 20_000);
    }, 30_000);
  });

  describe('lease end', () => {
    freshServer();

    it('lease end removes the server: DELETED with a fault saying why', async () => {
      const n = await freeNode(ts, p, { name: 'leased-2', resource_class: 'lease-end' });
      const gw = ts.server.services.inventory.leaseGateway;
      const leaseUuid = '5b0e7f3c-1d2a-4c9e-8f6b-2a3c4d5e6f70';
      await gw.applyLease(n.uuid, leaseUuid, p.lessee.projectId!);
      await nova(p.admin, 'POST', '/flavors', { flavor: { name: 'bm.le', id: 'bm.le', ram: 1, vcpus: 1, disk: 1 } });
      await nova(p.admin, 'POST', '/flavors/bm.le/os-extra_specs', { extra_specs: { 'resources:CUSTOM_LEASE_END': '1' } });
      const since = new Date(Date.now() - 1000).toISOString();
      const r = await nova(p.lessee, 'POST', '/servers', serverBody('ephemeral', { flavorRef: 'bm.le' }));
      expect(r.status, r.text).toBe(202);
      await waitServer(p.lessee, r.body.server.id, (s) => s.body.server?.status === 'ACTIVE');
      // The conductor may still hold the node's lock for a moment after ACTIVE; the lease
      // manager retries a busy node (status `wait expire`), and so does this test.
      const removed = await waitFor(
        () =>
          gw.removeLease(n.uuid, leaseUuid).catch((err: Error) => {
            if (!/locked by host/.test(err.message)) throw err;
            return null;
          }),
        (v) => v !== null,
        { what: `node ${n.uuid} unlocked for the lease removal` },
      );
      expect(removed).toBe(true);
      await waitServer(p.lessee, r.body.server.id, (s) => s.status === 404);
      const gone = await nova(p.lessee, 'GET', `/servers/detail?changes-since=${encodeURIComponent(since)}`);
      const s = gone.body.servers.find((x: any) => x.id === r.body.server.id);
      expect(s).toMatchObject({ status: 'DELETED', fault: { code: 500, message: expect.stringMatching(/lease on the node ended/) } });
    });
  });

  describe('concurrent creates', () => {
    freshServer();

    it('12 concurrent creates on 8 nodes: 8 servers on 8 distinct nodes, 4 refused', async () => {
      for (let i = 0; i < 8; i++) await freeNode(ts, p, { name: `race-${i}`, owner: p.other.projectId, resource_class: 'race' });
      await nova(p.admin, 'POST', '/flavors', { flavor: { name: 'bm.race', id: 'bm.race', ram: 1024, vcpus: 1, disk: 10 } });
      await nova(p.admin, 'POST', '/flavors/bm.race/os-extra_specs', { extra_specs: { 'resources:CUSTOM_RACE': '1' } });
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, i) => nova(p.other, 'POST', '/servers', serverBody(`race-${i}`, { flavorRef: 'bm.race' }))),
      );
      const ok = results.filter((r) => r.status === 202);
      expect(ok).toHaveLength(8);
      for (const r of results.filter((x) => x.status !== 202)) novaError(r, 409, /No valid host/);
      const placed = await Promise.all(
        ok.map(async (r) => (await nova(p.other, 'GET', `/servers/${r.body.server.id}`)).body.server['esi:node']),
      );
      expect(new Set(placed).size).toBe(8);
    }, 30_000);
  });
});
