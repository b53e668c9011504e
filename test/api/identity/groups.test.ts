/**
 * Identity API: groups (create, list, show, update, delete), members, a user's groups, role
 * grants to groups on projects and domains, and what they do — a member's project token, the
 * effective role assignments, and token revocation when a member, a grant or the group goes —
 * for every persona (admin, owner, lessee, another project, anonymous).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createPersonas, startTestServer, type Personas, type TestServer } from '../../helpers/harness.ts';
import { expectKeystoneError, expectStatuses, login, tokenPersona } from './support.ts';

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

const G = '/identity/v3/groups';
const ADMIN_ONLY = { admin: 200, owner: 403, lessee: 403, other: 403, anonymous: 401 } as const;
const ADMIN_SEES = { admin: 200, owner: 404, lessee: 404, other: 404, anonymous: 401 } as const;

async function newGroup(name: string, extra: Record<string, unknown> = {}): Promise<any> {
  const r = await call(ts, personas.admin, 'POST', G, { group: { name, ...extra } });
  expect(r.status, r.text).toBe(201);
  return r.body.group;
}

async function newUser(name: string): Promise<any> {
  const r = await call(ts, personas.admin, 'POST', '/identity/v3/users', { user: { name, password: `pw-${name}` } });
  expect(r.status, r.text).toBe(201);
  return r.body.user;
}

/** Is the token still accepted? */
async function alive(token: string): Promise<boolean> {
  return (await call(ts, tokenPersona(token), 'GET', '/identity/v3/auth/projects')).status === 200;
}

describe('groups', () => {
  it('create: admin only (others 403); Keystone body; duplicates 409; bad input 400 and nothing written', async () => {
    const res = await expectStatuses(ts, personas, 'POST', (name) => ({ path: G, body: { group: { name: `grp-${name}` } } }), {
      ...ADMIN_ONLY,
      admin: 201,
    });
    expect(res.admin.body.group).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{32}$/),
      name: 'grp-admin',
      domain_id: 'default',
      description: '',
      links: { self: `${ts.url}${G}/${res.admin.body.group.id}` },
    });
    const extra = await newGroup('  grp-extra  ', { description: 'd', email: 'g@example.org' });
    expect(extra).toMatchObject({ name: 'grp-extra', description: 'd', email: 'g@example.org' });
    expectKeystoneError(await call(ts, personas.admin, 'POST', G, { group: { name: 'grp-admin' } }), 409, /Duplicate entry.*grp-admin/);
    for (const body of [
      {},
      { group: {} },
      { group: { name: '' } },
      { group: { name: '   ' } },
      { group: { name: 3 } },
      { group: { name: 'x'.repeat(256) } },
      { group: { name: 'g-bad', domain_id: 'no-such-domain' } },
      { group: { name: 'g-bad', description: 5 } },
      { group: { name: 'g-bad' }, x: 1 },
    ]) {
      expectKeystoneError(await call(ts, personas.admin, 'POST', G, body), 400);
    }
    expect((await call(ts, personas.admin, 'GET', `${G}?name=g-bad`)).body.groups).toEqual([]);
  });

  it('list: admin only (others 403); filters name and domain_id', async () => {
    await newGroup('grp-list');
    const res = await expectStatuses(ts, personas, 'GET', () => ({ path: G }), ADMIN_ONLY);
    expect(res.admin.body.groups.map((g: any) => g.name)).toContain('grp-list');
    expect((await call(ts, personas.admin, 'GET', `${G}?name=grp-list`)).body.groups.map((g: any) => g.name)).toEqual(['grp-list']);
    expect((await call(ts, personas.admin, 'GET', `${G}?domain_id=nope`)).body.groups).toEqual([]);
  });

  it('show, update, delete: admin only; others do not see the group (404)', async () => {
    const g = await newGroup('grp-crud');
    const shown = await expectStatuses(ts, personas, 'GET', () => ({ path: `${G}/${g.id}` }), ADMIN_SEES);
    expect(shown.admin.body.group.name).toBe('grp-crud');
    expectKeystoneError(await call(ts, personas.admin, 'GET', `${G}/nope`), 404, /Could not find group: nope/);
    const patched = await expectStatuses(
      ts,
      personas,
      'PATCH',
      () => ({ path: `${G}/${g.id}`, body: { group: { description: 'new', colour: 'blue' } } }),
      ADMIN_SEES,
    );
    expect(patched.admin.body.group).toMatchObject({ name: 'grp-crud', description: 'new', colour: 'blue' });
    const renamed = await call(ts, personas.admin, 'PATCH', `${G}/${g.id}`, { group: { name: 'grp-crud2', domain_id: 'default' } });
    expect(renamed.body.group.name).toBe('grp-crud2');
    await newGroup('grp-taken');
    expectKeystoneError(await call(ts, personas.admin, 'PATCH', `${G}/${g.id}`, { group: { name: 'grp-taken' } }), 409);
    for (const body of [{ group: {} }, { group: { name: '' } }, { group: { domain_id: 'other' } }, { groups: { name: 'x' } }]) {
      expectKeystoneError(await call(ts, personas.admin, 'PATCH', `${G}/${g.id}`, body), 400);
    }
    expect((await call(ts, personas.admin, 'GET', `${G}/${g.id}`)).body.group).toMatchObject({ name: 'grp-crud2', description: 'new' });
    await expectStatuses(ts, personas, 'DELETE', () => ({ path: `${G}/${g.id}` }), { ...ADMIN_SEES, admin: 204 });
    expectKeystoneError(await call(ts, personas.admin, 'GET', `${G}/${g.id}`), 404);
  });
});

describe('group members', () => {
  it('add, check, list, remove: admin only (others 404); a user lists its own groups', async () => {
    // owner1 joins and stays (removing it would revoke the persona's token for the other tests).
    const g = await newGroup('grp-members');
    const owner = personas.owner.userId!;
    const member = `${G}/${g.id}/users/${owner}`;
    await expectStatuses(ts, personas, 'PUT', () => ({ path: member }), { ...ADMIN_SEES, admin: 204 });
    expect((await call(ts, personas.admin, 'PUT', member)).status).toBe(204); // idempotent
    await expectStatuses(ts, personas, 'HEAD', () => ({ path: member }), { ...ADMIN_SEES, admin: 204 });
    await expectStatuses(ts, personas, 'GET', () => ({ path: member }), { ...ADMIN_SEES, admin: 204 });
    const users = await expectStatuses(ts, personas, 'GET', () => ({ path: `${G}/${g.id}/users` }), ADMIN_SEES);
    expect(users.admin.body.users.map((u: any) => u.name)).toEqual(['owner1']);
    expect((await call(ts, personas.admin, 'GET', `${G}/${g.id}/users?name=nobody`)).body.users).toEqual([]);
    const mine = await expectStatuses(ts, personas, 'GET', () => ({ path: `/identity/v3/users/${owner}/groups` }), {
      ...ADMIN_SEES,
      owner: 200,
    });
    expect(mine.owner.body.groups).toEqual([expect.objectContaining({ id: g.id, name: 'grp-members', membership_expires_at: null })]);
    expect((await call(ts, personas.lessee, 'GET', `/identity/v3/users/${personas.lessee.userId}/groups`)).body.groups).toEqual([]);
    expectKeystoneError(await call(ts, personas.admin, 'PUT', `${G}/${g.id}/users/nope`), 404, /Could not find user: nope/);
    expectKeystoneError(await call(ts, personas.admin, 'PUT', `${G}/nope/users/${owner}`), 404, /Could not find group: nope/);
    const lessee = `${G}/${g.id}/users/${personas.lessee.userId}`;
    expectKeystoneError(await call(ts, personas.admin, 'GET', lessee), 404, /not found in group/);
    expectKeystoneError(await call(ts, personas.admin, 'DELETE', lessee), 404, /not found in group/);
    // Removal revokes the removed user's tokens (Keystone), so it is shown on a user of its own.
    const leaver = await newUser('grp-leaver');
    const leaving = `${G}/${g.id}/users/${leaver.id}`;
    expect((await call(ts, personas.admin, 'PUT', leaving)).status).toBe(204);
    await expectStatuses(ts, personas, 'DELETE', () => ({ path: leaving }), { ...ADMIN_SEES, admin: 204 });
    expectKeystoneError(await call(ts, personas.admin, 'GET', leaving), 404);
    expect((await call(ts, personas.admin, 'GET', `${G}/${g.id}/users`)).body.users.map((u: any) => u.name)).toEqual(['owner1']);
  });
});

describe('role grants to groups', () => {
  it('PUT, HEAD, GET, list, DELETE on projects and domains: admin only (others 403); unknown parts 404', async () => {
    const g = await newGroup('grp-grants');
    for (const scope of [`/identity/v3/projects/${personas.other.projectId}`, '/identity/v3/domains/default']) {
      const path = `${scope}/groups/${g.id}/roles/${roleIds.member}`;
      const refused = { admin: 204, owner: 403, lessee: 403, other: 403, anonymous: 401 };
      await expectStatuses(ts, personas, 'PUT', () => ({ path }), refused);
      await expectStatuses(ts, personas, 'HEAD', () => ({ path }), refused);
      await expectStatuses(ts, personas, 'GET', () => ({ path }), refused);
      const list = await expectStatuses(ts, personas, 'GET', () => ({ path: `${scope}/groups/${g.id}/roles` }), {
        ...refused,
        admin: 200,
      });
      expect(list.admin.body.roles.map((r: any) => r.name)).toEqual(['member']);
      await expectStatuses(ts, personas, 'DELETE', () => ({ path }), refused);
      expect((await call(ts, personas.admin, 'HEAD', path)).status).toBe(404);
      expectKeystoneError(await call(ts, personas.admin, 'GET', path), 404, /Could not find role assignment/);
      expectKeystoneError(await call(ts, personas.admin, 'DELETE', path), 404, /Could not find role assignment/);
    }
    const p = personas.other.projectId;
    expectKeystoneError(
      await call(ts, personas.admin, 'PUT', `/identity/v3/projects/${p}/groups/nope/roles/${roleIds.member}`),
      404,
      /group/,
    );
    expectKeystoneError(await call(ts, personas.admin, 'PUT', `/identity/v3/projects/${p}/groups/${g.id}/roles/nope`), 404, /role/);
    expectKeystoneError(await call(ts, personas.admin, 'PUT', `/identity/v3/projects/nope/groups/${g.id}/roles/${roleIds.member}`), 404);
    expectKeystoneError(await call(ts, personas.admin, 'PUT', `/identity/v3/domains/nope/groups/${g.id}/roles/${roleIds.member}`), 404);
    const all = (await call(ts, personas.admin, 'GET', `/identity/v3/role_assignments?group.id=${g.id}`)).body.role_assignments;
    expect(all).toEqual([]);
  });

  it("a member's token: a role only through a group scopes a token; effective assignments show it; removal revokes", async () => {
    const g = await newGroup('grp-o2');
    const u = await newUser('grp-user');
    const o2 = personas.other.projectId!;
    // No role yet: no token for o2.
    expect((await call(ts, null, 'POST', '/identity/v3/auth/tokens', loginBody('grp-user', o2))).status).toBe(401);
    expect((await call(ts, personas.admin, 'PUT', `/identity/v3/projects/${o2}/groups/${g.id}/roles/${roleIds.member}`)).status).toBe(204);
    expect((await call(ts, personas.admin, 'PUT', `${G}/${g.id}/users/${u.id}`)).status).toBe(204);
    const { token, body } = await login(ts, 'grp-user', 'pw-grp-user', { project: { id: o2 } });
    expect(body.token.project.id).toBe(o2);
    expect(body.token.roles.map((r: any) => r.name).sort()).toEqual(['member', 'reader']);
    const me = tokenPersona(token);
    expect((await call(ts, me, 'GET', '/identity/v3/auth/projects')).body.projects.map((p: any) => p.id)).toEqual([o2]);
    expect((await call(ts, me, 'GET', `/identity/v3/users/${u.id}/projects`)).body.projects.map((p: any) => p.id)).toEqual([o2]);

    // Role assignments: direct ones of the user are none; effective ones come through the group.
    const ra = '/identity/v3/role_assignments';
    expect((await call(ts, personas.admin, 'GET', `${ra}?user.id=${u.id}`)).body.role_assignments).toEqual([]);
    const eff = (await call(ts, personas.admin, 'GET', `${ra}?user.id=${u.id}&effective&include_names`)).body.role_assignments;
    expect(eff).toHaveLength(2);
    expect(eff).toContainEqual({
      role: { id: roleIds.member, name: 'member' },
      user: { id: u.id, name: 'grp-user', domain: { id: 'default', name: 'Default' } },
      scope: { project: { id: o2, name: 'o2', domain: { id: 'default', name: 'Default' } } },
      links: {
        assignment: `${ts.url}/identity/v3/projects/${o2}/groups/${g.id}/roles/${roleIds.member}`,
        membership: `${ts.url}/identity/v3/groups/${g.id}/users/${u.id}`,
      },
    });
    expect((await call(ts, me, 'GET', `${ra}?effective`)).body.role_assignments).toHaveLength(2); // the user's own view
    const byGroup = (await call(ts, personas.admin, 'GET', `${ra}?group.id=${g.id}&include_names`)).body.role_assignments;
    expect(byGroup).toEqual([
      {
        role: { id: roleIds.member, name: 'member' },
        group: { id: g.id, name: 'grp-o2', domain: { id: 'default', name: 'Default' } },
        scope: { project: { id: o2, name: 'o2', domain: { id: 'default', name: 'Default' } } },
        links: { assignment: `${ts.url}/identity/v3/projects/${o2}/groups/${g.id}/roles/${roleIds.member}` },
      },
    ]);
    expect((await call(ts, personas.owner, 'GET', `${ra}?group.id=${g.id}`)).body.role_assignments).toEqual([]);
    expectKeystoneError(await call(ts, personas.admin, 'GET', `${ra}?group.id=${g.id}&effective`), 400, /effective and group/);
    expectKeystoneError(await call(ts, personas.admin, 'GET', `${ra}?group.id=${g.id}&user.id=${u.id}`), 400);
    expectKeystoneError(await call(ts, personas.admin, 'GET', `${ra}?scope.domain.id=default&scope.project.id=${o2}`), 400);

    // Removing the member revokes its tokens at once and refuses new ones.
    expect((await call(ts, personas.admin, 'DELETE', `${G}/${g.id}/users/${u.id}`)).status).toBe(204);
    expect(await alive(token)).toBe(false);
    expect((await call(ts, null, 'POST', '/identity/v3/auth/tokens', loginBody('grp-user', o2))).status).toBe(401);

    // Back in the group: a grant's removal revokes the member's tokens on that project.
    expect((await call(ts, personas.admin, 'PUT', `${G}/${g.id}/users/${u.id}`)).status).toBe(204);
    const second = (await login(ts, 'grp-user', 'pw-grp-user', { project: { id: o2 } })).token;
    expect((await call(ts, personas.admin, 'DELETE', `/identity/v3/projects/${o2}/groups/${g.id}/roles/${roleIds.member}`)).status).toBe(
      204,
    );
    expect(await alive(second)).toBe(false);
    expect((await call(ts, null, 'POST', '/identity/v3/auth/tokens', loginBody('grp-user', o2))).status).toBe(401);

    // Deleting a group that holds a grant revokes its members' tokens; its grants go with it.
    expect((await call(ts, personas.admin, 'PUT', `/identity/v3/projects/${o2}/groups/${g.id}/roles/${roleIds.member}`)).status).toBe(204);
    const third = (await login(ts, 'grp-user', 'pw-grp-user', { project: { id: o2 } })).token;
    expect((await call(ts, personas.admin, 'DELETE', `${G}/${g.id}`)).status).toBe(204);
    expect(await alive(third)).toBe(false);
    expect((await call(ts, personas.admin, 'GET', `${ra}?group.id=${g.id}`)).body.role_assignments).toEqual([]);
    expect((await call(ts, personas.admin, 'GET', `/identity/v3/users/${u.id}/groups`)).body.groups).toEqual([]);
  });

  it('deleting a user removes its memberships', async () => {
    const g = await newGroup('grp-userdel');
    const u = await newUser('grp-doomed');
    expect((await call(ts, personas.admin, 'PUT', `${G}/${g.id}/users/${u.id}`)).status).toBe(204);
    expect((await call(ts, personas.admin, 'DELETE', `/identity/v3/users/${u.id}`)).status).toBe(204);
    expect((await call(ts, personas.admin, 'GET', `${G}/${g.id}/users`)).body.users).toEqual([]);
  });
});

function loginBody(user: string, projectId: string): unknown {
  return {
    auth: {
      identity: { methods: ['password'], password: { user: { name: user, domain: { id: 'default' }, password: `pw-${user}` } } },
      scope: { project: { id: projectId } },
    },
  };
}
