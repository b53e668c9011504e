/**
 * URLs and times as Keystone writes them: the public base URL of this esi server, `links`
 * objects, and ISO-8601 UTC times with microseconds.
 */
import type { FastifyRequest } from 'fastify';
import type { ApiSettings } from '../common/deps.ts';

/**
 * The base URL clients use to reach esi (no trailing slash), for links and the catalogue: the
 * configured public URL (`ESI_PUBLIC_URL`, default `http://<host>:<port>`; the server resolves
 * port 0 to the real port before the services are built).
 */
export function publicBase(config: ApiSettings): string {
  return config.publicUrl;
}

/** `<base>/identity/v3` — the root of every Keystone v3 link. */
export function v3Root(config: ApiSettings): string {
  return `${publicBase(config)}/identity/v3`;
}

/** Keystone's collection `links`: self is the requested URL; esi does not paginate. */
export function collectionLinks(config: ApiSettings, request: FastifyRequest): { self: string; previous: null; next: null } {
  return { self: `${publicBase(config)}${request.url}`, previous: null, next: null };
}

/**
 * Epoch milliseconds as Keystone prints times: ISO-8601 UTC with six fractional digits and
 * `Z`, e.g. `2026-01-01T00:00:00.000000Z` (keystone/common/utils.py `isotime(subsecond=True)`).
 */
export function keystoneTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}
