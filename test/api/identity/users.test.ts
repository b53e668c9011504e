/**
 * Identity API: users (create, list with filters, show, update, delete) for every persona;
 * passwords are accepted and never shown.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createPersonas, startTestServer, type Personas, type TestServer } from '../../helpers/harness.ts';
import { expectKeystoneError, expectStatuses, login, passwordAuth, tokenPersona } from './support.ts';

let ts: TestServer;
let personas: Personas;

beforeAll(async () => {
  ts = await startTestServer();
  personas = await createPersonas(ts);
});
afterAll(async () => ts?.close());

const U = '/identity/v3/users';

async function adminCreate(body: unknown): Promise<any> {
  const res = await call(ts, personas.admin, 'POST', U, body);
  expect(res.status, res.text).toBe(201);
  return res.body.user;
}

describe('POST /v3/users', () => {
  it('only the admin creates users; the password is never shown', async () => {
    const res = await expectStatuses(
      ts,
      personas,
      'POST',
      (name) => ({ path: U, body: { user: { name: `u-${name}`, password: 'Secret-123' } } }),
      {
        admin: 201,
        owner: 403,
        lessee: 403,
        other: 403,
        anonymous: 401,
      },
    );
    const user = res.admin.body.user;
    expect(user).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{32}$/),
      name: 'u-admin',
      domain_id: 'default',
      enabled: true,
      password_expires_at: null,
      options: {},
      links: { self: `${ts.url}${U}/${user.id}` },
    });
    expect(res.admin.text).not.toContain('Secret-123');
    expect((await call(ts, personas.admin, 'GET', `${U}?name=u-owner`)).body.users).toEqual([]);
    const { body } = await login(ts, 'u-admin', 'Secret-123');
    expect(body.token.user.id).toBe(user.id);
  });

  it('keeps default project, description, enabled and extra attributes', async () => {
    const user = await adminCreate({
      user: {
        name: 'full',
        password: 'p',
        default_project_id: personas.owner.projectId,
        description: 'd',
        enabled: false,
        email: 'f@example.org',
        domain_id: 'default',
        options: {},
      },
    });
    expect(user).toMatchObject({
      name: 'full',
      default_project_id: personas.owner.projectId,
      description: 'd',
      enabled: false,
      email: 'f@example.org',
    });
    expect(user).not.toHaveProperty('password');
    const shown = await call(ts, personas.admin, 'GET', `${U}/${user.id}`);
    expect(shown.body.user).toEqual(user);
    expectKeystoneError(await call(ts, null, 'POST', '/identity/v3/auth/tokens', passwordAuth('full', 'p')), 401);
  });

  it('duplicate names are 409', async () => {
    await adminCreate({ user: { name: 'twin' } });
    expectKeystoneError(await call(ts, personas.admin, 'POST', U, { user: { name: 'twin' } }), 409, /twin/);
  });

  it('bad input is 400 and writes nothing', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{}, /'user' is a required property/],
      [{ user: {} }, /'name' is a required property/],
      [{ user: { name: 7 } }, /user\/name/],
      [{ user: { name: 'bad-pw', password: 12345 } }, /user\/password/],
      [{ user: { name: 'bad-pw2', password: 'x'.repeat(5000) } }, /user\/password/],
      [{ user: { name: 'bad-enabled', enabled: 'true' } }, /user\/enabled/],
      [{ user: { name: 'bad-project', default_project_id: 'no-such-project' } }, /no-such-project/],
      [{ user: { name: 'bad-domain', domain_id: 'nodomain' } }, /nodomain/],
      [{ user: { name: 'bad-fed', federated: [] } }, /federated/],
      [{ user: { name: 'bad-opt', options: { ignore_lockout_failure_attempts: true } } }, /options/],
      [{ user: { name: 'bad-top' }, group: {} }, /'group' was unexpected/],
    ];
    for (const [body, message] of cases) {
      const res = await call(ts, personas.admin, 'POST', U, body);
      expectKeystoneError(res, 400, message);
      expect(res.text).not.toContain('xxxxxxxxxx');
    }
    const names = (await call(ts, personas.admin, 'GET', U)).body.users.map((u: any) => u.name);
    expect(names.filter((n: string) => n.startsWith('bad-'))).toEqual([]);
  });
});

describe('GET /v3/users', () => {
  it('the admin lists all users; anyone else is 403 (identity:list_users), as Keystone answers', async () => {
    const res = await expectStatuses(ts, personas, 'GET', () => ({ path: U }), {
      admin: 200,
      owner: 403,
      lessee: 403,
      other: 403,
      anonymous: 401,
    });
    expect(res.admin.body.users.map((u: any) => u.name)).toEqual(expect.arrayContaining(['admin', 'owner1', 'lessee1', 'owner2']));
    for (const name of ['owner', 'lessee', 'other'] as const) expect(res[name].text).not.toMatch(/owner1|lessee1|owner2/);
    for (const u of res.admin.body.users) expect(Object.keys(u)).not.toContain('password');
  });

  it('filters by name, domain_id and enabled', async () => {
    await adminCreate({ user: { name: 'sleepy', enabled: false } });
    const q = async (qs: string) => (await call(ts, personas.admin, 'GET', `${U}?${qs}`)).body.users.map((u: any) => u.name);
    expect(await q('name=owner1')).toEqual(['owner1']);
    expect(await q('enabled=false')).toContain('sleepy');
    expect(await q('enabled=false')).not.toContain('owner1');
    expect(await q('enabled=true')).not.toContain('sleepy');
    expect(await q('domain_id=default')).toContain('admin');
    expect(await q('domain_id=elsewhere')).toEqual([]);
    expectKeystoneError(await call(ts, personas.admin, 'GET', `${U}?enabled=perhaps`), 400);
  });
});

describe('GET/PATCH/DELETE /v3/users/{id}', () => {
  it('show: the admin and the user itself; others 404', async () => {
    const res = await expectStatuses(ts, personas, 'GET', () => ({ path: `${U}/${personas.owner.userId}` }), {
      admin: 200,
      owner: 200,
      lessee: 404,
      other: 404,
      anonymous: 401,
    });
    expect(res.owner.body.user).toMatchObject({ name: 'owner1', default_project_id: personas.owner.projectId });
    expectKeystoneError(await call(ts, personas.admin, 'GET', `${U}/nobody`), 404, /Could not find user: nobody/);
  });

  it('update: admin only; the user itself 403, others 404', async () => {
    const res = await expectStatuses(
      ts,
      personas,
      'PATCH',
      () => ({ path: `${U}/${personas.owner.userId}`, body: { user: { email: 'owner1@example.org' } } }),
      {
        admin: 200,
        owner: 403,
        lessee: 404,
        other: 404,
        anonymous: 401,
      },
    );
    expect(res.admin.body.user.email).toBe('owner1@example.org');
  });

  it('update changes name, default project, extra; refuses domain_id and bad types', async () => {
    const u = await adminCreate({ user: { name: 'changer', password: 'a' } });
    const res = await call(ts, personas.admin, 'PATCH', `${U}/${u.id}`, {
      user: { name: 'changed', default_project_id: personas.lessee.projectId, description: 'x' },
    });
    expect(res.status).toBe(200);
    expect(res.body.user).toMatchObject({ name: 'changed', default_project_id: personas.lessee.projectId, description: 'x' });
    for (const body of [
      { user: {} },
      { user: { domain_id: 'default' } },
      { user: { enabled: 'no' } },
      { user: { password: null } },
      { user: { default_project_id: 'nope' } },
      { other: 1 },
    ]) {
      expectKeystoneError(await call(ts, personas.admin, 'PATCH', `${U}/${u.id}`, body), 400);
    }
    expect((await call(ts, personas.admin, 'GET', `${U}/${u.id}`)).body.user).toEqual(res.body.user);
  });

  it('delete: admin only; the user itself 403, others 404; tokens die with the user', async () => {
    const victim = await adminCreate({ user: { name: 'victim', password: 'v' } });
    const { token } = await login(ts, 'victim', 'v');
    await expectStatuses(
      ts,
      personas,
      'DELETE',
      (name) => ({ path: name === 'admin' ? `${U}/${victim.id}` : `${U}/${personas.owner.userId}` }),
      {
        admin: 204,
        owner: 403,
        lessee: 404,
        other: 404,
        anonymous: 401,
      },
    );
    expectKeystoneError(await call(ts, personas.admin, 'GET', `${U}/${victim.id}`), 404);
    expectKeystoneError(await call(ts, personas.admin, 'GET', '/identity/v3/auth/tokens', undefined, { 'x-subject-token': token }), 404);
    expectKeystoneError(await call(ts, personas.admin, 'DELETE', `${U}/${victim.id}`), 404);
  });
});

describe('POST /v3/users/{id}/password', () => {
  const change = (original: string, password: string): unknown => ({ user: { original_password: original, password } });
  const canLogIn = async (name: string, password: string): Promise<boolean> =>
    (await call(ts, null, 'POST', '/identity/v3/auth/tokens', passwordAuth(name, password))).status === 201;

  it('needs no token: every persona (anonymous too) changes it with the right original password, 401 with a wrong one', async () => {
    const u = await adminCreate({ user: { name: 'pw-chain', password: 'start' } });
    const previous: Record<string, string> = {
      admin: 'start',
      owner: 'by-admin',
      lessee: 'by-owner',
      other: 'by-lessee',
      anonymous: 'by-other',
    };
    await expectStatuses(ts, personas, 'POST', (name) => ({ path: `${U}/${u.id}/password`, body: change(previous[name]!, `by-${name}`) }), {
      admin: 204,
      owner: 204,
      lessee: 204,
      other: 204,
      anonymous: 204,
    });
    expect(await canLogIn('pw-chain', 'by-anonymous')).toBe(true);
    expect(await canLogIn('pw-chain', 'start')).toBe(false);
    const wrong = await expectStatuses(
      ts,
      personas,
      'POST',
      () => ({ path: `${U}/${u.id}/password`, body: change('not-it', 'taken-over') }),
      {
        admin: 401,
        owner: 401,
        lessee: 401,
        other: 401,
        anonymous: 401,
      },
    );
    expectKeystoneError(wrong.anonymous, 401, /^Error when changing user password/);
    expect(wrong.anonymous.headers.get('www-authenticate')).toBe(`Keystone uri="${ts.url}/identity"`);
    expect(await canLogIn('pw-chain', 'by-anonymous')).toBe(true);
    expect(await canLogIn('pw-chain', 'taken-over')).toBe(false);
  });

  it("the user's own change keeps the token it used and revokes its other tokens", async () => {
    const u = await adminCreate({ user: { name: 'self-changer', password: 'first' } });
    const used = tokenPersona((await login(ts, 'self-changer', 'first')).token);
    const other = tokenPersona((await login(ts, 'self-changer', 'first')).token);
    const res = await call(ts, used, 'POST', `${U}/${u.id}/password`, change('first', 'second'));
    expect(res.status, res.text).toBe(204);
    expect(res.text).toBe('');
    expect((await call(ts, used, 'GET', `${U}/${u.id}`)).status).toBe(200);
    expectKeystoneError(await call(ts, other, 'GET', `${U}/${u.id}`), 401);
    expect(await canLogIn('self-changer', 'first')).toBe(false);
    expect(await canLogIn('self-changer', 'second')).toBe(true);
    // A change made by someone else (here anonymously) revokes every token of the user.
    expect((await call(ts, null, 'POST', `${U}/${u.id}/password`, change('second', 'third'))).status).toBe(204);
    expectKeystoneError(await call(ts, used, 'GET', `${U}/${u.id}`), 401);
    expect((await call(ts, personas.admin, 'GET', `${U}/${u.id}`)).status).toBe(200);
  });

  it('unknown, disabled and password-less users are 401 like a wrong password', async () => {
    const disabled = await adminCreate({ user: { name: 'pw-disabled', password: 'd', enabled: false } });
    const none = await adminCreate({ user: { name: 'pw-none' } });
    for (const [id, original] of [
      ['no-such-user', 'x'],
      [disabled.id, 'd'],
      [none.id, ''],
    ] as const) {
      const res = await call(ts, personas.owner, 'POST', `${U}/${id}/password`, change(original, 'new-one'));
      expectKeystoneError(res, 401, /^Error when changing user password/);
    }
    const enabled = await call(ts, personas.admin, 'PATCH', `${U}/${disabled.id}`, { user: { enabled: true } });
    expect(enabled.status).toBe(200);
    expect(await canLogIn('pw-disabled', 'd')).toBe(true);
  });

  it('bad input is 400, never echoes a password, and changes nothing', async () => {
    const u = await adminCreate({ user: { name: 'pw-bad', password: 'keep-me-secret' } });
    const held = tokenPersona((await login(ts, 'pw-bad', 'keep-me-secret')).token);
    const cases: Array<[unknown, RegExp]> = [
      [{}, /'user' is a required property/],
      [{ user: {} }, /is a required property/],
      [{ user: { password: 'new-secret-1' } }, /'original_password' is a required property/],
      [{ user: { original_password: 'keep-me-secret' } }, /'password' is a required property/],
      [{ user: { original_password: 'keep-me-secret', password: 12345 } }, /user\/password/],
      [{ user: { original_password: ['keep-me-secret'], password: 'new-secret-1' } }, /user\/original_password/],
      [{ user: { original_password: 'keep-me-secret', password: 'new-secret-1', name: 'x' } }, /'name' was unexpected/],
      [{ user: { original_password: 'keep-me-secret', password: 'new-secret-1' }, extra: 1 }, /'extra' was unexpected/],
      [{ user: { original_password: 'keep-me-secret', password: 'n'.repeat(5000) } }, /user\/password/],
      [{ user: { original_password: 'keep-me-secret', password: '' } }, /must not be empty/],
      [[change('keep-me-secret', 'new-secret-1')], /is not of type 'object'/],
      ['{"user": {"original_password": "keep-me-secret", ', /valid JSON/],
    ];
    for (const [body, message] of cases) {
      const res = await call(ts, held, 'POST', `${U}/${u.id}/password`, body);
      expectKeystoneError(res, 400, message);
      expect(res.text).not.toContain('keep-me-secret');
      expect(res.text).not.toContain('new-secret-1');
    }
    expect(await canLogIn('pw-bad', 'keep-me-secret')).toBe(true);
    expect((await call(ts, held, 'GET', `${U}/${u.id}`)).status).toBe(200);
  });
});
