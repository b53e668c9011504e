/**
 * Identity API: roles, project and system grants, and role assignment lists, for every persona.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createPersonas, startTestServer, type Personas, type TestServer } from '../../helpers/harness.ts';
import { expectKeystoneError, expectStatuses, login, passwordAuth } from './support.ts';

let ts: TestServer;
let personas: Personas;
let roleIds: Record<string, string>;

beforeAll(async () => {
  ts = await startTestServer();
  personas = await createPersonas(ts);
  const roles = (await call(ts, personas.admin, 'GET', '/identity/v3/roles')).body.roles as Array<{ id: string; name: string }>;
  roleIds = Object.fromEntries(roles.map((r) => [r.name, r.id]));
});
afterAll(async () => ts?.close());

const R = '/identity/v3/roles';

describe('roles', () => {
  it('list: admin only (others 403)', async () => {
    const res = await expectStatuses(ts, personas, 'GET', () => ({ path: R }), {
      admin: 200,
      owner: 403,
      lessee: 403,
      other: 403,
      anonymous: 401,
    });
    expect(res.admin.body.roles.map((r: any) => r.name)).toEqual(
      expect.arrayContaining(['admin', 'member', 'reader', 'manager', 'service', 'owner', 'lessee']),
    );
    expect((await call(ts, personas.admin, 'GET', `${R}?name=owner`)).body.roles).toEqual([
      {
        id: roleIds.owner,
        name: 'owner',
        domain_id: null,
        description: '',
        options: {},
        links: { self: `${ts.url}${R}/${roleIds.owner}` },
      },
    ]);
  });

  it('create: admin only; duplicates 409; bad input 400', async () => {
    const res = await expectStatuses(
      ts,
      personas,
      'POST',
      (name) => ({ path: R, body: { role: { name: `role-${name}`, description: 'd' } } }),
      {
        admin: 201,
        owner: 403,
        lessee: 403,
        other: 403,
        anonymous: 401,
      },
    );
    expect(res.admin.body.role).toMatchObject({ name: 'role-admin', description: 'd', domain_id: null });
    expectKeystoneError(await call(ts, personas.admin, 'POST', R, { role: { name: 'role-admin' } }), 409);
    for (const body of [
      {},
      { role: {} },
      { role: { name: 3 } },
      { role: { name: 'r', domain_id: 'default' } },
      { role: { name: 'r', color: 'red' } },
      { role: { name: 'r' }, x: 1 },
      { role: { name: 'r', options: { immutable: true } } },
    ]) {
      expectKeystoneError(await call(ts, personas.admin, 'POST', R, body), 400);
    }
    expect((await call(ts, personas.admin, 'GET', `${R}?name=r`)).body.roles).toEqual([]);
  });

  it('show: admin only; unknown 404', async () => {
    const res = await expectStatuses(ts, personas, 'GET', () => ({ path: `${R}/${roleIds.member}` }), {
      admin: 200,
      owner: 403,
      lessee: 403,
      other: 403,
      anonymous: 401,
    });
    expect(res.admin.body.role.name).toBe('member');
    expectKeystoneError(await call(ts, personas.admin, 'GET', `${R}/nope`), 404, /Could not find role: nope/);
  });

  it('delete: admin only; grants and holders’ tokens go with the role', async () => {
    const role = (await call(ts, personas.admin, 'POST', R, { role: { name: 'doomed' } })).body.role;
    const holder = (await call(ts, personas.admin, 'POST', '/identity/v3/users', { user: { name: 'holder', password: 'h' } })).body.user;
    const grant = `/identity/v3/projects/${personas.owner.projectId}/users/${holder.id}/roles/${role.id}`;
    expect((await call(ts, personas.admin, 'PUT', grant)).status).toBe(204);
    const { token } = await login(ts, 'holder', 'h', { project: { id: personas.owner.projectId } });
    await expectStatuses(ts, personas, 'DELETE', () => ({ path: `${R}/${role.id}` }), {
      admin: 204,
      owner: 403,
      lessee: 403,
      other: 403,
      anonymous: 401,
    });
    expectKeystoneError(await call(ts, personas.admin, 'GET', `${R}/${role.id}`), 404);
    expectKeystoneError(await call(ts, personas.admin, 'GET', '/identity/v3/auth/tokens', undefined, { 'x-subject-token': token }), 404);
    const assignments = (await call(ts, personas.admin, 'GET', `/identity/v3/role_assignments?role.id=${role.id}`)).body.role_assignments;
    expect(assignments).toEqual([]);
  });
});

describe('project grants', () => {
  it('PUT, HEAD, GET, DELETE: admin only (others 403)', async () => {
    const path = `/identity/v3/projects/${personas.other.projectId}/users/${personas.lessee.userId}/roles/${roleIds.member}`;
    await expectStatuses(ts, personas, 'PUT', () => ({ path }), { admin: 204, owner: 403, lessee: 403, other: 403, anonymous: 401 });
    await expectStatuses(ts, personas, 'HEAD', () => ({ path }), { admin: 204, owner: 403, lessee: 403, other: 403, anonymous: 401 });
    await expectStatuses(ts, personas, 'GET', () => ({ path }), { admin: 204, owner: 403, lessee: 403, other: 403, anonymous: 401 });
    const list = await expectStatuses(
      ts,
      personas,
      'GET',
      () => ({ path: `/identity/v3/projects/${personas.other.projectId}/users/${personas.lessee.userId}/roles` }),
      {
        admin: 200,
        owner: 403,
        lessee: 403,
        other: 403,
        anonymous: 401,
      },
    );
    expect(list.admin.body.roles.map((r: any) => r.name)).toEqual(['member']);
    // The grant works: lessee1 can now scope to o2.
    const { body } = await login(ts, 'lessee1', 'pw-lessee1', { project: { name: 'o2', domain: { id: 'default' } } });
    expect(body.token.roles.map((r: any) => r.name).sort()).toEqual(['member', 'reader']);
    await expectStatuses(ts, personas, 'DELETE', () => ({ path }), { admin: 204, owner: 403, lessee: 403, other: 403, anonymous: 401 });
    expect((await call(ts, personas.admin, 'HEAD', path)).status).toBe(404);
    expectKeystoneError(await call(ts, personas.admin, 'GET', path), 404);
    expectKeystoneError(await call(ts, personas.admin, 'DELETE', path), 404);
    expectKeystoneError(
      await call(
        ts,
        null,
        'POST',
        '/identity/v3/auth/tokens',
        passwordAuth('lessee1', 'pw-lessee1', { project: { name: 'o2', domain: { id: 'default' } } }),
      ),
      401,
    );
  });

  it('unknown project, user or role is 404 and grants nothing', async () => {
    const { owner } = personas;
    for (const path of [
      `/identity/v3/projects/nope/users/${owner.userId}/roles/${roleIds.member}`,
      `/identity/v3/projects/${owner.projectId}/users/nope/roles/${roleIds.member}`,
      `/identity/v3/projects/${owner.projectId}/users/${owner.userId}/roles/nope`,
    ]) {
      expectKeystoneError(await call(ts, personas.admin, 'PUT', path), 404);
    }
    const list = (await call(ts, personas.admin, 'GET', `/identity/v3/role_assignments?user.id=${owner.userId}`)).body.role_assignments;
    expect(list).toHaveLength(1);
  });

  it('listing the roles of an unknown user or project is 404 (403 first for non-admins)', async () => {
    const { owner } = personas;
    for (const path of [
      `/identity/v3/projects/nope/users/${owner.userId}/roles`,
      `/identity/v3/projects/${owner.projectId}/users/nope/roles`,
      '/identity/v3/system/users/nope/roles',
    ]) {
      await expectStatuses(ts, personas, 'GET', () => ({ path }), { admin: 404, owner: 403, lessee: 403, other: 403, anonymous: 401 });
    }
    const found = await call(ts, personas.admin, 'GET', `/identity/v3/projects/${owner.projectId}/users/${owner.userId}/roles`);
    expect(found.body.roles.map((r: any) => r.name)).toEqual(['owner']);
  });
});

describe('system grants', () => {
  it('PUT, HEAD, GET, list, DELETE: admin only; a system grant allows system-scoped tokens', async () => {
    const path = `/identity/v3/system/users/${personas.owner.userId}/roles/${roleIds.reader}`;
    await expectStatuses(ts, personas, 'PUT', () => ({ path }), { admin: 204, owner: 403, lessee: 403, other: 403, anonymous: 401 });
    await expectStatuses(ts, personas, 'HEAD', () => ({ path }), { admin: 204, owner: 403, lessee: 403, other: 403, anonymous: 401 });
    await expectStatuses(ts, personas, 'GET', () => ({ path }), { admin: 204, owner: 403, lessee: 403, other: 403, anonymous: 401 });
    const list = await expectStatuses(ts, personas, 'GET', () => ({ path: `/identity/v3/system/users/${personas.owner.userId}/roles` }), {
      admin: 200,
      owner: 403,
      lessee: 403,
      other: 403,
      anonymous: 401,
    });
    expect(list.admin.body.roles.map((r: any) => r.name)).toEqual(['reader']);
    const sys = await login(ts, 'owner1', 'pw-owner1', { system: { all: true } });
    expect(sys.body.token.system).toEqual({ all: true });
    expect(sys.body.token.roles.map((r: any) => r.name)).toEqual(['reader']);
    await expectStatuses(ts, personas, 'DELETE', () => ({ path }), { admin: 204, owner: 403, lessee: 403, other: 403, anonymous: 401 });
    expectKeystoneError(
      await call(ts, personas.admin, 'GET', '/identity/v3/auth/tokens', undefined, { 'x-subject-token': sys.token }),
      404,
    );
    expect((await call(ts, personas.admin, 'HEAD', path)).status).toBe(404);
  });
});

describe('GET /v3/role_assignments', () => {
  it('the admin sees every assignment; others only their own', async () => {
    const res = await expectStatuses(ts, personas, 'GET', () => ({ path: '/identity/v3/role_assignments' }), {
      admin: 200,
      owner: 200,
      lessee: 200,
      other: 200,
      anonymous: 401,
    });
    const users = (name: keyof Personas) => new Set(res[name].body.role_assignments.map((a: any) => a.user.id));
    expect(users('admin')).toEqual(new Set([personas.admin.userId, personas.owner.userId, personas.lessee.userId, personas.other.userId]));
    expect(users('owner')).toEqual(new Set([personas.owner.userId]));
    expect(users('lessee')).toEqual(new Set([personas.lessee.userId]));
    const other = await call(ts, personas.owner, 'GET', `/identity/v3/role_assignments?user.id=${personas.lessee.userId}`);
    expect(other.body.role_assignments).toEqual([]);
  });

  it('renders ids and links, and names with include_names', async () => {
    const plain = await call(
      ts,
      personas.admin,
      'GET',
      `/identity/v3/role_assignments?user.id=${personas.owner.userId}&scope.project.id=${personas.owner.projectId}`,
    );
    expect(plain.body.role_assignments).toEqual([
      {
        role: { id: roleIds.owner },
        user: { id: personas.owner.userId },
        scope: { project: { id: personas.owner.projectId } },
        links: {
          assignment: `${ts.url}/identity/v3/projects/${personas.owner.projectId}/users/${personas.owner.userId}/roles/${roleIds.owner}`,
        },
      },
    ]);
    const named = await call(
      ts,
      personas.admin,
      'GET',
      `/identity/v3/role_assignments?user.id=${personas.owner.userId}&include_names=True`,
    );
    expect(named.body.role_assignments[0]).toMatchObject({
      role: { id: roleIds.owner, name: 'owner' },
      user: { id: personas.owner.userId, name: 'owner1', domain: { id: 'default', name: 'Default' } },
      scope: { project: { id: personas.owner.projectId, name: 'o1', domain: { id: 'default', name: 'Default' } } },
    });
    const own = await call(ts, personas.owner, 'GET', '/identity/v3/role_assignments?include_names');
    expect(own.body.role_assignments[0].user.name).toBe('owner1');
    expect(own.body.role_assignments[0].scope.project.name).toBe('o1');
  });

  it('filters by role, system scope, and expands implied roles with effective', async () => {
    const sys = await call(ts, personas.admin, 'GET', '/identity/v3/role_assignments?scope.system=all&include_names=1');
    expect(sys.body.role_assignments).toEqual([
      expect.objectContaining({
        role: { id: roleIds.admin, name: 'admin' },
        scope: { system: { all: true } },
        links: { assignment: `${ts.url}/identity/v3/system/users/${personas.admin.userId}/roles/${roleIds.admin}` },
      }),
    ]);
    const byRole = await call(ts, personas.admin, 'GET', `/identity/v3/role_assignments?role.id=${roleIds.lessee}`);
    expect(byRole.body.role_assignments.map((a: any) => a.user.id)).toEqual([personas.lessee.userId]);
    const eff = await call(
      ts,
      personas.admin,
      'GET',
      `/identity/v3/role_assignments?user.id=${personas.admin.userId}&scope.project.id=${personas.admin.projectId}&effective&include_names`,
    );
    expect(eff.body.role_assignments.map((a: any) => a.role.name).sort()).toEqual(['admin', 'manager', 'member', 'reader']);
    expect((await call(ts, personas.admin, 'GET', '/identity/v3/role_assignments?group.id=g')).body.role_assignments).toEqual([]);
    expect((await call(ts, personas.admin, 'GET', '/identity/v3/role_assignments?scope.domain.id=default')).body.role_assignments).toEqual(
      [],
    );
    expectKeystoneError(
      await call(ts, personas.admin, 'GET', `/identity/v3/role_assignments?scope.system=all&scope.project.id=${personas.owner.projectId}`),
      400,
    );
    expectKeystoneError(await call(ts, personas.admin, 'GET', '/identity/v3/role_assignments?effective=sometimes'), 400);
  });
});
