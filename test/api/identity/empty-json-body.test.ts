/**
 * `Content-Type: application/json` with an empty body is no body, on every API (as Keystone,
 * Ironic, Neutron, esi-leap and Glance take it): DELETE, GET and body-less writes get their
 * usual answer, and a route that needs a body answers its own 400 in its own format — not
 * Fastify's `FST_ERR_CTP_EMPTY_JSON_BODY` (src/api/common/input-guards.ts).
 *
 * Requests go out with `fetch` and an explicit empty body, so that the header and
 * `Content-Length: 0` are sent exactly as clients such as keystoneauth send them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createPersonas, startTestServer, type Persona, type Personas, type TestServer } from '../../helpers/harness.ts';

let ts: TestServer;
let p: Personas;

beforeAll(async () => {
  ts = await startTestServer();
  p = await createPersonas(ts);
});
afterAll(async () => ts?.close());

const IRONIC = { 'x-openstack-ironic-api-version': '1.82' };

/** Send `method path` as `who` with `Content-Type: application/json` and an empty body. */
async function empty(who: Persona, method: string, path: string, headers: Record<string, string> = {}) {
  const withBody = method !== 'GET' && method !== 'HEAD';
  const res = await fetch(ts.url + path, {
    method,
    headers: { accept: 'application/json', 'content-type': 'application/json', 'x-auth-token': who.token!, ...headers },
    ...(withBody ? { body: '' } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: parseOrText(text), text };
}

/** JSON of a non-empty answer, else its text (null when empty). */
function parseOrText(text: string): any {
  if (text === '') return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Create something through the API and return its JSON. */
async function created(who: Persona, method: string, path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await call(ts, who, method, path, body, headers);
  expect(res.status, res.text).toBeLessThan(300);
  return res.body;
}

describe('Keystone', () => {
  it('DELETE, GET and a body-less PUT answer as without the header', async () => {
    const project = (await created(p.admin, 'POST', '/identity/v3/projects', { project: { name: 'empty-body' } })).project;
    const listed = await empty(p.admin, 'GET', '/identity/v3/projects?name=empty-body');
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.projects.map((x: any) => x.id)).toEqual([project.id]);
    const role = (await call(ts, p.admin, 'GET', '/identity/v3/roles?name=owner')).body.roles[0].id;
    const grant = `/identity/v3/projects/${project.id}/users/${p.other.userId}/roles/${role}`;
    expect((await empty(p.admin, 'PUT', grant)).status).toBe(204);
    expect((await call(ts, p.admin, 'HEAD', grant)).status).toBe(204);
    expect((await empty(p.admin, 'DELETE', grant)).status).toBe(204);
    const gone = await empty(p.admin, 'DELETE', `/identity/v3/projects/${project.id}`);
    expect(gone.status, gone.text).toBe(204);
    const again = await empty(p.admin, 'DELETE', `/identity/v3/projects/${project.id}`);
    expect(again.status).toBe(404);
    expect(again.body.error).toMatchObject({ code: 404, message: `Could not find project: ${project.id}.` });
    // A DELETE the caller may not make gets its refusal, not a body error.
    expect((await empty(p.owner, 'DELETE', `/identity/v3/projects/${p.owner.projectId}`)).status).toBe(403);
  });

  it("a route that needs a body answers Keystone's own 400", async () => {
    for (const path of ['/identity/v3/projects', '/identity/v3/auth/tokens']) {
      const res = await empty(p.admin, 'POST', path);
      expect(res.status, res.text).toBe(400);
      expect(res.body).toEqual({ error: { code: 400, title: 'Bad Request', message: expect.any(String) } });
      expect(res.text).not.toMatch(/FST_ERR|Body cannot be empty/);
    }
    // Malformed JSON is still refused as before.
    const bad = await call(ts, p.admin, 'POST', '/identity/v3/projects', '{"project": ');
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/Expecting to find valid JSON/);
  });
});

describe('Ironic', () => {
  it('DELETE, GET and a body-less PUT and POST answer as without the header', async () => {
    const node = await created(p.admin, 'POST', '/baremetal/v1/nodes', { driver: 'fake-hardware', name: 'empty-body-node' }, IRONIC);
    expect((await empty(p.admin, 'GET', `/baremetal/v1/nodes/${node.uuid}`, IRONIC)).body.uuid).toBe(node.uuid);
    expect((await empty(p.admin, 'PUT', `/baremetal/v1/nodes/${node.uuid}/maintenance`, IRONIC)).status).toBe(202);
    expect((await call(ts, p.admin, 'GET', `/baremetal/v1/nodes/${node.uuid}`, undefined, IRONIC)).body.maintenance).toBe(true);
    expect((await empty(p.admin, 'DELETE', `/baremetal/v1/nodes/${node.uuid}/maintenance`, IRONIC)).status).toBe(202);
    expect((await call(ts, p.admin, 'GET', `/baremetal/v1/nodes/${node.uuid}`, undefined, IRONIC)).body.maintenance).toBe(false);
    const passthru = await empty(p.admin, 'POST', `/baremetal/v1/nodes/${node.uuid}/vendor_passthru?method=first_method`, IRONIC);
    expect(passthru.status, passthru.text).toBeLessThan(500);
    expect(passthru.text).not.toMatch(/FST_ERR|Body cannot be empty|not valid JSON/);
    expect((await empty(p.admin, 'DELETE', `/baremetal/v1/nodes/${node.uuid}`, IRONIC)).status).toBe(204);
    expect((await empty(p.admin, 'DELETE', `/baremetal/v1/nodes/${node.uuid}`, IRONIC)).status).toBe(404);
  });

  it("a route that needs a body answers Ironic's own 400", async () => {
    const res = await empty(p.admin, 'POST', '/baremetal/v1/nodes', IRONIC);
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body.error_message)).toMatchObject({ faultcode: 'Client', faultstring: expect.stringMatching(/node/) });
  });
});

describe('Neutron', () => {
  it('DELETE, GET and a body-less POST answer as without the header', async () => {
    const network = (await created(p.owner, 'POST', '/network/v2.0/networks', { network: { name: 'empty-body-net' } })).network;
    const shown = await empty(p.owner, 'GET', `/network/v2.0/networks/${network.id}`);
    expect(shown.body.network.id).toBe(network.id);
    const sw = (
      await created(p.admin, 'POST', '/network/v2.0/switches', {
        switch: { name: 'eb-sw', switch_id: '02:00:00:00:00:eb', driver: 'fake' },
      })
    ).switch;
    const resync = await empty(p.admin, 'POST', `/network/v2.0/switches/${sw.id}/resync`);
    expect(resync.status, resync.text).toBe(200);
    expect(resync.body).toEqual({ resynced: expect.any(Number) });
    expect((await empty(p.owner, 'DELETE', `/network/v2.0/networks/${network.id}`)).status).toBe(204);
    const again = await empty(p.owner, 'DELETE', `/network/v2.0/networks/${network.id}`);
    expect(again.status).toBe(404);
    expect(again.body.NeutronError).toMatchObject({ type: 'NetworkNotFound' });
  });

  it("a route that needs a body answers Neutron's own 400", async () => {
    const res = await empty(p.owner, 'POST', '/network/v2.0/networks');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ NeutronError: { type: 'HTTPBadRequest', message: expect.stringMatching(/body/i), detail: '' } });
    expect(res.text).not.toMatch(/not valid JSON/);
  });
});

describe('esi-leap and Glance', () => {
  it("DELETE and a body-less POST answer as without the header; a needed body is each one's 400", async () => {
    const lease = await empty(p.lessee, 'DELETE', '/lease/v1/leases/no-such-lease');
    expect(lease.status).toBe(404);
    expect(lease.body).toMatchObject({ faultcode: 'Client', faultstring: expect.stringMatching(/not found/) });
    const offer = await empty(p.owner, 'POST', '/lease/v1/offers');
    expect(offer.status).toBe(400);
    expect(offer.body.faultstring).not.toMatch(/not valid JSON/);
    const image = await created(p.owner, 'POST', '/image/v2/images', {
      name: 'empty-body-img',
      disk_format: 'raw',
      container_format: 'bare',
    });
    const deactivate = await empty(p.owner, 'POST', `/image/v2/images/${image.id}/actions/deactivate`);
    expect(deactivate.status, deactivate.text).not.toBe(400);
    expect(deactivate.status).toBeLessThan(500);
    expect((await empty(p.owner, 'DELETE', `/image/v2/images/${image.id}`)).status).toBe(204);
    const create = await empty(p.owner, 'POST', '/image/v2/images');
    expect(create.status).toBe(400);
    expect(create.text).toMatch(/Body expected in request/);
  });
});
