/**
 * Interop: the Keystone behaviour real clients rely on beyond tokens, with Debian's `openstack`
 * CLI (python3-openstackclient over keystoneclient/openstacksdk) and our `esi` CLI:
 *
 * - a non-admin's `openstack network rbac create --target-project <id>`: the CLI looks the
 *   project up (`GET /v3/projects/{id}`, `?name=`, the list), gets Keystone's 403 each time and
 *   falls back to the id it was given; then `network rbac list | show | delete`;
 * - `openstack service list | show`, `openstack endpoint list` (with filters) as the admin, and a
 *   non-admin refused;
 * - `openstack project show <other>` as a non-admin: Keystone's 403 message; its own project and
 *   `project list` (which falls back to the user's projects) still work;
 * - `GET /v3/auth/projects` and `/v3/auth/domains` with a token the CLI issued (no command reads
 *   them directly);
 * - clouds.yaml: `esi` and `openstack` read the same `clouds.yaml` + `secure.yaml` in a temporary
 *   HOME (`OS_CLOUD`, `--os-cloud` before and after the command, `OS_*` overriding the cloud,
 *   an application credential cloud, `./clouds.yaml` before `~/.config/openstack`).
 *
 * Needs `/usr/bin/openstack` (python3-openstackclient; a failure when missing, see
 * test/helpers/tools.ts).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ADMIN_PASSWORD, call, createPersonas, startTestServer, type Personas, type TestServer } from '../helpers/harness.ts';
import { describeNeeding, TOOLS } from '../helpers/tools.ts';
import { OPENSTACK, ROOT, type CliResult } from './cli-driver.ts';

let ts: TestServer;
let p: Personas;

/** Run `cmd` with no inherited `OS_*` (nor XDG config) settings, then `env`, in `cwd`. */
function run(cmd: string, args: string[], env: Record<string, string>, cwd = ROOT): Promise<CliResult> {
  const clean: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('OS_') && k !== 'XDG_CONFIG_HOME') clean[k] = v;
  return new Promise((resolve) => {
    execFile(cmd, args, { cwd, env: { ...clean, ...env }, timeout: 120_000 }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof (err as { code?: unknown }).code === 'number' ? Number((err as { code: number }).code) : 1;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

/** The `OS_*` login of a persona's user in its project (password, Default domain). */
function login(user: string, password: string, project: string): Record<string, string> {
  return {
    OS_AUTH_URL: `${ts.url}/identity/v3`,
    OS_AUTH_TYPE: 'password',
    OS_IDENTITY_API_VERSION: '3',
    OS_USERNAME: user,
    OS_PASSWORD: password,
    OS_PROJECT_NAME: project,
    OS_USER_DOMAIN_NAME: 'Default',
    OS_PROJECT_DOMAIN_NAME: 'Default',
    OS_REGION_NAME: 'RegionOne',
    OS_INTERFACE: 'public',
  };
}

const admin = () => login('admin', ADMIN_PASSWORD, 'admin');
const owner = () => login('owner1', 'pw-owner1', 'o1');
const lessee = () => login('lessee1', 'pw-lessee1', 'l1');

const openstack = (env: Record<string, string>, ...args: string[]) => run(OPENSTACK, args, env);
const esi = (env: Record<string, string>, cwd: string, ...args: string[]) =>
  run(process.execPath, [path.join(ROOT, 'bin/esi.js'), ...args], env, cwd);

/** Require exit 0 and parse `-f json` output. */
async function json<T = any>(pending: Promise<CliResult>): Promise<T> {
  const r = await pending;
  if (r.code !== 0) throw new Error(`command failed (${r.code}): ${r.stderr}${r.stdout}`);
  return JSON.parse(r.stdout) as T;
}

/** Require a failure and return its stderr. */
async function fails(pending: Promise<CliResult>): Promise<string> {
  const r = await pending;
  expect(r.code, r.stdout).not.toBe(0);
  return r.stderr;
}

describeNeeding([TOOLS.openstack], 'Keystone extras with the openstack and esi CLIs', () => {
  beforeAll(async () => {
    ts = await startTestServer();
    p = await createPersonas(ts);
  });
  afterAll(async () => ts?.close());

  it('a non-admin shares its network with another project by id (403 look-ups, id fallback); rbac list, show, delete', async () => {
    const target = p.lessee.projectId!;
    const net = await json(openstack(owner(), 'network', 'create', '-f', 'json', 'o1-shared'));
    const args = ['--target-project', target, '--action', 'access_as_shared', '--type', 'network', 'o1-shared'];
    const rbac = await json(openstack(owner(), 'network', 'rbac', 'create', '-f', 'json', ...args));
    expect(rbac).toMatchObject({ action: 'access_as_shared', object_type: 'network', object_id: net.id, target_project_id: target });
    const list = await json<any[]>(openstack(owner(), 'network', 'rbac', 'list', '-f', 'json'));
    expect(list).toEqual([expect.objectContaining({ ID: rbac.id, 'Object Type': 'network', 'Object ID': net.id })]);
    const shown = await json(openstack(owner(), 'network', 'rbac', 'show', '-f', 'json', rbac.id));
    expect(shown).toMatchObject({ id: rbac.id, target_project_id: target, project_id: p.owner.projectId });
    expect((await json<any[]>(openstack(lessee(), 'network', 'list', '-f', 'json'))).map((n) => n.Name)).toContain('o1-shared');
    // Another project neither sees nor deletes the policy.
    expect(await fails(openstack(login('owner2', 'pw-owner2', 'o2'), 'network', 'rbac', 'delete', rbac.id))).toMatch(
      /No RBACPolicy found|not found|404/i,
    );
    expect((await openstack(owner(), 'network', 'rbac', 'delete', rbac.id)).code).toBe(0);
    expect(await json<any[]>(openstack(owner(), 'network', 'rbac', 'list', '-f', 'json'))).toEqual([]);
    expect((await json<any[]>(openstack(lessee(), 'network', 'list', '-f', 'json'))).map((n) => n.Name)).not.toContain('o1-shared');
  });

  it('the admin lists services and endpoints (with filters) and shows a service; a non-admin is refused', async () => {
    const services = await json<any[]>(openstack(admin(), 'service', 'list', '-f', 'json'));
    expect(services.map((s) => `${s.Type}:${s.Name}`).sort()).toEqual(
      ['baremetal:ironic', 'compute:nova', 'identity:keystone', 'image:glance', 'lease:esi-leap', 'network:neutron'].sort(),
    );
    const endpoints = await json<any[]>(openstack(admin(), 'endpoint', 'list', '-f', 'json'));
    expect(endpoints).toHaveLength(services.length * 3);
    expect(endpoints.find((e) => e['Service Type'] === 'baremetal' && e.Interface === 'public')).toMatchObject({
      Region: 'RegionOne',
      'Service Name': 'ironic',
      Enabled: true,
      URL: `${ts.url}/baremetal`,
    });
    const filtered = await json<any[]>(
      openstack(admin(), 'endpoint', 'list', '-f', 'json', '--service', 'network', '--interface', 'internal'),
    );
    expect(filtered.map((e) => e.URL)).toEqual([`${ts.url}/network`]);
    const shown = await json(openstack(admin(), 'service', 'show', '-f', 'json', 'identity'));
    expect(shown).toMatchObject({ name: 'keystone', type: 'identity', enabled: true });
    expect(await fails(openstack(owner(), 'service', 'list'))).toMatch(/not authorized .*identity:list_services.*HTTP 403/);
    expect(await fails(openstack(lessee(), 'endpoint', 'list'))).toMatch(/HTTP 403/);
  });

  it("project show of another project as a non-admin is Keystone's 403; its own project and project list work", async () => {
    const other = await fails(openstack(owner(), 'project', 'show', p.lessee.projectId!));
    expect(other).toMatch(/You are not authorized to perform the requested action: identity:list_projects\. \(HTTP 403\)/);
    const missing = await fails(openstack(owner(), 'project', 'show', '0123456789abcdef0123456789abcdef'));
    expect(missing.replace(/\(Request-ID: [^)]*\)/, '')).toBe(other.replace(/\(Request-ID: [^)]*\)/, ''));
    expect(await json(openstack(owner(), 'project', 'show', '-f', 'json', 'o1'))).toMatchObject({ id: p.owner.projectId, name: 'o1' });
    expect((await json<any[]>(openstack(owner(), 'project', 'list', '-f', 'json'))).map((x) => x.Name)).toEqual(['o1']);
    expect((await json(openstack(admin(), 'project', 'show', '-f', 'json', p.lessee.projectId!))).name).toBe('l1');
  });

  it('GET /v3/auth/projects and /v3/auth/domains answer a token the CLI issued', async () => {
    const token = await json(openstack(lessee(), 'token', 'issue', '-f', 'json'));
    const holder = { name: 'cli', token: token.id as string, projectId: null, projectName: null, userId: null, context: null };
    const projects = await call(ts, holder, 'GET', '/identity/v3/auth/projects');
    expect(projects.status).toBe(200);
    expect(projects.body.projects.map((x: any) => [x.id, x.name])).toEqual([[p.lessee.projectId, 'l1']]);
    const domains = await call(ts, holder, 'GET', '/identity/v3/auth/domains');
    expect(domains.status).toBe(200);
    expect(domains.body.domains).toEqual([]);
  });

  it('esi and openstack read the same clouds.yaml and secure.yaml from a temporary HOME', async () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-clouds-home-'));
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-clouds-cwd-'));
    try {
      const dir = path.join(home, '.config', 'openstack');
      fs.mkdirSync(dir, { recursive: true });
      const auth = (user: string, scope: string) =>
        `    auth:\n      auth_url: ${ts.url}/identity/v3\n      username: ${user}\n      ${scope}\n      user_domain_name: Default\n      project_domain_name: Default\n`;
      fs.writeFileSync(
        path.join(dir, 'clouds.yaml'),
        `clouds:\n  esi-owner:\n${auth('owner1', 'project_name: o1')}    region_name: RegionOne\n    interface: public\n` +
          `  esi-lessee:\n    auth_type: password\n${auth('lessee1', `project_id: ${p.lessee.projectId}`)}    identity_api_version: 3\n`,
      );
      fs.writeFileSync(
        path.join(dir, 'secure.yaml'),
        'clouds:\n  esi-owner:\n    auth:\n      password: pw-owner1\n  esi-lessee:\n    auth:\n      password: pw-lessee1\n',
      );
      const env = { HOME: home };
      const esiToken = await json(esi({ ...env, OS_CLOUD: 'esi-owner' }, work, 'token', 'issue', '-f', 'json'));
      expect(esiToken.project_id).toBe(p.owner.projectId);
      const osToken = await json(openstack({ ...env, OS_CLOUD: 'esi-owner' }, 'token', 'issue', '-f', 'json'));
      expect(osToken.project_id).toBe(p.owner.projectId);
      // --os-cloud before or after the command beats OS_CLOUD.
      for (const args of [
        ['--os-cloud', 'esi-lessee', 'token', 'issue', '-f', 'json'],
        ['token', 'issue', '-f', 'json', '--os-cloud', 'esi-lessee'],
      ]) {
        expect((await json(esi({ ...env, OS_CLOUD: 'esi-owner' }, work, ...args))).user_id).toBe(p.lessee.userId);
      }
      expect(
        (await json(openstack({ ...env, OS_CLOUD: 'esi-owner' }, '--os-cloud', 'esi-lessee', 'token', 'issue', '-f', 'json'))).project_id,
      ).toBe(p.lessee.projectId);
      // An OS_* variable overrides the cloud's value, for both CLIs.
      const wrong = { ...env, OS_CLOUD: 'esi-owner', OS_PASSWORD: 'not-the-password' };
      expect(await fails(esi(wrong, work, 'token', 'issue'))).toMatch(/HTTP 401/);
      expect(await fails(openstack(wrong, 'token', 'issue'))).toMatch(/401/);
      // An application credential (auth_type v3applicationcredential) logs in to its own project.
      const created = await call(ts, p.owner, 'POST', `/identity/v3/users/${p.owner.userId}/application_credentials`, {
        application_credential: { name: 'cli-cred' },
      });
      expect(created.status, created.text).toBe(201);
      const cred = created.body.application_credential as { id: string; secret: string };
      fs.appendFileSync(
        path.join(dir, 'clouds.yaml'),
        `  esi-appcred:\n    auth_type: v3applicationcredential\n    auth:\n      auth_url: ${ts.url}/identity/v3\n` +
          `      application_credential_id: ${cred.id}\n      application_credential_secret: ${cred.secret}\n`,
      );
      for (const cli of [
        esi({ ...env, OS_CLOUD: 'esi-appcred' }, work, 'token', 'issue', '-f', 'json'),
        openstack({ ...env, OS_CLOUD: 'esi-appcred' }, 'token', 'issue', '-f', 'json'),
      ]) {
        const t = await json(cli);
        expect(t.project_id).toBe(p.owner.projectId);
        expect(t.user_id).toBe(p.owner.userId);
      }
      // The esi CLI's other commands use the cloud too (the lease API from the catalogue).
      expect(await json(esi({ ...env, OS_CLOUD: 'esi-owner' }, work, 'offer', 'list', '-f', 'json'))).toEqual([]);
      // ./clouds.yaml comes before ~/.config/openstack/clouds.yaml (secure.yaml, found in HOME, still merges over it).
      fs.writeFileSync(
        path.join(work, 'clouds.yaml'),
        'clouds:\n  esi-owner:\n    auth:\n      auth_url: http://127.0.0.1:9/identity/v3\n      username: owner1\n',
      );
      expect(await fails(esi({ ...env, OS_CLOUD: 'esi-owner' }, work, 'token', 'issue'))).toMatch(
        /cannot connect to http:\/\/127\.0\.0\.1:9/,
      );
      expect(await fails(esi({ ...env, OS_CLOUD: 'nowhere' }, work, 'token', 'issue'))).toBe(
        `esi: cloud "nowhere" is not in ${path.join(work, 'clouds.yaml')} (clouds: esi-owner, esi-lessee).\n`,
      );
    } finally {
      fs.rmSync(home, { recursive: true, force: true });
      fs.rmSync(work, { recursive: true, force: true });
    }
  });
});
