/**
 * Server actions of the compute API (`POST /compute/v2.1/servers/{id}/action`) on fake-hardware
 * nodes (the conductor powers and deploys them at once): `os-stop`/`os-start` power the node
 * and the status follows it, `reboot` SOFT (with Nova's ironic-driver fallback to a hard reboot
 * when the driver offers no soft one) and HARD, `rebuild` re-deploys the node with a new image,
 * `os-getConsoleOutput` reads the node's serial console; Nova's 409 for a state that refuses the
 * action; every persona (the server's project — the lessee here, the owner for its own server —,
 * admin, the node's owner and another project 404, anonymous 401); bad input is 400 and writes
 * nothing.
 *
 * The fake driver's power interface is wrapped (recording, then delegating) to see which power
 * targets reach the hardware.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PowerInterface, PowerTarget } from '../../../src/domain/hardware/interfaces.ts';
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
import { bm, forceNode, nodeRow } from '../baremetal/helpers.ts';
import { freeNode } from '../scheduling/support.ts';

let ts: TestServer;
let p: Personas;
let image: string;
let image2: string;
let privateImage: string;
let leased: any;
let own: any;
let server: string;
let ownServer: string;
/** Power targets the fake hardware was asked for, per node UUID. */
const targets = new Map<string, PowerTarget[]>();
let power: PowerInterface;
let softSupported = true;

function nova(who: Persona, method: string, path: string, body?: unknown, version = '2.90'): Promise<TestResponse> {
  return call(ts, who, method, `/compute/v2.1${path}`, body, { 'x-openstack-nova-api-version': version });
}

const act = (who: Persona, id: string, body: unknown, version?: string): Promise<TestResponse> =>
  nova(who, 'POST', `/servers/${id}/action`, body, version);

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

/** Poll a server (as admin) until `done`. */
function waitServer(id: string, done: (s: any) => boolean, what: string): Promise<any> {
  return waitFor(
    async () => (await nova(p.admin, 'GET', `/servers/${id}`)).body.server,
    (s) => s !== undefined && done(s),
    { timeoutMs: 15_000, what: `server ${id} ${what}` },
  );
}

/** What a refused action must leave as it was: the node's state and the server row. */
async function snapshot(nodeUuid: string, serverId: string): Promise<unknown> {
  const n = (await nodeRow(ts, nodeUuid))!;
  const s = await ts.server.services.store.db.selectFrom('servers').selectAll().where('uuid', '=', serverId).executeTakeFirst();
  return {
    node: [n.power_state, n.target_power_state, n.provision_state, n.target_provision_state, n.instance_info, n.last_error],
    server: s,
  };
}

/** The stored config drive of a node (the API shows it as `******`). */
async function configDrive(nodeUuid: string): Promise<any> {
  return JSON.parse(String((await nodeRow(ts, nodeUuid))!.instance_info)).configdrive;
}

/**
 * Bring a server back to ACTIVE (the tests of this file run shuffled, each from this state):
 * wait for any rebuild or power change to end, and start it when it is SHUTOFF.
 */
async function ensureActive(id: string): Promise<any> {
  const s = await waitServer(id, (x) => x.status === 'ACTIVE' || x.status === 'SHUTOFF', 'ACTIVE or SHUTOFF');
  if (s.status === 'ACTIVE') return s;
  const r = await act(p.admin, id, { 'os-start': null });
  expect(r.status, r.text).toBe(202);
  return waitServer(id, (x) => x.status === 'ACTIVE', 'ACTIVE');
}

/** Who the leased node's last provision request was made by (`driver_internal_info.esi_requested_by`). */
async function requester(): Promise<any> {
  return JSON.parse(String((await nodeRow(ts, leased.uuid))!.driver_internal_info)).esi_requested_by;
}

async function createServer(who: Persona, name: string, extra: Record<string, unknown> = {}): Promise<string> {
  const r = await nova(who, 'POST', '/servers', { server: { name, flavorRef: 'bm.gold', imageRef: image, networks: 'none', ...extra } });
  expect(r.status, r.text).toBe(202);
  await waitServer(r.body.server.id, (s) => s.status === 'ACTIVE', 'ACTIVE');
  return r.body.server.id;
}

beforeAll(async () => {
  ts = await startTestServer();
  p = await createPersonas(ts);
  power = ts.server.services.inventory.nodes.access.deps.hardware.get('fake-hardware').power;
  const set = power.setPowerState.bind(power);
  const supported = power.supportedPowerStates.bind(power);
  power.setPowerState = async (node, target, timeoutS) => {
    targets.set(node.uuid, [...(targets.get(node.uuid) ?? []), target]);
    return set(node, target, timeoutS);
  };
  power.supportedPowerStates = async (node) => (await supported(node)).filter((t) => softSupported || !t.startsWith('soft'));
  image = await uploadImage(p.admin, 'os', 'public');
  image2 = await uploadImage(p.admin, 'os-2', 'public');
  privateImage = await uploadImage(p.owner, 'secret-os', 'private');
  leased = await freeNode(ts, p, { name: 'leased-gold', lessee: p.lessee.projectId });
  own = await freeNode(ts, p, { name: 'own-gold', console_interface: 'no-console' });
  const f = await nova(p.admin, 'POST', '/flavors', { flavor: { name: 'bm.gold', id: 'bm.gold', ram: 16384, vcpus: 8, disk: 100 } });
  expect(f.status, f.text).toBe(200);
  await nova(p.admin, 'POST', '/flavors/bm.gold/os-extra_specs', { extra_specs: { 'resources:CUSTOM_GOLD': '1' } });
  const key = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDvC3hT0l2fJ5kq3n7ZlVxq8YVw3pX6m8A0bq4b8wD1u lessee@laptop';
  await nova(p.lessee, 'POST', '/os-keypairs', { keypair: { name: 'laptop', public_key: key } });
  server = await createServer(p.lessee, 'web', { key_name: 'laptop', metadata: { role: 'web' } });
  ownServer = await createServer(p.owner, 'mine');
}, 60_000);
afterAll(async () => ts?.close());

describe('server actions', () => {
  it('anonymous callers get 401; another project and the node’s owner get 404 for every action, and nothing changes', async () => {
    const bodies = [
      { 'os-stop': null },
      { 'os-start': null },
      { reboot: { type: 'HARD' } },
      { rebuild: { imageRef: image2 } },
      { 'os-getConsoleOutput': { length: 5 } },
    ];
    await ensureActive(server);
    const before = await snapshot(leased.uuid, server);
    const asked = (targets.get(leased.uuid) ?? []).length;
    for (const body of bodies) {
      novaError(await act(p.anonymous, server, body), 401);
      novaError(await act(p.other, server, body), 404, new RegExp(`Instance ${server} could not be found`));
      novaError(await act(p.owner, server, body), 404);
      novaError(await act(p.lessee, ownServer, body), 404);
    }
    novaError(await act(p.lessee, '8c1a8e9e-5d7e-4b8f-9f43-000000000000', { 'os-stop': null }), 404);
    expect(await snapshot(leased.uuid, server)).toEqual(before);
    expect((targets.get(leased.uuid) ?? []).length).toBe(asked);
  });

  it('bad bodies are 400 in Nova’s format and write nothing', async () => {
    await ensureActive(server);
    const before = await snapshot(leased.uuid, server);
    const bad: Array<[unknown, RegExp, string?]> = [
      [{}, /Malformed request body/],
      [{ 'os-stop': null, 'os-start': null }, /Malformed request body/],
      [[{ 'os-stop': null }], /Malformed request body/],
      [{ 'os-explode': null }, /There is no such action: os-explode/],
      [{ 'os-stop': { now: true } }, /Additional properties/],
      [{ 'os-start': 'please' }, /os-start/],
      [{ reboot: {} }, /'type' is a required property/],
      [{ reboot: { type: 'GENTLE' } }, /It is not one of/],
      [{ reboot: null }, /reboot/],
      [{ rebuild: {} }, /'imageRef' is a required property/],
      [{ rebuild: { imageRef: image2, colour: 'red' } }, /Additional properties/],
      [{ rebuild: { imageRef: image2, name: ' padded' } }, /name/],
      [{ rebuild: { imageRef: image2, user_data: 'not base64!' } }, /valid base 64/],
      [{ rebuild: { imageRef: image2, hostname: 'a_b' } }, /hostname/],
      [{ rebuild: { imageRef: image2, metadata: 'x' } }, /metadata/],
      [{ rebuild: { imageRef: image2, preserve_ephemeral: 'maybe' } }, /boolean/],
      [{ rebuild: { imageRef: image2, key_name: 'laptop' } }, /Additional properties/, '2.53'],
      [{ rebuild: { imageRef: privateImage } }, new RegExp(`Image ${privateImage} could not be found`)],
      [{ rebuild: { imageRef: '00000000-0000-4000-8000-000000000000' } }, /could not be found/],
      [{ rebuild: { imageRef: image2, key_name: 'nope' } }, /Invalid key_name provided/],
      [{ 'os-getConsoleOutput': { length: -2 } }, /length/],
      [{ 'os-getConsoleOutput': { length: 'ten' } }, /length/],
      [{ 'os-getConsoleOutput': { lines: 3 } }, /Additional properties/],
    ];
    for (const [body, re, v] of bad) {
      const res = await act(p.lessee, server, body, v);
      expect(res.status, `${JSON.stringify(body)} → ${res.text}`).toBe(400);
      novaError(res, 400, re);
    }
    novaError(await act(p.lessee, server, '{"os-stop": '), 400);
    expect(await snapshot(leased.uuid, server)).toEqual(before);
  });

  it('the lessee stops and starts its server: the node is powered off and on, the status follows; Nova’s 409s', async () => {
    await ensureActive(server);
    novaError(
      await act(p.lessee, server, { 'os-start': null }),
      409,
      new RegExp(`Cannot 'start' instance ${server} while it is in vm_state active`),
    );
    const stop = await act(p.lessee, server, { 'os-stop': null }, '2.1');
    expect(stop.status, stop.text).toBe(202);
    expect(stop.text).toBe('');
    const off = await waitServer(server, (s) => s.status === 'SHUTOFF', 'SHUTOFF');
    expect(off).toMatchObject({ 'OS-EXT-STS:vm_state': 'stopped', 'OS-EXT-STS:power_state': 4, 'OS-EXT-STS:task_state': null });
    expect((await bm(ts, p.lessee, 'GET', `/v1/nodes/${leased.uuid}`)).body).toMatchObject({
      power_state: 'power off',
      provision_state: 'active',
    });
    expect(targets.get(leased.uuid)!.at(-1)).toBe('power off');
    novaError(await act(p.lessee, server, { 'os-stop': null }), 409, /Cannot 'stop' instance .* while it is in vm_state stopped/);
    novaError(
      await act(p.lessee, server, { reboot: { type: 'SOFT' } }),
      409,
      /Cannot 'reboot' instance .* while it is in vm_state stopped/,
    );
    expect((await nova(p.lessee, 'GET', '/servers/detail?status=SHUTOFF')).body.servers.map((s: any) => s.id)).toEqual([server]);
    expect((await act(p.lessee, server, { 'os-start': null })).status).toBe(202);
    const on = await waitServer(server, (s) => s.status === 'ACTIVE', 'ACTIVE');
    expect(on).toMatchObject({ 'OS-EXT-STS:vm_state': 'active', 'OS-EXT-STS:power_state': 1 });
    expect(targets.get(leased.uuid)!.at(-1)).toBe('power on');
  });

  it('the admin stops the lessee’s server; the owner stops its own server on its own node', async () => {
    await ensureActive(server);
    await ensureActive(ownServer);
    expect((await act(p.admin, server, { 'os-stop': null })).status).toBe(202);
    await waitServer(server, (s) => s.status === 'SHUTOFF', 'SHUTOFF');
    expect((await act(p.admin, server, { 'os-start': null })).status).toBe(202);
    await waitServer(server, (s) => s.status === 'ACTIVE', 'ACTIVE');
    expect((await act(p.owner, ownServer, { 'os-stop': null })).status).toBe(202);
    await waitServer(ownServer, (s) => s.status === 'SHUTOFF', 'SHUTOFF');
    expect(targets.get(own.uuid)!.at(-1)).toBe('power off');
    expect((await act(p.owner, ownServer, { 'os-start': null })).status).toBe(202);
    await waitServer(ownServer, (s) => s.status === 'ACTIVE', 'ACTIVE');
  });

  it('reboot: SOFT asks for a soft reboot, or a hard one when the driver has none; HARD a hard one, also from SHUTOFF', async () => {
    await ensureActive(server);
    const settle = () =>
      waitFor(
        async () => (await nodeRow(ts, leased.uuid))!,
        (n) => n.target_power_state === null,
        { what: 'the power change done' },
      );
    expect((await act(p.lessee, server, { reboot: { type: 'SOFT' } })).status).toBe(202);
    await settle();
    expect(targets.get(leased.uuid)!.at(-1)).toBe('soft rebooting');
    softSupported = false;
    try {
      expect((await act(p.lessee, server, { reboot: { type: 'soft' } })).status).toBe(202);
      await settle();
      expect(targets.get(leased.uuid)!.at(-1)).toBe('rebooting');
    } finally {
      softSupported = true;
    }
    expect((await act(p.admin, server, { reboot: { type: 'Hard' } })).status).toBe(202);
    await settle();
    expect(targets.get(leased.uuid)!.at(-1)).toBe('rebooting');
    // From SHUTOFF a hard reboot powers the node on (Nova allows it; Ironic's reboot ends on).
    expect((await act(p.lessee, server, { 'os-stop': null })).status).toBe(202);
    await waitServer(server, (s) => s.status === 'SHUTOFF', 'SHUTOFF');
    expect((await act(p.lessee, server, { reboot: { type: 'HARD' } })).status).toBe(202);
    await waitServer(server, (s) => s.status === 'ACTIVE', 'ACTIVE after a hard reboot');
  });

  it('a pending power change shows as Nova’s task state and refuses another action (409)', async () => {
    await ensureActive(server);
    expect((await act(p.lessee, server, { 'os-stop': null })).status).toBe(202);
    await waitServer(server, (s) => s.status === 'SHUTOFF', 'SHUTOFF');
    // A change to power on that a conductor holds (so that it stays pending).
    await forceNode(ts, leased.uuid, { target_power_state: 'power on', reservation: 'test-conductor' });
    try {
      const s = (await nova(p.lessee, 'GET', `/servers/${server}`)).body.server;
      expect(s).toMatchObject({ status: 'SHUTOFF', 'OS-EXT-STS:task_state': 'powering-on' });
      novaError(await act(p.lessee, server, { 'os-start': null }), 409, /while it is in task_state powering-on/);
      await forceNode(ts, leased.uuid, { target_power_state: 'rebooting' });
      expect((await nova(p.lessee, 'GET', `/servers/${server}`)).body.server).toMatchObject({
        status: 'HARD_REBOOT',
        'OS-EXT-STS:task_state': 'rebooting_hard',
      });
    } finally {
      await forceNode(ts, leased.uuid, { target_power_state: null, reservation: null });
    }
    expect((await act(p.lessee, server, { 'os-start': null })).status).toBe(202);
    await waitServer(server, (s) => s.status === 'ACTIVE', 'ACTIVE');
  });

  it('rebuild re-deploys the node with the new image and a refreshed config drive (REBUILD, then ACTIVE)', async () => {
    const current = (await ensureActive(server)).image.id;
    const next = current === image ? image2 : image;
    const res = await act(p.lessee, server, {
      rebuild: {
        imageRef: next,
        key_name: 'laptop',
        name: 'web-rebuilt',
        metadata: { role: 'db' },
        adminPass: 'pw-rebuild',
        description: 'rebuilt',
        user_data: Buffer.from('#cloud-config\n').toString('base64'),
        preserve_ephemeral: false,
      },
    });
    expect(res.status, res.text).toBe(202);
    expect(res.body.server).toMatchObject({
      id: server,
      name: 'web-rebuilt',
      image: { id: next },
      metadata: { role: 'db' },
      description: 'rebuilt',
      adminPass: 'pw-rebuild',
    });
    expect(['REBUILD', 'ACTIVE']).toContain(res.body.server.status);
    const done = await waitServer(server, (s) => s.status === 'ACTIVE', 'ACTIVE after the rebuild');
    expect(done).toMatchObject({ name: 'web-rebuilt', image: { id: next }, key_name: 'laptop' });
    const node = (await bm(ts, p.lessee, 'GET', `/v1/nodes/${leased.uuid}`)).body;
    expect(node).toMatchObject({ provision_state: 'active', instance_uuid: server, power_state: 'power on' });
    expect(node.instance_info).toMatchObject({ image_source: next, display_name: 'web-rebuilt', preserve_ephemeral: false });
    const drive = await configDrive(leased.uuid);
    expect(drive.meta_data).toMatchObject({ uuid: server, name: 'web-rebuilt', meta: { role: 'db' }, admin_pass: 'pw-rebuild' });
    expect(Object.keys(drive.meta_data.public_keys)).toEqual(['laptop']);
    expect(drive.user_data).toBe('#cloud-config\n');
    // The conductor writes the image as the caller.
    expect(await requester()).toMatchObject({ user_id: p.lessee.userId, project_id: p.lessee.projectId });
    // key_name null (2.54) removes the key from the config drive and the server.
    const nokey = await act(p.lessee, server, { rebuild: { imageRef: current, key_name: null } });
    expect(nokey.status, nokey.text).toBe(202);
    expect(nokey.body.server.adminPass).toBeUndefined();
    const after = await waitServer(server, (s) => s.status === 'ACTIVE' && s.image.id === current, 'ACTIVE on the first image');
    expect(after.key_name).toBeNull();
    expect((await configDrive(leased.uuid)).meta_data.public_keys).toBeUndefined();
  });

  it('the admin rebuilds a stopped server: the node is re-deployed as the admin and comes back on (2.1)', async () => {
    const current = (await ensureActive(server)).image.id;
    const next = current === image ? image2 : image;
    expect((await act(p.lessee, server, { 'os-stop': null })).status).toBe(202);
    await waitServer(server, (s) => s.status === 'SHUTOFF', 'SHUTOFF');
    const r = await act(p.admin, server, { rebuild: { imageRef: next } }, '2.1');
    expect(r.status, r.text).toBe(202);
    expect(await requester()).toMatchObject({ user_id: p.admin.userId, project_id: p.admin.projectId });
    expect(r.body.server.flavor).toEqual({ id: 'bm.gold', links: expect.any(Array) });
    await waitServer(server, (s) => s.status === 'ACTIVE' && s.image.id === next, 'ACTIVE after the rebuild');
    expect((await nodeRow(ts, leased.uuid))!.power_state).toBe('power on');
  });

  it('os-getConsoleOutput: 409 until the node’s console is enabled, then the serial log (last N lines)', async () => {
    await ensureActive(server);
    await bm(ts, p.lessee, 'PUT', `/v1/nodes/${leased.uuid}/states/console`, { enabled: false });
    novaError(
      await act(p.lessee, server, { 'os-getConsoleOutput': { length: 10 } }),
      409,
      new RegExp(`Guest does not have a console available: the serial console of node ${leased.uuid} is not enabled`),
    );
    const en = await bm(ts, p.lessee, 'PUT', `/v1/nodes/${leased.uuid}/states/console`, { enabled: true });
    expect(en.status, en.text).toBe(202);
    const all = await act(p.lessee, server, { 'os-getConsoleOutput': { length: null } });
    expect(all.status, all.text).toBe(200);
    expect(all.body).toEqual({ output: `fake-hardware serial console of node ${leased.uuid}\n` });
    expect((await act(p.admin, server, { 'os-getConsoleOutput': {} })).body.output).toBe(all.body.output);
    expect((await act(p.lessee, server, { 'os-getConsoleOutput': { length: '1' } })).body.output).toBe(all.body.output);
    expect((await act(p.lessee, server, { 'os-getConsoleOutput': { length: -1 } })).body.output).toBe(all.body.output);
    expect((await act(p.lessee, server, { 'os-getConsoleOutput': { length: 0 } })).body).toEqual({ output: '' });
    novaError(await act(p.other, server, { 'os-getConsoleOutput': {} }), 404);
    // A node without a serial console interface (own-gold was made with no-console).
    novaError(await act(p.owner, ownServer, { 'os-getConsoleOutput': {} }), 409, /has no serial console \(console interface no-console\)/);
  });
});
