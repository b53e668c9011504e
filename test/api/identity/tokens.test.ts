/**
 * Identity API: token issue, validation, check, revocation, expiry (ManualClock) and the
 * `/v3/auth/catalog|projects|system` views, for every persona.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOG_SERVICES } from '../../../src/api/identity/catalog.ts';
import {
  ADMIN_PASSWORD,
  call,
  createPersonas,
  ManualClock,
  startTestServer,
  type Personas,
  type TestServer,
} from '../../helpers/harness.ts';
import { expectKeystoneError, expectStatuses, login, passwordAuth, PERSONA_LOGIN, tokenPersona } from './support.ts';

const KEYSTONE_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;
const clock = new ManualClock(Date.UTC(2030, 0, 1));
let ts: TestServer;
let personas: Personas;

beforeAll(async () => {
  ts = await startTestServer({ clock });
  personas = await createPersonas(ts);
});
afterAll(async () => ts?.close());

const TOKENS = '/identity/v3/auth/tokens';

describe('POST /v3/auth/tokens', () => {
  it('issues a project-scoped token with user, project, roles and catalog', async () => {
    const { token, body } = await login(ts, 'owner1', 'pw-owner1', { project: { name: 'o1', domain: { id: 'default' } } });
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const t = body.token;
    expect(t.methods).toEqual(['password']);
    expect(t.user).toEqual({
      id: personas.owner.userId,
      name: 'owner1',
      domain: { id: 'default', name: 'Default' },
      password_expires_at: null,
    });
    expect(t.project).toEqual({ id: personas.owner.projectId, name: 'o1', domain: { id: 'default', name: 'Default' } });
    expect(t.is_domain).toBe(false);
    expect(t.roles).toEqual([expect.objectContaining({ name: 'owner', id: expect.any(String) })]);
    expect(t.expires_at).toMatch(KEYSTONE_TIME);
    expect(t.issued_at).toBe('2030-01-01T00:00:00.000000Z');
    expect(t.expires_at).toBe('2030-01-01T01:00:00.000000Z');
    expect(t.audit_ids).toHaveLength(1);
    const types = t.catalog.map((s: any) => s.type);
    // Every announced service (catalog.ts), the three core ones first.
    expect(types).toEqual(CATALOG_SERVICES.map((s) => s.type));
    expect(types.slice(0, 3)).toEqual(['identity', 'baremetal', 'lease']);
    const baremetal = t.catalog.find((s: any) => s.type === 'baremetal');
    expect(baremetal.name).toBe('ironic');
    expect(baremetal.endpoints.map((e: any) => e.interface).sort()).toEqual(['admin', 'internal', 'public']);
    for (const e of baremetal.endpoints)
      expect(e).toMatchObject({ region: 'RegionOne', region_id: 'RegionOne', url: `${ts.url}/baremetal`, id: expect.any(String) });
    expect(t.catalog.find((s: any) => s.type === 'identity').endpoints[0].url).toBe(`${ts.url}/identity`);
    expect(t.catalog.find((s: any) => s.type === 'lease').endpoints[0].url).toBe(`${ts.url}/lease`);
    expect(JSON.stringify(body)).not.toContain('pw-owner1');
  });

  it('accepts user by id, project by id and domain by name', async () => {
    const res = await call(ts, null, 'POST', TOKENS, {
      auth: {
        identity: { methods: ['password'], password: { user: { id: personas.lessee.userId, password: 'pw-lessee1' } } },
        scope: { project: { id: personas.lessee.projectId } },
      },
    });
    expect(res.status).toBe(201);
    expect(res.body.token.project.name).toBe('l1');
    const byName = await login(ts, 'lessee1', 'pw-lessee1', { project: { name: 'l1', domain: { name: 'Default' } } });
    expect(byName.body.token.project.id).toBe(personas.lessee.projectId);
  });

  it('every persona can log in to its own project, and to no other', async () => {
    for (const [name, l] of Object.entries(PERSONA_LOGIN)) {
      const ok = await login(ts, l.user, l.password, { project: { name: l.project, domain: { id: 'default' } } });
      expect(ok.body.token.project.name, name).toBe(l.project);
    }
    const res = await call(
      ts,
      null,
      'POST',
      TOKENS,
      passwordAuth('owner1', 'pw-owner1', { project: { name: 'l1', domain: { id: 'default' } } }),
    );
    expectKeystoneError(res, 401);
  });

  it('issues system-scoped tokens to users with a system role only', async () => {
    const { body } = await login(ts, 'admin', ADMIN_PASSWORD, { system: { all: true } });
    expect(body.token.system).toEqual({ all: true });
    expect(body.token.project).toBeUndefined();
    expect(body.token.roles.map((r: any) => r.name)).toContain('admin');
    expect(body.token.catalog.length).toBeGreaterThan(0);
    const denied = await call(ts, null, 'POST', TOKENS, passwordAuth('owner1', 'pw-owner1', { system: { all: true } }));
    expectKeystoneError(denied, 401);
  });

  it('issues unscoped tokens without roles or catalog when asked for "unscoped"', async () => {
    const { body } = await login(ts, 'owner1', 'pw-owner1', 'unscoped');
    expect(body.token.project).toBeUndefined();
    expect(body.token.system).toBeUndefined();
    expect(body.token.roles).toBeUndefined();
    expect(body.token.catalog).toBeUndefined();
  });

  it('without a scope, scopes to the default project where the user holds a role, else unscoped', async () => {
    for (const scope of [undefined, {}]) {
      const { body } = await login(ts, 'owner1', 'pw-owner1', scope);
      expect(body.token.project).toEqual({ id: personas.owner.projectId, name: 'o1', domain: { id: 'default', name: 'Default' } });
      expect(body.token.roles.map((r: any) => r.name)).toEqual(['owner']);
      expect(body.token.catalog.length).toBeGreaterThan(0);
    }
    const admin = personas.admin;
    const project = async (name: string) => (await call(ts, admin, 'POST', '/identity/v3/projects', { project: { name } })).body.project;
    const norole = await project('dp-norole');
    const disabled = await project('dp-disabled');
    const member = (await call(ts, admin, 'GET', '/identity/v3/roles?name=member')).body.roles[0].id;
    for (const [user, defaultProject] of [
      ['dp-none', null],
      ['dp-norole', norole.id],
      ['dp-disabled', disabled.id],
    ] as const) {
      const res = await call(ts, admin, 'POST', '/identity/v3/users', {
        user: { name: user, password: 'pw', default_project_id: defaultProject },
      });
      expect(res.status, res.text).toBe(201);
      if (user === 'dp-disabled') {
        expect(
          (await call(ts, admin, 'PUT', `/identity/v3/projects/${disabled.id}/users/${res.body.user.id}/roles/${member}`)).status,
        ).toBe(204);
        expect((await login(ts, user, 'pw')).body.token.project.id).toBe(disabled.id);
        expect((await call(ts, admin, 'PATCH', `/identity/v3/projects/${disabled.id}`, { project: { enabled: false } })).status).toBe(200);
      }
      const { body } = await login(ts, user, 'pw');
      expect(body.token.project, user).toBeUndefined();
      expect(body.token.roles, user).toBeUndefined();
    }
  });

  it('?nocatalog leaves the catalog out', async () => {
    const res = await call(
      ts,
      null,
      'POST',
      `${TOKENS}?nocatalog`,
      passwordAuth('owner1', 'pw-owner1', { project: { name: 'o1', domain: { id: 'default' } } }),
    );
    expect(res.status).toBe(201);
    expect(res.body.token.catalog).toBeUndefined();
    expect(res.body.token.roles).toHaveLength(1);
  });

  it('rescopes with the token method', async () => {
    const unscoped = await login(ts, 'owner1', 'pw-owner1', 'unscoped');
    const res = await call(ts, null, 'POST', TOKENS, {
      auth: { identity: { methods: ['token'], token: { id: unscoped.token } }, scope: { project: { id: personas.owner.projectId } } },
    });
    expect(res.status).toBe(201);
    expect(res.body.token.methods.sort()).toEqual(['password', 'token']);
    expect(res.body.token.project.name).toBe('o1');
    const bad = await call(ts, null, 'POST', TOKENS, { auth: { identity: { methods: ['token'], token: { id: 'nope' } } } });
    expectKeystoneError(bad, 401);
  });

  it('refuses wrong passwords, unknown users and unknown projects with 401', async () => {
    for (const body of [
      passwordAuth('owner1', 'wrong'),
      passwordAuth('nobody', 'pw'),
      passwordAuth('owner1', 'pw-owner1', { project: { name: 'no-such-project', domain: { id: 'default' } } }),
      passwordAuth('owner1', 'pw-owner1', { project: { id: 'deadbeef' } }),
      {
        auth: {
          identity: { methods: ['password'], password: { user: { name: 'owner1', domain: { name: 'NoDomain' }, password: 'pw-owner1' } } },
        },
      },
      { auth: { identity: { methods: ['totp'] } } },
    ]) {
      const res = await call(ts, null, 'POST', TOKENS, body);
      expectKeystoneError(res, 401);
      expect(res.headers.get('x-subject-token')).toBeNull();
    }
  });

  it('refuses malformed requests with 400', async () => {
    for (const body of [
      {},
      { auth: {} },
      { auth: { identity: { methods: [] } } },
      { auth: { identity: { methods: ['password'] } } },
      { auth: { identity: { methods: ['token'] } } },
      { auth: { identity: { methods: 'password' } } },
      { auth: { identity: { methods: ['password'], password: { user: { name: 'owner1', password: 'pw-owner1' } } } } },
      { auth: { identity: { methods: ['password'], password: { user: { name: 'owner1', domain: { id: 'default' }, password: 7 } } } } },
      { auth: { identity: { methods: ['password', 'token'], password: { user: { id: 'x', password: 'y' } }, token: { id: 'z' } } } },
      { ...(passwordAuth('owner1', 'pw-owner1') as object), extra: true },
      passwordAuth('owner1', 'pw-owner1', { domain: { id: 'default' } }),
      passwordAuth('owner1', 'pw-owner1', { system: { all: false } }),
      passwordAuth('owner1', 'pw-owner1', { project: { id: 'x' }, system: { all: true } }),
      passwordAuth('owner1', 'pw-owner1', 42),
    ]) {
      const res = await call(ts, null, 'POST', TOKENS, body);
      expectKeystoneError(res, 400);
      expect(res.body.error.message).not.toContain('pw-owner1');
    }
  });
});

describe('GET/HEAD/DELETE /v3/auth/tokens', () => {
  it("validates a subject token for admin and the token's own user only; others get 404, anonymous 401", async () => {
    const subject = await login(ts, 'lessee1', 'pw-lessee1', { project: { name: 'l1', domain: { id: 'default' } } });
    const res = await expectStatuses(ts, personas, 'GET', () => ({ path: TOKENS, headers: { 'x-subject-token': subject.token } }), {
      admin: 200,
      owner: 404,
      lessee: 200,
      other: 404,
      anonymous: 401,
    });
    expect(res.lessee.body.token).toEqual(subject.body.token);
    // A refused subject is reported exactly as an unknown one: nothing about the token leaks.
    const bogus = await call(ts, personas.owner, 'GET', TOKENS, undefined, { 'x-subject-token': 'bogus' });
    expect(res.owner.body).toEqual(bogus.body);
    expect(res.owner.headers.get('x-subject-token')).toBeNull();
    await expectStatuses(ts, personas, 'HEAD', () => ({ path: TOKENS, headers: { 'x-subject-token': subject.token } }), {
      admin: 200,
      owner: 404,
      lessee: 200,
      other: 404,
      anonymous: 401,
    });
    expect(res.admin.body.token).toEqual(subject.body.token);
    expect(res.admin.headers.get('x-subject-token')).toBe(subject.token);
    const head = await call(ts, personas.admin, 'HEAD', TOKENS, undefined, { 'x-subject-token': subject.token });
    expect(head.status).toBe(200);
    const nocat = await call(ts, personas.admin, 'GET', `${TOKENS}?nocatalog=1`, undefined, { 'x-subject-token': subject.token });
    expect(nocat.body.token.catalog).toBeUndefined();
  });

  it('an unknown subject token is 404; a missing header is 400', async () => {
    expectKeystoneError(await call(ts, personas.admin, 'GET', TOKENS, undefined, { 'x-subject-token': 'bogus' }), 404);
    expect((await call(ts, personas.admin, 'HEAD', TOKENS, undefined, { 'x-subject-token': 'bogus' })).status).toBe(404);
    expectKeystoneError(await call(ts, personas.admin, 'DELETE', TOKENS, undefined, { 'x-subject-token': 'bogus' }), 404);
    expectKeystoneError(await call(ts, personas.admin, 'GET', TOKENS), 400, /X-Subject-Token/);
  });

  it('revocation takes effect at once, for every persona revoking its own token', async () => {
    for (const [name, l] of Object.entries(PERSONA_LOGIN)) {
      const { token } = await login(ts, l.user, l.password, { project: { name: l.project, domain: { id: 'default' } } });
      const me = tokenPersona(token);
      expect((await call(ts, me, 'GET', '/identity/v3/auth/projects')).status, name).toBe(200);
      const del = await call(ts, me, 'DELETE', TOKENS, undefined, { 'x-subject-token': token });
      expect(del.status, name).toBe(204);
      expectKeystoneError(await call(ts, me, 'GET', '/identity/v3/auth/projects'), 401);
      expectKeystoneError(await call(ts, personas.admin, 'GET', TOKENS, undefined, { 'x-subject-token': token }), 404);
    }
    const anon = await call(ts, personas.anonymous, 'DELETE', TOKENS, undefined, { 'x-subject-token': personas.owner.token! });
    expectKeystoneError(anon, 401);
  });

  it("nobody but an admin or the token's own user can revoke it: the token stays valid", async () => {
    const { token } = await login(ts, 'lessee1', 'pw-lessee1', { project: { name: 'l1', domain: { id: 'default' } } });
    for (const p of [personas.owner, personas.other]) {
      expectKeystoneError(await call(ts, p, 'DELETE', TOKENS, undefined, { 'x-subject-token': token }), 404, /Could not find token/);
    }
    // Another token of the same project but another user is no licence either.
    const { token: sibling } = await login(ts, 'owner1', 'pw-owner1', { project: { name: 'o1', domain: { id: 'default' } } });
    expectKeystoneError(await call(ts, tokenPersona(sibling), 'DELETE', TOKENS, undefined, { 'x-subject-token': token }), 404);
    expect((await call(ts, tokenPersona(token), 'GET', '/identity/v3/auth/projects')).status).toBe(200);
    // The same user's other token may; so may an admin.
    const { token: second } = await login(ts, 'lessee1', 'pw-lessee1', { project: { name: 'l1', domain: { id: 'default' } } });
    expect((await call(ts, tokenPersona(second), 'DELETE', TOKENS, undefined, { 'x-subject-token': token })).status).toBe(204);
    expectKeystoneError(await call(ts, tokenPersona(token), 'GET', '/identity/v3/auth/projects'), 401);
    expect((await call(ts, personas.admin, 'DELETE', TOKENS, undefined, { 'x-subject-token': second })).status).toBe(204);
    expectKeystoneError(await call(ts, tokenPersona(second), 'GET', '/identity/v3/auth/projects'), 401);
  });

  it('tokens expire after the configured lifetime (ManualClock)', async () => {
    // A server and clock of its own: moving this clock expires every token of its server.
    const ownClock = new ManualClock(Date.UTC(2030, 0, 1));
    const own = await startTestServer({ clock: ownClock });
    try {
      const ownPersonas = await createPersonas(own);
      const { token } = await login(own, 'owner1', 'pw-owner1', { project: { name: 'o1', domain: { id: 'default' } } });
      const me = tokenPersona(token);
      ownClock.advance(3600_000 - 1000);
      expect((await call(own, me, 'GET', '/identity/v3/auth/catalog')).status).toBe(200);
      ownClock.advance(1000);
      expectKeystoneError(await call(own, me, 'GET', '/identity/v3/auth/catalog'), 401);
      expectKeystoneError(await call(own, ownPersonas.admin, 'GET', TOKENS, undefined, { 'x-subject-token': token }), 401);
    } finally {
      await own.close();
    }
  });
});

describe('GET /v3/auth/catalog, /projects, /system', () => {
  // Tokens issued by the tests here, not the personas' own (which other tests may revoke).
  let fresh: Personas;
  beforeAll(async () => {
    const p = personas;
    const mk = async (name: keyof typeof PERSONA_LOGIN) => {
      const l = PERSONA_LOGIN[name];
      const { token } = await login(ts, l.user, l.password, { project: { name: l.project, domain: { id: 'default' } } });
      return { ...p[name], token };
    };
    fresh = {
      admin: await mk('admin'),
      owner: await mk('owner'),
      lessee: await mk('lessee'),
      other: await mk('other'),
      anonymous: p.anonymous,
    };
  });

  it('catalog: every scoped persona gets it; anonymous 401; unscoped 403', async () => {
    const res = await expectStatuses(ts, fresh, 'GET', () => ({ path: '/identity/v3/auth/catalog' }), {
      admin: 200,
      owner: 200,
      lessee: 200,
      other: 200,
      anonymous: 401,
    });
    expect(res.owner.body.catalog.map((s: any) => s.type)).toEqual(CATALOG_SERVICES.map((s) => s.type));
    const unscoped = await login(ts, 'owner1', 'pw-owner1', 'unscoped');
    expectKeystoneError(await call(ts, tokenPersona(unscoped.token), 'GET', '/identity/v3/auth/catalog'), 403);
  });

  it('projects: each persona sees the projects it holds roles on', async () => {
    const res = await expectStatuses(ts, fresh, 'GET', () => ({ path: '/identity/v3/auth/projects' }), {
      admin: 200,
      owner: 200,
      lessee: 200,
      other: 200,
      anonymous: 401,
    });
    expect(res.admin.body.projects.map((p: any) => p.name)).toEqual(['admin']);
    expect(res.owner.body.projects.map((p: any) => p.name)).toEqual(['o1']);
    expect(res.lessee.body.projects.map((p: any) => p.name)).toEqual(['l1']);
    expect(res.other.body.projects.map((p: any) => p.name)).toEqual(['o2']);
    expect(res.owner.body.links.self).toBe(`${ts.url}/identity/v3/auth/projects`);
  });

  it('system: only the admin holds a system role', async () => {
    const res = await expectStatuses(ts, fresh, 'GET', () => ({ path: '/identity/v3/auth/system' }), {
      admin: 200,
      owner: 200,
      lessee: 200,
      other: 200,
      anonymous: 401,
    });
    expect(res.admin.body.system).toEqual([{ all: true }]);
    expect(res.owner.body.system).toEqual([]);
  });
});

describe('grants and tokens', () => {
  it('revoking a role grant revokes the tokens on that scope at once, and only those', async () => {
    const admin = (await login(ts, 'admin', ADMIN_PASSWORD, { project: { name: 'admin', domain: { id: 'default' } } })).token;
    const adminP = tokenPersona(admin);
    const user = await call(ts, adminP, 'POST', '/identity/v3/users', { user: { name: 'grantee', password: 'pw-grantee' } });
    const uid = user.body.user.id;
    const member = (await call(ts, adminP, 'GET', '/identity/v3/roles?name=member')).body.roles[0].id;
    for (const p of [personas.owner.projectId, personas.lessee.projectId]) {
      expect((await call(ts, adminP, 'PUT', `/identity/v3/projects/${p}/users/${uid}/roles/${member}`)).status).toBe(204);
    }
    const inO1 = (await login(ts, 'grantee', 'pw-grantee', { project: { id: personas.owner.projectId } })).token;
    const inL1 = (await login(ts, 'grantee', 'pw-grantee', { project: { id: personas.lessee.projectId } })).token;
    expect((await call(ts, tokenPersona(inO1), 'GET', '/identity/v3/auth/catalog')).status).toBe(200);
    expect(
      (await call(ts, adminP, 'DELETE', `/identity/v3/projects/${personas.owner.projectId}/users/${uid}/roles/${member}`)).status,
    ).toBe(204);
    expectKeystoneError(await call(ts, tokenPersona(inO1), 'GET', '/identity/v3/auth/catalog'), 401);
    expect((await call(ts, tokenPersona(inL1), 'GET', '/identity/v3/auth/catalog')).status).toBe(200);
    const again = await call(
      ts,
      null,
      'POST',
      TOKENS,
      passwordAuth('grantee', 'pw-grantee', { project: { id: personas.owner.projectId } }),
    );
    expectKeystoneError(again, 401);
  });

  it('changing a password or disabling a user revokes its tokens', async () => {
    const admin = tokenPersona((await login(ts, 'admin', ADMIN_PASSWORD, { project: { name: 'admin', domain: { id: 'default' } } })).token);
    const created = await call(ts, admin, 'POST', '/identity/v3/users', { user: { name: 'rotator', password: 'one' } });
    const id = created.body.user.id;
    const t1 = tokenPersona((await login(ts, 'rotator', 'one')).token);
    expect((await call(ts, t1, 'GET', `/identity/v3/users/${id}`)).status).toBe(200);
    expect((await call(ts, admin, 'PATCH', `/identity/v3/users/${id}`, { user: { password: 'two' } })).status).toBe(200);
    expectKeystoneError(await call(ts, t1, 'GET', `/identity/v3/users/${id}`), 401);
    expectKeystoneError(await call(ts, null, 'POST', TOKENS, passwordAuth('rotator', 'one')), 401);
    const t2 = tokenPersona((await login(ts, 'rotator', 'two')).token);
    expect((await call(ts, admin, 'PATCH', `/identity/v3/users/${id}`, { user: { enabled: false } })).status).toBe(200);
    expectKeystoneError(await call(ts, t2, 'GET', `/identity/v3/users/${id}`), 401);
    expectKeystoneError(await call(ts, null, 'POST', TOKENS, passwordAuth('rotator', 'two')), 401);
  });
});
