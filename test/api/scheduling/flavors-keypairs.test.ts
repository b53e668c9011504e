/**
 * The compute API's flavors and key pairs (`/compute/v2.1`): version documents and
 * microversion headers, every persona (admin: public and private flavors; projects: private
 * flavors of their own; others see nothing private), extra specs checked as esi reads them,
 * access lists, key pairs per user, and bad input (Nova's error format, nothing written).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  call,
  createPersonas,
  startTestServer,
  type Persona,
  type Personas,
  type TestResponse,
  type TestServer,
} from '../../helpers/harness.ts';
import { rows } from './support.ts';

let ts: TestServer;
let p: Personas;
const KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDvC3hT0l2fJ5kq3n7ZlVxq8YVw3pX6m8A0bq4b8wD1u lessee@laptop';

/** A fresh server for the tests of one describe block, then `fixture`. */
function freshServer(fixture: () => Promise<void> = async () => {}): void {
  beforeAll(async () => {
    ts = await startTestServer();
    p = await createPersonas(ts);
    await fixture();
  });
  afterAll(async () => ts?.close());
}

/** A compute request at a microversion (default 2.90). */
function nova(who: Persona, method: string, path: string, body?: unknown, version = '2.90'): Promise<TestResponse> {
  return call(ts, who, method, `/compute/v2.1${path}`, body, { 'x-openstack-nova-api-version': version });
}

/** Assert a Nova error `{<name>: {code, message}}` with this status. */
function novaError(res: TestResponse, status: number, message?: RegExp): void {
  expect(res.status, res.text).toBe(status);
  const [name] = Object.keys(res.body ?? {});
  expect(Object.keys(res.body)).toHaveLength(1);
  expect(res.body[name!].code).toBe(status);
  if (message) expect(res.body[name!].message).toMatch(message);
}

const flavorBody = (name: string, extra: Record<string, unknown> = {}) => ({ flavor: { name, ram: 16384, vcpus: 8, disk: 100, ...extra } });

/** The admin's public flavor `gold` (bm.gold, with bare-metal extra specs) and private `secret` (bm.secret). */
async function adminFlavors(): Promise<void> {
  expect((await nova(p.admin, 'POST', '/flavors', flavorBody('bm.gold', { id: 'gold', description: 'gold nodes' }))).status).toBe(200);
  const specs = await nova(p.admin, 'POST', '/flavors/gold/os-extra_specs', {
    extra_specs: { 'resources:CUSTOM_GOLD': '1', 'resources:VCPU': '0', 'trait:CUSTOM_RAID': 'required', 'esi:match:memory_mb': 'exact' },
  });
  expect(specs.status, specs.text).toBe(200);
  expect(
    (await nova(p.admin, 'POST', '/flavors', flavorBody('bm.secret', { id: 'secret', 'os-flavor-access:is_public': false }))).status,
  ).toBe(200);
}

/** The admin's flavors and o1's private `o1-small` (o1.small), shared with l1. */
async function allFlavors(): Promise<void> {
  await adminFlavors();
  const mine = await nova(p.owner, 'POST', '/flavors', flavorBody('o1.small', { id: 'o1-small', 'os-flavor-access:is_public': false }));
  expect(mine.status, mine.text).toBe(200);
  expect(
    (await nova(p.owner, 'PUT', '/flavors/o1-small/os-extra_specs/resources:CUSTOM_SMALL', { 'resources:CUSTOM_SMALL': '1' })).status,
  ).toBe(200);
  expect((await nova(p.owner, 'POST', '/flavors/o1-small/action', { addTenantAccess: { tenant: p.lessee.projectId } })).status).toBe(200);
}

describe('discovery and microversions', () => {
  freshServer();

  it('version documents are public; every /v2.1 answer carries the version headers', async () => {
    const root = await call(ts, null, 'GET', '/compute/');
    expect(root.status).toBe(200);
    expect(root.body.versions[0]).toMatchObject({ id: 'v2.1', status: 'CURRENT', min_version: '2.1', version: '2.90' });
    const v = await call(ts, null, 'GET', '/compute/v2.1/');
    expect(v.body.version.links[0].href).toBe(`${ts.url}/compute/v2.1/`);
    const plain = await call(ts, p.owner, 'GET', '/compute/v2.1/flavors');
    expect(plain.headers.get('x-openstack-nova-api-version')).toBe('2.1');
    const generic = await call(ts, p.owner, 'GET', '/compute/v2.1/flavors', undefined, { 'openstack-api-version': 'compute 2.61' });
    expect(generic.headers.get('openstack-api-version')).toBe('compute 2.61');
    novaError(await nova(p.owner, 'GET', '/flavors', undefined, '2.999'), 406, /Minimum is 2.1 and maximum is 2.90/);
    novaError(await nova(p.owner, 'GET', '/flavors', undefined, 'two'), 400, /Invalid API version/);
    novaError(await nova(p.anonymous, 'GET', '/flavors'), 401);
    novaError(await nova(p.owner, 'PATCH', '/flavors'), 405);
    novaError(await nova(p.owner, 'GET', '/nothing-here'), 404);
  });

  it('the catalogue announces compute at /compute/v2.1', async () => {
    const t = await call(ts, null, 'POST', '/identity/v3/auth/tokens', {
      auth: {
        identity: { methods: ['password'], password: { user: { name: 'owner1', domain: { id: 'default' }, password: 'pw-owner1' } } },
        scope: { project: { id: p.owner.projectId } },
      },
    });
    const compute = t.body.token.catalog.find((s: any) => s.type === 'compute');
    expect(compute.name).toBe('nova');
    expect(compute.endpoints[0].url).toBe(`${ts.url}/compute/v2.1`);
  });
});

describe('flavors', () => {
  describe('the admin’s', () => {
    freshServer();

    it('the admin creates public and private flavors; extra specs make a bare-metal flavor', async () => {
      const pub = await nova(p.admin, 'POST', '/flavors', flavorBody('bm.gold', { id: 'gold', description: 'gold nodes' }));
      expect(pub.status, pub.text).toBe(200);
      expect(pub.body.flavor).toMatchObject({
        id: 'gold',
        name: 'bm.gold',
        ram: 16384,
        vcpus: 8,
        disk: 100,
        'os-flavor-access:is_public': true,
        swap: 0,
        description: 'gold nodes',
        extra_specs: {},
      });
      const specs = await nova(p.admin, 'POST', '/flavors/gold/os-extra_specs', {
        extra_specs: {
          'resources:CUSTOM_GOLD': '1',
          'resources:VCPU': '0',
          'trait:CUSTOM_RAID': 'required',
          'esi:match:memory_mb': 'exact',
        },
      });
      expect(specs.status, specs.text).toBe(200);
      expect((await nova(p.lessee, 'GET', '/flavors/gold')).body.flavor.extra_specs).toMatchObject({
        'resources:CUSTOM_GOLD': '1',
        'esi:match:memory_mb': 'exact',
      });
      expect((await nova(p.other, 'GET', '/flavors/gold/os-extra_specs/trait:CUSTOM_RAID')).body).toEqual({
        'trait:CUSTOM_RAID': 'required',
      });
      const old = await nova(p.other, 'GET', '/flavors/gold', undefined, '2.1');
      expect(old.body.flavor.swap).toBe('');
      expect(old.body.flavor.extra_specs).toBeUndefined();
      const priv = await nova(p.admin, 'POST', '/flavors', flavorBody('bm.secret', { id: 'secret', 'os-flavor-access:is_public': false }));
      expect(priv.status).toBe(200);
      expect(await rows(ts, 'flavor_projects')).toBe(0);
    });
  });

  describe('a project’s, beside the admin’s', () => {
    freshServer(adminFlavors);

    it('a project creates private flavors only, for itself, and manages them; others do not see them', async () => {
      novaError(await nova(p.owner, 'POST', '/flavors', flavorBody('mine-public')), 403);
      const mine = await nova(p.owner, 'POST', '/flavors', flavorBody('o1.small', { id: 'o1-small', 'os-flavor-access:is_public': false }));
      expect(mine.status, mine.text).toBe(200);
      expect((await nova(p.owner, 'GET', '/flavors/o1-small/os-flavor-access')).body.flavor_access).toEqual([
        { flavor_id: 'o1-small', tenant_id: p.owner.projectId },
      ]);
      expect(
        (await nova(p.owner, 'PUT', '/flavors/o1-small/os-extra_specs/resources:CUSTOM_SMALL', { 'resources:CUSTOM_SMALL': '1' })).status,
      ).toBe(200);
      novaError(await nova(p.lessee, 'GET', '/flavors/o1-small'), 404);
      novaError(await nova(p.other, 'POST', '/flavors/o1-small/os-extra_specs', { extra_specs: { a: 'b' } }), 404);
      // Shared with l1: it sees and uses it, but may not change it.
      const shared = await nova(p.owner, 'POST', '/flavors/o1-small/action', { addTenantAccess: { tenant: p.lessee.projectId } });
      expect(shared.status, shared.text).toBe(200);
      expect((await nova(p.lessee, 'GET', '/flavors/o1-small')).status).toBe(200);
      novaError(await nova(p.lessee, 'DELETE', '/flavors/o1-small/os-extra_specs/resources:CUSTOM_SMALL'), 403);
      novaError(await nova(p.lessee, 'POST', '/flavors/o1-small/action', { removeTenantAccess: { tenant: p.owner.projectId } }), 403);
      novaError(
        await nova(p.owner, 'POST', '/flavors/o1-small/action', { addTenantAccess: { tenant: p.lessee.projectId } }),
        409,
        /already exists/,
      );
      novaError(
        await nova(p.owner, 'POST', '/flavors/o1-small/action', { addTenantAccess: { tenant: 'no-such-project' } }),
        400,
        /not a valid project/,
      );
      novaError(await nova(p.owner, 'POST', '/flavors/o1-small/action', { removeTenantAccess: { tenant: p.other.projectId } }), 404);
      novaError(await nova(p.admin, 'GET', '/flavors/gold/os-flavor-access'), 404, /public flavors/);
      novaError(await nova(p.admin, 'POST', '/flavors/gold/action', { addTenantAccess: { tenant: p.lessee.projectId } }), 409);
    });
  });

  describe('with the admin’s and o1’s flavors', () => {
    freshServer(allFlavors);

    it('lists: public plus accessible private; admins all with is_public=none; summaries and pages', async () => {
      const names = async (who: Persona, q = '') =>
        (await nova(who, 'GET', `/flavors/detail${q}`)).body.flavors.map((f: any) => f.name).sort();
      expect(await names(p.lessee)).toEqual(['bm.gold', 'o1.small']);
      expect(await names(p.other)).toEqual(['bm.gold']);
      expect(await names(p.owner)).toEqual(['bm.gold', 'o1.small']);
      expect(await names(p.admin)).toEqual(['bm.gold']);
      expect(await names(p.admin, '?is_public=none')).toEqual(['bm.gold', 'bm.secret', 'o1.small']);
      expect(await names(p.admin, '?is_public=false')).toEqual(['bm.secret', 'o1.small']);
      const summary = (await nova(p.other, 'GET', '/flavors')).body.flavors[0];
      expect(Object.keys(summary).sort()).toEqual(['description', 'id', 'links', 'name']);
      const page = await nova(p.admin, 'GET', '/flavors?is_public=none&limit=2');
      expect(page.body.flavors).toHaveLength(2);
      expect(page.body.flavors_links[0].href).toContain('marker=');
      expect((await nova(p.admin, 'GET', '/flavors/detail?minRam=20000&is_public=none')).body.flavors).toEqual([]);
      novaError(await nova(p.admin, 'GET', '/flavors?sort_key=colour'), 400);
      novaError(await nova(p.admin, 'GET', '/flavors?marker=nope'), 400);
      novaError(await nova(p.admin, 'GET', '/flavors?limit=-1'), 400);
    });

    it('refuses bad flavors and extra specs with Nova errors; nothing is written', async () => {
      const before = await rows(ts, 'flavors');
      const bad: Array<[unknown, number, RegExp]> = [
        [{ flavor: { name: 'x', ram: 1, vcpus: 1 } }, 400, /'disk' is a required property/],
        [{ flavor: { name: ' x', ram: 1, vcpus: 1, disk: 1 } }, 400, /name/],
        [{ flavor: { name: 'x', ram: 0, vcpus: 1, disk: 1 } }, 400, /ram/],
        [{ flavor: { name: 'x', ram: 1, vcpus: 1, disk: 1, colour: 'red' } }, 400, /Additional properties/],
        [{ flavor: { name: 'x', ram: 'lots', vcpus: 1, disk: 1 } }, 400, /ram/],
        [{ flavour: {} }, 400, /flavor/],
        [flavorBody('bm.gold'), 409, /already exists/],
        [flavorBody('other-name', { id: 'gold' }), 409, /already exists/],
      ];
      for (const [body, status, re] of bad) novaError(await nova(p.admin, 'POST', '/flavors', body), status, re);
      novaError(
        await nova(p.admin, 'POST', '/flavors', flavorBody('described', { description: 'x' }), '2.54'),
        400,
        /Additional properties/,
      );
      novaError(await nova(p.admin, 'POST', '/flavors', '{"flavor": '), 400);
      expect(await rows(ts, 'flavors')).toBe(before);
      const specsBefore = (await nova(p.admin, 'GET', '/flavors/gold/os-extra_specs')).body.extra_specs;
      const badSpecs: Array<[Record<string, unknown>, RegExp]> = [
        [{ 'trait:CUSTOM_X': 'sometimes' }, /required" or "forbidden/],
        [{ 'resources:CUSTOM_OTHER': '1' }, /two bare-metal resource classes/],
        [{ 'resources:CUSTOM_GOLD': '2' }, /one whole unit/],
        [{ 'esi:match:memory_mb': 'about' }, /exact, min or ignore/],
        [{ 'bad key!': 'x' }, /not a valid extra spec key/],
        [{ 'capabilities:gen': { nested: true } }, /must be a string/],
      ];
      for (const [specs, re] of badSpecs)
        novaError(await nova(p.admin, 'POST', '/flavors/gold/os-extra_specs', { extra_specs: specs }), 400, re);
      novaError(await nova(p.admin, 'PUT', '/flavors/gold/os-extra_specs/a', { b: 'c' }), 400, /mismatch/);
      expect((await nova(p.admin, 'GET', '/flavors/gold/os-extra_specs')).body.extra_specs).toEqual(specsBefore);
      novaError(await nova(p.admin, 'GET', '/flavors/gold/os-extra_specs/none'), 404);
    });
  });

  describe('updating and deleting', () => {
    freshServer(allFlavors);

    it('description updates (≥ 2.55) and deletes follow the owner rules', async () => {
      novaError(await nova(p.admin, 'PUT', '/flavors/gold', { flavor: { description: 'x' } }, '2.54'), 405);
      const up = await nova(p.admin, 'PUT', '/flavors/gold', { flavor: { description: 'new' } });
      expect(up.body.flavor.description).toBe('new');
      novaError(await nova(p.owner, 'PUT', '/flavors/gold', { flavor: { description: 'mine now' } }), 403);
      novaError(await nova(p.other, 'DELETE', '/flavors/o1-small'), 404);
      novaError(await nova(p.lessee, 'DELETE', '/flavors/o1-small'), 403);
      expect((await nova(p.owner, 'DELETE', '/flavors/o1-small')).status).toBe(202);
      novaError(await nova(p.owner, 'GET', '/flavors/o1-small'), 404);
    });
  });
});

describe('key pairs', () => {
  freshServer();

  it('import, list, show and delete per user; the fingerprint is Nova’s MD5', async () => {
    const made = await nova(p.lessee, 'POST', '/os-keypairs', { keypair: { name: 'laptop', public_key: KEY } });
    expect(made.status, made.text).toBe(201);
    expect(made.body.keypair).toMatchObject({ name: 'laptop', type: 'ssh', public_key: KEY, user_id: p.lessee.userId });
    expect(made.body.keypair.fingerprint).toMatch(/^([0-9a-f]{2}:){15}[0-9a-f]{2}$/);
    expect(made.body.keypair.private_key).toBeUndefined();
    expect((await nova(p.lessee, 'GET', '/os-keypairs')).body.keypairs.map((k: any) => k.keypair.name)).toEqual(['laptop']);
    expect((await nova(p.owner, 'GET', '/os-keypairs')).body.keypairs.map((k: any) => k.keypair.name)).not.toContain('laptop');
    novaError(await nova(p.owner, 'GET', '/os-keypairs/laptop'), 404);
    const shown = await nova(p.lessee, 'GET', '/os-keypairs/laptop');
    expect(shown.body.keypair).toMatchObject({ name: 'laptop', deleted: false, user_id: p.lessee.userId });
    // Admins act for a user (≥ 2.10); projects cannot.
    expect((await nova(p.admin, 'GET', `/os-keypairs/laptop?user_id=${p.lessee.userId}`)).status).toBe(200);
    novaError(await nova(p.owner, 'GET', `/os-keypairs/laptop?user_id=${p.lessee.userId}`), 403);
    novaError(await nova(p.lessee, 'POST', '/os-keypairs', { keypair: { name: 'laptop', public_key: KEY } }), 409, /already exists/);
    expect((await nova(p.lessee, 'DELETE', '/os-keypairs/laptop', undefined, '2.1')).status).toBe(202);
    novaError(await nova(p.lessee, 'DELETE', '/os-keypairs/laptop'), 404);
  });

  it('generates an RSA pair when no public key is given (private key returned once)', async () => {
    const made = await nova(p.owner, 'POST', '/os-keypairs', { keypair: { name: 'generated' } }, '2.1');
    expect(made.status).toBe(200);
    expect(made.body.keypair.private_key).toMatch(/^-----BEGIN RSA PRIVATE KEY-----/);
    expect(made.body.keypair.public_key).toMatch(/^ssh-rsa AAAAB3NzaC1yc2E/);
    expect((await nova(p.owner, 'GET', '/os-keypairs/generated')).body.keypair.private_key).toBeUndefined();
  });

  it('refuses bad key pairs; nothing is written', async () => {
    const before = await rows(ts, 'keypairs');
    const bad: Array<[unknown, RegExp]> = [
      [{ keypair: { name: 'bad/name', public_key: KEY } }, /unsafe characters/],
      [{ keypair: { name: 'k', public_key: 'not a key' } }, /Keypair data is invalid/],
      [
        { keypair: { name: 'k', public_key: 'ssh-rsa AAAAC3NzaC1lZDI1NTE5AAAAIDvC3hT0l2fJ5kq3n7ZlVxq8YVw3pX6m8A0bq4b8wD1u' } },
        /not a ssh-rsa key/,
      ],
      [{ keypair: { name: 'k', public_key: KEY, type: 'x509' } }, /ssh key pairs only/],
      [{ keypair: { name: 'k', public_key: KEY, colour: 1 } }, /Additional properties/],
      [{ keypairs: {} }, /keypair/],
    ];
    for (const [body, re] of bad) novaError(await nova(p.owner, 'POST', '/os-keypairs', body), 400, re);
    novaError(await nova(p.anonymous, 'POST', '/os-keypairs', { keypair: { name: 'k', public_key: KEY } }), 401);
    novaError(await nova(p.owner, 'POST', '/os-keypairs', { keypair: { name: 'k', public_key: KEY, user_id: p.lessee.userId } }), 403);
    expect(await rows(ts, 'keypairs')).toBe(before);
  });
});
