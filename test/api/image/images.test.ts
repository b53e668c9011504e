/**
 * Image metadata endpoints (`/image/v2/images…`) for every persona: create, show, list
 * (visibility rules, member status, filters, sorting, pagination), PATCH, delete
 * (protected → 403), tags and deactivate/reactivate. A caller that may not see an image gets
 * 404; one that sees it but may not act gets 403; no token gets 401.
 *
 * Fixture (owner = project o1 unless said): P private, S shared with l1 (accepted), SP shared
 * with l1 (pending), C community, PUB public (admin's, owned by o1), AP the admin project's
 * private image.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Persona } from '../../helpers/harness.ts';
import { createImage, expectGlanceError, img, patch, share, snapshot, startImageEnv, type ImageEnv } from './support.ts';

let env: ImageEnv;
const ids: Record<'P' | 'S' | 'SP' | 'C' | 'PUB' | 'AP', string> = { P: '', S: '', SP: '', C: '', PUB: '', AP: '' };

beforeAll(async () => {
  env = await startImageEnv();
  const { owner, lessee, admin } = env.p;
  ids.P = await createImage(env, owner, { name: 'p-private', visibility: 'private' });
  ids.S = await createImage(env, owner, { name: 's-shared' });
  ids.SP = await createImage(env, owner, { name: 'sp-shared-pending', visibility: 'shared' });
  ids.C = await createImage(env, owner, { name: 'c-community', visibility: 'community' });
  ids.PUB = await createImage(env, admin, { name: 'pub-public', visibility: 'public', owner: owner.projectId });
  ids.AP = await createImage(env, admin, { name: 'ap-admin-private', visibility: 'private' });
  await share(env, owner, ids.S, lessee, 'accepted');
  await share(env, owner, ids.SP, lessee, 'pending');
});
afterAll(async () => env?.ts.close());

const personas = (): Record<string, Persona> => ({ ...env.p });

describe('GET /v2/images/{id}', () => {
  const expected: Record<string, Record<keyof typeof ids, number>> = {
    admin: { P: 200, S: 200, SP: 200, C: 200, PUB: 200, AP: 200 },
    owner: { P: 200, S: 200, SP: 200, C: 200, PUB: 200, AP: 404 },
    lessee: { P: 404, S: 200, SP: 200, C: 200, PUB: 200, AP: 404 },
    other: { P: 404, S: 404, SP: 404, C: 200, PUB: 200, AP: 404 },
    anonymous: { P: 401, S: 401, SP: 401, C: 401, PUB: 401, AP: 401 },
  };
  for (const who of Object.keys(expected)) {
    it(`as ${who}`, async () => {
      for (const [key, status] of Object.entries(expected[who]!) as Array<[keyof typeof ids, number]>) {
        const res = await img(env, personas()[who]!, 'GET', `/images/${ids[key]}`);
        expect(res.status, `${who} ${key}`).toBe(status);
        if (status === 404) expectGlanceError(res, 404, `No image found with ID ${ids[key]}`);
        if (status === 401) expect(res.headers.get('www-authenticate')).toMatch(/^Keystone uri=".*\/identity"$/);
        if (status === 200) expect(res.body.id).toBe(ids[key]);
      }
    });
  }

  it('shows Glance fields, custom properties at the top level, and relative links', async () => {
    const id = await createImage(env, env.p.owner, {
      name: 'fields',
      os_distro: 'ubuntu',
      tags: ['a', 'b', 'a'],
      min_ram: 512,
      min_disk: 2,
      protected: false,
    });
    const { body } = await img(env, env.p.owner, 'GET', `/images/${id}`);
    expect(body).toEqual({
      id,
      name: 'fields',
      status: 'queued',
      visibility: 'shared',
      protected: false,
      os_hidden: false,
      checksum: null,
      owner: env.p.owner.projectId,
      size: null,
      virtual_size: null,
      min_ram: 512,
      min_disk: 2,
      disk_format: 'raw',
      container_format: 'bare',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
      updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
      tags: ['a', 'b'],
      os_hash_algo: null,
      os_hash_value: null,
      os_distro: 'ubuntu',
      self: `/v2/images/${id}`,
      file: `/v2/images/${id}/file`,
      schema: '/v2/schemas/image',
    });
  });
});

describe('POST /v2/images', () => {
  it('creates in the caller project for admin, owner, lessee and other; 401 anonymous', async () => {
    for (const who of ['admin', 'owner', 'lessee', 'other'] as const) {
      const res = await img(env, env.p[who], 'POST', '/images', { name: `by-${who}`, disk_format: 'qcow2', container_format: 'bare' });
      expect(res.status, who).toBe(201);
      expect(res.body.owner).toBe(env.p[who].projectId);
      expect(res.body.status).toBe('queued');
      expect(res.headers.get('location')).toBe(`${env.ts.url}/image/v2/images/${res.body.id}`);
    }
    const before = await snapshot(env);
    expectGlanceError(await img(env, env.p.anonymous, 'POST', '/images', { name: 'x' }), 401);
    expect(await snapshot(env)).toEqual(before);
  });

  it('lets only an admin create for another project or publish; community is allowed', async () => {
    const before = await snapshot(env);
    expectGlanceError(
      await img(env, env.p.owner, 'POST', '/images', { owner: env.p.other.projectId }),
      403,
      `You are not permitted to create images owned by '${env.p.other.projectId}'.`,
    );
    expectGlanceError(
      await img(env, env.p.owner, 'POST', '/images', { visibility: 'public' }),
      403,
      'You are not authorized to complete publicize_image action.',
    );
    expect(await snapshot(env)).toEqual(before);
    const c = await img(env, env.p.owner, 'POST', '/images', { visibility: 'community' });
    expect(c.status).toBe(201);
    const a = await img(env, env.p.admin, 'POST', '/images', {
      owner: env.p.other.projectId,
      visibility: 'public',
      id: '0e7a3a12-5b6c-4d7e-8f90-a1b2c3d4e5f6',
    });
    expect(a.status).toBe(201);
    expect(a.body).toMatchObject({ owner: env.p.other.projectId, visibility: 'public', id: '0e7a3a12-5b6c-4d7e-8f90-a1b2c3d4e5f6' });
    expectGlanceError(
      await img(env, env.p.admin, 'POST', '/images', { id: '0e7a3a12-5b6c-4d7e-8f90-a1b2c3d4e5f6' }),
      409,
      /already exists/,
    );
  });
});

/** Names of the fixture images in a list response. */
function names(body: { images: Array<{ name: string }> }): string[] {
  return body.images
    .map((i) => i.name)
    .filter((n) => /^(p|s|sp|c|pub|ap)-/.test(n))
    .sort();
}

describe('GET /v2/images', () => {
  it('lists what each persona may see, with accepted shared images only by default', async () => {
    const list = async (who: Persona, q = ''): Promise<string[]> => {
      const res = await img(env, who, 'GET', `/images?limit=1000${q}`);
      expect(res.status).toBe(200);
      return names(res.body);
    };
    expect(await list(env.p.admin)).toEqual(['ap-admin-private', 'p-private', 'pub-public', 's-shared', 'sp-shared-pending']);
    expect(await list(env.p.owner)).toEqual(['c-community', 'p-private', 'pub-public', 's-shared', 'sp-shared-pending']);
    expect(await list(env.p.lessee)).toEqual(['pub-public', 's-shared']);
    expect(await list(env.p.lessee, '&member_status=pending')).toEqual(['pub-public', 'sp-shared-pending']);
    expect(await list(env.p.lessee, '&member_status=all')).toEqual(['pub-public', 's-shared', 'sp-shared-pending']);
    expect(await list(env.p.lessee, '&visibility=community')).toEqual(['c-community']);
    expect(await list(env.p.other)).toEqual(['pub-public']);
    expect(await list(env.p.other, '&visibility=all')).toEqual(['c-community', 'pub-public']);
    expect(await list(env.p.admin, '&visibility=all')).toEqual([
      'ap-admin-private',
      'c-community',
      'p-private',
      'pub-public',
      's-shared',
      'sp-shared-pending',
    ]);
    expectGlanceError(await img(env, env.p.anonymous, 'GET', '/images'), 401);
  });

  it('filters by name, status, formats, owner, tags, properties, size and hidden', async () => {
    const o = env.p.owner;
    const a = await createImage(env, o, { name: 'flt-a', tags: ['gpu', 'x86'], os_distro: 'fedora', disk_format: 'qcow2' });
    const b = await createImage(env, o, { name: 'flt-b', tags: ['gpu'], os_distro: 'ubuntu', os_hidden: true });
    const q = async (query: string): Promise<string[]> => {
      const res = await img(env, o, 'GET', `/images?${query}`);
      expect(res.status, query).toBe(200);
      return res.body.images
        .map((i: { id: string }) => i.id)
        .filter((id: string) => id === a || id === b)
        .sort();
    };
    expect(await q('name=flt-a')).toEqual([a]);
    expect(await q('name=in:flt-a,flt-b')).toEqual([a]);
    expect(await q('name=in:flt-a,flt-b&os_hidden=true')).toEqual([b]);
    expect(await q('tag=gpu')).toEqual([a]);
    expect(await q('tag=gpu&tag=x86')).toEqual([a]);
    expect(await q('tag=arm')).toEqual([]);
    expect(await q('os_distro=fedora')).toEqual([a]);
    expect(await q('os_distro=ubuntu&os_hidden=true')).toEqual([b]);
    expect(await q('disk_format=qcow2&name=flt-a')).toEqual([a]);
    expect(await q('status=queued&name=flt-a')).toEqual([a]);
    expect(await q('status=active&name=flt-a')).toEqual([]);
    expect(await q(`owner=${o.projectId}&name=flt-a`)).toEqual([a]);
    expect(await q('size_min=1&name=flt-a')).toEqual([]);
    expect(await q('protected=false&name=flt-a')).toEqual([a]);
    expect(await q('created_at=gte:2000-01-01T00:00:00Z&name=flt-a')).toEqual([a]);
    expect(await q('created_at=lt:2000-01-01T00:00:00Z&name=flt-a')).toEqual([]);
  });

  it('sorts and pages with limit, marker, first and next', async () => {
    const o = env.p.other;
    const made: string[] = [];
    for (const n of ['pg-c', 'pg-a', 'pg-e', 'pg-b', 'pg-d']) made.push(await createImage(env, o, { name: n, tags: ['paged'] }));
    const seen: string[] = [];
    let url: string | null = '/images?sort_key=name&sort_dir=asc&limit=2&tag=paged';
    let pages = 0;
    while (url) {
      const res = await img(env, o, 'GET', url.replace(/^\/v2/, ''));
      expect(res.status).toBe(200);
      expect(res.body.schema).toBe('/v2/schemas/images');
      expect(res.body.first).toBe('/v2/images?sort_key=name&sort_dir=asc&limit=2&tag=paged');
      seen.push(...res.body.images.map((i: { name: string }) => i.name));
      url = res.body.next ?? null;
      if (url) expect(url).toMatch(/^\/v2\/images\?sort_key=name&sort_dir=asc&limit=2&tag=paged&marker=[0-9a-f-]{36}$/);
      pages++;
    }
    expect(seen).toEqual(['pg-a', 'pg-b', 'pg-c', 'pg-d', 'pg-e']);
    expect(pages).toBe(3);
    const desc = await img(env, o, 'GET', '/images?sort=name:desc&tag=paged');
    expect(desc.body.images.map((i: { name: string }) => i.name)).toEqual(['pg-e', 'pg-d', 'pg-c', 'pg-b', 'pg-a']);
    expect(desc.body.next).toBeUndefined();
    // Default order (created_at desc, then id): one image per page visits each exactly once.
    const visited: string[] = [];
    let next: string | undefined = '/images?limit=1&tag=paged';
    while (next) {
      const res = await img(env, o, 'GET', next.replace(/^\/v2/, ''));
      visited.push(...res.body.images.map((i: { id: string }) => i.id));
      next = res.body.next;
    }
    expect([...visited].sort()).toEqual([...made].sort());
    expect(visited).toHaveLength(made.length);
    expectGlanceError(await img(env, o, 'GET', `/images?marker=${ids.P}`), 400, `No image found with ID ${ids.P}`);
  });
});

describe('PATCH /v2/images/{id}', () => {
  it('lets admin and owner change the owner project image; 404 for those who cannot see it', async () => {
    const id = await createImage(env, env.p.owner, { name: 'patch-me', visibility: 'private' });
    const r1 = await patch(env, env.p.owner, id, [
      { op: 'replace', path: '/name', value: 'patched' },
      { op: 'add', path: '/os_distro', value: 'debian' },
      { op: 'replace', path: '/min_ram', value: 1024 },
      { op: 'add', path: '/tags', value: ['t1'] },
      { op: 'replace', path: '/protected', value: true },
    ]);
    expect(r1.status, r1.text).toBe(200);
    expect(r1.body).toMatchObject({ name: 'patched', os_distro: 'debian', min_ram: 1024, tags: ['t1'], protected: true });
    const r2 = await patch(env, env.p.admin, id, [
      { op: 'remove', path: '/os_distro' },
      { op: 'replace', path: '/protected', value: false },
    ]);
    expect(r2.status).toBe(200);
    expect(r2.body.os_distro).toBeUndefined();
    for (const who of ['lessee', 'other'] as const)
      expectGlanceError(await patch(env, env.p[who], id, [{ op: 'replace', path: '/name', value: 'x' }]), 404);
    expectGlanceError(await patch(env, env.p.anonymous, id, [{ op: 'replace', path: '/name', value: 'x' }]), 401);
    expect((await img(env, env.p.owner, 'GET', `/images/${id}`)).body.name).toBe('patched');
  });

  it('answers 403 to a caller who sees the image but may not change it', async () => {
    expectGlanceError(
      await patch(env, env.p.lessee, ids.S, [{ op: 'replace', path: '/name', value: 'x' }]),
      403,
      'You are not authorized to complete modify_image action.',
    );
    expectGlanceError(await patch(env, env.p.other, ids.PUB, [{ op: 'replace', path: '/name', value: 'x' }]), 403);
  });

  it('applies Glance rules: publicize is admin-only, owner admin-only, formats only while queued', async () => {
    const id = await createImage(env, env.p.owner, { name: 'rules' });
    expectGlanceError(
      await patch(env, env.p.owner, id, [{ op: 'replace', path: '/visibility', value: 'public' }]),
      403,
      'You are not authorized to complete publicize_image action.',
    );
    expect((await patch(env, env.p.owner, id, [{ op: 'replace', path: '/visibility', value: 'community' }])).status).toBe(200);
    expectGlanceError(
      await patch(env, env.p.owner, id, [{ op: 'replace', path: '/owner', value: env.p.other.projectId }]),
      403,
      "Owner can't be updated by non admin.",
    );
    expect((await patch(env, env.p.admin, id, [{ op: 'replace', path: '/visibility', value: 'public' }])).body.visibility).toBe('public');
    expectGlanceError(
      await patch(env, env.p.owner, id, [{ op: 'replace', path: '/status', value: 'active' }]),
      403,
      "Attribute 'status' is read-only.",
    );
    expectGlanceError(await patch(env, env.p.owner, id, [{ op: 'remove', path: '/name' }]), 403, 'Property name may not be removed.');
    expectGlanceError(
      await patch(env, env.p.owner, id, [{ op: 'replace', path: '/nope', value: 'x' }]),
      409,
      'Property nope does not exist.',
    );
    expectGlanceError(await patch(env, env.p.owner, id, [{ op: 'remove', path: '/nope' }]), 409, 'Property nope does not exist.');
    const moved = await patch(env, env.p.admin, id, [{ op: 'replace', path: '/owner', value: env.p.other.projectId }]);
    expect(moved.body.owner).toBe(env.p.other.projectId);
    expect((await img(env, env.p.owner, 'GET', `/images/${id}`)).status).toBe(200);
    expectGlanceError(await patch(env, env.p.owner, id, [{ op: 'replace', path: '/name', value: 'x' }]), 403);
  });

  it('keeps an empty patch a no-op for anyone who sees the image', async () => {
    const r = await patch(env, env.p.lessee, ids.S, []);
    expect(r.status).toBe(200);
    expect(r.body.id).toBe(ids.S);
  });
});

describe('DELETE /v2/images/{id}', () => {
  it('deletes for owner and admin, refuses a protected image, hides others', async () => {
    const mine = await createImage(env, env.p.owner, { name: 'del-1' });
    const prot = await createImage(env, env.p.owner, { name: 'del-2', protected: true });
    for (const who of ['lessee', 'other'] as const)
      expectGlanceError(await img(env, env.p[who], 'DELETE', `/images/${mine}`), 404, `Failed to find image ${mine} to delete`);
    expectGlanceError(await img(env, env.p.anonymous, 'DELETE', `/images/${mine}`), 401);
    expectGlanceError(
      await img(env, env.p.lessee, 'DELETE', `/images/${ids.S}`),
      403,
      'You are not authorized to complete delete_image action.',
    );
    for (const who of ['owner', 'admin'] as const)
      expectGlanceError(await img(env, env.p[who], 'DELETE', `/images/${prot}`), 403, `Image ${prot} is protected and cannot be deleted.`);
    expect((await img(env, env.p.owner, 'DELETE', `/images/${mine}`)).status).toBe(204);
    expectGlanceError(await img(env, env.p.owner, 'GET', `/images/${mine}`), 404);
    expect((await patch(env, env.p.owner, prot, [{ op: 'replace', path: '/protected', value: false }])).status).toBe(200);
    expect((await img(env, env.p.admin, 'DELETE', `/images/${prot}`)).status).toBe(204);
  });
});

describe('tags and activation', () => {
  it('adds and removes tags for the owner only', async () => {
    const id = await createImage(env, env.p.owner, { name: 'tagged', tags: ['one'] });
    expect((await img(env, env.p.owner, 'PUT', `/images/${id}/tags/two`)).status).toBe(204);
    expect((await img(env, env.p.owner, 'PUT', `/images/${id}/tags/two`)).status).toBe(204);
    expect((await img(env, env.p.owner, 'GET', `/images/${id}`)).body.tags).toEqual(['one', 'two']);
    expect((await img(env, env.p.owner, 'DELETE', `/images/${id}/tags/one`)).status).toBe(204);
    expectGlanceError(await img(env, env.p.owner, 'DELETE', `/images/${id}/tags/one`), 404);
    expectGlanceError(await img(env, env.p.other, 'PUT', `/images/${id}/tags/x`), 404);
    expectGlanceError(await img(env, env.p.lessee, 'PUT', `/images/${ids.S}/tags/x`), 403);
    expectGlanceError(await img(env, env.p.anonymous, 'PUT', `/images/${id}/tags/x`), 401);
    expect((await img(env, env.p.admin, 'PUT', `/images/${id}/tags/three`)).status).toBe(204);
    expect((await img(env, env.p.admin, 'DELETE', `/images/${id}/tags/three`)).status).toBe(204);
    expect((await img(env, env.p.admin, 'GET', `/images/${id}`)).body.tags).toEqual(['two']);
  });

  it('refuses to deactivate an image without data; 404/401 for others', async () => {
    expectGlanceError(
      await img(env, env.p.owner, 'POST', `/images/${ids.P}/actions/deactivate`),
      403,
      "Not allowed to deactivate image in status 'queued'",
    );
    expectGlanceError(
      await img(env, env.p.admin, 'POST', `/images/${ids.AP}/actions/reactivate`),
      403,
      "Not allowed to reactivate image in status 'queued'",
    );
    expectGlanceError(await img(env, env.p.other, 'POST', `/images/${ids.P}/actions/deactivate`), 404);
    expectGlanceError(await img(env, env.p.lessee, 'POST', `/images/${ids.S}/actions/reactivate`), 403);
    expectGlanceError(await img(env, env.p.anonymous, 'POST', `/images/${ids.P}/actions/reactivate`), 401);
  });
});
