/**
 * Identity API: application credentials — create (secret returned once, stored hashed), list,
 * show, delete — for every persona (admin, owner, lessee, another project, anonymous);
 * authenticating with one (by id, by name and user) to a token scoped to its project with only
 * its roles; the refusals (wrong secret, expired, scope asked for, unassigned roles, a restricted
 * credential's token managing credentials) and revocation when a credential goes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createPersonas, ManualClock, startTestServer, type Persona, type Personas, type TestServer } from '../../helpers/harness.ts';
import { expectKeystoneError, expectStatuses, login, PERSONAS, tokenPersona } from './support.ts';

let ts: TestServer;
let personas: Personas;
let roleIds: Record<string, string>;
const clock = new ManualClock(Date.now());

beforeAll(async () => {
  ts = await startTestServer({ clock });
  personas = await createPersonas(ts);
  const roles = (await call(ts, personas.admin, 'GET', '/identity/v3/roles')).body.roles as Array<{ id: string; name: string }>;
  roleIds = Object.fromEntries(roles.map((r) => [r.name, r.id]));
});
afterAll(async () => ts?.close());

const base = (userId: string): string => `/identity/v3/users/${userId}/application_credentials`;

async function create(p: Persona, body: Record<string, unknown>): Promise<any> {
  const r = await call(ts, p, 'POST', base(p.userId!), { application_credential: body });
  expect(r.status, r.text).toBe(201);
  return r.body.application_credential;
}

/** Authenticate with an application credential (by id or by name and user id). */
function appCredAuth(cred: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<any> {
  return call(ts, null, 'POST', '/identity/v3/auth/tokens', {
    auth: { identity: { methods: ['application_credential'], application_credential: cred }, ...extra },
  });
}

/** A user with role `member` on project o2, logged in there (token roles: member, reader). */
async function memberOfO2(name: string): Promise<Persona> {
  const u = (await call(ts, personas.admin, 'POST', '/identity/v3/users', { user: { name, password: `pw-${name}` } })).body.user;
  const o2 = personas.other.projectId!;
  expect((await call(ts, personas.admin, 'PUT', `/identity/v3/projects/${o2}/users/${u.id}/roles/${roleIds.member}`)).status).toBe(204);
  const { token } = await login(ts, name, `pw-${name}`, { project: { id: o2 } });
  return { name, token, projectId: o2, projectName: 'o2', userId: u.id, context: null };
}

describe('application credentials', () => {
  it('create: each persona for its own user (201, secret once); for another user admin 403, others 404', async () => {
    const res = await expectStatuses(
      ts,
      personas,
      'POST',
      (name, p) => ({ path: base(p.userId ?? personas.owner.userId!), body: { application_credential: { name: `ac-${name}` } } }),
      { admin: 201, owner: 201, lessee: 201, other: 201, anonymous: 401 },
    );
    const ac = res.owner.body.application_credential;
    expect(ac).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{32}$/),
      name: 'ac-owner',
      description: null,
      user_id: personas.owner.userId,
      project_id: personas.owner.projectId,
      system: null,
      roles: [{ id: roleIds.owner, name: 'owner', domain_id: null }],
      expires_at: null,
      unrestricted: false,
      access_rules: [],
      secret: expect.stringMatching(/^[A-Za-z0-9_-]{86}$/),
      links: { self: `${ts.url}${base(personas.owner.userId!)}/${ac.id}` },
    });
    // Stored as a scrypt hash, never as the secret.
    const row = await ts.server.services.store.db
      .selectFrom('application_credentials')
      .selectAll()
      .where('id', '=', ac.id)
      .executeTakeFirstOrThrow();
    expect(row.secret_hash).toMatch(/^scrypt\$/);
    expect(JSON.stringify(row)).not.toContain(ac.secret);
    await expectStatuses(
      ts,
      personas,
      'POST',
      () => ({ path: base(personas.owner.userId!), body: { application_credential: { name: 'ac-for-owner' } } }),
      { admin: 403, owner: 201, lessee: 404, other: 404, anonymous: 401 },
    );
    expectKeystoneError(
      await call(ts, personas.admin, 'POST', base(personas.owner.userId!), { application_credential: { name: 'x' } }),
      403,
      /another user/,
    );
  });

  it('create: bad input is 400 (access rules, system, roles, expiry), a taken name 409, and nothing is written', async () => {
    const o = personas.owner;
    await create(o, { name: 'ac-taken' });
    expectKeystoneError(await call(ts, o, 'POST', base(o.userId!), { application_credential: { name: 'ac-taken' } }), 409);
    const bad: Array<[Record<string, unknown>, number, RegExp?]> = [
      [{ name: 'ac-bad', access_rules: [{ service: 'identity', method: 'GET', path: '/v3/users' }] }, 400, /access rules/],
      [{ name: 'ac-bad', system: 'all' }, 400, /system/],
      [{ name: 'ac-bad', roles: [{ name: 'admin' }] }, 400, /unassigned role/],
      [{ name: 'ac-bad', roles: [{ id: roleIds.lessee }] }, 400, /unassigned role/],
      [{ name: 'ac-bad', roles: [{ name: 'no-such-role' }] }, 404, /Could not find role/],
      [{ name: 'ac-bad', roles: [{ id: roleIds.owner, name: 'owner' }] }, 400],
      [{ name: 'ac-bad', roles: 'owner' }, 400],
      [{ name: 'ac-bad', expires_at: 'tomorrow' }, 400, /Timestamp/],
      [{ name: 'ac-bad', expires_at: '2001-01-01T00:00:00' }, 400, /must not be before now/],
      [{ name: 'ac-bad', unrestricted: 'yes' }, 400],
      [{ name: 'ac-bad', colour: 'red' }, 400],
      [{ name: '' }, 400],
      [{}, 400],
    ];
    for (const [body, status, message] of bad) {
      expectKeystoneError(await call(ts, o, 'POST', base(o.userId!), { application_credential: body }), status, message);
    }
    expectKeystoneError(await call(ts, o, 'POST', base(o.userId!), { application_credential: { name: 'ac-bad' }, x: 1 }), 400);
    expect((await call(ts, o, 'GET', `${base(o.userId!)}?name=ac-bad`)).body.application_credentials).toEqual([]);
  });

  it('list and show: the user itself and admins; others 404; the secret is never shown again', async () => {
    const o = personas.owner;
    const ac = await create(o, { name: 'ac-read', description: 'reader' });
    const list = await expectStatuses(ts, personas, 'GET', () => ({ path: `${base(o.userId!)}?name=ac-read` }), {
      admin: 200,
      owner: 200,
      lessee: 404,
      other: 404,
      anonymous: 401,
    });
    expect(list.owner.body.application_credentials).toEqual([expect.objectContaining({ id: ac.id, description: 'reader' })]);
    expect(list.owner.text).not.toContain(ac.secret);
    expect(list.owner.body.application_credentials[0]).not.toHaveProperty('secret');
    const shown = await expectStatuses(ts, personas, 'GET', () => ({ path: `${base(o.userId!)}/${ac.id}` }), {
      admin: 200,
      owner: 200,
      lessee: 404,
      other: 404,
      anonymous: 401,
    });
    expect(shown.admin.body.application_credential).toMatchObject({ id: ac.id, name: 'ac-read' });
    expect(shown.admin.text).not.toContain(ac.secret);
    // Under another user's path, or unknown: 404 (also for the admin).
    expectKeystoneError(await call(ts, personas.admin, 'GET', `${base(personas.lessee.userId!)}/${ac.id}`), 404);
    expectKeystoneError(await call(ts, o, 'GET', `${base(o.userId!)}/nope`), 404, /Could not find Application Credential: nope/);
  });

  it('authenticate: by id or by name and user → a token of its project with its roles; every refusal is 401', async () => {
    const m = await memberOfO2('ac-member');
    const ac = await create(m, { name: 'ac-auth', roles: [{ name: 'reader' }] });
    expect(ac.roles.map((r: any) => r.name)).toEqual(['reader']);
    const full = await create(m, { name: 'ac-full', roles: [{ id: roleIds.member }] });
    expect(full.roles.map((r: any) => r.name).sort()).toEqual(['member', 'reader']); // implied roles included

    const byId = await appCredAuth({ id: ac.id, secret: ac.secret });
    expect(byId.status, byId.text).toBe(201);
    expect(byId.body.token).toMatchObject({
      methods: ['application_credential'],
      user: { id: m.userId },
      project: { id: m.projectId },
      roles: [{ id: roleIds.reader, name: 'reader' }],
      application_credential: { id: ac.id, name: 'ac-auth', restricted: true },
    });
    expect(byId.body.token.catalog.length).toBeGreaterThan(0);
    const token = byId.headers.get('x-subject-token')!;
    expect((await call(ts, tokenPersona(token), 'GET', '/identity/v3/auth/projects')).status).toBe(200);
    const byName = await appCredAuth({ name: 'ac-auth', user: { name: 'ac-member', domain: { name: 'Default' } }, secret: ac.secret });
    expect(byName.status, byName.text).toBe(201);
    expect((await appCredAuth({ name: 'ac-auth', user: { id: m.userId }, secret: ac.secret })).status).toBe(201);

    // A token exchange keeps the credential's bounds.
    const exchanged = await call(ts, null, 'POST', '/identity/v3/auth/tokens', {
      auth: { identity: { methods: ['token'], token: { id: token } } },
    });
    expect(exchanged.status).toBe(201);
    expect(exchanged.body.token.roles.map((r: any) => r.name)).toEqual(['reader']);
    const elsewhere = await call(ts, null, 'POST', '/identity/v3/auth/tokens', {
      auth: { identity: { methods: ['token'], token: { id: token } }, scope: { project: { id: personas.owner.projectId } } },
    });
    expect(elsewhere.status).toBe(401);

    for (const [body, extra] of [
      [{ id: ac.id, secret: 'wrong' }, {}],
      [{ id: 'nope', secret: ac.secret }, {}],
      [{ name: 'ac-auth', user: { id: personas.owner.userId }, secret: ac.secret }, {}],
      [{ id: ac.id, secret: ac.secret }, { scope: { project: { id: m.projectId } } }],
    ] as const) {
      expectKeystoneError(await appCredAuth(body, extra), 401);
    }
    expectKeystoneError(await appCredAuth({ name: 'ac-auth', secret: ac.secret }), 400);
    expectKeystoneError(await appCredAuth({ secret: ac.secret }), 400);
    const both = await call(ts, null, 'POST', '/identity/v3/auth/tokens', {
      auth: { identity: { methods: ['password', 'application_credential'], application_credential: { id: ac.id, secret: ac.secret } } },
    });
    expectKeystoneError(both, 400);

    // The token carries only the roles the user still holds: losing `member` leaves `ac-full` useless.
    expect(
      (await call(ts, personas.admin, 'DELETE', `/identity/v3/projects/${m.projectId}/users/${m.userId}/roles/${roleIds.member}`)).status,
    ).toBe(204);
    expectKeystoneError(await appCredAuth({ id: full.id, secret: full.secret }), 401);
  });

  it('an expired credential is 401; a token of it expires with it', async () => {
    const m = await memberOfO2('ac-expiring');
    const expires = new Date(clock.now() + 60_000).toISOString().replace('Z', '');
    const ac = await create(m, { name: 'ac-exp', expires_at: expires });
    expect(ac.expires_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
    const r = await appCredAuth({ id: ac.id, secret: ac.secret });
    expect(r.status).toBe(201);
    expect(Date.parse(r.body.token.expires_at)).toBeLessThanOrEqual(clock.now() + 60_000);
    clock.advance(61_000);
    expectKeystoneError(await appCredAuth({ id: ac.id, secret: ac.secret }), 401);
  });

  it('a restricted credential’s token may not create or delete credentials (403); an unrestricted one may create', async () => {
    const m = await memberOfO2('ac-restrict');
    const restricted = await create(m, { name: 'ac-r' });
    const unrestricted = await create(m, { name: 'ac-u', unrestricted: true });
    const rTok = (await appCredAuth({ id: restricted.id, secret: restricted.secret })).headers.get('x-subject-token')!;
    const uTok = (await appCredAuth({ id: unrestricted.id, secret: unrestricted.secret })).headers.get('x-subject-token')!;
    const asR = { ...m, token: rTok };
    expectKeystoneError(
      await call(ts, asR, 'POST', base(m.userId!), { application_credential: { name: 'ac-r2' } }),
      403,
      /not allowed for managing additional application credentials/,
    );
    expectKeystoneError(await call(ts, asR, 'DELETE', `${base(m.userId!)}/${unrestricted.id}`), 403);
    expect((await call(ts, asR, 'GET', base(m.userId!))).status).toBe(200);
    const child = await call(ts, { ...m, token: uTok }, 'POST', base(m.userId!), { application_credential: { name: 'ac-u2' } });
    expect(child.status, child.text).toBe(201);
    expect(child.body.application_credential.roles.map((r: any) => r.name).sort()).toEqual(['member', 'reader']);
    // An unscoped token cannot create one.
    const unscoped = await call(ts, null, 'POST', '/identity/v3/auth/tokens', {
      auth: {
        identity: { methods: ['password'], password: { user: { id: m.userId, password: 'pw-ac-restrict' } } },
        scope: 'unscoped',
      },
    });
    const asUnscoped = { ...m, token: unscoped.headers.get('x-subject-token')! };
    expectKeystoneError(await call(ts, asUnscoped, 'POST', base(m.userId!), { application_credential: { name: 'ac-x' } }), 403);
  });

  it('delete: the user itself and admins (others 404); tokens issued with it are revoked; the user’s deletion takes them', async () => {
    const o = personas.owner;
    const statuses = { admin: 204, owner: 204, lessee: 404, other: 404, anonymous: 401 };
    const made: Record<string, any> = {};
    for (const name of PERSONAS) made[name] = await create(o, { name: `ac-del-${name}` });
    const tokens = await Promise.all(
      PERSONAS.map(async (name) => (await appCredAuth({ id: made[name].id, secret: made[name].secret })).headers.get('x-subject-token')!),
    );
    await expectStatuses(ts, personas, 'DELETE', (name) => ({ path: `${base(o.userId!)}/${made[name].id}` }), statuses);
    for (const [i, name] of PERSONAS.entries()) {
      const alive = (await call(ts, tokenPersona(tokens[i]), 'GET', '/identity/v3/auth/projects')).status === 200;
      expect(alive, name).toBe(statuses[name] !== 204);
    }
    expectKeystoneError(await call(ts, o, 'DELETE', `${base(o.userId!)}/${made.admin.id}`), 404);

    const m = await memberOfO2('ac-gone');
    const ac = await create(m, { name: 'ac-gone' });
    expect((await call(ts, personas.admin, 'DELETE', `/identity/v3/users/${m.userId}`)).status).toBe(204);
    expect(await ts.server.services.store.db.selectFrom('application_credentials').select('id').where('id', '=', ac.id).execute()).toEqual(
      [],
    );
  });
});
