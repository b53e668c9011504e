/**
 * Domains (Keystone API reference, v3 "Domains"): create, list (filters `name`, `enabled`),
 * show, update (`name`, `description`, `enabled`) and delete (only a disabled domain: Keystone's
 * 403 otherwise). A caller sees the domains of its scope (admins see all), others are 404;
 * creating, updating and deleting are admin-only. The `default` domain is immutable (403).
 * Rules are the domain's: `IdentityDirectory.getDomain/listDomains` and `DomainAdmin`
 * (src/domain/identity/domains.ts).
 */
import type { FastifyInstance } from 'fastify';
import type { IdentityApiDeps } from '../deps.ts';
import { DOMAIN_LIST_QUERY, domainCreateInput, domainFilter, domainUpdateInput } from '../group-domain-inputs.ts';
import type { Query } from '../inputs.ts';
import { collectionLinks, v3Root } from '../links.ts';
import { renderDomain } from '../render.ts';
import { DomainCreateBody, DomainUpdateBody } from '../group-domain-inputs.ts';
import { queryDoc, routeDoc } from '../../common/route-doc.ts';
import { DomainCollection, DomainResponse } from '../response-schemas.ts';

type IdParams = { Params: { id: string } };

/** Register the domain routes. */
export function registerDomainRoutes(app: FastifyInstance, services: IdentityApiDeps): void {
  const { directory, domains: admin } = services.identity;
  const cfg = services.config;

  app.post('/domains', { config: { doc: routeDoc({ body: DomainCreateBody, response: DomainResponse }) } }, async (request, reply) => {
    const domain = await admin.createDomain(request.auth, domainCreateInput(request.body));
    return reply.code(201).send({ domain: renderDomain(domain, v3Root(cfg)) });
  });

  app.get(
    '/domains',
    { config: { doc: routeDoc({ query: queryDoc(DOMAIN_LIST_QUERY), response: DomainCollection }) } },
    async (request) => {
      const { name, enabled } = domainFilter(request.query as Query);
      const domains = (await directory.listDomains(request.auth, name !== undefined ? { name } : {})).filter(
        (d) => enabled === undefined || d.enabled === enabled,
      );
      const v3 = v3Root(cfg);
      return { domains: domains.map((d) => renderDomain(d, v3)), links: collectionLinks(cfg, request) };
    },
  );

  app.get<IdParams>('/domains/:id', { config: { doc: routeDoc({ response: DomainResponse, noQuery: true }) } }, async (request) => {
    const domain = await directory.getDomain(request.auth, request.params.id);
    return { domain: renderDomain(domain, v3Root(cfg)) };
  });

  app.patch<IdParams>(
    '/domains/:id',
    { config: { doc: routeDoc({ body: DomainUpdateBody, response: DomainResponse }) } },
    async (request) => {
      const domain = await admin.updateDomain(request.auth, request.params.id, domainUpdateInput(request.body));
      return { domain: renderDomain(domain, v3Root(cfg)) };
    },
  );

  app.delete<IdParams>('/domains/:id', { config: { doc: routeDoc({ answer: 'empty' }) } }, async (request, reply) => {
    await admin.deleteDomain(request.auth, request.params.id);
    return reply.code(204).send();
  });
}
