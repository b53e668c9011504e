/**
 * Discovery and wire format of the image API: the catalogue's `image` entry, the version
 * document (`GET /image/` 300, `GET /image/versions` 200, no token needed), the schemas (token
 * needed), 405 with `Allow`, and WebOb's error format chosen by `Accept` (JSON, HTML, text).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../../helpers/harness.ts';
import { expectGlanceError, img, startImageEnv, type ImageEnv } from './support.ts';

let env: ImageEnv;
beforeAll(async () => {
  env = await startImageEnv();
});
afterAll(async () => env?.ts.close());

describe('discovery', () => {
  it('announces the image service in the catalogue of every scoped token', async () => {
    const res = await call(env.ts, null, 'POST', '/identity/v3/auth/tokens', {
      auth: {
        identity: { methods: ['password'], password: { user: { name: 'owner1', domain: { id: 'default' }, password: 'pw-owner1' } } },
        scope: { project: { name: 'o1', domain: { id: 'default' } } },
      },
    });
    expect(res.status).toBe(201);
    const image = res.body.token.catalog.find((s: { type: string }) => s.type === 'image');
    expect(image).toMatchObject({ type: 'image', name: 'glance' });
    expect(image.endpoints.map((e: { interface: string; url: string }) => [e.interface, e.url]).sort()).toEqual([
      ['admin', `${env.ts.url}/image`],
      ['internal', `${env.ts.url}/image`],
      ['public', `${env.ts.url}/image`],
    ]);
  });

  it('serves the version document to anyone: 300 at the root, 200 at /versions', async () => {
    for (const [p, status] of [
      ['/image/', 300],
      ['/image', 300],
      ['/image/versions', 200],
    ] as const) {
      const res = await call(env.ts, null, 'GET', p);
      expect(res.status, p).toBe(status);
      expect(res.body.versions[0]).toEqual({ id: 'v2.7', status: 'CURRENT', links: [{ rel: 'self', href: `${env.ts.url}/image/v2/` }] });
      expect(res.body.versions.map((v: { id: string }) => v.id)).toContain('v2.0');
    }
  });

  it('serves the schemas to every persona with a token', async () => {
    for (const who of ['admin', 'owner', 'lessee', 'other'] as const) {
      const res = await img(env, env.p[who], 'GET', '/schemas/image');
      expect(res.status).toBe(200);
      expect(res.body.name).toBe('image');
      expect(res.body.additionalProperties).toEqual({ type: 'string' });
      expect(res.body.properties.disk_format.enum).toContain('qcow2');
    }
    expect((await img(env, env.p.owner, 'GET', '/schemas/images')).body.properties.images.items.name).toBe('image');
    expect((await img(env, env.p.owner, 'GET', '/schemas/member')).body.properties.status.enum).toEqual([
      'pending',
      'accepted',
      'rejected',
    ]);
    expect((await img(env, env.p.owner, 'GET', '/schemas/members')).body.name).toBe('members');
    expectGlanceError(await img(env, env.p.anonymous, 'GET', '/schemas/image'), 401);
  });
});

describe('wire format', () => {
  it('answers 405 with Allow for a method a path does not serve', async () => {
    const res = await img(env, env.p.owner, 'PUT', '/images', {});
    expectGlanceError(res, 405, 'The method PUT is not allowed for this resource.');
    expect(res.headers.get('allow')).toBe('GET, POST');
    expect((await img(env, env.p.owner, 'POST', '/schemas/image', {})).headers.get('allow')).toBe('GET');
    expect((await img(env, env.p.owner, 'HEAD', '/images/8b7f3c52-0000-4000-8000-000000000000/file')).status).toBe(405);
  });

  it('chooses the error body from Accept, as WebOb does', async () => {
    const path = '/image/v2/images/8b7f3c52-0000-4000-8000-000000000000';
    const get = (accept?: string) =>
      fetch(env.ts.url + path, { headers: { 'x-auth-token': env.p.owner.token!, ...(accept === undefined ? {} : { accept }) } });
    const json = await get('application/json');
    expect(json.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await json.json()).toEqual({
      message: 'No image found with ID 8b7f3c52-0000-4000-8000-000000000000<br /><br />\n\n\n',
      code: '404 Not Found',
      title: 'Not Found',
    });
    const html = await get('*/*');
    expect(html.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await html.text()).toMatch(/<title>404 Not Found<\/title>[\s\S]*No image found with ID 8b7f3c52/);
    const plain = await get('text/plain');
    expect(plain.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await plain.text()).toMatch(/^404 Not Found\n\nNo image found with ID/);
    expect(json.headers.get('x-openstack-request-id')).toMatch(/^req-/);
  });
});
