/**
 * Objects a request names are resolved only within what the caller may see (issue 14, bad input
 * sweep): the ids of deleted objects are 404 for everyone — in the path, and as 400/404 when a
 * body names them — never a 500 and never another object; and a name that exists in two
 * projects resolves, for each caller, to its own object (offers, leases, key pairs, images and
 * networks named through the esi CLI), never to the other project's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findImage, findNetwork } from '../../src/cli/commands/node-provision.ts';
import { Session, settingsFromEnv } from '../../src/cli/session.ts';
import {
  call,
  createPersonas,
  type Persona,
  type Personas,
  type TestResponse,
  type TestServer,
  startTestServer,
} from '../helpers/harness.ts';
import { personaEnv } from './cli/support.ts';

let ts: TestServer;
let p: Personas;
const IRONIC = { 'x-openstack-ironic-api-version': '1.82' };
const NOVA = { 'x-openstack-nova-api-version': '2.90' };
const DAY = 86_400_000;

const every = (): Persona[] => [p.admin, p.owner, p.lessee, p.other];
const ok = (r: TestResponse, status: number): TestResponse => {
  expect(r.status, r.text).toBe(status);
  return r;
};

beforeAll(async () => {
  ts = await startTestServer();
  p = await createPersonas(ts);
});
afterAll(async () => ts?.close());

describe('ids of deleted objects', () => {
  it('are 404 in the path for every caller, and no body can name them', async () => {
    const node = ok(
      await call(ts, p.admin, 'POST', '/baremetal/v1/nodes', { driver: 'fake-hardware', owner: p.owner.projectId }, IRONIC),
      201,
    ).body;
    const port = ok(
      await call(ts, p.admin, 'POST', '/baremetal/v1/ports', { node_uuid: node.uuid, address: '52:54:00:aa:00:01' }, IRONIC),
      201,
    ).body;
    const image = ok(
      await call(ts, p.lessee, 'POST', '/image/v2/images', { name: 'gone', disk_format: 'raw', container_format: 'bare' }),
      201,
    ).body;
    const network = ok(await call(ts, p.lessee, 'POST', '/network/v2.0/networks', { network: { name: 'gone-net' } }), 201).body.network;
    const netPort = ok(await call(ts, p.lessee, 'POST', '/network/v2.0/ports', { port: { network_id: network.id } }), 201).body.port;
    const keypair = ok(
      await call(
        ts,
        p.lessee,
        'POST',
        '/compute/v2.1/os-keypairs',
        { keypair: { name: 'gone-key', public_key: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFy4aRCpfLzZkJl6WS6Nm5H3PZZ1rR0ysYy7d1PgDEc2 x' } },
        NOVA,
      ),
      201,
    ).body.keypair;
    const live = ok(
      await call(
        ts,
        p.admin,
        'POST',
        '/baremetal/v1/nodes',
        { driver: 'fake-hardware', owner: p.owner.projectId, lessee: p.lessee.projectId },
        IRONIC,
      ),
      201,
    ).body;

    ok(await call(ts, p.admin, 'DELETE', `/baremetal/v1/ports/${port.uuid}`, undefined, IRONIC), 204);
    ok(await call(ts, p.admin, 'DELETE', `/baremetal/v1/nodes/${node.uuid}`, undefined, IRONIC), 204);
    ok(await call(ts, p.lessee, 'DELETE', `/image/v2/images/${image.id}`), 204);
    ok(await call(ts, p.lessee, 'DELETE', `/network/v2.0/ports/${netPort.id}`), 204);
    ok(await call(ts, p.lessee, 'DELETE', `/network/v2.0/networks/${network.id}`), 204);
    ok(await call(ts, p.lessee, 'DELETE', `/compute/v2.1/os-keypairs/${keypair.name}`, undefined, NOVA), 204);

    for (const who of every()) {
      for (const [path, headers] of [
        [`/baremetal/v1/nodes/${node.uuid}`, IRONIC],
        [`/baremetal/v1/ports/${port.uuid}`, IRONIC],
        [`/image/v2/images/${image.id}`, {}],
        [`/network/v2.0/networks/${network.id}`, {}],
        [`/network/v2.0/ports/${netPort.id}`, {}],
        [`/compute/v2.1/os-keypairs/${keypair.name}`, NOVA],
      ] as const) {
        expect((await call(ts, who, 'GET', path, undefined, headers)).status, `${who.name} GET ${path}`).toBe(404);
        expect((await call(ts, who, 'DELETE', path, undefined, headers)).status, `${who.name} DELETE ${path}`).toBe(404);
      }
    }
    // Named in a body: refused as "could not be found", nothing written.
    const before = ok(await call(ts, p.admin, 'GET', `/baremetal/v1/nodes/${live.uuid}`, undefined, IRONIC), 200).body;
    ok(
      await call(
        ts,
        p.lessee,
        'PATCH',
        `/baremetal/v1/nodes/${live.uuid}`,
        [{ op: 'add', path: '/instance_info/image_source', value: image.id }],
        IRONIC,
      ),
      400,
    );
    ok(await call(ts, p.lessee, 'POST', `/baremetal/v1/nodes/${live.uuid}/vifs`, { id: netPort.id }, IRONIC), 400);
    ok(await call(ts, p.admin, 'POST', '/baremetal/v1/ports', { node_uuid: node.uuid, address: '52:54:00:aa:00:02' }, IRONIC), 400);
    ok(await call(ts, p.lessee, 'POST', '/network/v2.0/ports', { port: { network_id: network.id } }), 404);
    const offer = await call(ts, p.owner, 'POST', '/lease/v1/offers', {
      resource_uuid: node.uuid,
      start_time: new Date(Date.now() + DAY).toISOString(),
      end_time: new Date(Date.now() + 2 * DAY).toISOString(),
    });
    expect(offer.status).toBe(404);
    const after = ok(await call(ts, p.admin, 'GET', `/baremetal/v1/nodes/${live.uuid}`, undefined, IRONIC), 200).body;
    expect(after.instance_info).toEqual(before.instance_info);
  });
});

describe('names that exist in two projects', () => {
  let nodeO1: any;
  let nodeO2: any;

  beforeAll(async () => {
    nodeO1 = ok(
      await call(
        ts,
        p.admin,
        'POST',
        '/baremetal/v1/nodes',
        { driver: 'fake-hardware', name: 'twin-o1', owner: p.owner.projectId },
        IRONIC,
      ),
      201,
    ).body;
    nodeO2 = ok(
      await call(
        ts,
        p.admin,
        'POST',
        '/baremetal/v1/nodes',
        { driver: 'fake-hardware', name: 'twin-o2', owner: p.other.projectId },
        IRONIC,
      ),
      201,
    ).body;
  });

  it('offers: each owner reaches its own "twin"; a caller who sees both is refused without a guess', async () => {
    const window = { start_time: new Date(Date.now() + DAY).toISOString(), end_time: new Date(Date.now() + 5 * DAY).toISOString() };
    const mine = ok(await call(ts, p.owner, 'POST', '/lease/v1/offers', { resource_uuid: nodeO1.uuid, name: 'twin', ...window }), 201).body;
    const theirs = ok(
      await call(ts, p.other, 'POST', '/lease/v1/offers', { resource_uuid: nodeO2.uuid, name: 'twin', ...window }),
      201,
    ).body;
    expect(ok(await call(ts, p.owner, 'GET', '/lease/v1/offers/twin'), 200).body.uuid).toBe(mine.uuid);
    expect(ok(await call(ts, p.other, 'GET', '/lease/v1/offers/twin'), 200).body.uuid).toBe(theirs.uuid);
    // The lessee sees both public offers: the name is ambiguous for it, and it is told so.
    const both = await call(ts, p.lessee, 'GET', '/lease/v1/offers/twin');
    expect(both.status).toBe(409);
    // Deleting by name as o2 never reaches o1's offer.
    ok(await call(ts, p.other, 'DELETE', '/lease/v1/offers/twin'), 200);
    expect(ok(await call(ts, p.owner, 'GET', `/lease/v1/offers/${mine.uuid}`), 200).body.status).toBe('available');
  });

  it('leases: each party reaches its own "twin-lease"', async () => {
    const start = new Date(Date.now() + 10 * DAY).toISOString();
    const end = new Date(Date.now() + 11 * DAY).toISOString();
    const a = ok(
      await call(ts, p.owner, 'POST', '/lease/v1/leases', {
        resource_uuid: nodeO1.uuid,
        project_id: p.lessee.projectId,
        name: 'twin-lease',
        start_time: start,
        end_time: end,
      }),
      201,
    ).body;
    const b = ok(
      await call(ts, p.other, 'POST', '/lease/v1/leases', {
        resource_uuid: nodeO2.uuid,
        project_id: p.other.projectId,
        name: 'twin-lease',
        start_time: start,
        end_time: end,
      }),
      201,
    ).body;
    expect(ok(await call(ts, p.lessee, 'GET', '/lease/v1/leases/twin-lease'), 200).body.uuid).toBe(a.uuid);
    expect(ok(await call(ts, p.other, 'GET', '/lease/v1/leases/twin-lease'), 200).body.uuid).toBe(b.uuid);
    ok(await call(ts, p.other, 'DELETE', '/lease/v1/leases/twin-lease'), 200);
    expect(ok(await call(ts, p.lessee, 'GET', `/lease/v1/leases/${a.uuid}`), 200).body.status).not.toBe('deleted');
  });

  it('key pairs: each user\'s "k" is its own', async () => {
    const keys = {
      lessee: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAbcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH lessee',
      owner: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHgfedcbaijklmnopqrstuvwxyz0123456789ABCDEFGH owner',
    };
    for (const who of ['lessee', 'owner'] as const)
      ok(await call(ts, p[who], 'POST', '/compute/v2.1/os-keypairs', { keypair: { name: 'k', public_key: keys[who] } }, NOVA), 201);
    for (const who of ['lessee', 'owner'] as const) {
      expect(ok(await call(ts, p[who], 'GET', '/compute/v2.1/os-keypairs/k', undefined, NOVA), 200).body.keypair.public_key).toBe(
        keys[who],
      );
    }
    expect((await call(ts, p.other, 'GET', '/compute/v2.1/os-keypairs/k', undefined, NOVA)).status).toBe(404);
  });

  it("the esi CLI picks the caller's own image or network by name, never the other project's", async () => {
    const admin = new Session(settingsFromEnv(personaEnv(ts, 'admin')));
    const lessee = new Session(settingsFromEnv(personaEnv(ts, 'lessee')));
    // An admin's public image and the lessee's private one share the name "twin-os".
    ok(
      await call(ts, p.admin, 'POST', '/image/v2/images', {
        name: 'twin-os',
        disk_format: 'raw',
        container_format: 'bare',
        visibility: 'public',
      }),
      201,
    );
    const own = ok(
      await call(ts, p.lessee, 'POST', '/image/v2/images', { name: 'twin-os', disk_format: 'raw', container_format: 'bare' }),
      201,
    ).body;
    expect((await findImage(lessee, 'twin-os')).id).toBe(own.id);
    // The admin sees both and owns one (its public image): it gets its own.
    expect((await findImage(admin, 'twin-os')).owner).toBe(p.admin.projectId);
    // A network o2 shares with l1 under the name of l1's own.
    const mine = ok(await call(ts, p.lessee, 'POST', '/network/v2.0/networks', { network: { name: 'twin-net' } }), 201).body.network;
    const shared = ok(await call(ts, p.other, 'POST', '/network/v2.0/networks', { network: { name: 'twin-net' } }), 201).body.network;
    ok(
      await call(ts, p.other, 'POST', '/network/v2.0/rbac-policies', {
        rbac_policy: { object_type: 'network', object_id: shared.id, action: 'access_as_shared', target_tenant: p.lessee.projectId },
      }),
      201,
    );
    expect((await findNetwork(lessee, 'twin-net')).id).toBe(mine.id);
  });
});
