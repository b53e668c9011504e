/**
 * The `esi` CLI's session and output, against the identity API: OS_* settings for every persona,
 * token and catalogue commands, output formats, and one-line errors with exit code 1.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOG_SERVICES } from '../../../src/api/identity/catalog.ts';
import { createPersonas, startTestServer, type Personas, type TestServer } from '../../helpers/harness.ts';
import { esi, esiJson, LOGINS, personaEnv, type LoginName } from './support.ts';

let ts: TestServer;
let personas: Personas;

beforeAll(async () => {
  ts = await startTestServer();
  personas = await createPersonas(ts);
});
afterAll(async () => ts?.close());

describe('esi token issue', () => {
  it('logs every persona in to its project; -f json', async () => {
    for (const name of Object.keys(LOGINS) as LoginName[]) {
      const t = await esiJson(['token', 'issue'], personaEnv(ts, name));
      expect(Object.keys(t)).toEqual(['expires', 'id', 'project_id', 'user_id']);
      expect(t.project_id, name).toBe(personas[name].projectId);
      expect(t.user_id, name).toBe(personas[name].userId);
      expect(t.expires).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    }
  });

  it('anonymous (no credentials) is refused with a clear line', async () => {
    const r = await esi(['token', 'issue'], { OS_AUTH_URL: `${ts.url}/identity/v3` });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('esi: set OS_USERNAME (or OS_USER_ID) and OS_PASSWORD, or OS_TOKEN.\n');
    const none = await esi(['token', 'issue'], {});
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/^esi: OS_AUTH_URL is not set/);
  });

  it('a wrong password is one line with the HTTP status, and does not echo the password', async () => {
    const r = await esi(['token', 'issue'], personaEnv(ts, 'owner', { OS_PASSWORD: 'wrong-secret' }));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /^esi: user "owner1" \(domain "Default"\) could not get a token for project "o1" from http:\/\/.*\/identity\/v3: The request you have made requires authentication\. \(check OS_USERNAME, OS_PASSWORD .*\)\. \(HTTP 401\)\n$/,
    );
    expect(r.stderr).not.toContain('wrong-secret');
    expect(r.stdout).toBe('');
  });

  it('a project the user holds no role on is refused', async () => {
    const r = await esi(['token', 'issue'], personaEnv(ts, 'owner', { OS_PROJECT_NAME: 'l1' }));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^esi: .*\(HTTP 401\)\n$/);
  });

  it('a server that is not there is named', async () => {
    const r = await esi(['token', 'issue'], personaEnv(ts, 'owner', { OS_AUTH_URL: 'http://127.0.0.1:9/identity/v3' }));
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('esi: cannot connect to http://127.0.0.1:9/identity/v3/auth/tokens: ECONNREFUSED\n');
  });

  it('accepts OS_PROJECT_ID, OS_SYSTEM_SCOPE, OS_TOKEN and an auth URL without /v3', async () => {
    const byId = await esiJson(
      ['token', 'issue'],
      personaEnv(ts, 'lessee', { OS_PROJECT_NAME: '', OS_PROJECT_ID: personas.lessee.projectId! }),
    );
    expect(byId.project_id).toBe(personas.lessee.projectId);
    const sys = await esiJson(['token', 'issue'], personaEnv(ts, 'admin', { OS_PROJECT_NAME: '', OS_SYSTEM_SCOPE: 'all' }));
    expect(sys.system).toBe('all');
    expect(sys.project_id).toBeUndefined();
    const viaToken = await esiJson(['token', 'issue'], {
      OS_AUTH_URL: `${ts.url}/identity`,
      OS_TOKEN: personas.other.token!,
      OS_PROJECT_NAME: 'o2',
    });
    expect(viaToken.project_id).toBe(personas.other.projectId);
    expect(viaToken.user_id).toBe(personas.other.userId);
  });

  it('-f value, -c, yaml and table output', async () => {
    const value = await esi(['token', 'issue', '-f', 'value', '-c', 'project_id', '-c', 'user_id'], personaEnv(ts, 'owner'));
    expect(value.stdout).toBe(`${personas.owner.projectId}\n${personas.owner.userId}\n`);
    const yaml = await esi(['token', 'issue', '-f', 'yaml', '-c', 'user_id'], personaEnv(ts, 'owner'));
    expect(yaml.stdout).toBe(`user_id: ${personas.owner.userId}\n`);
    const table = await esi(['token', 'issue', '-c', 'user_id'], personaEnv(ts, 'owner'));
    expect(table.stdout.split('\n')[1]).toMatch(/^\| Field +\| Value +\|$/);
    expect(table.stdout).toContain(`| user_id | ${personas.owner.userId} |`);
    const bad = await esi(['token', 'issue', '-c', 'nope'], personaEnv(ts, 'owner'));
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^esi: No recognized column names in \["nope"\]/);
    const fmt = await esi(['token', 'issue', '-f', 'xml'], personaEnv(ts, 'owner'));
    expect(fmt.code).toBe(1);
    expect(fmt.stderr).toMatch(/unknown output format "xml"/);
  });
});

describe('esi token revoke', () => {
  it('revokes a token at once', async () => {
    const t = await esiJson(['token', 'issue'], personaEnv(ts, 'lessee'));
    const r = await esi(['token', 'revoke', t.id], personaEnv(ts, 'lessee'));
    expect(r.code, r.stderr).toBe(0);
    const again = await esi(['token', 'issue'], { OS_AUTH_URL: `${ts.url}/identity/v3`, OS_TOKEN: t.id, OS_PROJECT_NAME: 'l1' });
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/\(HTTP 401\)/);
    const unknown = await esi(['token', 'revoke', 'no-such-token'], personaEnv(ts, 'lessee'));
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe('esi: Could not find token. (HTTP 404)\n');
  });
});

describe('esi catalog list', () => {
  it('lists the announced services for every persona', async () => {
    for (const name of Object.keys(LOGINS) as LoginName[]) {
      const services = await esiJson(['catalog', 'list'], personaEnv(ts, name));
      expect(services.map((s: any) => s.Type)).toEqual(CATALOG_SERVICES.map((s) => s.type));
      expect(services[2].Endpoints).toContain(`public: ${ts.url}/lease`);
    }
  });

  it('an unscoped login has no catalogue: the lease commands say what to set', async () => {
    // Without a project the login is scoped to the user's default project (Keystone default
    // scoping), so this needs a user without one.
    await ts.server.services.identity.directory.createUser(personas.admin.context!, { name: 'no-default', password: 'pw-nd' });
    const r = await esi(
      ['offer', 'list'],
      personaEnv(ts, 'owner', { OS_USERNAME: 'no-default', OS_PASSWORD: 'pw-nd', OS_PROJECT_NAME: '', OS_PROJECT_DOMAIN_NAME: '' }),
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('esi: the token has no service catalogue: set OS_PROJECT_NAME (or OS_PROJECT_ID, or OS_SYSTEM_SCOPE=all).\n');
    const scoped = await esiJson(['token', 'issue'], personaEnv(ts, 'owner', { OS_PROJECT_NAME: '', OS_PROJECT_DOMAIN_NAME: '' }));
    expect(scoped.project_id).toBe(personas.owner.projectId);
  });

  it('an unknown region or interface is reported', async () => {
    const r = await esi(['offer', 'list'], personaEnv(ts, 'owner', { OS_REGION_NAME: 'Mars' }));
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('esi: no public endpoint for service type "lease" in region Mars in the catalogue.\n');
    const i = await esi(['offer', 'list'], personaEnv(ts, 'owner', { OS_INTERFACE: 'private' }));
    expect(i.code).toBe(1);
    expect(i.stderr).toMatch(/OS_INTERFACE must be public, internal or admin/);
  });
});
