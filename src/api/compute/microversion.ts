/**
 * Nova API microversions (Nova `api/openstack/api_version_request.py`, described in our words):
 * the request's version comes from `OpenStack-API-Version: compute 2.X` or, failing that,
 * `X-OpenStack-Nova-API-Version: 2.X`; absent → 2.1; `latest` → the maximum. A malformed value
 * is 400, a version outside [2.1, {@link MAX_MINOR}] is 406. Every `/v2.1` response carries
 * both headers with the version used, and `Vary` naming them.
 *
 * esi serves 2.1 … 2.90 for its subset: the behaviours of those versions that its resources
 * have are honoured (see the render and input modules: key pair type 2.2 and user_id 2.10,
 * server description 2.19, networks required 2.37, embedded flavor 2.47, flavor description
 * 2.55 and extra specs 2.61, swap 0 at 2.75, hostname 2.90).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';

/** Lowest and highest supported minor versions (2.X). */
export const MIN_MINOR = 1;
export const MAX_MINOR = 90;
export const NOVA_HEADER = 'x-openstack-nova-api-version';
export const GENERIC_HEADER = 'openstack-api-version';

declare module 'fastify' {
  interface FastifyRequest {
    /** Negotiated Nova minor version (2.X) of a compute request. */
    novaVersion: number;
  }
}

/** A microversion the API does not serve (406) or cannot parse (400). */
export class VersionError extends Error {
  constructor(
    readonly status: 400 | 406,
    message: string,
  ) {
    super(message);
    this.name = 'VersionError';
  }
}

/** The requested version string, from either header (the generic one wins), or null. */
function requested(req: FastifyRequest): string | null {
  const generic = req.headers[GENERIC_HEADER];
  const g = Array.isArray(generic) ? generic.join(',') : generic;
  if (g !== undefined) {
    for (const part of g.split(',')) {
      const [service, value] = part.trim().split(/\s+/, 2);
      if (service?.toLowerCase() === 'compute' && value !== undefined) return value;
    }
  }
  const nova = req.headers[NOVA_HEADER];
  const n = Array.isArray(nova) ? nova[0] : nova;
  return n !== undefined && n.trim() !== '' ? n.trim() : null;
}

/**
 * The minor version of a request.
 * @throws VersionError (400 malformed, 406 unsupported)
 */
export function negotiateNovaVersion(req: FastifyRequest): number {
  const v = requested(req);
  if (v === null) return MIN_MINOR;
  if (v.toLowerCase() === 'latest') return MAX_MINOR;
  const m = /^(\d+)\.(\d+)$/.exec(v);
  if (!m) throw new VersionError(400, `Invalid API version request string: ${v.slice(0, 40)}`);
  const major = Number(m[1]);
  const minor = Number(m[2]);
  if (major !== 2 || minor < MIN_MINOR || minor > MAX_MINOR) {
    throw new VersionError(406, `Version ${v} is not supported by the API. Minimum is 2.${MIN_MINOR} and maximum is 2.${MAX_MINOR}.`);
  }
  return minor;
}

/** Set the version headers of a response. */
export function setVersionHeaders(reply: FastifyReply, minor: number): void {
  reply.header(NOVA_HEADER, `2.${minor}`);
  reply.header(GENERIC_HEADER, `compute 2.${minor}`);
  reply.header('vary', 'OpenStack-API-Version, X-OpenStack-Nova-API-Version');
}
