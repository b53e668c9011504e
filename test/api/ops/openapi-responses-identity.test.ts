/**
 * The documented identity answers (src/api/identity/response-schemas.ts and
 * auth-response-schemas.ts, in `/openapi.json` through each route's `config.doc.response`)
 * compared with real answers, as openapi-responses.test.ts does for the other services: version
 * discovery, tokens (unscoped, project-scoped, system-scoped, without catalogue, from an
 * application credential), the caller's catalogue and scopes, services and endpoints, projects,
 * users, roles, domains, groups, grants, role assignments (direct, through a group, with names)
 * and application credentials; each read as the personas that may read it (admin, a project
 * member, a system reader, the admin's system-scoped token) and each create and update checked.
 *
 * Projects, users and groups keep extra attributes at the top level, so their schemas are open;
 * answers of objects created without extras are also checked against the closed form (every
 * other field known), so a field the schema does not know fails here too. Answers the document
 * says are empty are checked to be so.
 */
import type { TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createPersonas, type Persona, type Personas, startTestServer, type TestServer } from '../../helpers/harness.ts';
import * as R from '../../../src/api/identity/response-schemas.ts';
import * as A from '../../../src/api/identity/auth-response-schemas.ts';
import { asDocumented, expectValid } from './openapi-support.ts';
import { login, tokenPersona } from '../identity/support.ts';

const V3 = '/identity/v3';
let ts: TestServer;
let p: Personas;
/** The system reader (role `reader` on the system, system-scoped token) and the admin's system-scoped token. */
let sysReader: Persona;
let sysAdmin: Persona;
/** What the world holds. */
const w = { role: '', reader: '', domain: '', group: '', member: '', memberToken: '', appCred: '', appSecret: '', user: '' };

/**
 * The schema with every open object that names fields closed (`additionalProperties: false`),
 * for answers of objects created without extra attributes. Kind symbols are kept (TypeBox needs them).
 */
function closed<T extends TSchema>(schema: T): T {
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (v === null || typeof v !== 'object') return v;
    const out: Record<string | symbol, unknown> = {};
    for (const key of Reflect.ownKeys(v)) out[key] = walk((v as Record<string | symbol, unknown>)[key]);
    const props = out.properties as Record<string, unknown> | undefined;
    if (out.additionalProperties === true && props && Object.keys(props).length > 0) out.additionalProperties = false;
    return out;
  };
  return walk(schema) as T;
}

/** An answer that must succeed, as parsed JSON. */
async function ok(who: Persona, method: string, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<any> {
  const r = await call(ts, who, method, url, body, headers);
  expect(r.status, `${who.name} ${method} ${url}: ${r.text}`).toBeLessThan(300);
  return r.body;
}

/** Check an answer against a schema, and against its closed form when `exact`. */
function check(schema: TSchema, value: unknown, where: string, exact = true): void {
  expectValid(schema, value, where);
  if (exact) expectValid(closed(schema), value, `${where} (closed)`);
}

beforeAll(async () => {
  ts = await startTestServer();
  p = await createPersonas(ts);
  const roles = (await ok(p.admin, 'GET', `${V3}/roles`)).roles as Array<{ id: string; name: string }>;
  w.reader = roles.find((r) => r.name === 'reader')!.id;
  w.role = (await ok(p.admin, 'POST', `${V3}/roles`, { role: { name: 'doc-role', description: 'a role' } })).role.id;
  // A system reader: role `reader` on the system, logged in system-scoped.
  const reader = (await ok(p.admin, 'POST', `${V3}/users`, { user: { name: 'doc-sysreader', password: 'pw-doc-sysreader' } })).user;
  await ok(p.admin, 'PUT', `${V3}/system/users/${reader.id}/roles/${w.reader}`);
  sysReader = tokenPersona((await login(ts, 'doc-sysreader', 'pw-doc-sysreader', { system: { all: true } })).token, 'system reader');
  sysAdmin = tokenPersona((await login(ts, 'admin', 'admin-test-password', { system: { all: true } })).token, 'system admin');
  w.domain = (await ok(p.admin, 'POST', `${V3}/domains`, { domain: { name: 'doc-domain', description: 'd' } })).domain.id;
  // A group with a member, granted a role on o1 and on the domain (effective assignments go through it).
  w.group = (await ok(p.admin, 'POST', `${V3}/groups`, { group: { name: 'doc-group' } })).group.id;
  const member = (await ok(p.admin, 'POST', `${V3}/users`, { user: { name: 'doc-member', password: 'pw-doc-member' } })).user;
  w.member = member.id;
  await ok(p.admin, 'PUT', `${V3}/groups/${w.group}/users/${w.member}`);
  await ok(p.admin, 'PUT', `${V3}/projects/${p.owner.projectId}/groups/${w.group}/roles/${w.role}`);
  await ok(p.admin, 'PUT', `${V3}/domains/${w.domain}/groups/${w.group}/roles/${w.role}`);
  await ok(p.admin, 'PUT', `${V3}/domains/default/groups/${w.group}/roles/${w.reader}`);
  w.memberToken = (await login(ts, 'doc-member', 'pw-doc-member', { project: { id: p.owner.projectId } })).token;
  // An application credential of the owner.
  const ac = await ok(p.owner, 'POST', `${V3}/users/${p.owner.userId}/application_credentials`, {
    application_credential: { name: 'doc-ac', description: 'for the docs' },
  });
  check(R.AppCredentialCreateResponse, ac, 'POST application_credentials');
  w.appCred = ac.application_credential.id;
  w.appSecret = ac.application_credential.secret;
});
afterAll(async () => ts?.close());

describe('documented identity answers match real ones', () => {
  it('version discovery: /identity (300) and /identity/v3, anonymous', async () => {
    const root = await call(ts, p.anonymous, 'GET', '/identity');
    expect(root.status).toBe(300);
    check(A.IdentityVersionsResponse, root.body, 'GET /identity');
    check(A.IdentityVersionResponse, await ok(p.anonymous, 'GET', V3), 'GET /identity/v3');
  });

  it('tokens: issued unscoped, project-, system-scoped, without catalogue, from an application credential; validated', async () => {
    const issued = [
      await login(ts, 'owner1', 'pw-owner1'),
      await login(ts, 'owner1', 'pw-owner1', { project: { id: p.owner.projectId } }),
      await login(ts, 'doc-sysreader', 'pw-doc-sysreader', { system: { all: true } }),
    ];
    for (const t of issued) check(A.TokenResponse, t.body, `POST auth/tokens ${JSON.stringify(Object.keys(t.body.token))}`);
    expect(issued[1]!.body.token.catalog).toBeDefined();
    expect(issued[2]!.body.token.system).toEqual({ all: true });
    const byCred = await call(ts, p.anonymous, 'POST', `${V3}/auth/tokens?nocatalog`, {
      auth: { identity: { methods: ['application_credential'], application_credential: { id: w.appCred, secret: w.appSecret } } },
    });
    expect(byCred.status, byCred.text).toBe(201);
    check(A.TokenResponse, byCred.body, 'POST auth/tokens (application credential)');
    expect(byCred.body.token.application_credential).toBeDefined();
    expect(byCred.body.token.catalog).toBeUndefined();
    // Validate: admin any token, a user its own; with and without the catalogue.
    const subject = { 'x-subject-token': issued[1]!.token };
    check(A.TokenResponse, await ok(p.admin, 'GET', `${V3}/auth/tokens`, undefined, subject), 'GET auth/tokens (admin)');
    check(A.TokenResponse, await ok(p.owner, 'GET', `${V3}/auth/tokens?nocatalog`, undefined, subject), 'GET auth/tokens (self)');
    check(A.TokenResponse, await ok(sysAdmin, 'GET', `${V3}/auth/tokens`, undefined, { 'x-subject-token': issued[0]!.token }), 'unscoped');
  });

  it("the caller's catalogue, projects, domains and system scope, as every persona that has a token", async () => {
    const member = tokenPersona(w.memberToken, 'group member');
    for (const who of [p.admin, p.owner, p.lessee, sysReader, sysAdmin, member]) {
      check(A.AuthCatalogResponse, await ok(who, 'GET', `${V3}/auth/catalog`), `${who.name} auth/catalog`);
      check(R.ProjectCollection, await ok(who, 'GET', `${V3}/auth/projects`), `${who.name} auth/projects`);
      check(R.DomainCollection, await ok(who, 'GET', `${V3}/auth/domains`), `${who.name} auth/domains`);
      check(A.AuthSystemResponse, await ok(who, 'GET', `${V3}/auth/system`), `${who.name} auth/system`);
    }
    expect((await ok(member, 'GET', `${V3}/auth/domains`)).domains.length).toBeGreaterThan(0);
    expect((await ok(sysReader, 'GET', `${V3}/auth/system`)).system).toEqual([{ all: true }]);
  });

  it('services and endpoints, as the admin (project- and system-scoped)', async () => {
    for (const who of [p.admin, sysAdmin]) {
      const services = await ok(who, 'GET', `${V3}/services`);
      check(A.ServiceCollection, services, 'GET services');
      check(A.ServiceResponse, await ok(who, 'GET', `${V3}/services/${services.services[0].id}`), 'GET services/{id}');
      const endpoints = await ok(who, 'GET', `${V3}/endpoints?interface=public`);
      check(A.EndpointCollection, endpoints, 'GET endpoints');
      check(A.EndpointResponse, await ok(who, 'GET', `${V3}/endpoints/${endpoints.endpoints[0].id}`), 'GET endpoints/{id}');
    }
  });

  it('projects: created (with extras), updated, shown and listed by the admin; a member its own', async () => {
    const made = await ok(p.admin, 'POST', `${V3}/projects`, { project: { name: 'doc-p', tags: ['a'], email: 'p@example.org' } });
    check(R.ProjectResponse, made, 'POST projects', false);
    expect(Value.Check(closed(R.ProjectResponse), made)).toBe(false); // the extra attribute is there, at the top level
    check(
      R.ProjectResponse,
      await ok(p.admin, 'PATCH', `${V3}/projects/${made.project.id}`, { project: { enabled: false } }),
      'PATCH',
      false,
    );
    check(R.ProjectResponse, await ok(p.admin, 'POST', `${V3}/projects`, { project: { name: 'doc-p2', description: 'x' } }), 'POST plain');
    check(R.ProjectCollection, await ok(p.admin, 'GET', `${V3}/projects?name=o1`), 'GET projects (admin)');
    for (const who of [p.admin, p.owner]) {
      check(R.ProjectResponse, await ok(who, 'GET', `${V3}/projects/${p.owner.projectId}`), `${who.name} GET projects/{id}`);
      check(R.ProjectCollection, await ok(who, 'GET', `${V3}/users/${p.owner.userId}/projects`), `${who.name} users/{id}/projects`);
    }
  });

  it('users: created (with description and extras), updated, shown, listed; a member itself', async () => {
    const made = await ok(p.admin, 'POST', `${V3}/users`, {
      user: { name: 'doc-u', password: 'pw-doc-u', description: 'd', default_project_id: p.owner.projectId, email: 'u@example.org' },
    });
    check(R.UserResponse, made, 'POST users', false);
    expect(made.user).not.toHaveProperty('password');
    w.user = made.user.id;
    check(R.UserResponse, await ok(p.admin, 'PATCH', `${V3}/users/${w.user}`, { user: { enabled: false } }), 'PATCH users', false);
    check(R.UserResponse, await ok(p.admin, 'POST', `${V3}/users`, { user: { name: 'doc-u2' } }), 'POST users (plain)');
    check(R.UserCollection, await ok(p.admin, 'GET', `${V3}/users?name=owner1`), 'GET users (admin)');
    check(R.UserCollection, await ok(p.admin, 'GET', `${V3}/users`), 'GET users (all, with extras)', false);
    for (const who of [p.admin, p.owner]) check(R.UserResponse, await ok(who, 'GET', `${V3}/users/${p.owner.userId}`), `${who.name} user`);
  });

  it('roles and the roles of each grant target, as the admin', async () => {
    check(R.RoleResponse, await ok(p.admin, 'POST', `${V3}/roles`, { role: { name: 'doc-role-2' } }), 'POST roles');
    check(R.RoleCollection, await ok(p.admin, 'GET', `${V3}/roles`), 'GET roles');
    check(R.RoleResponse, await ok(p.admin, 'GET', `${V3}/roles/${w.role}`), 'GET roles/{id}');
    for (const url of [
      `/projects/${p.owner.projectId}/users/${p.owner.userId}/roles`,
      `/system/users/${p.admin.userId}/roles`,
      `/projects/${p.owner.projectId}/groups/${w.group}/roles`,
      `/domains/${w.domain}/groups/${w.group}/roles`,
    ]) {
      const got = await ok(p.admin, 'GET', `${V3}${url}`);
      expect(got.roles.length, url).toBeGreaterThan(0);
      check(R.RoleCollection, got, `GET ${url}`);
    }
  });

  it('domains: created, updated, shown and listed by the admin; a member its own', async () => {
    check(R.DomainResponse, await ok(p.admin, 'POST', `${V3}/domains`, { domain: { name: 'doc-domain-2' } }), 'POST domains');
    check(R.DomainResponse, await ok(p.admin, 'PATCH', `${V3}/domains/${w.domain}`, { domain: { description: 'e' } }), 'PATCH domains');
    check(R.DomainCollection, await ok(p.admin, 'GET', `${V3}/domains`), 'GET domains');
    for (const who of [p.admin, p.owner]) check(R.DomainResponse, await ok(who, 'GET', `${V3}/domains/default`), `${who.name} domain`);
  });

  it("groups: created (with extras), updated, shown, listed, members; a user's groups as admin and as itself", async () => {
    const made = await ok(p.admin, 'POST', `${V3}/groups`, { group: { name: 'doc-g2', description: 'd', email: 'g@example.org' } });
    check(R.GroupResponse, made, 'POST groups', false);
    check(R.GroupResponse, await ok(p.admin, 'PATCH', `${V3}/groups/${made.group.id}`, { group: { description: 'e' } }), 'PATCH', false);
    check(R.GroupResponse, await ok(p.admin, 'GET', `${V3}/groups/${w.group}`), 'GET groups/{id}');
    check(R.GroupCollection, await ok(p.admin, 'GET', `${V3}/groups?name=doc-group`), 'GET groups');
    check(R.UserCollection, await ok(p.admin, 'GET', `${V3}/groups/${w.group}/users`), 'GET groups/{id}/users');
    const member = tokenPersona(w.memberToken, 'group member');
    for (const who of [p.admin, member]) {
      const mine = await ok(who, 'GET', `${V3}/users/${w.member}/groups`);
      expect(mine.groups).toHaveLength(1);
      check(R.UserGroupCollection, mine, `${who.name} users/{id}/groups`);
    }
  });

  it('role assignments: direct, effective through a group, of groups, on the system, with and without names', async () => {
    const queries = [
      '',
      '?include_names',
      `?user.id=${w.member}&effective`,
      `?user.id=${w.member}&effective&include_names`,
      `?group.id=${w.group}&include_names`,
      `?scope.domain.id=${w.domain}&include_names`,
      '?scope.system=all&include_names',
    ];
    for (const q of queries) {
      const got = await ok(p.admin, 'GET', `${V3}/role_assignments${q}`);
      expect(got.role_assignments.length, q).toBeGreaterThan(0);
      check(R.RoleAssignmentCollection, got, `role_assignments${q}`);
    }
    const effective = await ok(p.admin, 'GET', `${V3}/role_assignments?user.id=${w.member}&effective`);
    expect(effective.role_assignments.some((a: any) => a.links.membership !== undefined)).toBe(true);
    check(R.RoleAssignmentCollection, await ok(tokenPersona(w.memberToken), 'GET', `${V3}/role_assignments?effective`), 'own');
  });

  it('application credentials: listed and shown by their user and the admin, without the secret', async () => {
    for (const who of [p.owner, p.admin]) {
      const list = await ok(who, 'GET', `${V3}/users/${p.owner.userId}/application_credentials`);
      expect(list.application_credentials).toHaveLength(1);
      check(R.AppCredentialCollection, list, `${who.name} application_credentials`);
      const one = await ok(who, 'GET', `${V3}/users/${p.owner.userId}/application_credentials/${w.appCred}`);
      check(R.AppCredentialResponse, one, `${who.name} application_credentials/{id}`);
      expect(JSON.stringify(one)).not.toContain(w.appSecret);
    }
  });

  it('answers documented as empty are: grants, memberships, checks, deletes, password change, token revocation', async () => {
    const u = (await ok(p.admin, 'POST', `${V3}/users`, { user: { name: 'doc-empty', password: 'pw-doc-empty' } })).user;
    const g = (await ok(p.admin, 'POST', `${V3}/groups`, { group: { name: 'doc-empty-g' } })).group;
    const urls: Array<[string, string]> = [
      ['PUT', `/projects/${p.owner.projectId}/users/${u.id}/roles/${w.role}`],
      ['GET', `/projects/${p.owner.projectId}/users/${u.id}/roles/${w.role}`],
      ['PUT', `/system/users/${u.id}/roles/${w.reader}`],
      ['GET', `/system/users/${u.id}/roles/${w.reader}`],
      ['PUT', `/groups/${g.id}/users/${u.id}`],
      ['GET', `/groups/${g.id}/users/${u.id}`],
      ['PUT', `/projects/${p.owner.projectId}/groups/${g.id}/roles/${w.role}`],
      ['GET', `/projects/${p.owner.projectId}/groups/${g.id}/roles/${w.role}`],
      ['PUT', `/domains/${w.domain}/groups/${g.id}/roles/${w.role}`],
      ['GET', `/domains/${w.domain}/groups/${g.id}/roles/${w.role}`],
      ['DELETE', `/domains/${w.domain}/groups/${g.id}/roles/${w.role}`],
      ['DELETE', `/projects/${p.owner.projectId}/groups/${g.id}/roles/${w.role}`],
      ['DELETE', `/groups/${g.id}/users/${u.id}`],
      ['DELETE', `/system/users/${u.id}/roles/${w.reader}`],
      ['DELETE', `/projects/${p.owner.projectId}/users/${u.id}/roles/${w.role}`],
    ];
    for (const [method, url] of urls) {
      const r = await call(ts, p.admin, method, `${V3}${url}`);
      expect([r.status, r.text], `${method} ${url}`).toEqual([204, '']);
    }
    const pw = await call(ts, p.anonymous, 'POST', `${V3}/users/${u.id}/password`, {
      user: { original_password: 'pw-doc-empty', password: 'pw-doc-empty-2' },
    });
    expect([pw.status, pw.text]).toEqual([204, '']);
    const t = await login(ts, 'doc-empty', 'pw-doc-empty-2');
    const revoke = await call(ts, p.admin, 'DELETE', `${V3}/auth/tokens`, undefined, { 'x-subject-token': t.token });
    expect([revoke.status, revoke.text]).toEqual([204, '']);
    const ac = await ok(p.owner, 'POST', `${V3}/users/${p.owner.userId}/application_credentials`, {
      application_credential: { name: 'x' },
    });
    const p2 = (await ok(p.admin, 'POST', `${V3}/projects`, { project: { name: 'doc-empty-p' } })).project;
    const d2 = (await ok(p.admin, 'POST', `${V3}/domains`, { domain: { name: 'doc-empty-d', enabled: false } })).domain;
    const r2 = (await ok(p.admin, 'POST', `${V3}/roles`, { role: { name: 'doc-empty-r' } })).role;
    for (const url of [
      `/users/${p.owner.userId}/application_credentials/${ac.application_credential.id}`,
      `/groups/${g.id}`,
      `/users/${u.id}`,
      `/projects/${p2.id}`,
      `/domains/${d2.id}`,
      `/roles/${r2.id}`,
    ]) {
      const who = url.includes('application_credentials') ? p.owner : p.admin;
      const r = await call(ts, who, 'DELETE', `${V3}${url}`);
      expect([r.status, r.text], `DELETE ${url}`).toEqual([204, '']);
    }
  });
});

describe('the identity response schemas', () => {
  it('are in the document, as the success answer of their routes', async () => {
    const doc = (await call(ts, p.anonymous, 'GET', '/openapi.json')).body;
    const cases: Array<[string, string, TSchema, string]> = [
      ['get', '/identity', A.IdentityVersionsResponse, '300'],
      ['get', '/identity/v3', A.IdentityVersionResponse, '2XX'],
      ['post', '/identity/v3/auth/tokens', A.TokenResponse, '2XX'],
      ['get', '/identity/v3/auth/tokens', A.TokenResponse, '2XX'],
      ['get', '/identity/v3/auth/catalog', A.AuthCatalogResponse, '2XX'],
      ['get', '/identity/v3/endpoints/{id}', A.EndpointResponse, '2XX'],
      ['get', '/identity/v3/projects', R.ProjectCollection, '2XX'],
      ['patch', '/identity/v3/users/{id}', R.UserResponse, '2XX'],
      ['get', '/identity/v3/role_assignments', R.RoleAssignmentCollection, '2XX'],
      ['get', '/identity/v3/users/{id}/groups', R.UserGroupCollection, '2XX'],
      ['post', '/identity/v3/users/{id}/application_credentials', R.AppCredentialCreateResponse, '2XX'],
      ['get', '/identity/v3/users/{id}/application_credentials/{credential}', R.AppCredentialResponse, '2XX'],
    ];
    for (const [method, path, schema, status] of cases) {
      const documented = doc.paths[path]?.[method]?.responses?.[status];
      expect(documented?.content?.['application/json']?.schema, `${method} ${path}`).toEqual(asDocumented(schema));
    }
    const put = doc.paths['/identity/v3/projects/{project}/users/{user}/roles/{role}'].put;
    expect(put['x-esi-no-body']).toBe(true);
    expect(put.responses['2XX']).toEqual({ description: 'Success, without a body' });
  });

  it('refuse an answer with a field they do not know, a secret where none is shown, or without a field they require', async () => {
    const role = await ok(p.admin, 'GET', `${V3}/roles/${w.role}`);
    expect(Value.Check(R.RoleResponse, { role: { ...role.role, colour: 'blue' } })).toBe(false);
    const one = await ok(p.owner, 'GET', `${V3}/users/${p.owner.userId}/application_credentials/${w.appCred}`);
    expect(Value.Check(R.AppCredentialResponse, { application_credential: { ...one.application_credential, secret: 's' } })).toBe(false);
    const token = (await login(ts, 'owner1', 'pw-owner1', { project: { id: p.owner.projectId } })).body;
    const { audit_ids: _, ...noAudit } = token.token;
    expect(Value.Check(A.TokenResponse, { token: noAudit })).toBe(false);
    const user = await ok(p.owner, 'GET', `${V3}/users/${p.owner.userId}`);
    expect(Value.Check(closed(R.UserResponse), { user: { ...user.user, password: 'x' } })).toBe(false);
  });
});
