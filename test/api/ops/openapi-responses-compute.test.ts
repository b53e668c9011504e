/**
 * The documented answers of the compute API (src/api/compute/response-schemas.ts) compared with
 * real ones at the newest microversion (2.90): flavors and key pairs as admin, owner and lessee,
 * and a server the lessee creates on the node it leases (fake hardware: deployed at once), read
 * as the lessee and admin (who sees the `OS-EXT-SRV-ATTR:*` attributes), each checked with
 * TypeBox's `Value.Check` against strict schemas (see openapi-responses.test.ts); extra specs and
 * access lists of flavors, and the answers of server actions (stop, start, console output,
 * rebuild) on a server of the lessee (src/api/compute/response-schemas-extra.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createPersonas, startTestServer, type Persona, type Personas, type TestServer } from '../../helpers/harness.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import { freeNode } from '../scheduling/support.ts';
import { expectValid } from './openapi-support.ts';
import {
  FlavorCollection,
  FlavorDetailCollection,
  FlavorResponse,
  KeypairCollection,
  KeypairCreateResponse,
  KeypairResponse,
  ServerCollection,
  ServerCreateResponse,
  ServerDetailCollection,
  ServerResponse,
} from '../../../src/api/compute/response-schemas.ts';
import {
  ExtraSpecResponse,
  ExtraSpecsResponse,
  FlavorAccessResponse,
  ServerActionResponse,
} from '../../../src/api/compute/response-schemas-extra.ts';

const NOVA = { 'openstack-api-version': 'compute 2.90' };

let ts: TestServer;
let p: Personas;
let image = '';

/** An answer that must succeed, as parsed JSON. */
async function ok(who: Persona, method: string, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<unknown> {
  const r = await call(ts, who, method, url, body, headers);
  expect(r.status, `${who.name} ${method} ${url}: ${r.text}`).toBeLessThan(300);
  return r.body;
}

beforeAll(async () => {
  ts = await startTestServer();
  p = await createPersonas(ts);
  const created = (await ok(p.admin, 'POST', '/image/v2/images', {
    name: 'os',
    disk_format: 'raw',
    container_format: 'bare',
    visibility: 'public',
  })) as {
    id: string;
  };
  image = created.id;
  const up = await fetch(`${ts.url}/image/v2/images/${image}/file`, {
    method: 'PUT',
    headers: { 'x-auth-token': p.admin.token!, 'content-type': 'application/octet-stream' },
    body: new Uint8Array(4096),
  });
  expect(up.status).toBe(204);
  // Two nodes leased to l1: one for a server, one for a server asked for by reservation id.
  for (const name of ['doc-gold', 'doc-gold-2', 'doc-gold-3']) await freeNode(ts, p, { name, lessee: p.lessee.projectId });
  await ok(p.admin, 'POST', '/compute/v2.1/flavors', { flavor: { name: 'bm.doc', id: 'bm.doc', ram: 16384, vcpus: 8, disk: 100 } }, NOVA);
  await ok(p.admin, 'POST', '/compute/v2.1/flavors/bm.doc/os-extra_specs', { extra_specs: { 'resources:CUSTOM_GOLD': '1' } }, NOVA);
});
afterAll(async () => ts?.close());

describe('documented compute answers match real ones', () => {
  it('compute: flavors (create, list, detail, show, update) and key pairs (create, generated and imported, list, show), at the newest microversion', async () => {
    const flavor = (await ok(
      p.admin,
      'POST',
      '/compute/v2.1/flavors',
      { flavor: { name: 'doc-flavor', ram: 1024, vcpus: 2, disk: 10 } },
      NOVA,
    )) as {
      flavor: { id: string };
    };
    expectValid(FlavorResponse, flavor, 'POST /flavors');
    await ok(
      p.admin,
      'POST',
      `/compute/v2.1/flavors/${flavor.flavor.id}/os-extra_specs`,
      { extra_specs: { 'resources:CUSTOM_BAREMETAL': '1' } },
      NOVA,
    );
    const updated = await ok(
      p.admin,
      'PUT',
      `/compute/v2.1/flavors/${flavor.flavor.id}`,
      { flavor: { description: 'for the docs' } },
      NOVA,
    );
    expectValid(FlavorResponse, updated, 'PUT /flavors/{id}');
    for (const who of [p.admin, p.owner, p.lessee]) {
      expectValid(FlavorCollection, await ok(who, 'GET', '/compute/v2.1/flavors', undefined, NOVA), `${who.name} flavors`);
      expectValid(FlavorDetailCollection, await ok(who, 'GET', '/compute/v2.1/flavors/detail', undefined, NOVA), `${who.name} detail`);
      expectValid(FlavorResponse, await ok(who, 'GET', `/compute/v2.1/flavors/${flavor.flavor.id}`, undefined, NOVA), `${who.name} flavor`);
      const generated = (await ok(who, 'POST', '/compute/v2.1/os-keypairs', { keypair: { name: `doc-${who.name}` } }, NOVA)) as {
        keypair: { public_key: string; private_key?: string };
      };
      expectValid(KeypairCreateResponse, generated, `${who.name} POST /os-keypairs`);
      expect(generated.keypair.private_key).toBeDefined();
      const imported = await ok(
        who,
        'POST',
        '/compute/v2.1/os-keypairs',
        { keypair: { name: `doc-${who.name}-imported`, public_key: generated.keypair.public_key } },
        NOVA,
      );
      expectValid(KeypairCreateResponse, imported, `${who.name} import`);
      expectValid(KeypairCollection, await ok(who, 'GET', '/compute/v2.1/os-keypairs', undefined, NOVA), `${who.name} keypairs`);
      expectValid(
        KeypairResponse,
        await ok(who, 'GET', `/compute/v2.1/os-keypairs/doc-${who.name}`, undefined, NOVA),
        `${who.name} keypair`,
      );
    }
    expectValid(KeypairCollection, await ok(p.owner, 'GET', '/compute/v2.1/os-keypairs?limit=1', undefined, NOVA), 'a page with links');
  });

  it('servers: a created server (list, detail, show) as the lessee and admin, and a reservation id', async () => {
    const created = (await ok(
      p.lessee,
      'POST',
      '/compute/v2.1/servers',
      { server: { name: 'doc server', flavorRef: 'bm.doc', imageRef: image, networks: 'none', metadata: { role: 'docs' } } },
      NOVA,
    )) as { server: { id: string } };
    expectValid(ServerCreateResponse, created, 'POST /servers');
    const id = created.server.id;
    await waitFor(
      () => call(ts, p.lessee, 'GET', `/compute/v2.1/servers/${id}`, undefined, NOVA),
      (r) => r.body?.server?.status === 'ACTIVE',
      { timeoutMs: 15_000, what: `server ${id}`, show: (r) => r.text },
    );
    for (const who of [p.lessee, p.admin]) {
      const shown = (await ok(who, 'GET', `/compute/v2.1/servers/${id}`, undefined, NOVA)) as { server: Record<string, unknown> };
      expectValid(ServerResponse, shown, `${who.name} GET /servers/{id}`);
      expect('OS-EXT-SRV-ATTR:host' in shown.server, who.name).toBe(who === p.admin);
      const all = who === p.admin ? '?all_tenants=1' : '';
      expectValid(ServerCollection, await ok(who, 'GET', `/compute/v2.1/servers${all}`, undefined, NOVA), `${who.name} servers`);
      const detail = await ok(who, 'GET', `/compute/v2.1/servers/detail${all}`, undefined, NOVA);
      expectValid(ServerDetailCollection, detail, `${who.name} detail`);
      expect(JSON.stringify(detail)).toContain(id);
    }
    // A request may ask for its reservation id instead of the server.
    const reserved = await call(
      ts,
      p.lessee,
      'POST',
      '/compute/v2.1/servers',
      { server: { name: 'doc reserved', flavorRef: 'bm.doc', imageRef: image, networks: 'none', return_reservation_id: true } },
      NOVA,
    );
    expect(reserved.status, reserved.text).toBe(202);
    expectValid(ServerCreateResponse, reserved.body, 'POST /servers with return_reservation_id');
    expect(reserved.body.reservation_id).toEqual(expect.any(String));
  });

  it('flavors: extra specs (list, add, show, update, delete) and access lists (add, list) as admin, owner and lessee', async () => {
    const url = '/compute/v2.1/flavors/bm.doc/os-extra_specs';
    const added = await ok(p.admin, 'POST', url, { extra_specs: { 'doc:colour': 'blue', 'doc:count': 2 } }, NOVA);
    expectValid(ExtraSpecsResponse, added, 'POST /os-extra_specs');
    expectValid(
      ExtraSpecResponse,
      await ok(p.admin, 'PUT', `${url}/doc:colour`, { 'doc:colour': 'red' }, NOVA),
      'PUT /os-extra_specs/{key}',
    );
    for (const who of [p.admin, p.owner, p.lessee]) {
      expectValid(ExtraSpecsResponse, await ok(who, 'GET', url, undefined, NOVA), `${who.name} extra specs`);
      expectValid(ExtraSpecResponse, await ok(who, 'GET', `${url}/doc:colour`, undefined, NOVA), `${who.name} extra spec`);
    }
    const gone = await call(ts, p.admin, 'DELETE', `${url}/doc:colour`, undefined, NOVA);
    expect(gone.status, gone.text).toBe(200);
    expect(gone.text).toBe('');

    const flavor = (await ok(
      p.admin,
      'POST',
      '/compute/v2.1/flavors',
      { flavor: { name: 'doc-private', ram: 1024, vcpus: 2, disk: 10, 'os-flavor-access:is_public': false } },
      NOVA,
    )) as { flavor: { id: string } };
    const action = `/compute/v2.1/flavors/${flavor.flavor.id}/action`;
    const access = await ok(p.admin, 'POST', action, { addTenantAccess: { tenant: p.lessee.projectId } }, NOVA);
    expectValid(FlavorAccessResponse, access, 'addTenantAccess');
    await ok(p.admin, 'POST', action, { addTenantAccess: { tenant: p.owner.projectId } }, NOVA);
    expectValid(
      FlavorAccessResponse,
      await ok(p.admin, 'POST', action, { removeTenantAccess: { tenant: p.owner.projectId } }, NOVA),
      'remove',
    );
    const listed = await ok(p.admin, 'GET', `/compute/v2.1/flavors/${flavor.flavor.id}/os-flavor-access`, undefined, NOVA);
    expectValid(FlavorAccessResponse, listed, 'os-flavor-access');
    expect(listed).toEqual({ flavor_access: [{ flavor_id: flavor.flavor.id, tenant_id: p.lessee.projectId }] });
    const deleted = await call(ts, p.admin, 'DELETE', `/compute/v2.1/flavors/${flavor.flavor.id}`, undefined, NOVA);
    expect([deleted.status, deleted.text]).toEqual([202, '']);
    // A key pair's delete answers without a body too (204 from 2.2).
    await ok(p.lessee, 'POST', '/compute/v2.1/os-keypairs', { keypair: { name: 'doc-gone' } }, NOVA);
    const keyGone = await call(ts, p.lessee, 'DELETE', '/compute/v2.1/os-keypairs/doc-gone', undefined, NOVA);
    expect([keyGone.status, keyGone.text]).toEqual([204, '']);
  });

  it('server actions: stop and start (202, no body), console output and rebuild as the lessee and admin; delete', async () => {
    const created = (await ok(
      p.lessee,
      'POST',
      '/compute/v2.1/servers',
      { server: { name: 'doc actions', flavorRef: 'bm.doc', imageRef: image, networks: 'none' } },
      NOVA,
    )) as { server: { id: string } };
    const id = created.server.id;
    const status = (want: string) =>
      waitFor(
        () => call(ts, p.lessee, 'GET', `/compute/v2.1/servers/${id}`, undefined, NOVA),
        (r) => r.body?.server?.status === want,
        { timeoutMs: 15_000, what: `server ${id} ${want}`, show: (r) => r.text },
      );
    await status('ACTIVE');
    const act = (who: Persona, body: unknown) => call(ts, who, 'POST', `/compute/v2.1/servers/${id}/action`, body, NOVA);
    const stopped = await act(p.lessee, { 'os-stop': null });
    expect([stopped.status, stopped.text]).toEqual([202, '']);
    await status('SHUTOFF');
    const started = await act(p.admin, { 'os-start': null });
    expect([started.status, started.text]).toEqual([202, '']);
    await status('ACTIVE');
    // The node that holds the server (admins see it), with its serial console on.
    const shown = (await ok(p.admin, 'GET', `/compute/v2.1/servers/${id}`, undefined, NOVA)) as { server: Record<string, string> };
    const nodeId = shown.server['OS-EXT-SRV-ATTR:hypervisor_hostname'];
    const en = await call(
      ts,
      p.lessee,
      'PUT',
      `/baremetal/v1/nodes/${nodeId}/states/console`,
      { enabled: true },
      {
        'x-openstack-ironic-api-version': '1.82',
      },
    );
    expect(en.status, en.text).toBe(202);
    for (const who of [p.lessee, p.admin]) {
      const output = await act(who, { 'os-getConsoleOutput': { length: 5 } });
      expect(output.status, output.text).toBe(200);
      expectValid(ServerActionResponse, output.body, `${who.name} os-getConsoleOutput`);
    }
    const rebuilt = await act(p.lessee, { rebuild: { imageRef: image, name: 'doc rebuilt', adminPass: 'doc-pass' } });
    expect(rebuilt.status, rebuilt.text).toBe(202);
    expectValid(ServerActionResponse, rebuilt.body, 'rebuild');
    expect(rebuilt.body.server.adminPass).toBe('doc-pass');
    await status('ACTIVE');
    const deleted = await call(ts, p.lessee, 'DELETE', `/compute/v2.1/servers/${id}`, undefined, NOVA);
    expect([deleted.status, deleted.text]).toEqual([204, '']);
  });
});
