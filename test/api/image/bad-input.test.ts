/**
 * Bad input to the image API: malformed JSON, wrong types, unknown and read-only attributes,
 * bad JSON-patch documents and media types, bad queries, unknown ids, oversized bodies and
 * uploads beyond the image size cap (here 1 MiB, `ESI_MAX_IMAGE_SIZE`). Every case is a 4xx
 * in Glance's error format, and nothing is written (row counts and image files unchanged).
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../helpers/wait-for.ts';
import { createImage, expectGlanceError, img, PATCH_TYPE, snapshot, startImageEnv, upload, type ImageEnv } from './support.ts';

const MAX_IMAGE = 1024 * 1024;
let env: ImageEnv;
let queued: string;

beforeAll(async () => {
  env = await startImageEnv({ env: { ESI_MAX_IMAGE_SIZE: String(MAX_IMAGE), ESI_MAX_BODY_BYTES: '4096' } });
  queued = await createImage(env, env.p.owner, { name: 'target', os_distro: 'debian' });
});
afterAll(async () => env?.ts.close());

/** Files in the image store, temporary files included (as `.tmp/<name>`, whichever process's folder holds them). */
function imageFiles(): string[] {
  const dir = path.join(env.ts.dataDir, 'images');
  const tmp = path.join(dir, '.tmp');
  const temporary = fs
    .readdirSync(tmp, { recursive: true, encoding: 'utf8' })
    .filter((f) => fs.statSync(path.join(tmp, f)).isFile())
    .map((f) => `.tmp/${path.basename(f)}`);
  return [...fs.readdirSync(dir).filter((f) => f !== '.tmp'), ...temporary];
}

type Case = [
  label: string,
  method: string,
  path: string,
  body: unknown,
  status: number,
  message?: string | RegExp,
  headers?: Record<string, string>,
];

const UNKNOWN = '8b7f3c52-0000-4000-8000-000000000000';
const props = (n: number): Record<string, string> => Object.fromEntries(Array.from({ length: n }, (_, i) => [`p${i}`, 'v']));

const cases = (): Case[] => [
  ['create: malformed JSON', 'POST', '/images', '{"name": ', 400, 'Malformed JSON in request body.'],
  ['create: empty JSON body', 'POST', '/images', '', 400, 'Body expected in request.', { 'content-type': 'application/json' }],
  ['create: body is an array', 'POST', '/images', [{ name: 'x' }], 400, /must be a JSON object/],
  ['create: body is a string', 'POST', '/images', '"x"', 400, /must be a JSON object/],
  ['create: not JSON', 'POST', '/images', 'name=x', 415, undefined, { 'content-type': 'text/plain' }],
  [
    'create: name not a string',
    'POST',
    '/images',
    { name: 5 },
    400,
    "Provided object does not match schema 'image': 5 is not of type 'null', 'string'",
  ],
  ['create: name too long', 'POST', '/images', { name: 'n'.repeat(256) }, 400, /is too long/],
  [
    'create: unknown visibility',
    'POST',
    '/images',
    { visibility: 'secret' },
    400,
    /'secret' is not one of \['public', 'private', 'shared', 'community'\]/,
  ],
  ['create: protected not boolean', 'POST', '/images', { protected: 'yes' }, 400, /'yes' is not of type 'boolean'/],
  [
    'create: negative min_ram',
    'POST',
    '/images',
    { min_ram: -1 },
    400,
    "Invalid value '-1' for parameter 'min_ram': Cannot be a negative value",
  ],
  ['create: fractional min_disk', 'POST', '/images', { min_disk: 1.5 }, 400, /1.5 is not of type 'integer'/],
  ['create: huge min_disk', 'POST', '/images', { min_disk: 2 ** 40 }, 400, /Must be at most/],
  ['create: tags not a list', 'POST', '/images', { tags: 'gpu' }, 400, /is not of type 'array'/],
  ['create: tag not a string', 'POST', '/images', { tags: [1] }, 400, /1 is not of type 'string'/],
  ['create: unknown disk_format', 'POST', '/images', { disk_format: 'exe' }, 400, /'exe' is not one of \[None, 'ami'/],
  ['create: unknown container_format', 'POST', '/images', { container_format: 'zip' }, 400, /'zip' is not one of/],
  ['create: id not a UUID', 'POST', '/images', { id: 'my-image' }, 400, /does not match/],
  ['create: custom property not a string', 'POST', '/images', { cpu: 4 }, 400, /4 is not of type 'string'/],
  ['create: custom property null', 'POST', '/images', { cpu: null }, 400, /None is not of type 'string'/],
  [
    'create: property name too long',
    'POST',
    '/images',
    { ['k'.repeat(256)]: 'v' },
    400,
    'Custom property should not be greater than 255 characters.',
  ],
  ['create: read-only status', 'POST', '/images', { status: 'active' }, 403, "Attribute 'status' is read-only."],
  ['create: read-only size', 'POST', '/images', { size: 1 }, 403, "Attribute 'size' is read-only."],
  ['create: disallowed self', 'POST', '/images', { self: '/x' }, 403, "Attribute 'self' is read-only."],
  ['create: reserved locations', 'POST', '/images', { locations: [] }, 403, "Attribute 'locations' is reserved."],
  [
    'create: reserved os_glance prefix',
    'POST',
    '/images',
    { os_glance_import_task: 'x' },
    403,
    "Attribute 'os_glance_import_task' is reserved.",
  ],
  ['create: too many properties', 'POST', '/images', props(129), 413, /Maximum number of image properties exceeded/],
  ['create: too many tags', 'POST', '/images', { tags: Array.from({ length: 129 }, (_, i) => `t${i}`) }, 413, /Maximum number of tags/],
  ['create: oversized body', 'POST', '/images', { name: 'x', blob: 'x'.repeat(5000) }, 413],
  ['patch: JSON media type', 'PATCH', `/images/${'%ID%'}`, [], 415, /not supported/, { 'content-type': 'application/json' }],
  ['patch: malformed JSON', 'PATCH', '/images/%ID%', '[{"op": ', 400, 'Malformed JSON in request body.', { 'content-type': PATCH_TYPE }],
  [
    'patch: object body',
    'PATCH',
    '/images/%ID%',
    { op: 'add' },
    400,
    'Request body must be a JSON array of operation objects.',
    { 'content-type': PATCH_TYPE },
  ],
  [
    'patch: unknown op',
    'PATCH',
    '/images/%ID%',
    [{ op: 'move', path: '/name' }],
    400,
    /Invalid operation: `move`/,
    { 'content-type': PATCH_TYPE },
  ],
  [
    'patch: deep pointer',
    'PATCH',
    '/images/%ID%',
    [{ op: 'add', path: '/tags/0', value: 'x' }],
    400,
    "Invalid JSON pointer for this resource: '/tags/0'",
    { 'content-type': PATCH_TYPE },
  ],
  [
    'patch: missing value',
    'PATCH',
    '/images/%ID%',
    [{ op: 'replace', path: '/name' }],
    400,
    'Operation "replace" requires a member named "value".',
    { 'content-type': PATCH_TYPE },
  ],
  [
    'patch: wrong value type',
    'PATCH',
    '/images/%ID%',
    [{ op: 'replace', path: '/min_ram', value: 'lots' }],
    400,
    /'lots' is not of type 'integer'/,
    { 'content-type': PATCH_TYPE },
  ],
  [
    'patch: read-only checksum',
    'PATCH',
    '/images/%ID%',
    [{ op: 'replace', path: '/checksum', value: 'x' }],
    403,
    "Attribute 'checksum' is read-only.",
    { 'content-type': PATCH_TYPE },
  ],
  [
    'patch: second op fails, first not applied',
    'PATCH',
    '/images/%ID%',
    [
      { op: 'replace', path: '/name', value: 'changed' },
      { op: 'remove', path: '/ghost' },
    ],
    409,
    'Property ghost does not exist.',
    { 'content-type': PATCH_TYPE },
  ],
  [
    'patch: unknown owner project (admin)',
    'PATCH',
    '/images/%ID%',
    [{ op: 'replace', path: '/owner', value: 'ghost-project' }],
    400,
    /project ghost-project does not exist/,
    { 'content-type': PATCH_TYPE },
  ],
  ['patch: unknown image', 'PATCH', `/images/${UNKNOWN}`, [], 404, `No image found with ID ${UNKNOWN}`, { 'content-type': PATCH_TYPE }],
  ['show: unknown image', 'GET', `/images/${UNKNOWN}`, undefined, 404, `No image found with ID ${UNKNOWN}`],
  ['show: not a UUID', 'GET', '/images/not-a-uuid', undefined, 404, 'No image found with ID not-a-uuid'],
  ['delete: unknown image', 'DELETE', `/images/${UNKNOWN}`, undefined, 404, `Failed to find image ${UNKNOWN} to delete`],
  ['delete: with a body', 'DELETE', '/images/%ID%', { really: true }, 400, 'A body is not expected with this request.'],
  ['list: bad limit', 'GET', '/images?limit=ten', undefined, 400, 'limit param must be an integer'],
  ['list: bad sort key', 'GET', '/images?sort_key=colour', undefined, 400, /Invalid sort key: colour/],
  ['list: unknown marker', 'GET', `/images?marker=${UNKNOWN}`, undefined, 400, `No image found with ID ${UNKNOWN}`],
  ['list: bad member_status', 'GET', '/images?member_status=maybe', undefined, 400, 'Invalid status: maybe'],
  ['list: bad time filter', 'GET', '/images?created_at=gt:soon', undefined, 400, /Bad "created_at" query filter format/],
  ['tag: too long', 'PUT', `/images/%ID%/tags/${'t'.repeat(256)}`, undefined, 400, /is too long/],
  ['members: unknown image', 'GET', `/images/${UNKNOWN}/members`, undefined, 404, `Image ${UNKNOWN} not found.`],
  ['upload: unknown image', 'PUT', `/images/${UNKNOWN}/file`, 'data', 404, undefined, { 'content-type': 'application/octet-stream' }],
  ['upload: no content type', 'PUT', '/images/%ID%/file', 'data', 415, /not supported/, { 'content-type': '' }],
  ['download: unknown image', 'GET', `/images/${UNKNOWN}/file`, undefined, 404],
  ['unknown route', 'GET', '/imagez', undefined, 404, 'The resource could not be found.'],
  ['wrong method', 'POST', '/images/%ID%', {}, 405, 'The method POST is not allowed for this resource.'],
];

describe('bad input writes nothing', () => {
  it('answers each case with a Glance 4xx', async () => {
    for (const [label, method, p, body, status, message, headers] of cases()) {
      const before = await snapshot(env);
      const persona = label.includes('(admin)') ? env.p.admin : env.p.owner;
      const res = await img(env, persona, method, p.replace('%ID%', queued), body, headers ?? {});
      expect(res.status, `${label}: ${res.text}`).toBe(status);
      expectGlanceError(res, status, message);
      expect(await snapshot(env), label).toEqual(before);
    }
    const after = await img(env, env.p.owner, 'GET', `/images/${queued}`);
    expect(after.body).toMatchObject({ name: 'target', os_distro: 'debian', status: 'queued', owner: env.p.owner.projectId });
  });

  it('names the patch media types it accepts on 415', async () => {
    const res = await img(env, env.p.owner, 'PATCH', `/images/${queued}`, [], { 'content-type': 'application/json-patch+json' });
    expect(res.status).toBe(415);
    expect(res.headers.get('accept-patch')).toBe(
      'application/openstack-images-v2.0-json-patch, application/openstack-images-v2.1-json-patch',
    );
  });

  it('refuses an upload whose Content-Length exceeds the cap before reading it (413)', async () => {
    const id = await createImage(env, env.p.owner, { name: 'too-big' });
    const res = await upload(env, env.p.owner, id, Buffer.alloc(MAX_IMAGE + 1));
    expectGlanceError(res, 413, `The incoming image is too large: the limit is ${MAX_IMAGE} bytes.`);
    expect((await img(env, env.p.owner, 'GET', `/images/${id}`)).body.status).toBe('queued');
    expect((await upload(env, env.p.owner, id, Buffer.alloc(MAX_IMAGE))).status).toBe(204);
  });

  it('stops a chunked upload at the cap (413), keeps nothing, and leaves the image queued', async () => {
    const id = await createImage(env, env.p.owner, { name: 'chunked-too-big' });
    const status = await new Promise<number>((resolve) => {
      const req = http.request(`${env.ts.url}/image/v2/images/${id}/file`, {
        method: 'PUT',
        headers: {
          'content-type': 'application/octet-stream',
          'transfer-encoding': 'chunked',
          accept: 'application/json',
          'x-auth-token': env.p.owner.token!,
        },
      });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', () => resolve(-1));
      const chunk = Buffer.alloc(64 * 1024);
      let sent = 0;
      const pump = (): void => {
        while (sent < 4 * MAX_IMAGE) {
          sent += chunk.length;
          if (!req.write(chunk)) {
            req.once('drain', pump);
            return;
          }
        }
        req.end();
      };
      pump();
    });
    expect([413, -1]).toContain(status);
    await waitFor(
      async () => (await img(env, env.p.owner, 'GET', `/images/${id}`)).body,
      (b) => b.status === 'queued',
      { intervalMs: 20, what: `image ${id} back to queued` },
    );
    expect((await img(env, env.p.owner, 'GET', `/images/${id}`)).body).toMatchObject({ status: 'queued', size: null });
    expect(imageFiles().filter((f) => f.includes(id))).toEqual([]);
  });
});
