/**
 * Domains (Keystone API reference, v3 "Domains"), read-only: list (filter `name`) and show.
 * esi has the one `default` domain made by the bootstrap; a caller sees the domains of its
 * scope (admins see all), others are 404.
 */
import type { FastifyInstance } from 'fastify';
import type { IdentityApiDeps } from '../deps.ts';
import { nameFilter, type Query } from '../inputs.ts';
import { collectionLinks, v3Root } from '../links.ts';
import { renderDomain } from '../render.ts';

/** Register the domain routes. */
export function registerDomainRoutes(app: FastifyInstance, services: IdentityApiDeps): void {
  const { directory } = services.identity;
  const cfg = services.config;

  app.get('/domains', async (request) => {
    const domains = await directory.listDomains(request.auth, nameFilter(request.query as Query));
    const v3 = v3Root(cfg);
    return { domains: domains.map((d) => renderDomain(d, v3)), links: collectionLinks(cfg, request) };
  });

  app.get<{ Params: { id: string } }>('/domains/:id', async (request) => {
    const domain = await directory.getDomain(request.auth, request.params.id);
    return { domain: renderDomain(domain, v3Root(cfg)) };
  });
}
