/**
 * The scopes a token's user may ask for (Keystone API reference, v3 "Authentication and token
 * management"): `GET /v3/auth/domains` ("Get available domain scopes") — the enabled domains on
 * which the user holds a role of its own, as `{"domains": [domain…], "links": {…}}`.
 *
 * Its sibling `GET /v3/auth/projects` ("Get available project scopes": the enabled projects on
 * which the user holds a role) is served with the token routes in `./auth.ts`; `/v3/auth/system`
 * there too. Any valid token may ask (`identity:get_auth_domains`, open by default): the answer
 * only names what the token's own user can scope to.
 */
import type { FastifyInstance } from 'fastify';
import type { IdentityApiDeps } from '../deps.ts';
import { collectionLinks, v3Root } from '../links.ts';
import { renderDomain } from '../render.ts';
import { DomainCollection } from '../response-schemas.ts';
import { routeDoc } from '../../common/route-doc.ts';

/** Register `GET /v3/auth/domains`. */
export function registerAuthScopeRoutes(app: FastifyInstance, services: IdentityApiDeps): void {
  const { directory } = services.identity;
  const cfg = services.config;

  app.get('/auth/domains', { config: { doc: routeDoc({ response: DomainCollection, noQuery: true }) } }, async (request) => {
    const domains = await directory.listAuthDomains(request.auth);
    const v3 = v3Root(cfg);
    return { domains: domains.map((d) => renderDomain(d, v3)), links: collectionLinks(cfg, request) };
  });
}
