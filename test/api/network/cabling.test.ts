/**
 * Switch ports are owned (issue 14, breaches 2 and 3; src/domain/networking/cabling.ts): an
 * owner cannot cable its port to the switch port of another owner's node, nor a lessee re-cable
 * the node it leases; a switch port belongs to at most one bare-metal port (409); an admin's
 * cabling registers a switch port to its node; cabling that nobody registered is inert — the
 * switch is never programmed for it and a VIF attach refuses it — until an admin registers it
 * (`POST /v2.0/switches/{switch}/ports`); `esi/switch-ports` of a switch that does not exist is
 * 404 for everyone. Every refused write is re-read as admin: nothing changed.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fakeSwitchState } from '../../../src/drivers/switch/fake.ts';
import type { Persona } from '../../helpers/harness.ts';
import { esi, esiJson, personaEnv } from '../cli/support.ts';
import { bm, cabledNode, create, createSwitch, net, portAsAdmin, settle, startNetEnv, type NetEnv } from './support.ts';

let env: NetEnv;
// Each test gets its own switch and nodes (beforeEach): registrations a test makes stay out of
// the others' views. `k` numbers them (names, switch ids and MACs must be unique).
let k = 0;
/** Switch `tor-c<k>` (fake driver). */
let sw: any;
/** o1's node leased to l1, cabled (by the admin) to switch ports `a0`, `a1`. */
let nodeA: any;
let portsA: any[];
/** o2's node, cabled (by the admin) to switch port `b0`. */
let nodeB: any;
let portsB: any[];
/** A node l1 owns itself (no ports). */
let nodeL: any;
/** The names of the switch ports cabled to nodes a and b (`a<k>-0`, `a<k>-1`, `b<k>-0`). */
let a0: string;
let a1: string;
let b0: string;

const ironic = (res: { body: any }) => JSON.parse(res.body.error_message).faultstring as string;
const llc = (port_id: string, switch_info: string = sw.name) => ({ switch_id: '00:00:00:00:00:00', switch_info, port_id });

beforeAll(async () => {
  env = await startNetEnv();
});
afterAll(async () => env?.ts.close());

beforeEach(async () => {
  k++;
  const hex = k.toString(16).padStart(2, '0');
  sw = await createSwitch(env, `tor-c${k}`, 'fake', {}, { switch_id: `02:00:00:00:0c:${hex}` });
  ({ node: nodeA, ports: portsA } = await cabledNode(env, `a${k}`, sw.name, [`52:54:00:0d:${hex}:00`, `52:54:00:0d:${hex}:01`]));
  ({ node: nodeB, ports: portsB } = await cabledNode(env, `b${k}`, sw.name, [`52:54:00:0d:${hex}:10`], {
    owner: env.p.other.projectId,
    lessee: null,
  }));
  ({ node: nodeL } = await cabledNode(env, `l${k}`, sw.name, [], { owner: env.p.lessee.projectId, lessee: null }));
  [a0, a1, b0] = [`a${k}-0`, `a${k}-1`, `b${k}-0`];
});

async function portsOf(node: any): Promise<any[]> {
  return (await bm(env, env.p.admin, 'GET', `/v1/nodes/${node.uuid}/ports?detail=true`)).body.ports;
}

async function inMaintenance<T>(node: any, fn: () => Promise<T>): Promise<T> {
  expect((await bm(env, env.p.admin, 'PUT', `/v1/nodes/${node.uuid}/maintenance`, { reason: 'cabling' })).status).toBe(202);
  try {
    return await fn();
  } finally {
    expect((await bm(env, env.p.admin, 'DELETE', `/v1/nodes/${node.uuid}/maintenance`)).status).toBe(202);
  }
}

describe('naming switch ports', () => {
  it("an admin's cabling registers each switch port to its node; the switch shows it", async () => {
    const ports = (await net(env, env.p.admin, 'GET', `/switches/${sw.id}/ports`)).body.switch_ports;
    expect(ports.map((p: any) => [p.port_id, p.registered_node_uuid, p.baremetal_port_uuid])).toEqual([
      [a0, nodeA.uuid, portsA[0].uuid],
      [a1, nodeA.uuid, portsA[1].uuid],
      [b0, nodeB.uuid, portsB[0].uuid],
    ]);
  });

  it("breach 2: an owner cannot create a port on its node naming the switch port of another owner's node (403), nor PATCH one to it", async () => {
    const before = await portsOf(nodeA);
    const created = await bm(env, env.p.owner, 'POST', '/v1/ports', {
      node_uuid: nodeA.uuid,
      address: '52:54:00:0c:00:09',
      local_link_connection: llc(b0),
    });
    expect(created.status, created.text).toBe(403);
    expect(ironic(created)).toMatch(/not registered to node/);
    expect(ironic(created)).not.toContain(nodeB.uuid);
    const patched = await inMaintenance(nodeA, () =>
      bm(env, env.p.owner, 'PATCH', `/v1/ports/${portsA[1].uuid}`, [{ op: 'replace', path: '/local_link_connection/port_id', value: b0 }]),
    );
    expect(patched.status, patched.text).toBe(403);
    expect(await portsOf(nodeA)).toEqual(before);
    // Nor by its switch_id instead of its name.
    const byId = await bm(env, env.p.owner, 'POST', '/v1/ports', {
      node_uuid: nodeA.uuid,
      address: '52:54:00:0c:00:09',
      local_link_connection: { switch_id: sw.switch_id, port_id: b0 },
    });
    expect(byId.status, byId.text).toBe(403);
  });

  it('an owner cannot name an unregistered switch port of a managed switch (403); an admin can, and that registers it', async () => {
    const byOwner = await bm(env, env.p.owner, 'POST', '/v1/ports', {
      node_uuid: nodeA.uuid,
      address: '52:54:00:0c:00:09',
      local_link_connection: llc('spare-7'),
    });
    expect(byOwner.status).toBe(403);
    expect((await portsOf(nodeA)).length).toBe(2);
    const byAdmin = await bm(env, env.p.admin, 'POST', '/v1/ports', {
      node_uuid: nodeA.uuid,
      address: '52:54:00:0c:00:09',
      local_link_connection: llc('spare-7'),
    });
    expect(byAdmin.status, byAdmin.text).toBe(201);
    const view = (await net(env, env.p.admin, 'GET', `/switches/${sw.id}/ports`)).body.switch_ports.find(
      (p: any) => p.port_id === 'spare-7',
    );
    expect(view).toMatchObject({ registered_node_uuid: nodeA.uuid, baremetal_port_uuid: byAdmin.body.uuid });
    // Now registered to node a, its owner may re-create a port for it.
    expect((await bm(env, env.p.admin, 'DELETE', `/v1/ports/${byAdmin.body.uuid}`)).status).toBe(204);
    const again = await bm(env, env.p.owner, 'POST', '/v1/ports', {
      node_uuid: nodeA.uuid,
      address: '52:54:00:0c:00:09',
      local_link_connection: llc('spare-7'),
    });
    expect(again.status, again.text).toBe(201);
    expect((await bm(env, env.p.owner, 'DELETE', `/v1/ports/${again.body.uuid}`)).status).toBe(204);
  });

  it('a switch port belongs to one bare-metal port: a second port naming it is 409, for the admin too', async () => {
    for (const who of [env.p.admin, env.p.owner]) {
      const r = await bm(env, who, 'POST', '/v1/ports', {
        node_uuid: nodeA.uuid,
        address: '52:54:00:0c:00:0a',
        local_link_connection: llc(a0),
      });
      expect(r.status, `${who.name}: ${r.text}`).toBe(409);
    }
    // The owner is not told which port holds it.
    const byOwner = await bm(env, env.p.owner, 'POST', '/v1/ports', {
      node_uuid: nodeA.uuid,
      address: '52:54:00:0c:00:0a',
      local_link_connection: llc(a0),
    });
    expect(ironic(byOwner)).not.toContain(portsA[0].uuid);
    expect((await portsOf(nodeA)).length).toBe(2);
  });

  it('cabling that names a switch esi does not manage is allowed (inert)', async () => {
    const r = await bm(env, env.p.owner, 'POST', '/v1/ports', {
      node_uuid: nodeA.uuid,
      address: '52:54:00:0c:00:0b',
      local_link_connection: llc('x-1', 'tor-unmanaged'),
    });
    expect(r.status, r.text).toBe(201);
    expect((await bm(env, env.p.owner, 'DELETE', `/v1/ports/${r.body.uuid}`)).status).toBe(204);
  });
});

describe('breach 3: the lessee cannot re-cable the node it leases', () => {
  it('wiring and hardware fields are owner/admin only; the lessee may still change extra', async () => {
    const { lessee } = env.p;
    const before = await portsOf(nodeA);
    await inMaintenance(nodeA, async () => {
      for (const [path, value] of [
        ['/local_link_connection/port_id', b0],
        ['/local_link_connection', llc('spare-9')],
        ['/physical_network', 'physnet2'],
        ['/pxe_enabled', false],
        ['/address', '52:54:00:0c:00:0f'],
        // Onto a node the lessee owns itself: the port, its MAC and its cabling would leave the owner.
        ['/node_uuid', nodeL.uuid],
      ] as const) {
        const r = await bm(env, lessee, 'PATCH', `/v1/ports/${portsA[1].uuid}`, [{ op: 'replace', path, value }]);
        expect(r.status, `${path}: ${r.text}`).toBe(403);
      }
    });
    expect(await portsOf(nodeA)).toEqual(before);
    const extra = await bm(env, lessee, 'PATCH', `/v1/ports/${portsA[1].uuid}`, [{ op: 'add', path: '/extra/label', value: 'mine' }]);
    expect(extra.status, extra.text).toBe(200);
  });

  it('the owner may re-cable its own node between switch ports registered to it', async () => {
    await inMaintenance(nodeA, async () => {
      const swap = await bm(env, env.p.owner, 'PATCH', `/v1/ports/${portsA[1].uuid}`, [
        { op: 'replace', path: '/local_link_connection/port_id', value: a0 },
      ]);
      expect(swap.status).toBe(409); // a0 is held by port 0
      const free = await bm(env, env.p.owner, 'PATCH', `/v1/ports/${portsA[0].uuid}`, [{ op: 'remove', path: '/local_link_connection' }]);
      expect(free.status, free.text).toBe(200);
      const moved = await bm(env, env.p.owner, 'PATCH', `/v1/ports/${portsA[1].uuid}`, [
        { op: 'replace', path: '/local_link_connection/port_id', value: a0 },
      ]);
      expect(moved.status, moved.text).toBe(200);
      // Back as they were.
      expect(
        (
          await bm(env, env.p.owner, 'PATCH', `/v1/ports/${portsA[1].uuid}`, [
            { op: 'replace', path: '/local_link_connection/port_id', value: a1 },
          ])
        ).status,
      ).toBe(200);
      expect(
        (
          await bm(env, env.p.owner, 'PATCH', `/v1/ports/${portsA[0].uuid}`, [
            { op: 'add', path: '/local_link_connection', value: llc(a0) },
          ])
        ).status,
      ).toBe(200);
    });
  });
});

describe('unregistered cabling is inert until an admin registers it', () => {
  it('a port cabled to a switch before esi managed it carries no VIF (400) and its switch port stays quarantined', async () => {
    const { node, ports } = await cabledNode(env, 'c', 'tor-late', ['52:54:00:0c:02:00']);
    const portC = ports[0];
    const late = await createSwitch(env, 'tor-late');
    const n = await create(env, env.p.lessee, 'networks', 'network', { name: 'late-net' });
    const p = await create(env, env.p.lessee, 'ports', 'port', { network_id: n.id });
    const r = await bm(env, env.p.lessee, 'POST', `/v1/nodes/${node.uuid}/vifs`, { id: p.id });
    expect(r.status, r.text).toBe(400);
    expect(ironic(r)).toMatch(/registered/);
    expect(fakeSwitchState(late.id).get('c-0')?.mode ?? 'quarantine').toBe('quarantine');

    // Every persona but the admin is refused the registration.
    const body = { switch_port: { port_id: 'c-0', node: node.uuid } };
    for (const who of [env.p.owner, env.p.lessee, env.p.other] as Persona[])
      expect((await net(env, who, 'POST', `/switches/${late.id}/ports`, body)).status).toBe(404);
    expect((await net(env, env.p.anonymous, 'POST', `/switches/${late.id}/ports`, body)).status).toBe(401);
    const reg = await net(env, env.p.admin, 'POST', `/switches/${late.id}/ports`, body);
    expect(reg.status, reg.text).toBe(201);
    expect(reg.body.switch_port).toMatchObject({ port_id: 'c-0', registered_node_uuid: node.uuid, baremetal_port_uuid: portC.uuid });

    expect((await bm(env, env.p.lessee, 'POST', `/v1/nodes/${node.uuid}/vifs`, { id: p.id })).status).toBe(204);
    const bound = await settle(
      env,
      () => portAsAdmin(env, p.id),
      (x) => x.status === 'ACTIVE',
    );
    expect(bound.status).toBe('ACTIVE');
    expect(fakeSwitchState(late.id).get('c-0')?.mode).toBe('access');

    // Unregistering is refused while it carries the VIF; after a detach it quarantines.
    const enc = encodeURIComponent('c-0');
    expect((await net(env, env.p.admin, 'DELETE', `/switches/${late.id}/ports/${enc}`)).status).toBe(409);
    expect((await bm(env, env.p.lessee, 'DELETE', `/v1/nodes/${node.uuid}/vifs/${p.id}`)).status).toBe(204);
    expect((await net(env, env.p.admin, 'DELETE', `/switches/${late.id}/ports/${enc}`)).status).toBe(204);
    expect((await net(env, env.p.admin, 'DELETE', `/switches/${late.id}/ports/${enc}`)).status).toBe(404);
  });

  it('esi switch port register / states / unregister (admin); refused to others', async () => {
    const admin = personaEnv(env.ts, 'admin');
    const reg = await esiJson(['switch', 'port', 'register', sw.name, 'Ethernet1/3', nodeA.uuid, '-f', 'json'], admin);
    expect(reg).toMatchObject({ port_id: 'Ethernet1/3', registered_node_uuid: nodeA.uuid });
    const states = await esiJson(['switch', 'port', 'states', sw.name, '-f', 'json'], admin);
    expect(states.find((r: any) => r.Port === 'Ethernet1/3')).toMatchObject({ 'Registered Node': nodeA.uuid });
    const denied = await esi(['switch', 'port', 'register', sw.name, 'Ethernet1/4', nodeA.uuid], personaEnv(env.ts, 'owner'));
    expect(denied.code).not.toBe(0);
    const gone = await esi(['switch', 'port', 'unregister', sw.name, 'Ethernet1/3'], admin);
    expect(gone.code, gone.stderr).toBe(0);
  });

  it('a registration names switch ports with slashes (URL-encoded)', async () => {
    const reg = await net(env, env.p.admin, 'POST', `/switches/${sw.id}/ports`, {
      switch_port: { port_id: 'Ethernet1/9', node: nodeA.uuid },
    });
    expect(reg.status, reg.text).toBe(201);
    expect((await net(env, env.p.admin, 'DELETE', `/switches/${sw.id}/ports/${encodeURIComponent('Ethernet1/9')}`)).status).toBe(204);
  });
});

describe('GET /v2.0/esi/switch-ports', () => {
  it('a switch that does not exist is 404 for everyone; one the caller has no port on too', async () => {
    for (const who of [env.p.admin, env.p.owner, env.p.lessee, env.p.other] as Persona[]) {
      expect((await net(env, who, 'GET', '/esi/switch-ports?switch=no-such-switch')).status, who.name).toBe(404);
    }
    expect((await net(env, env.p.anonymous, 'GET', '/esi/switch-ports?switch=no-such-switch')).status).toBe(401);
    expect((await net(env, env.p.lessee, 'GET', `/esi/switch-ports?switch=${sw.name}`)).status).toBe(200);
    // o2's node b is cabled to the switch, but o2's ports there are its own; the lessee's view has no b0.
    const rows = (await net(env, env.p.lessee, 'GET', `/esi/switch-ports?switch=${sw.name}`)).body.switch_ports;
    expect(rows.map((r: any) => r.port)).not.toContain(b0);
    // A project with no port on the switch (only o1's node is cabled to it) learns nothing about it.
    await createSwitch(env, 'tor-o1-only', 'fake', {}, { switch_id: '02:00:00:00:0e:01' });
    await cabledNode(env, 'o1-only', 'tor-o1-only', ['52:54:00:0c:03:00']);
    const none = await net(env, env.p.other, 'GET', '/esi/switch-ports?switch=tor-o1-only');
    expect(none.status).toBe(404);
  });
});

describe('the switch is programmed only for the port that holds a registered switch port', () => {
  it('a VIF on a port whose switch port was re-registered to another node is quarantined', async () => {
    const n = await create(env, env.p.lessee, 'networks', 'network', { name: 'held-net' });
    const p = await create(env, env.p.lessee, 'ports', 'port', { network_id: n.id });
    expect((await bm(env, env.p.lessee, 'POST', `/v1/nodes/${nodeA.uuid}/vifs`, { id: p.id, port_uuid: portsA[1].uuid })).status).toBe(204);
    await settle(
      env,
      () => portAsAdmin(env, p.id),
      (x) => x.status === 'ACTIVE',
    );
    expect(fakeSwitchState(sw.id).get(a1)?.mode).toBe('access');
    // The admin says a1's cable reaches node b; a1 is held by node a's port: refused.
    expect(
      (await net(env, env.p.admin, 'POST', `/switches/${sw.id}/ports`, { switch_port: { port_id: a1, node: nodeB.uuid } })).status,
    ).toBe(409);
    expect((await bm(env, env.p.lessee, 'DELETE', `/v1/nodes/${nodeA.uuid}/vifs/${p.id}`)).status).toBe(204);
    await settle(
      env,
      async () => fakeSwitchState(sw.id).get(a1),
      (s) => s?.mode === 'quarantine',
    );
  });
});
