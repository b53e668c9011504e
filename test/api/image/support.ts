/**
 * Helpers of the image API tests: a server with personas, calls under `/image/v2`, image
 * creation and upload, JSON-patch requests, row counts (to prove refused requests write
 * nothing) and Glance error checks.
 */
import http from 'node:http';
import { expect } from 'vitest';
import {
  call,
  createPersonas,
  startTestServer,
  type Persona,
  type Personas,
  type TestResponse,
  type TestServer,
  type TestServerOptions,
} from '../../helpers/harness.ts';

/** A test server with the five personas. */
export interface ImageEnv {
  readonly ts: TestServer;
  readonly p: Personas;
}

/** Start a server (SQLite or PostgreSQL by `ESI_TEST_DB`) and create the personas. */
export async function startImageEnv(options: TestServerOptions = {}): Promise<ImageEnv> {
  const ts = await startTestServer(options);
  return { ts, p: await createPersonas(ts) };
}

/** The JSON-patch media type of Glance v2.1. */
export const PATCH_TYPE = 'application/openstack-images-v2.1-json-patch';

/** Call the image API (`/image/v2<path>`) as a persona. */
export function img(
  env: ImageEnv,
  persona: Persona | null,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<TestResponse> {
  return call(env.ts, persona, method, `/image/v2${path}`, body, headers);
}

/** PATCH an image with a v2.1 JSON-patch document. */
export function patch(env: ImageEnv, persona: Persona | null, id: string, ops: unknown): Promise<TestResponse> {
  return img(env, persona, 'PATCH', `/images/${id}`, ops, { 'content-type': PATCH_TYPE });
}

/** Create an image (raw/bare unless given) and return its id; fails the test on a non-201. */
export async function createImage(env: ImageEnv, persona: Persona, attrs: Record<string, unknown> = {}): Promise<string> {
  const res = await img(env, persona, 'POST', '/images', { name: 'test-image', disk_format: 'raw', container_format: 'bare', ...attrs });
  if (res.status !== 201) throw new Error(`image create as ${persona.name} answered ${res.status}: ${res.text}`);
  return res.body.id as string;
}

/** Upload bytes as the image's data (`application/octet-stream`, with `Content-Length`). */
export function upload(
  env: ImageEnv,
  persona: Persona | null,
  id: string,
  data: Uint8Array,
  headers: Record<string, string> = {},
): Promise<TestResponse> {
  return new Promise((resolve, reject) => {
    const url = new URL(`${env.ts.url}/image/v2/images/${id}/file`);
    const req = http.request(
      url,
      {
        method: 'PUT',
        headers: {
          'content-type': 'application/octet-stream',
          'content-length': String(data.length),
          accept: 'application/json',
          ...(persona?.token ? { 'x-auth-token': persona.token } : {}),
          ...headers,
        },
      },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (c: Buffer) => parts.push(c));
        res.on('end', () => {
          const text = Buffer.concat(parts).toString();
          let body: unknown;
          try {
            body = text === '' ? null : JSON.parse(text);
          } catch {
            body = text;
          }
          resolve({ status: res.statusCode ?? 0, headers: new Headers(res.headers as Record<string, string>), body, text });
        });
      },
    );
    req.on('error', reject);
    req.end(Buffer.from(data));
  });
}

/** Download an image's data as a persona. */
export async function download(
  env: ImageEnv,
  persona: Persona | null,
  id: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; data: Buffer }> {
  const res = await fetch(`${env.ts.url}/image/v2/images/${id}/file`, {
    headers: { accept: 'application/json', ...(persona?.token ? { 'x-auth-token': persona.token } : {}), ...headers },
  });
  return { status: res.status, headers: res.headers, data: Buffer.from(await res.arrayBuffer()) };
}

/** Count the rows of an image table. */
export async function countRows(env: ImageEnv, table: 'images' | 'image_properties' | 'image_tags' | 'image_members'): Promise<number> {
  const row = await env.ts.server.services.store.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** All image rows counted, as one comparable value. */
export async function snapshot(env: ImageEnv): Promise<Record<string, number>> {
  const tables = ['images', 'image_properties', 'image_tags', 'image_members'] as const;
  const counts = await Promise.all(tables.map((t) => countRows(env, t)));
  return Object.fromEntries(tables.map((t, i) => [t, counts[i]!]));
}

/** Expect a Glance (WebOb JSON) error with a status and, optionally, a message. */
export function expectGlanceError(res: TestResponse, status: number, message?: string | RegExp): void {
  expect(res.status, res.text).toBe(status);
  expect(res.body).toMatchObject({
    code: expect.stringMatching(new RegExp(`^${status} `)),
    title: expect.any(String),
    message: expect.any(String),
  });
  const text = String(res.body.message).replace(/<br \/><br \/>\n[\s\S]*$/, '');
  if (typeof message === 'string') expect(text).toBe(message);
  else if (message) expect(text).toMatch(message);
}

/**
 * Share an image with a persona's project and set the membership's status as that project
 * (owner adds, member answers).
 */
export async function share(
  env: ImageEnv,
  owner: Persona,
  id: string,
  member: Persona,
  status: 'pending' | 'accepted' | 'rejected',
): Promise<void> {
  const add = await img(env, owner, 'POST', `/images/${id}/members`, { member: member.projectId });
  if (add.status !== 200) throw new Error(`adding member answered ${add.status}: ${add.text}`);
  if (status === 'pending') return;
  const set = await img(env, member, 'PUT', `/images/${id}/members/${member.projectId}`, { status });
  if (set.status !== 200) throw new Error(`member status answered ${set.status}: ${set.text}`);
}
