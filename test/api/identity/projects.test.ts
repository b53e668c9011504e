/**
 * Identity API: projects (create, list with filters, show, update, delete, a user's projects)
 * for every persona, with bad input.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createPersonas, startTestServer, type Personas, type TestServer } from '../../helpers/harness.ts';
import { expectKeystoneError, expectStatuses } from './support.ts';

let ts: TestServer;
let personas: Personas;

beforeAll(async () => {
  ts = await startTestServer();
  personas = await createPersonas(ts);
});
afterAll(async () => ts?.close());

const P = '/identity/v3/projects';

async function adminCreate(body: unknown): Promise<any> {
  const res = await call(ts, personas.admin, 'POST', P, body);
  expect(res.status, res.text).toBe(201);
  return res.body.project;
}

describe('POST /v3/projects', () => {
  it('only the admin creates projects', async () => {
    const res = await expectStatuses(ts, personas, 'POST', (name) => ({ path: P, body: { project: { name: `new-${name}` } } }), {
      admin: 201,
      owner: 403,
      lessee: 403,
      other: 403,
      anonymous: 401,
    });
    expect(res.admin.body.project).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{32}$/),
      name: 'new-admin',
      domain_id: 'default',
      description: '',
      enabled: true,
      parent_id: 'default',
      is_domain: false,
      tags: [],
      options: {},
      links: { self: `${ts.url}/identity/v3/projects/${res.admin.body.project.id}` },
    });
    const names = (await call(ts, personas.admin, 'GET', P)).body.projects.map((p: any) => p.name);
    expect(names).toContain('new-admin');
    expect(names).not.toContain('new-owner');
  });

  it('keeps description, enabled, tags, parent and extra attributes', async () => {
    const parent = await adminCreate({ project: { name: 'parent-a' } });
    const child = await adminCreate({
      project: {
        name: 'child-a',
        description: 'kid',
        enabled: false,
        parent_id: parent.id,
        domain_id: 'default',
        tags: ['a', 'b', 'a'],
        email: 'x@example.org',
        is_domain: false,
        options: {},
      },
    });
    expect(child).toMatchObject({
      name: 'child-a',
      description: 'kid',
      enabled: false,
      parent_id: parent.id,
      domain_id: 'default',
      tags: ['a', 'b'],
      email: 'x@example.org',
    });
    const shown = await call(ts, personas.admin, 'GET', `${P}/${child.id}`);
    expect(shown.body.project).toEqual(child);
    const viaDomainParent = await adminCreate({ project: { name: 'top-via-domain', parent_id: 'default', description: null } });
    expect(viaDomainParent.parent_id).toBe('default');
  });

  it('duplicate names in a domain are 409', async () => {
    await adminCreate({ project: { name: 'dup' } });
    const res = await call(ts, personas.admin, 'POST', P, { project: { name: 'dup' } });
    expectKeystoneError(res, 409, /dup/);
    expect(res.body.error.title).toBe('Conflict');
  });

  it('bad input is 400 and writes nothing', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{}, /'project' is a required property/],
      [{ project: {} }, /Invalid input for field 'project': 'name' is a required property/],
      [{ project: { name: 5 } }, /Invalid input for field 'project\/name': 5 is not of type 'string'/],
      [{ project: { name: '' } }, /too short/],
      [{ project: { name: '   ' } }, /does not match/],
      [{ project: { name: 'x'.repeat(65) } }, /too long/],
      [{ project: { name: 'bad-enabled', enabled: 'yes' } }, /project\/enabled/],
      [{ project: { name: 'bad-tags', tags: 'a' } }, /project\/tags/],
      [{ project: { name: 'bad-tags2', tags: ['a/b'] } }, /project\/tags/],
      [{ project: { name: 'bad-parent', parent_id: 'no-such-parent' } }, /parent/],
      [{ project: { name: 'bad-domain', domain_id: 'nodomain' } }, /nodomain/],
      [{ project: { name: 'bad-isdomain', is_domain: true } }, /is_domain/],
      [{ project: { name: 'bad-immutable', options: { immutable: true } } }, /immutable/],
      [{ project: { name: 'bad-option', options: { other: 1 } } }, /options/],
      [{ project: { name: 'bad-top' }, tenant: {} }, /Additional properties are not allowed \('tenant' was unexpected\)/],
      [[], /not of type 'object'/],
      ['"just a string"', /not of type 'object'/],
    ];
    for (const [body, message] of cases) {
      const res = await call(ts, personas.admin, 'POST', P, body);
      expectKeystoneError(res, 400, message);
    }
    const names = (await call(ts, personas.admin, 'GET', P)).body.projects.map((p: any) => p.name);
    expect(names.filter((n: string) => n.startsWith('bad-'))).toEqual([]);
  });
});

describe('GET /v3/projects', () => {
  it("only the admin lists projects; the others get Keystone's 403 (their own come from /v3/auth/projects)", async () => {
    const res = await expectStatuses(ts, personas, 'GET', () => ({ path: P }), {
      admin: 200,
      owner: 403,
      lessee: 403,
      other: 403,
      anonymous: 401,
    });
    expect(res.admin.body.projects.map((p: any) => p.name)).toEqual(expect.arrayContaining(['admin', 'o1', 'l1', 'o2']));
    expect(res.admin.body.links).toEqual({ self: `${ts.url}${P}`, previous: null, next: null });
    expect(res.owner.body.error.message).toBe('You are not authorized to perform the requested action: identity:list_projects.');
  });

  it('filters by name, domain_id, parent_id and enabled', async () => {
    const parent = await adminCreate({ project: { name: 'filter-parent' } });
    await adminCreate({ project: { name: 'filter-child', parent_id: parent.id, enabled: false } });
    const q = async (qs: string) => (await call(ts, personas.admin, 'GET', `${P}?${qs}`)).body.projects.map((p: any) => p.name);
    expect(await q('name=filter-parent')).toEqual(['filter-parent']);
    expect(await q(`parent_id=${parent.id}`)).toEqual(['filter-child']);
    expect(await q('enabled=false')).toContain('filter-child');
    expect(await q('enabled=true')).not.toContain('filter-child');
    expect(await q('domain_id=default')).toContain('o1');
    expect(await q('domain_id=other')).toEqual([]);
    const top = await q('parent_id=default');
    expect(top).toContain('filter-parent');
    expect(top).not.toContain('filter-child');
    expect(await q('is_domain=true')).toEqual([]);
    expect(await q('name=o1&unknown_filter=1')).toEqual(['o1']);
    expectKeystoneError(await call(ts, personas.admin, 'GET', `${P}?enabled=maybe`), 400);
    expectKeystoneError(await call(ts, personas.admin, 'GET', `${P}?name=a&name=b`), 400);
    // A non-admin filtering by a name learns nothing: 403 whether the name exists or not.
    expectKeystoneError(await call(ts, personas.owner, 'GET', `${P}?name=l1`), 403);
    expectKeystoneError(await call(ts, personas.owner, 'GET', `${P}?name=no-such-project`), 403);
  });
});

describe('GET/PATCH/DELETE /v3/projects/{id}', () => {
  it("show: the admin and the project's members read it; others get 403 for any id, existing or not (as Keystone)", async () => {
    const res = await expectStatuses(ts, personas, 'GET', () => ({ path: `${P}/${personas.owner.projectId}` }), {
      admin: 200,
      owner: 200,
      lessee: 403,
      other: 403,
      anonymous: 401,
    });
    expect(res.owner.body.project.name).toBe('o1');
    expectKeystoneError(await call(ts, personas.admin, 'GET', `${P}/does-not-exist`), 404, /Could not find project: does-not-exist/);
    const missing = await call(ts, personas.lessee, 'GET', `${P}/does-not-exist`);
    expectKeystoneError(missing, 403, /^You are not authorized to perform the requested action: identity:get_project\.$/);
    expect(missing.body).toEqual(res.lessee.body);
  });

  it('update: admin only; every other token 403', async () => {
    const res = await expectStatuses(
      ts,
      personas,
      'PATCH',
      (name) => ({ path: `${P}/${personas.owner.projectId}`, body: { project: { description: `by ${name}` } } }),
      {
        admin: 200,
        owner: 403,
        lessee: 403,
        other: 403,
        anonymous: 401,
      },
    );
    expect(res.admin.body.project.description).toBe('by admin');
    const shown = await call(ts, personas.owner, 'GET', `${P}/${personas.owner.projectId}`);
    expect(shown.body.project.description).toBe('by admin');
  });

  it('update changes name, enabled, tags and extra; refuses domain_id, parent_id, bad types', async () => {
    const p = await adminCreate({ project: { name: 'upd', email: 'a@x' } });
    const res = await call(ts, personas.admin, 'PATCH', `${P}/${p.id}`, {
      project: { name: 'upd2', enabled: false, tags: ['t'], phone: '1' },
    });
    expect(res.status).toBe(200);
    expect(res.body.project).toMatchObject({ name: 'upd2', enabled: false, tags: ['t'], email: 'a@x', phone: '1' });
    const cases: Array<[unknown, number]> = [
      [{ project: {} }, 400],
      [{ project: { domain_id: 'default' } }, 400],
      [{ project: { is_domain: false } }, 400],
      [{ project: { parent_id: personas.owner.projectId } }, 403],
      [{ project: { enabled: 1 } }, 400],
      [{ project: { name: null } }, 400],
      [{ nope: {} }, 400],
      ['{"project": ', 400],
    ];
    for (const [body, status] of cases) expectKeystoneError(await call(ts, personas.admin, 'PATCH', `${P}/${p.id}`, body), status);
    const after = await call(ts, personas.admin, 'GET', `${P}/${p.id}`);
    expect(after.body.project).toEqual(res.body.project);
    expectKeystoneError(await call(ts, personas.admin, 'PATCH', `${P}/nope`, { project: { name: 'z' } }), 404);
  });

  it('delete: admin only; every other token 403; children block deletion', async () => {
    const victim = await adminCreate({ project: { name: 'victim' } });
    await expectStatuses(
      ts,
      personas,
      'DELETE',
      (name) => ({ path: name === 'admin' ? `${P}/${victim.id}` : `${P}/${personas.owner.projectId}` }),
      {
        admin: 204,
        owner: 403,
        lessee: 403,
        other: 403,
        anonymous: 401,
      },
    );
    expectKeystoneError(await call(ts, personas.admin, 'GET', `${P}/${victim.id}`), 404);
    expectKeystoneError(await call(ts, personas.admin, 'DELETE', `${P}/${victim.id}`), 404);
    const parent = await adminCreate({ project: { name: 'has-kids' } });
    await adminCreate({ project: { name: 'kid', parent_id: parent.id } });
    expectKeystoneError(await call(ts, personas.admin, 'DELETE', `${P}/${parent.id}`), 403);
  });
});

describe('GET /v3/users/{id}/projects', () => {
  it('a user lists its own projects; the admin any user; others 404', async () => {
    const res = await expectStatuses(ts, personas, 'GET', () => ({ path: `/identity/v3/users/${personas.owner.userId}/projects` }), {
      admin: 200,
      owner: 200,
      lessee: 404,
      other: 404,
      anonymous: 401,
    });
    expect(res.owner.body.projects.map((p: any) => p.name)).toEqual(['o1']);
    expect(res.admin.body.projects.map((p: any) => p.name)).toEqual(['o1']);
    expectKeystoneError(await call(ts, personas.admin, 'GET', '/identity/v3/users/nobody/projects'), 404);
  });

  it('disabled projects are left out, here and in GET /v3/auth/projects', async () => {
    const on = await adminCreate({ project: { name: 'up-on' } });
    const off = await adminCreate({ project: { name: 'up-off' } });
    const user = await call(ts, personas.admin, 'POST', '/identity/v3/users', { user: { name: 'two-projects', password: 'pw-two' } });
    expect(user.status, user.text).toBe(201);
    const uid = user.body.user.id;
    const member = (await call(ts, personas.admin, 'GET', '/identity/v3/roles?name=member')).body.roles[0].id;
    for (const p of [on, off])
      expect((await call(ts, personas.admin, 'PUT', `${P}/${p.id}/users/${uid}/roles/${member}`)).status).toBe(204);
    const auth = {
      identity: { methods: ['password'], password: { user: { id: uid, password: 'pw-two' } } },
      scope: { project: { id: on.id } },
    };
    const issued = await call(ts, null, 'POST', '/identity/v3/auth/tokens', { auth });
    expect(issued.status, issued.text).toBe(201);
    const me = {
      name: 'two-projects',
      token: issued.headers.get('x-subject-token')!,
      projectId: on.id,
      projectName: 'up-on',
      userId: uid,
      context: null,
    };
    const names = async (who: typeof me | Personas['admin'], path: string) =>
      (await call(ts, who, 'GET', path)).body.projects.map((p: any) => p.name).sort();
    expect(await names(me, '/identity/v3/auth/projects')).toEqual(['up-off', 'up-on']);
    expect((await call(ts, personas.admin, 'PATCH', `${P}/${off.id}`, { project: { enabled: false } })).status).toBe(200);
    expect(await names(me, '/identity/v3/auth/projects')).toEqual(['up-on']);
    expect(await names(me, `/identity/v3/users/${uid}/projects`)).toEqual(['up-on']);
    expect(await names(personas.admin, `/identity/v3/users/${uid}/projects`)).toEqual(['up-on']);
    expect((await call(ts, personas.admin, 'PATCH', `${P}/${off.id}`, { project: { enabled: true } })).status).toBe(200);
    expect(await names(personas.admin, `/identity/v3/users/${uid}/projects`)).toEqual(['up-off', 'up-on']);
  });
});

describe('GET /v3/domains', () => {
  it('every persona sees the Default domain; unknown domains are 404', async () => {
    const res = await expectStatuses(ts, personas, 'GET', () => ({ path: '/identity/v3/domains' }), {
      admin: 200,
      owner: 200,
      lessee: 200,
      other: 200,
      anonymous: 401,
    });
    expect(res.owner.body.domains).toEqual([
      {
        id: 'default',
        name: 'Default',
        description: 'The default domain',
        enabled: true,
        tags: [],
        options: {},
        links: { self: `${ts.url}/identity/v3/domains/default` },
      },
    ]);
    const one = await expectStatuses(ts, personas, 'GET', () => ({ path: '/identity/v3/domains/default' }), {
      admin: 200,
      owner: 200,
      lessee: 200,
      other: 200,
      anonymous: 401,
    });
    expect(one.lessee.body.domain.name).toBe('Default');
    expect((await call(ts, personas.admin, 'GET', '/identity/v3/domains?name=Default')).body.domains).toHaveLength(1);
    expect((await call(ts, personas.admin, 'GET', '/identity/v3/domains?name=Other')).body.domains).toHaveLength(0);
    expectKeystoneError(await call(ts, personas.admin, 'GET', '/identity/v3/domains/nope'), 404);
  });
});
