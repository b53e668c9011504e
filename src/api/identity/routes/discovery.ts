/**
 * Version discovery (Keystone API reference, "Versions"): `GET /identity` lists the versions
 * (300 Multiple Choices, as Keystone answers at its root) and `GET /identity/v3` describes v3.
 * keystoneauth reads these before it authenticates, so both routes are public.
 */
import type { FastifyInstance } from 'fastify';
import type { IdentityApiDeps } from '../deps.ts';
import { publicBase } from '../links.ts';
import { IdentityVersionResponse, IdentityVersionsResponse } from '../auth-response-schemas.ts';
import { routeDoc } from '../../common/route-doc.ts';

/** The Keystone v3 API version esi implements a subset of (Keystone 2023.x reports v3.14). */
export const IDENTITY_API_VERSION = 'v3.14';

/** Keystone's v3 version document. */
export function v3VersionDoc(base: string): Record<string, unknown> {
  return {
    id: IDENTITY_API_VERSION,
    status: 'stable',
    updated: '2020-04-07T00:00:00Z',
    links: [{ rel: 'self', href: `${base}/identity/v3/` }],
    'media-types': [{ base: 'application/json', type: 'application/vnd.openstack.identity-v3+json' }],
  };
}

/** Register `GET /` (→ `/identity`) and `GET /v3` (→ `/identity/v3`) on the identity plugin. */
export function registerDiscoveryRoutes(app: FastifyInstance, services: IdentityApiDeps): void {
  const base = publicBase(services.config);
  app.get(
    '/',
    { config: { public: true, doc: routeDoc({ response: IdentityVersionsResponse, status: 300, noQuery: true }) } },
    async (_request, reply) => reply.code(300).send({ versions: { values: [v3VersionDoc(base)] } }),
  );
  app.get('/v3', { config: { public: true, doc: routeDoc({ response: IdentityVersionResponse, noQuery: true }) } }, async () => ({
    version: v3VersionDoc(base),
  }));
}
