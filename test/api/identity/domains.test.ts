/**
 * Identity API: domains — create, list, show, update, delete — for every persona (admin, owner,
 * lessee, another project, anonymous); projects, users and groups in a new domain and tokens of
 * its users (by `user_domain_name`); disabling (tokens revoked, logins refused); deletion only
 * when disabled, with what the domain holds; and the default domain's immutability.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createPersonas, startTestServer, type Personas, type TestServer } from '../../helpers/harness.ts';
import { expectKeystoneError, expectStatuses, tokenPersona } from './support.ts';

let ts: TestServer;
let personas: Personas;

beforeAll(async () => {
  ts = await startTestServer();
  personas = await createPersonas(ts);
});
afterAll(async () => ts?.close());

const D = '/identity/v3/domains';
const ADMIN_SEES = { admin: 200, owner: 404, lessee: 404, other: 404, anonymous: 401 } as const;

async function newDomain(name: string, extra: Record<string, unknown> = {}): Promise<any> {
  const r = await call(ts, personas.admin, 'POST', D, { domain: { name, ...extra } });
  expect(r.status, r.text).toBe(201);
  return r.body.domain;
}

/** A password login of `user` in domain `domain` (by name), scoped to `project` of that domain. */
function loginBody(user: string, domain: string, project?: string): unknown {
  return {
    auth: {
      identity: { methods: ['password'], password: { user: { name: user, domain: { name: domain }, password: `pw-${user}` } } },
      ...(project !== undefined ? { scope: { project: { name: project, domain: { name: domain } } } } : {}),
    },
  };
}

describe('domains', () => {
  it('create: admin only (others 403); Keystone body; duplicates 409; bad input 400 and nothing written', async () => {
    const res = await expectStatuses(
      ts,
      personas,
      'POST',
      (name) => ({ path: D, body: { domain: { name: `dom-${name}`, description: 'd' } } }),
      { admin: 201, owner: 403, lessee: 403, other: 403, anonymous: 401 },
    );
    const d = res.admin.body.domain;
    expect(d).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{32}$/),
      name: 'dom-admin',
      description: 'd',
      enabled: true,
      tags: [],
      options: {},
      links: { self: `${ts.url}${D}/${d.id}` },
    });
    expectKeystoneError(await call(ts, personas.admin, 'POST', D, { domain: { name: 'dom-admin' } }), 409, /same name: dom-admin/);
    const explicit = await newDomain('dom-explicit', { explicit_domain_id: 'abcdef0123456789abcdef0123456789', enabled: false });
    expect(explicit).toMatchObject({ id: 'abcdef0123456789abcdef0123456789', enabled: false });
    expectKeystoneError(
      await call(ts, personas.admin, 'POST', D, { domain: { name: 'dom-x2', explicit_domain_id: 'abcdef0123456789abcdef0123456789' } }),
      409,
    );
    for (const body of [
      {},
      { domain: {} },
      { domain: { name: '' } },
      { domain: { name: 'x'.repeat(65) } },
      { domain: { name: 'dom-bad', enabled: 'yes' } },
      { domain: { name: 'dom-bad', tags: ['t'] } },
      { domain: { name: 'dom-bad', options: { immutable: true } } },
      { domain: { name: 'dom-bad', colour: 'red' } },
      { domain: { name: 'dom-bad', explicit_domain_id: 'not-hex' } },
      { domain: { name: 'dom-bad' }, extra: 1 },
    ]) {
      expectKeystoneError(await call(ts, personas.admin, 'POST', D, body), 400);
    }
    expect((await call(ts, personas.admin, 'GET', `${D}?name=dom-bad`)).body.domains).toEqual([]);
  });

  it('list and show: admins see every domain; others only their token’s (default), a new one is 404', async () => {
    const d = await newDomain('dom-seen');
    const list = await expectStatuses(ts, personas, 'GET', () => ({ path: D }), { ...ADMIN_SEES, owner: 200, lessee: 200, other: 200 });
    expect(list.admin.body.domains.map((x: any) => x.name)).toEqual(expect.arrayContaining(['Default', 'dom-seen']));
    expect(list.owner.body.domains.map((x: any) => x.id)).toEqual(['default']);
    expect((await call(ts, personas.admin, 'GET', `${D}?name=dom-seen`)).body.domains.map((x: any) => x.id)).toEqual([d.id]);
    const disabled = (await call(ts, personas.admin, 'GET', `${D}?enabled=false`)).body.domains;
    expect(disabled.every((x: any) => x.enabled === false)).toBe(true);
    const shown = await expectStatuses(ts, personas, 'GET', () => ({ path: `${D}/${d.id}` }), ADMIN_SEES);
    expect(shown.admin.body.domain.name).toBe('dom-seen');
    expectKeystoneError(await call(ts, personas.admin, 'GET', `${D}/nope`), 404, /Could not find domain: nope/);
  });

  it('update: admin only (others 404); name, description, enabled; taken name 409; bad input 400', async () => {
    const d = await newDomain('dom-upd');
    const res = await expectStatuses(
      ts,
      personas,
      'PATCH',
      () => ({ path: `${D}/${d.id}`, body: { domain: { description: 'new' } } }),
      ADMIN_SEES,
    );
    expect(res.admin.body.domain).toMatchObject({ name: 'dom-upd', description: 'new', enabled: true });
    const renamed = await call(ts, personas.admin, 'PATCH', `${D}/${d.id}`, { domain: { name: 'dom-upd2', enabled: false } });
    expect(renamed.body.domain).toMatchObject({ name: 'dom-upd2', enabled: false });
    await newDomain('dom-upd-taken');
    expectKeystoneError(await call(ts, personas.admin, 'PATCH', `${D}/${d.id}`, { domain: { name: 'dom-upd-taken' } }), 409);
    for (const body of [{ domain: {} }, { domain: { name: '' } }, { domain: { id: 'x' } }, { domain: { enabled: 1 } }]) {
      expectKeystoneError(await call(ts, personas.admin, 'PATCH', `${D}/${d.id}`, body), 400);
    }
    expect((await call(ts, personas.admin, 'GET', `${D}/${d.id}`)).body.domain).toMatchObject({ name: 'dom-upd2', description: 'new' });
  });

  it('the default domain is immutable: no update, no delete (403), for the admin too', async () => {
    await expectStatuses(ts, personas, 'PATCH', () => ({ path: `${D}/default`, body: { domain: { enabled: false } } }), {
      admin: 403,
      owner: 403,
      lessee: 403,
      other: 403,
      anonymous: 401,
    });
    expectKeystoneError(await call(ts, personas.admin, 'PATCH', `${D}/default`, { domain: { name: 'Other' } }), 403, /immutable/);
    expectKeystoneError(await call(ts, personas.admin, 'DELETE', `${D}/default`), 403, /immutable/);
    expect((await call(ts, personas.admin, 'GET', `${D}/default`)).body.domain).toMatchObject({ name: 'Default', enabled: true });
  });

  it('projects, users and groups in a new domain; its users log in by domain name; disabling revokes and refuses', async () => {
    const d = await newDomain('dom-life');
    const project = (await call(ts, personas.admin, 'POST', '/identity/v3/projects', { project: { name: 'p-life', domain_id: d.id } })).body
      .project;
    expect(project.domain_id).toBe(d.id);
    const user = (
      await call(ts, personas.admin, 'POST', '/identity/v3/users', { user: { name: 'u-life', domain_id: d.id, password: 'pw-u-life' } })
    ).body.user;
    const member = (await call(ts, personas.admin, 'GET', '/identity/v3/roles?name=member')).body.roles[0].id;
    expect((await call(ts, personas.admin, 'PUT', `/identity/v3/projects/${project.id}/users/${user.id}/roles/${member}`)).status).toBe(
      204,
    );
    const group = (await call(ts, personas.admin, 'POST', '/identity/v3/groups', { group: { name: 'g-life', domain_id: d.id } })).body
      .group;
    expect(group.domain_id).toBe(d.id);

    const auth = await call(ts, null, 'POST', '/identity/v3/auth/tokens', loginBody('u-life', 'dom-life', 'p-life'));
    expect(auth.status, auth.text).toBe(201);
    expect(auth.body.token.user.domain).toEqual({ id: d.id, name: 'dom-life' });
    expect(auth.body.token.project).toEqual({ id: project.id, name: 'p-life', domain: { id: d.id, name: 'dom-life' } });
    const token = auth.headers.get('x-subject-token')!;
    const shown = await call(ts, tokenPersona(token), 'GET', '/identity/v3/auth/tokens', undefined, { 'x-subject-token': token });
    expect(shown.body.token.user.domain.name).toBe('dom-life');
    // The same user name in the default domain is another user.
    expect((await call(ts, null, 'POST', '/identity/v3/auth/tokens', loginBody('u-life', 'Default'))).status).toBe(401);

    // Deleting an enabled domain is refused; disabling revokes its tokens and refuses logins.
    expectKeystoneError(await call(ts, personas.admin, 'DELETE', `${D}/${d.id}`), 403, /Cannot delete a domain that is enabled/);
    expect((await call(ts, personas.admin, 'PATCH', `${D}/${d.id}`, { domain: { enabled: false } })).status).toBe(200);
    expect((await call(ts, tokenPersona(token), 'GET', '/identity/v3/auth/projects')).status).toBe(401);
    expect((await call(ts, null, 'POST', '/identity/v3/auth/tokens', loginBody('u-life', 'dom-life', 'p-life'))).status).toBe(401);
    // A default-domain admin cannot scope to a project of the disabled domain either.
    expect(
      (await call(ts, personas.admin, 'PUT', `/identity/v3/projects/${project.id}/users/${personas.admin.userId}/roles/${member}`)).status,
    ).toBe(204);
    const adminScoped = await call(ts, null, 'POST', '/identity/v3/auth/tokens', {
      auth: { identity: { methods: ['token'], token: { id: personas.admin.token } }, scope: { project: { id: project.id } } },
    });
    expect(adminScoped.status).toBe(401);

    // Re-enabled, its users log in again.
    expect((await call(ts, personas.admin, 'PATCH', `${D}/${d.id}`, { domain: { enabled: true } })).status).toBe(200);
    expect((await call(ts, null, 'POST', '/identity/v3/auth/tokens', loginBody('u-life', 'dom-life', 'p-life'))).status).toBe(201);
  });

  it('delete: admin only (others 404); only disabled; takes its projects, users, groups and grants', async () => {
    const d = await newDomain('dom-del');
    const parent = (await call(ts, personas.admin, 'POST', '/identity/v3/projects', { project: { name: 'p-del', domain_id: d.id } })).body
      .project;
    const child = (
      await call(ts, personas.admin, 'POST', '/identity/v3/projects', {
        project: { name: 'p-del-child', domain_id: d.id, parent_id: parent.id },
      })
    ).body.project;
    const user = (
      await call(ts, personas.admin, 'POST', '/identity/v3/users', { user: { name: 'u-del', domain_id: d.id, password: 'pw-u-del' } })
    ).body.user;
    const group = (await call(ts, personas.admin, 'POST', '/identity/v3/groups', { group: { name: 'g-del', domain_id: d.id } })).body.group;
    const member = (await call(ts, personas.admin, 'GET', '/identity/v3/roles?name=member')).body.roles[0].id;
    expect((await call(ts, personas.admin, 'PUT', `${D}/${d.id}/groups/${group.id}/roles/${member}`)).status).toBe(204);
    expect((await call(ts, personas.admin, 'PATCH', `${D}/${d.id}`, { domain: { enabled: false } })).status).toBe(200);
    await expectStatuses(ts, personas, 'DELETE', () => ({ path: `${D}/${d.id}` }), { ...ADMIN_SEES, admin: 204 });
    expectKeystoneError(await call(ts, personas.admin, 'GET', `${D}/${d.id}`), 404);
    for (const path of [
      `/identity/v3/projects/${parent.id}`,
      `/identity/v3/projects/${child.id}`,
      `/identity/v3/users/${user.id}`,
      `/identity/v3/groups/${group.id}`,
    ]) {
      expectKeystoneError(await call(ts, personas.admin, 'GET', path), 404);
    }
    expect((await call(ts, personas.admin, 'GET', `/identity/v3/role_assignments?scope.domain.id=${d.id}`)).body.role_assignments).toEqual(
      [],
    );
  });
});
