/**
 * Interop: Debian's `openstack` CLI (python3-openstackclient, keystoneauth1, keystoneclient)
 * against esi's Keystone API — token issue/revoke, projects (with a parent), users, roles,
 * project and system grants, role assignment lists, lookups by name (OSC tries the id first and
 * falls back to `?name=`), a login as a non-admin user, and that user changing its password.
 *
 * Each test runs against its own server (the lists it checks are exact) and finds there what it
 * needs — project o1 with its child sub1, user u1 (password `pw`, default project o1), role
 * `owner` with u1's grants — made over the identity API by {@link given}, not by the CLI
 * commands under test; so the tests do not depend on their order.
 *
 * Needs `/usr/bin/openstack` (python3-openstackclient; a failure when missing, see
 * test/helpers/tools.ts).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { ADMIN_PASSWORD, call, startTestServer, type Persona, type TestServer } from '../helpers/harness.ts';
import { describeNeeding, TOOLS } from '../helpers/tools.ts';

const OPENSTACK = '/usr/bin/openstack';

const run = promisify(execFile);
let ts: TestServer;

/** The environment of an `openstack` call: no inherited OS_* settings, then the given ones. */
function osEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('OS_')) env[k] = v;
  return {
    ...env,
    OS_AUTH_URL: `${ts.url}/identity/v3`,
    OS_AUTH_TYPE: 'password',
    OS_IDENTITY_API_VERSION: '3',
    OS_USER_DOMAIN_NAME: 'Default',
    OS_PROJECT_DOMAIN_NAME: 'Default',
    OS_REGION_NAME: 'RegionOne',
    OS_INTERFACE: 'public',
    ...extra,
  };
}

const ADMIN_ENV = { OS_USERNAME: 'admin', OS_PASSWORD: ADMIN_PASSWORD, OS_PROJECT_NAME: 'admin' };

/** Run `openstack <args>`; rejects with stderr on a non-zero exit. */
async function os(args: string[], extra: Record<string, string> = ADMIN_ENV): Promise<string> {
  try {
    const { stdout } = await run(OPENSTACK, args, { env: osEnv(extra), timeout: 60_000 });
    return stdout;
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`openstack ${args.join(' ')} failed: ${e.stderr ?? e.message}`, { cause: err });
  }
}

/** Run `openstack <args> -f json` and parse the output. */
async function osJson(args: string[], extra?: Record<string, string>): Promise<any> {
  return JSON.parse(await os([...args, '-f', 'json'], extra));
}

/** Fails, naming the Debian packages, when one is missing (ESI_TEST_ALLOW_MISSING_TOOLS=1 skips instead). */
const NEEDS = [TOOLS.openstack];

/** A caller of the identity API holding `token` (for {@link call}). */
function tokenHolder(name: string, token: string): Persona {
  return { name, token, projectId: null, projectName: null, userId: null, context: null };
}

/** `POST` or `PUT` to the identity API as `admin`; requires `status`, returns the body. */
async function adminCall(admin: Persona, method: 'POST' | 'PUT', urlPath: string, body: unknown, status: number): Promise<any> {
  const r = await call(ts, admin, method, `/identity/v3${urlPath}`, body);
  expect(r.status, `${method} ${urlPath}: ${r.text}`).toBe(status);
  return r.body;
}

/**
 * Make, over the identity API as `admin`, what a test starts from: `'projects'` — project o1
 * and its child sub1; `'user'` — also user u1 (password `pw`, default project o1); `'grants'` —
 * also role `owner`, with u1 holding `owner` on o1 and `admin` on the system.
 */
async function given(upTo: 'projects' | 'user' | 'grants'): Promise<void> {
  const auth = await call(ts, null, 'POST', '/identity/v3/auth/tokens', {
    auth: {
      identity: { methods: ['password'], password: { user: { name: 'admin', domain: { id: 'default' }, password: ADMIN_PASSWORD } } },
      scope: { project: { name: 'admin', domain: { id: 'default' } } },
    },
  });
  expect(auth.status, auth.text).toBe(201);
  const admin = tokenHolder('admin', auth.headers.get('x-subject-token')!);
  const o1 = (await adminCall(admin, 'POST', '/projects', { project: { name: 'o1', domain_id: 'default' } }, 201)).project.id;
  await adminCall(admin, 'POST', '/projects', { project: { name: 'sub1', domain_id: 'default', parent_id: o1 } }, 201);
  if (upTo === 'projects') return;
  const u1 = (
    await adminCall(admin, 'POST', '/users', { user: { name: 'u1', domain_id: 'default', password: 'pw', default_project_id: o1 } }, 201)
  ).user.id;
  if (upTo === 'user') return;
  const owner = (await adminCall(admin, 'POST', '/roles', { role: { name: 'owner' } }, 201)).role.id;
  const adminRole = (await call(ts, admin, 'GET', '/identity/v3/roles?name=admin')).body.roles[0].id;
  await adminCall(admin, 'PUT', `/projects/${o1}/users/${u1}/roles/${owner}`, undefined, 204);
  await adminCall(admin, 'PUT', `/system/users/${u1}/roles/${adminRole}`, undefined, 204);
}

describeNeeding(NEEDS, 'openstack CLI against the identity API', () => {
  beforeEach(async () => {
    ts = await startTestServer();
  });
  afterEach(async () => ts?.close());

  it('token issue (admin)', async () => {
    const token = await osJson(['token', 'issue']);
    expect(token.id).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(token.project_id).toMatch(/^[0-9a-f]{32}$/);
    expect(token.user_id).toMatch(/^[0-9a-f]{32}$/);
  });

  it('project create, with a parent given by name; project show/list', async () => {
    const o1 = await osJson(['project', 'create', 'o1']);
    expect(o1).toMatchObject({ name: 'o1', domain_id: 'default', enabled: true, parent_id: 'default', is_domain: false });
    const sub = await osJson(['project', 'create', '--parent', 'o1', 'sub1']);
    expect(sub.parent_id).toBe(o1.id);
    const shown = await osJson(['project', 'show', 'o1']);
    expect(shown.id).toBe(o1.id);
    const list = await osJson(['project', 'list']);
    expect(list.map((p: any) => p.Name).sort()).toEqual(['admin', 'o1', 'sub1']);
    await expect(os(['project', 'create', 'o1'])).rejects.toThrow(/409|Conflict/);
  });

  it('user create with a default project and password; user show/list', async () => {
    await given('projects');
    const u1 = await osJson(['user', 'create', '--project', 'o1', '--password', 'pw', 'u1']);
    expect(u1.name).toBe('u1');
    expect(JSON.stringify(u1)).not.toContain('"pw"');
    const shown = await osJson(['user', 'show', 'u1']);
    expect(shown.id).toBe(u1.id);
    const list = await osJson(['user', 'list']);
    expect(list.map((u: any) => u.Name).sort()).toEqual(['admin', 'u1']);
  });

  it('role create, role add on a project and on the system, role list, role assignment list --names', async () => {
    await given('user');
    const owner = await osJson(['role', 'create', 'owner']);
    expect(owner.name).toBe('owner');
    await os(['role', 'add', '--user', 'u1', '--project', 'o1', 'owner']);
    await os(['role', 'add', '--user', 'u1', '--system', 'all', 'admin']);
    const roles = await osJson(['role', 'list']);
    expect(roles.map((r: any) => r.Name)).toEqual(expect.arrayContaining(['admin', 'member', 'reader', 'owner']));
    const assignments = await osJson(['role', 'assignment', 'list', '--user', 'u1', '--names']);
    const rows = assignments.map((a: any) => `${a.Role}|${a.User}|${a.Project}|${a.System}`).sort();
    expect(rows).toEqual(['admin|u1@Default||all', 'owner|u1@Default|o1@Default|']);
  });

  it('a login as u1: token issue scoped to o1 and to the system', async () => {
    await given('grants');
    const u1 = { OS_USERNAME: 'u1', OS_PASSWORD: 'pw', OS_PROJECT_NAME: 'o1' };
    const token = await osJson(['token', 'issue'], u1);
    const o1 = await osJson(['project', 'show', 'o1']);
    expect(token.project_id).toBe(o1.id);
    const projects = await osJson(['project', 'list'], u1);
    expect(projects.map((p: any) => p.Name)).toEqual(['o1']);
    const sys = await osJson(['token', 'issue'], { OS_USERNAME: 'u1', OS_PASSWORD: 'pw', OS_SYSTEM_SCOPE: 'all' });
    expect(sys.system).toBe('all');
    await expect(os(['token', 'issue'], { ...u1, OS_PASSWORD: 'wrong' })).rejects.toThrow(/401|authentication/i);
  });

  it('user password set: u1 changes its own password (options, no prompt)', async () => {
    await given('grants');
    const u1 = { OS_USERNAME: 'u1', OS_PASSWORD: 'pw', OS_PROJECT_NAME: 'o1' };
    await expect(os(['user', 'password', 'set', '--original-password', 'wrong', '--password', 'pw2'], u1)).rejects.toThrow(
      /401|changing user password/i,
    );
    await os(['user', 'password', 'set', '--original-password', 'pw', '--password', 'pw2'], u1);
    await expect(os(['token', 'issue'], u1)).rejects.toThrow(/401|authentic/i);
    const u1new = { ...u1, OS_PASSWORD: 'pw2' };
    expect((await osJson(['token', 'issue'], u1new)).project_id).toMatch(/^[0-9a-f]{32}$/);
    await os(['user', 'password', 'set', '--original-password', 'pw2', '--password', 'pw'], u1new);
    expect((await osJson(['token', 'issue'], u1)).project_id).toMatch(/^[0-9a-f]{32}$/);
  });

  it('token revoke makes the token useless at once', async () => {
    await given('grants');
    const token = await osJson(['token', 'issue'], { OS_USERNAME: 'u1', OS_PASSWORD: 'pw', OS_PROJECT_NAME: 'o1' });
    const holder = { name: 'u1', token: token.id as string, projectId: null, projectName: null, userId: null, context: null };
    expect((await call(ts, holder, 'GET', '/identity/v3/auth/projects')).status).toBe(200);
    await os(['token', 'revoke', token.id]);
    expect((await call(ts, holder, 'GET', '/identity/v3/auth/projects')).status).toBe(401);
  });

  it("token revoke of another user's token fails (identity:revoke_token) and the token stays valid", async () => {
    await given('grants');
    const admin = await osJson(['token', 'issue']);
    const holder = { name: 'admin', token: admin.id as string, projectId: null, projectName: null, userId: null, context: null };
    await expect(os(['token', 'revoke', admin.id], { OS_USERNAME: 'u1', OS_PASSWORD: 'pw', OS_PROJECT_NAME: 'o1' })).rejects.toThrow(
      /Could not find token|404/,
    );
    expect((await call(ts, holder, 'GET', '/identity/v3/auth/projects')).status).toBe(200);
  });

  it('role remove (project and system) takes the grants away', async () => {
    await given('grants');
    await os(['role', 'remove', '--user', 'u1', '--project', 'o1', 'owner']);
    await os(['role', 'remove', '--user', 'u1', '--system', 'all', 'admin']);
    const assignments = await osJson(['role', 'assignment', 'list', '--user', 'u1', '--names']);
    expect(assignments).toEqual([]);
    await expect(os(['token', 'issue'], { OS_USERNAME: 'u1', OS_PASSWORD: 'pw', OS_PROJECT_NAME: 'o1' })).rejects.toThrow(
      /401|authoriz|authentic/i,
    );
  });

  it('project set / user set / deletes, looked up by name', async () => {
    await given('grants');
    await os(['project', 'set', '--description', 'first org', '--property', 'email=o1@example.org', 'o1']);
    expect(await osJson(['project', 'show', 'o1'])).toMatchObject({ description: 'first org', email: 'o1@example.org' });
    await os(['user', 'set', '--email', 'u1@example.org', 'u1']);
    expect((await osJson(['user', 'show', 'u1'])).email).toBe('u1@example.org');
    await os(['project', 'delete', 'sub1']);
    await os(['user', 'delete', 'u1']);
    await os(['role', 'delete', 'owner']);
    expect((await osJson(['project', 'list'])).map((p: any) => p.Name).sort()).toEqual(['admin', 'o1']);
    expect((await osJson(['user', 'list'])).map((u: any) => u.Name)).toEqual(['admin']);
  });
});
