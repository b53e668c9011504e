/**
 * Identity API: what real clients read besides tokens — the catalogue as services and
 * endpoints (`/v3/services`, `/v3/endpoints`, admin only as in Keystone), the scopes a token's
 * user may ask for (`/v3/auth/projects`, `/v3/auth/domains`), and Keystone's project look-up
 * refusals that the `openstack` CLI relies on (403 for every id a non-member names, so that it
 * falls back to the id it was given), for every persona.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOG_SERVICES } from '../../../src/api/identity/catalog.ts';
import { ADMIN_PASSWORD, call, createPersonas, startTestServer, type Personas, type TestServer } from '../../helpers/harness.ts';
import { expectKeystoneError, expectStatuses, login } from './support.ts';

let ts: TestServer;
let personas: Personas;

beforeAll(async () => {
  ts = await startTestServer();
  personas = await createPersonas(ts);
});
afterAll(async () => ts?.close());

const V3 = '/identity/v3';
const FORBIDDEN = (rule: string) => `You are not authorized to perform the requested action: identity:${rule}.`;

describe('GET /v3/services', () => {
  it('the admin lists every announced service; every other token gets 403', async () => {
    const res = await expectStatuses(ts, personas, 'GET', () => ({ path: `${V3}/services` }), {
      admin: 200,
      owner: 403,
      lessee: 403,
      other: 403,
      anonymous: 401,
    });
    const list = res.admin.body.services as any[];
    expect(list.map((s) => s.type)).toEqual(CATALOG_SERVICES.map((s) => s.type));
    const baremetal = list.find((s) => s.type === 'baremetal');
    expect(baremetal).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{32}$/),
      type: 'baremetal',
      name: 'ironic',
      enabled: true,
      links: { self: `${ts.url}${V3}/services/${baremetal.id}` },
    });
    expect(res.admin.body.links).toEqual({ self: `${ts.url}${V3}/services`, previous: null, next: null });
    expect(res.owner.body.error.message).toBe(FORBIDDEN('list_services'));
  });

  it('the ids are those of the token catalogue; filters type and name', async () => {
    const { body } = await login(ts, 'admin', ADMIN_PASSWORD, {
      project: { name: 'admin', domain: { id: 'default' } },
    });
    const services = (await call(ts, personas.admin, 'GET', `${V3}/services`)).body.services as any[];
    expect(services.map((s) => [s.id, s.type, s.name])).toEqual(body.token.catalog.map((s: any) => [s.id, s.type, s.name]));
    const byType = await call(ts, personas.admin, 'GET', `${V3}/services?type=network`);
    expect(byType.body.services.map((s: any) => s.name)).toEqual(['neutron']);
    const byName = await call(ts, personas.admin, 'GET', `${V3}/services?name=keystone`);
    expect(byName.body.services.map((s: any) => s.type)).toEqual(['identity']);
    expect((await call(ts, personas.admin, 'GET', `${V3}/services?type=nothing`)).body.services).toEqual([]);
    expectKeystoneError(await call(ts, personas.admin, 'GET', `${V3}/services?type=a&type=b`), 400);
  });

  it('show: admin 200, unknown id 404; every other token 403 for any id', async () => {
    const services = (await call(ts, personas.admin, 'GET', `${V3}/services`)).body.services as any[];
    const lease = services.find((s) => s.type === 'lease');
    const res = await expectStatuses(ts, personas, 'GET', () => ({ path: `${V3}/services/${lease.id}` }), {
      admin: 200,
      owner: 403,
      lessee: 403,
      other: 403,
      anonymous: 401,
    });
    expect(res.admin.body.service).toEqual(lease);
    expectKeystoneError(await call(ts, personas.admin, 'GET', `${V3}/services/nope`), 404, /^Could not find service: nope\.$/);
    const missing = await call(ts, personas.owner, 'GET', `${V3}/services/nope`);
    expectKeystoneError(missing, 403, new RegExp(FORBIDDEN('get_service').replace(/\./g, '\\.')));
    expect(missing.body).toEqual(res.owner.body);
  });

  it('is read-only: no route creates, changes or deletes a service', async () => {
    const services = (await call(ts, personas.admin, 'GET', `${V3}/services`)).body.services as any[];
    expectKeystoneError(await call(ts, personas.admin, 'POST', `${V3}/services`, { service: { type: 'x' } }), 404);
    expectKeystoneError(await call(ts, personas.admin, 'DELETE', `${V3}/services/${services[0].id}`), 404);
    expect((await call(ts, personas.admin, 'GET', `${V3}/services`)).body.services).toEqual(services);
  });
});

describe('GET /v3/endpoints', () => {
  it('the admin lists a public, internal and admin endpoint per service; every other token gets 403', async () => {
    const res = await expectStatuses(ts, personas, 'GET', () => ({ path: `${V3}/endpoints` }), {
      admin: 200,
      owner: 403,
      lessee: 403,
      other: 403,
      anonymous: 401,
    });
    const services = (await call(ts, personas.admin, 'GET', `${V3}/services`)).body.services as any[];
    const endpoints = res.admin.body.endpoints as any[];
    expect(endpoints).toHaveLength(services.length * 3);
    const baremetal = services.find((s) => s.type === 'baremetal');
    const bmPublic = endpoints.find((e) => e.service_id === baremetal.id && e.interface === 'public');
    expect(bmPublic).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{32}$/),
      interface: 'public',
      region: 'RegionOne',
      region_id: 'RegionOne',
      service_id: baremetal.id,
      url: `${ts.url}/baremetal`,
      enabled: true,
      links: { self: `${ts.url}${V3}/endpoints/${bmPublic.id}` },
    });
    expect(res.lessee.body.error.message).toBe(FORBIDDEN('list_endpoints'));
  });

  it('filters service_id, interface and region_id; the ids are those of the token catalogue', async () => {
    const services = (await call(ts, personas.admin, 'GET', `${V3}/services`)).body.services as any[];
    const identity = services.find((s) => s.type === 'identity');
    const q = async (qs: string) => (await call(ts, personas.admin, 'GET', `${V3}/endpoints?${qs}`)).body.endpoints as any[];
    const ofIdentity = await q(`service_id=${identity.id}`);
    expect(ofIdentity.map((e) => e.interface).sort()).toEqual(['admin', 'internal', 'public']);
    expect(new Set(ofIdentity.map((e) => e.url))).toEqual(new Set([`${ts.url}/identity`]));
    expect((await q('interface=internal')).map((e) => e.service_id).sort()).toEqual(services.map((s) => s.id).sort());
    expect(await q('interface=internal&region_id=RegionOne')).toHaveLength(services.length);
    expect(await q('region_id=elsewhere')).toEqual([]);
    expect(await q(`service_id=${identity.id}&interface=public`)).toHaveLength(1);
    const catalog = (await call(ts, personas.owner, 'GET', `${V3}/auth/catalog`)).body.catalog as any[];
    const fromToken = catalog.flatMap((s) => s.endpoints.map((e: any) => `${s.id} ${e.id} ${e.interface} ${e.url}`)).sort();
    expect((await q('')).map((e) => `${e.service_id} ${e.id} ${e.interface} ${e.url}`).sort()).toEqual(fromToken);
  });

  it('show: admin 200, unknown id 404; every other token 403 for any id', async () => {
    const [first] = (await call(ts, personas.admin, 'GET', `${V3}/endpoints?interface=admin`)).body.endpoints as any[];
    const res = await expectStatuses(ts, personas, 'GET', () => ({ path: `${V3}/endpoints/${first.id}` }), {
      admin: 200,
      owner: 403,
      lessee: 403,
      other: 403,
      anonymous: 401,
    });
    expect(res.admin.body.endpoint).toEqual(first);
    expectKeystoneError(await call(ts, personas.admin, 'GET', `${V3}/endpoints/nope`), 404, /^Could not find endpoint: nope\.$/);
    expect((await call(ts, personas.other, 'GET', `${V3}/endpoints/nope`)).body).toEqual(res.other.body);
  });
});

describe('GET /v3/auth/projects and /v3/auth/domains', () => {
  it('each token lists the projects its user has a role on', async () => {
    const res = await expectStatuses(ts, personas, 'GET', () => ({ path: `${V3}/auth/projects` }), {
      admin: 200,
      owner: 200,
      lessee: 200,
      other: 200,
      anonymous: 401,
    });
    const names = (n: Exclude<keyof Personas, 'anonymous'>) => res[n].body.projects.map((p: any) => p.name);
    expect(names('admin')).toEqual(['admin']);
    expect(names('owner')).toEqual(['o1']);
    expect(names('lessee')).toEqual(['l1']);
    expect(names('other')).toEqual(['o2']);
    expect(res.owner.body.projects[0]).toMatchObject({
      id: personas.owner.projectId,
      domain_id: 'default',
      enabled: true,
      links: { self: `${ts.url}${V3}/projects/${personas.owner.projectId}` },
    });
    expect(res.owner.body.links).toEqual({ self: `${ts.url}${V3}/auth/projects`, previous: null, next: null });
  });

  it('domains: only those the user holds a role on itself, not through a project', async () => {
    const res = await expectStatuses(ts, personas, 'GET', () => ({ path: `${V3}/auth/domains` }), {
      admin: 200,
      owner: 200,
      lessee: 200,
      other: 200,
      anonymous: 401,
    });
    expect(res.owner.body).toEqual({ domains: [], links: { self: `${ts.url}${V3}/auth/domains`, previous: null, next: null } });
    // A user of its own (granting and revoking roles revokes the user's tokens).
    const created = await call(ts, personas.admin, 'POST', `${V3}/users`, { user: { name: 'domain-member', password: 'pw-dm' } });
    expect(created.status, created.text).toBe(201);
    const userId = created.body.user.id as string;
    const role = (await call(ts, personas.admin, 'GET', `${V3}/roles?name=lessee`)).body.roles[0].id as string;
    const put = await call(ts, personas.admin, 'PUT', `${V3}/projects/${personas.lessee.projectId}/users/${userId}/roles/${role}`);
    expect(put.status).toBe(204);
    const domainsOf = async () => {
      const { token } = await login(ts, 'domain-member', 'pw-dm', { project: { id: personas.lessee.projectId } });
      const res = await call(ts, { ...personas.lessee, token }, 'GET', `${V3}/auth/domains`);
      expect(res.status, res.text).toBe(200);
      return res.body.domains as any[];
    };
    expect(await domainsOf()).toEqual([]);
    const { grants } = ts.server.services.identity;
    const grant = { user_id: userId, role_id: role, target: { type: 'domain' as const, id: 'default' } };
    await grants.grant(personas.admin.context!, grant);
    const domains = await domainsOf();
    expect(domains).toEqual([expect.objectContaining({ id: 'default', name: 'Default', enabled: true })]);
    expect(domains[0].links).toEqual({ self: `${ts.url}${V3}/domains/default` });
    expect((await call(ts, personas.other, 'GET', `${V3}/auth/domains`)).body.domains).toEqual([]);
    await grants.revoke(personas.admin.context!, grant);
    expect(await domainsOf()).toEqual([]);
    // A role a group of the user holds on the domain counts too.
    const { groups } = ts.server.services.identity;
    const group = await groups.createGroup(personas.admin.context!, { name: 'domain-readers' });
    await groups.addUser(personas.admin.context!, group.id, userId);
    const groupGrant = { group_id: group.id, role_id: role, target: { type: 'domain' as const, id: 'default' } };
    await grants.grantGroup(personas.admin.context!, groupGrant);
    expect((await domainsOf()).map((d) => d.id)).toEqual(['default']);
    await grants.revokeGroup(personas.admin.context!, groupGrant);
    expect(await domainsOf()).toEqual([]);
  });
});

describe('project look-ups as the openstack CLI makes them', () => {
  it('a non-admin naming another project by id, by name or by list gets 403 each time; the CLI then uses the id', async () => {
    const target = personas.lessee.projectId!;
    const asOwner = async (path: string) => call(ts, personas.owner, 'GET', path);
    const byId = await asOwner(`${V3}/projects/${target}`);
    expectKeystoneError(byId, 403, /identity:get_project/);
    expectKeystoneError(await asOwner(`${V3}/projects?name=${target}`), 403, /identity:list_projects/);
    expectKeystoneError(await asOwner(`${V3}/projects`), 403, /identity:list_projects/);
    // The same answers for an id nobody has: nothing is confirmed.
    expect((await asOwner(`${V3}/projects/0123456789abcdef0123456789abcdef`)).body).toEqual(byId.body);
    // Its own project, by id, still reads.
    expect((await asOwner(`${V3}/projects/${personas.owner.projectId}`)).body.project.name).toBe('o1');
  });
});
