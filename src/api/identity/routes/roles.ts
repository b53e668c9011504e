/**
 * Roles (Keystone API reference, v3 "Roles"): create, list (filter `name`), show, delete.
 * Only global roles exist in esi (`domain_id` null). Deleting a role removes its grants and
 * revokes the tokens of its holders (domain `RoleGrants.deleteRole`).
 */
import type { FastifyInstance } from 'fastify';
import type { IdentityApiDeps } from '../deps.ts';
import { NAME_QUERY, nameFilter, roleCreateInput, type Query } from '../inputs.ts';
import { collectionLinks, v3Root } from '../links.ts';
import { renderRole } from '../render.ts';
import { RoleCreateBody } from '../schemas.ts';
import { queryDoc, routeDoc } from '../../common/route-doc.ts';
import { RoleCollection, RoleResponse } from '../response-schemas.ts';

type IdParams = { Params: { id: string } };

/** Register the role routes. */
export function registerRoleRoutes(app: FastifyInstance, services: IdentityApiDeps): void {
  const { grants } = services.identity;
  const cfg = services.config;

  app.post('/roles', { config: { doc: routeDoc({ body: RoleCreateBody, response: RoleResponse }) } }, async (request, reply) => {
    const role = await grants.createRole(request.auth, roleCreateInput(request.body));
    return reply.code(201).send({ role: renderRole(role, v3Root(cfg)) });
  });

  app.get('/roles', { config: { doc: routeDoc({ query: queryDoc(NAME_QUERY), response: RoleCollection }) } }, async (request) => {
    const roles = await grants.listRoles(request.auth, nameFilter(request.query as Query));
    const v3 = v3Root(cfg);
    return { roles: roles.map((r) => renderRole(r, v3)), links: collectionLinks(cfg, request) };
  });

  app.get<IdParams>('/roles/:id', { config: { doc: routeDoc({ response: RoleResponse, noQuery: true }) } }, async (request) => {
    const role = await grants.getRole(request.auth, request.params.id);
    return { role: renderRole(role, v3Root(cfg)) };
  });

  app.delete<IdParams>('/roles/:id', { config: { doc: routeDoc({ answer: 'empty' }) } }, async (request, reply) => {
    await grants.deleteRole(request.auth, request.params.id);
    return reply.code(204).send();
  });
}
