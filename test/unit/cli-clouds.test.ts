/**
 * The esi CLI's clouds.yaml (src/cli/clouds.ts, `resolveSettings` of src/cli/session.ts): which
 * file, which cloud, what a cloud's keys become, and how `OS_*` variables override them — as the
 * `openstack` CLI (openstacksdk's loader, osc-lib) does. Real files in temporary directories.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { candidateFiles, cloudEnvironment, CloudsConfigError, type CloudsLocations } from '../../src/cli/clouds.ts';
import { CliError, resolveSettings } from '../../src/cli/session.ts';

let root: string;
let where: CloudsLocations;

beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-clouds-'));
  where = { cwd: path.join(root, 'cwd'), home: path.join(root, 'home'), system: path.join(root, 'etc') };
  for (const d of [where.cwd, path.join(where.home, '.config', 'openstack'), where.system]) fs.mkdirSync(d, { recursive: true });
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

const userDir = () => path.join(where.home, '.config', 'openstack');

/** Write a file under the temporary root. */
function write(dir: string, name: string, text: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
}

/** A clouds.yaml with one password cloud per name, whose auth_url names where it came from. */
function cloudsYaml(from: string, ...names: string[]): string {
  return `clouds:\n${names
    .map(
      (n) =>
        `  ${n}:\n    auth:\n      auth_url: http://${from}/identity/v3\n      username: u-${n}\n      password: p-${n}\n      project_name: p\n`,
    )
    .join('')}`;
}

describe('which file', () => {
  it('looks in OS_CLIENT_CONFIG_FILE, ./, ~/.config/openstack, /etc/openstack, .yaml before .yml before .json', () => {
    expect(candidateFiles('clouds', { OS_CLIENT_CONFIG_FILE: '/x/c.yaml' }, where)).toEqual([
      '/x/c.yaml',
      ...[where.cwd, userDir(), where.system].flatMap((d) => ['yaml', 'yml', 'json'].map((s) => path.join(d, `clouds.${s}`))),
    ]);
    expect(candidateFiles('secure', {}, where)[0]).toBe(path.join(where.cwd, 'secure.yaml'));
    const url = (env: NodeJS.ProcessEnv = { OS_CLOUD: 'a' }) => cloudEnvironment(env, where).OS_AUTH_URL;
    write(where.system, 'clouds.yaml', cloudsYaml('etc', 'a'));
    expect(url()).toBe('http://etc/identity/v3');
    write(userDir(), 'clouds.json', JSON.stringify({ clouds: { a: { auth: { auth_url: 'http://home-json/identity/v3' } } } }));
    expect(url()).toBe('http://home-json/identity/v3');
    write(userDir(), 'clouds.yml', cloudsYaml('home-yml', 'a'));
    expect(url()).toBe('http://home-yml/identity/v3');
    write(where.cwd, 'clouds.yaml', cloudsYaml('cwd', 'a'));
    expect(url()).toBe('http://cwd/identity/v3');
    const override = write(root, 'mine.yaml', cloudsYaml('override', 'a'));
    expect(url({ OS_CLOUD: 'a', OS_CLIENT_CONFIG_FILE: override })).toBe('http://override/identity/v3');
  });

  it('merges secure.yaml over clouds.yaml key by key', () => {
    write(
      userDir(),
      'clouds.yaml',
      'clouds:\n  a:\n    auth:\n      auth_url: http://h/identity/v3\n      username: u\n      project_name: p\n',
    );
    write(where.system, 'secure.yaml', 'clouds:\n  a:\n    auth:\n      password: from-secure\n');
    expect(cloudEnvironment({ OS_CLOUD: 'a' }, where)).toMatchObject({
      OS_USERNAME: 'u',
      OS_PASSWORD: 'from-secure',
      OS_PROJECT_NAME: 'p',
    });
  });
});

describe('which cloud', () => {
  beforeEach(() => write(where.cwd, 'clouds.yaml', cloudsYaml('h', 'one', 'two')));

  it('OS_CLOUD names it; --os-cloud beats OS_CLOUD', () => {
    expect(cloudEnvironment({ OS_CLOUD: 'two' }, where).OS_USERNAME).toBe('u-two');
    expect(cloudEnvironment({ OS_CLOUD: 'two' }, where, 'one').OS_USERNAME).toBe('u-one');
  });

  it('without a name: the environment alone when it has settings; the only cloud of a file with one; else nothing', () => {
    const env = { OS_AUTH_URL: 'http://env/identity/v3', OS_USERNAME: 'e', OS_PASSWORD: 'x' };
    expect(cloudEnvironment(env, where)).toBe(env);
    expect(cloudEnvironment({ OS_REGION_NAME: 'RegionOne' }, where).OS_USERNAME).toBeUndefined();
    write(where.cwd, 'clouds.yaml', cloudsYaml('h', 'only'));
    expect(cloudEnvironment({ OS_REGION_NAME: '' }, where)).toMatchObject({ OS_USERNAME: 'u-only', OS_PASSWORD: 'p-only' });
    expect(cloudEnvironment(env, where)).toBe(env);
  });

  it('a cloud that is not there, or no file at all, is a clear error', () => {
    expect(() => cloudEnvironment({ OS_CLOUD: 'three' }, where)).toThrow(
      `cloud "three" is not in ${path.join(where.cwd, 'clouds.yaml')} (clouds: one, two).`,
    );
    fs.rmSync(path.join(where.cwd, 'clouds.yaml'));
    expect(() => cloudEnvironment({ OS_CLOUD: 'x' }, where)).toThrow(/cloud "x" was asked for, but there is no clouds\.yaml \(looked in /);
    expect(() => cloudEnvironment({ OS_CLOUD: 'x' }, where)).toThrow(CloudsConfigError);
  });

  it('cloud names are kept as written (a dash is not an underscore there)', () => {
    write(where.cwd, 'clouds.yaml', cloudsYaml('h', 'my-cloud'));
    expect(cloudEnvironment({ OS_CLOUD: 'my-cloud' }, where).OS_USERNAME).toBe('u-my-cloud');
    expect(() => cloudEnvironment({ OS_CLOUD: 'my_cloud' }, where)).toThrow(/cloud "my_cloud" is not in .* \(clouds: my-cloud\)/);
  });

  it('a non-empty OS_* variable overrides the cloud; an empty one does not', () => {
    const env = cloudEnvironment({ OS_CLOUD: 'one', OS_PASSWORD: 'from-env', OS_USERNAME: '', OS_PROJECT_ID: 'pid' }, where);
    expect(env).toMatchObject({ OS_PASSWORD: 'from-env', OS_USERNAME: 'u-one', OS_PROJECT_NAME: 'p', OS_PROJECT_ID: 'pid' });
  });
});

describe('what a cloud says', () => {
  it('maps auth keys, legacy names, dashes, domains, interface, cacert and verify; numbers are strings', () => {
    write(
      where.cwd,
      'clouds.yaml',
      [
        'clouds:',
        '  c:',
        '    auth_type: v3password',
        '    auth:',
        '      auth-url: http://h:8585/identity',
        '      user_id: 0123',
        '      password: pw',
        '      tenant_id: 12345678901234567890123456789012',
        '      user-domain-name: Users',
        '    domain_name: Default',
        '    endpoint_type: internalURL',
        '    region_name: RegionOne',
        '    cacert: /etc/ca.pem',
        '    verify: no',
      ].join('\n'),
    );
    expect(cloudEnvironment({ OS_CLOUD: 'c' }, where)).toEqual({
      OS_CLOUD: 'c',
      OS_AUTH_TYPE: 'v3password',
      OS_AUTH_URL: 'http://h:8585/identity',
      OS_USER_ID: '83',
      OS_PASSWORD: 'pw',
      OS_PROJECT_ID: '12345678901234567890123456789012',
      OS_USER_DOMAIN_NAME: 'Users',
      OS_PROJECT_DOMAIN_NAME: 'Default',
      OS_INTERFACE: 'internalURL',
      OS_REGION_NAME: 'RegionOne',
      OS_CACERT: '/etc/ca.pem',
      OS_INSECURE: 'true',
    });
    const s = resolveSettings({ OS_CLOUD: 'c' }, where);
    expect(s).toMatchObject({
      authUrl: 'http://h:8585/identity',
      userId: '83',
      userDomain: { name: 'Users' },
      scope: { kind: 'project', id: '12345678901234567890123456789012', domain: { name: 'Default' } },
      interface: 'internal',
      region: 'RegionOne',
      insecure: true,
      token: null,
      applicationCredential: null,
    });
  });

  it("regions: the first by default, one asked for must be the cloud's, a region's values override the cloud", () => {
    write(
      where.cwd,
      'clouds.yaml',
      [
        'clouds:',
        '  r:',
        '    auth: {auth_url: "http://a/identity/v3", username: u, password: p, project_name: p}',
        '    regions:',
        '      - east',
        '      - name: west',
        '        values:',
        '          interface: admin',
        '          auth: {auth_url: "http://west/identity/v3"}',
        '  bad:',
        '    auth: {auth_url: "http://a/identity/v3"}',
        '    regions: [{name: x, other: 1}]',
      ].join('\n'),
    );
    expect(cloudEnvironment({ OS_CLOUD: 'r' }, where)).toMatchObject({ OS_REGION_NAME: 'east', OS_AUTH_URL: 'http://a/identity/v3' });
    expect(resolveSettings({ OS_CLOUD: 'r', OS_REGION_NAME: 'west' }, where)).toMatchObject({
      region: 'west',
      interface: 'admin',
      authUrl: 'http://west/identity/v3',
      username: 'u',
    });
    expect(() => resolveSettings({ OS_CLOUD: 'r', OS_REGION_NAME: 'north' }, where)).toThrow(
      /region "north" is not a region of cloud "r" .* \(regions: east, west\)\./,
    );
    expect(() => resolveSettings({ OS_CLOUD: 'bad' }, where)).toThrow(/invalid region entry/);
  });

  it('token and application credential auth types; an unknown one is refused', () => {
    write(
      where.cwd,
      'clouds.yaml',
      [
        'clouds:',
        '  tok:',
        '    auth_type: token',
        '    auth: {auth_url: "http://h/identity/v3", token: secret-token, project_name: p}',
        '  ac:',
        '    auth_type: v3applicationcredential',
        '    auth: {auth_url: "http://h/identity/v3", application_credential_id: ac1, application_credential_secret: s3cret}',
        '  acname:',
        '    auth_type: v3applicationcredential',
        '    auth: {auth_url: "http://h/identity/v3", application_credential_name: mine, application_credential_secret: s, username: u}',
        '  odd:',
        '    auth_type: v3oidcpassword',
        '    auth: {auth_url: "http://h/identity/v3"}',
      ].join('\n'),
    );
    expect(resolveSettings({ OS_CLOUD: 'tok' }, where)).toMatchObject({ token: 'secret-token', scope: { kind: 'project', name: 'p' } });
    expect(resolveSettings({ OS_CLOUD: 'ac' }, where)).toMatchObject({
      applicationCredential: { id: 'ac1', secret: 's3cret' },
      token: null,
      scope: { kind: 'unscoped' },
    });
    expect(resolveSettings({ OS_CLOUD: 'acname' }, where).applicationCredential).toEqual({ name: 'mine', secret: 's' });
    expect(() => resolveSettings({ OS_CLOUD: 'ac', OS_APPLICATION_CREDENTIAL_SECRET: '' }, where)).not.toThrow();
    expect(() => resolveSettings({ OS_CLOUD: 'odd' }, where)).toThrow(/OS_AUTH_TYPE "v3oidcpassword" is not supported by esi/);
    // The password type with a token in the environment still logs in by password, as asked.
    expect(resolveSettings({ OS_CLOUD: 'acname', OS_AUTH_TYPE: 'password', OS_PASSWORD: 'pw' }, where)).toMatchObject({
      password: 'pw',
      token: null,
      applicationCredential: null,
    });
  });

  it('refuses what esi cannot use, naming the cloud and never a secret', () => {
    write(
      where.cwd,
      'clouds.yaml',
      [
        'clouds:',
        '  dom:',
        '    auth: {auth_url: "http://h/identity/v3", username: u, password: hush, domain_name: Default}',
        '  vendor:',
        '    profile: vexxhost',
        '    auth: {username: u, password: hush}',
      ].join('\n'),
    );
    const messages = ['dom', 'vendor'].map((c) => {
      try {
        resolveSettings({ OS_CLOUD: c }, where);
        return 'no error';
      } catch (err) {
        expect(err).toBeInstanceOf(CliError);
        return (err as Error).message;
      }
    });
    expect(messages[0]).toMatch(/cloud "dom" .* asks for a domain scope/);
    expect(messages[1]).toMatch(/cloud "vendor" .* names a vendor profile/);
    for (const m of messages) expect(m).not.toContain('hush');
    write(where.cwd, 'clouds.yaml', 'clouds: [unclosed');
    expect(() => resolveSettings({ OS_CLOUD: 'x' }, where)).toThrow(/clouds\.yaml is not valid YAML/);
    write(where.cwd, 'clouds.yaml', '- a list');
    expect(() => resolveSettings({ OS_CLOUD: 'x' }, where)).toThrow(/must hold a mapping/);
  });

  it('with no cloud and no OS_AUTH_URL, says how to give one', () => {
    expect(() => resolveSettings({}, where)).toThrow(/OS_AUTH_URL is not set; .*--os-cloud, OS_CLOUD/);
  });
});
