/**
 * Interop: Debian's `openstack` CLI (python3-openstackclient, keystoneclient, keystoneauth1)
 * against esi's Keystone groups, domains and application credentials:
 *
 * - `openstack group create|list|show|set|delete`, `group add user|contains user|remove user`,
 *   `role add --group … --project …`, and a member's own `token issue` for that project, which
 *   stops working once it leaves the group;
 * - `openstack domain create|list|show|set|delete`, a project and a user in the new domain and a
 *   `token issue` with `OS_USER_DOMAIN_NAME` of that domain; deletion only once disabled;
 * - `openstack application credential create [--role] [--secret]|list|show|delete` as a project
 *   member, `token issue` with `--os-auth-type v3applicationcredential` and that token's scope
 *   and roles, `baremetal node list` with the credential (the project's node only), a restricted
 *   credential refused to create another, and the credential's deletion ending it.
 *
 * Each test runs against its own server. Needs `/usr/bin/openstack` (python3-openstackclient; a
 * failure when missing, see test/helpers/tools.ts).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { ADMIN_PASSWORD, call, startTestServer, type Persona, type TestServer } from '../helpers/harness.ts';
import { describeNeeding, TOOLS } from '../helpers/tools.ts';

const OPENSTACK = '/usr/bin/openstack';
const run = promisify(execFile);
let ts: TestServer;

/** The connection settings every call shares (no inherited OS_* settings). */
function baseEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('OS_')) env[k] = v;
  return {
    ...env,
    OS_AUTH_URL: `${ts.url}/identity/v3`,
    OS_IDENTITY_API_VERSION: '3',
    OS_REGION_NAME: 'RegionOne',
    OS_INTERFACE: 'public',
  };
}

/** Password credentials of a user in a domain (by name), scoped to a project of that domain. */
function passwordEnv(user: string, password: string, project: string, domain = 'Default'): Record<string, string> {
  return {
    OS_AUTH_TYPE: 'password',
    OS_USERNAME: user,
    OS_PASSWORD: password,
    OS_PROJECT_NAME: project,
    OS_USER_DOMAIN_NAME: domain,
    OS_PROJECT_DOMAIN_NAME: domain,
  };
}

const ADMIN = (): Record<string, string> => passwordEnv('admin', ADMIN_PASSWORD, 'admin');

/** Run `openstack <args>`; resolves with stdout and stderr, rejects with stderr on a non-zero exit. */
async function os(args: string[], creds: Record<string, string> = ADMIN()): Promise<{ stdout: string; stderr: string }> {
  try {
    return await run(OPENSTACK, args, { env: { ...baseEnv(), ...creds }, timeout: 60_000 });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`openstack ${args.join(' ')} failed: ${e.stderr ?? e.message}`, { cause: err });
  }
}

/** Run `openstack <args> -f json` and parse the output. */
async function osJson(args: string[], creds?: Record<string, string>): Promise<any> {
  return JSON.parse((await os([...args, '-f', 'json'], creds)).stdout);
}

/** A caller of the APIs holding `token`. */
function holder(token: string): Persona {
  return { name: 'cli', token, projectId: null, projectName: null, userId: null, context: null };
}

/** An admin token, issued over the API. */
async function adminToken(): Promise<Persona> {
  const r = await call(ts, null, 'POST', '/identity/v3/auth/tokens', {
    auth: {
      identity: { methods: ['password'], password: { user: { name: 'admin', domain: { id: 'default' }, password: ADMIN_PASSWORD } } },
      scope: { project: { name: 'admin', domain: { id: 'default' } } },
    },
  });
  expect(r.status, r.text).toBe(201);
  return holder(r.headers.get('x-subject-token')!);
}

/** Over the API as admin: project `o1` and user `u1` (password `pw`, default project o1), optionally with `member` on o1. */
async function given(withRole: boolean): Promise<{ o1: string; u1: string }> {
  const admin = await adminToken();
  const o1 = (await call(ts, admin, 'POST', '/identity/v3/projects', { project: { name: 'o1' } })).body.project.id;
  const u1 = (await call(ts, admin, 'POST', '/identity/v3/users', { user: { name: 'u1', password: 'pw', default_project_id: o1 } })).body
    .user.id;
  if (withRole) {
    const member = (await call(ts, admin, 'GET', '/identity/v3/roles?name=member')).body.roles[0].id;
    expect((await call(ts, admin, 'PUT', `/identity/v3/projects/${o1}/users/${u1}/roles/${member}`)).status).toBe(204);
  }
  return { o1, u1 };
}

describeNeeding([TOOLS.openstack], 'openstack CLI: Keystone groups, domains and application credentials', () => {
  beforeEach(async () => {
    ts = await startTestServer();
  });
  afterEach(async () => ts?.close());

  it('groups: create, list, show, set, delete', async () => {
    const g = await osJson(['group', 'create', '--description', 'first team', 'team']);
    expect(g).toMatchObject({ name: 'team', description: 'first team', domain_id: 'default' });
    expect((await osJson(['group', 'list'])).map((x: any) => x.Name)).toEqual(['team']);
    expect((await osJson(['group', 'show', 'team'])).id).toBe(g.id);
    await os(['group', 'set', '--name', 'crew', '--description', 'renamed', 'team']);
    expect(await osJson(['group', 'show', 'crew'])).toMatchObject({ id: g.id, name: 'crew', description: 'renamed' });
    await expect(os(['group', 'create', 'crew'])).rejects.toThrow(/409|Conflict/);
    await os(['group', 'delete', 'crew']);
    expect(await osJson(['group', 'list'])).toEqual([]);
  });

  it('group members: add user, contains user, role add --group, the member’s token, remove user', async () => {
    const { o1 } = await given(false);
    const u1 = passwordEnv('u1', 'pw', 'o1');
    await os(['group', 'create', 'crew']);

    // u1 has no role on o1 of its own: no token until its group gets one.
    await expect(os(['token', 'issue'], u1)).rejects.toThrow(/401|authoriz|authentic/i);
    await os(['group', 'add', 'user', 'crew', 'u1']);
    expect((await os(['group', 'contains', 'user', 'crew', 'u1'])).stdout).toContain('u1 in group crew');
    expect((await osJson(['user', 'list', '--group', 'crew'])).map((u: any) => u.Name)).toEqual(['u1']);
    await os(['role', 'add', '--group', 'crew', '--project', 'o1', 'member']);
    const token = await osJson(['token', 'issue'], u1);
    expect(token.project_id).toBe(o1);
    const effective = await osJson(['role', 'assignment', 'list', '--user', 'u1', '--effective', '--names']);
    expect(effective.map((a: any) => `${a.Role}|${a.User}|${a.Project}`).sort()).toEqual([
      'member|u1@Default|o1@Default',
      'reader|u1@Default|o1@Default',
    ]);
    const byGroup = await osJson(['role', 'assignment', 'list', '--group', 'crew', '--names']);
    expect(byGroup.map((a: any) => `${a.Role}|${a.Group}|${a.Project}`)).toEqual(['member|crew@Default|o1@Default']);

    // Leaving the group ends the token it gave and refuses new ones.
    await os(['group', 'remove', 'user', 'crew', 'u1']);
    expect((await os(['group', 'contains', 'user', 'crew', 'u1'])).stderr).toContain('u1 not in group crew');
    expect((await call(ts, holder(token.id), 'GET', '/identity/v3/auth/projects')).status).toBe(401);
    await expect(os(['token', 'issue'], u1)).rejects.toThrow(/401|authoriz|authentic/i);
  });

  it('domains: create, list, show, set, delete once disabled; the default domain stays', async () => {
    const d = await osJson(['domain', 'create', '--description', 'partner org', 'partner']);
    expect(d).toMatchObject({ name: 'partner', description: 'partner org', enabled: true });
    expect((await osJson(['domain', 'list'])).map((x: any) => x.Name).sort()).toEqual(['Default', 'partner']);
    expect((await osJson(['domain', 'show', 'partner'])).id).toBe(d.id);
    await os(['domain', 'set', '--description', 'our partner', 'partner']);
    expect((await osJson(['domain', 'show', 'partner'])).description).toBe('our partner');
    await expect(os(['domain', 'delete', 'partner'])).rejects.toThrow(/Cannot delete a domain that is enabled|403/);
    await expect(os(['domain', 'set', '--disable', 'Default'])).rejects.toThrow(/immutable|403/);
    await os(['domain', 'set', '--disable', 'partner']);
    expect((await osJson(['domain', 'show', 'partner'])).enabled).toBe(false);
    await os(['domain', 'delete', 'partner']);
    expect((await osJson(['domain', 'list'])).map((x: any) => x.Name)).toEqual(['Default']);
  });

  it('a project and a user in a new domain: token issue by domain name; disabling and deleting the domain ends them', async () => {
    const d = await osJson(['domain', 'create', 'partner']);

    const p = await osJson(['project', 'create', '--domain', 'partner', 'pp']);
    expect(p.domain_id).toBe(d.id);
    const u = await osJson(['user', 'create', '--domain', 'partner', '--password', 'pw-pu', 'pu']);
    expect(u.domain_id).toBe(d.id);
    await os(['role', 'add', '--user', 'pu', '--user-domain', 'partner', '--project', 'pp', '--project-domain', 'partner', 'member']);
    const pu = passwordEnv('pu', 'pw-pu', 'pp', 'partner');
    const token = await osJson(['token', 'issue'], pu);
    expect(token).toMatchObject({ project_id: p.id, user_id: u.id });

    await os(['domain', 'set', '--disable', 'partner']);
    expect((await call(ts, holder(token.id), 'GET', '/identity/v3/auth/projects')).status).toBe(401);
    await expect(os(['token', 'issue'], pu)).rejects.toThrow(/401|authentic/i);
    await os(['domain', 'delete', 'partner']);
    expect((await osJson(['project', 'list'])).map((x: any) => x.Name)).toEqual(['admin']);
    expect((await osJson(['user', 'list'])).map((x: any) => x.Name)).toEqual(['admin']);
  });

  it('application credentials: create, list, show, token issue with one, baremetal node list as it, delete', async () => {
    const { o1 } = await given(true);
    const admin = await adminToken();
    const ironic = { 'x-openstack-ironic-api-version': '1.82' };
    const node = await call(ts, admin, 'POST', '/baremetal/v1/nodes', { driver: 'fake-hardware', name: 'n-o1', owner: o1 }, ironic);
    expect(node.status, node.text).toBe(201);
    expect((await call(ts, admin, 'POST', '/baremetal/v1/nodes', { driver: 'fake-hardware', name: 'n-admin' }, ironic)).status).toBe(201);

    const u1 = passwordEnv('u1', 'pw', 'o1');
    const ac = await osJson(
      ['application', 'credential', 'create', '--role', 'reader', '--secret', 'ac-s3cret', '--description', 'ci', 'ci-bot'],
      u1,
    );
    expect(ac).toMatchObject({
      name: 'ci-bot',
      description: 'ci',
      project_id: o1,
      roles: 'reader',
      secret: 'ac-s3cret',
      unrestricted: false,
    });
    const generated = await osJson(['application', 'credential', 'create', 'gen'], u1);
    expect(generated.secret).toMatch(/^[A-Za-z0-9_-]{86}$/);
    expect(generated.roles.split(' ').sort()).toEqual(['member', 'reader']);
    const list = await osJson(['application', 'credential', 'list'], u1);
    expect(list.map((c: any) => c.Name).sort()).toEqual(['ci-bot', 'gen']);
    expect(JSON.stringify(list)).not.toContain('ac-s3cret');
    const shown = await osJson(['application', 'credential', 'show', 'ci-bot'], u1);
    expect(shown).toMatchObject({ id: ac.id, name: 'ci-bot', roles: 'reader' });
    expect(shown).not.toHaveProperty('secret');

    const asCred = {
      OS_AUTH_TYPE: 'v3applicationcredential',
      OS_APPLICATION_CREDENTIAL_ID: ac.id,
      OS_APPLICATION_CREDENTIAL_SECRET: 'ac-s3cret',
    };
    const token = await osJson(['token', 'issue'], asCred);
    expect(token.project_id).toBe(o1);
    const body = (await call(ts, holder(token.id), 'GET', '/identity/v3/auth/tokens', undefined, { 'x-subject-token': token.id })).body
      .token;
    expect(body.methods).toEqual(['application_credential']);
    expect(body.roles.map((r: any) => r.name)).toEqual(['reader']);
    expect(body.application_credential).toEqual({ id: ac.id, name: 'ci-bot', restricted: true });
    const nodes = await osJson(['baremetal', 'node', 'list'], asCred);
    expect(nodes.map((n: any) => n.Name)).toEqual(['n-o1']);
    // The same with the options on the command line instead of the environment.
    const viaArgs = await osJson(
      [
        '--os-auth-type',
        'v3applicationcredential',
        '--os-application-credential-id',
        ac.id,
        '--os-application-credential-secret',
        'ac-s3cret',
        'token',
        'issue',
      ],
      {},
    );
    expect(viaArgs.project_id).toBe(o1);

    // A restricted credential may not make another one; a wrong secret is refused.
    await expect(os(['application', 'credential', 'create', 'child'], asCred)).rejects.toThrow(/not allowed for managing|403/);
    await expect(os(['token', 'issue'], { ...asCred, OS_APPLICATION_CREDENTIAL_SECRET: 'wrong' })).rejects.toThrow(/401|authentic/i);

    await os(['application', 'credential', 'delete', 'ci-bot'], u1);
    expect((await osJson(['application', 'credential', 'list'], u1)).map((c: any) => c.Name)).toEqual(['gen']);
    expect((await call(ts, holder(token.id), 'GET', '/identity/v3/auth/projects')).status).toBe(401);
    await expect(os(['token', 'issue'], asCred)).rejects.toThrow(/401|authentic/i);
  });
});
