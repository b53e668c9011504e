/**
 * Projects (Keystone API reference, v3 "Projects"): create, list (filters `name`, `domain_id`,
 * `parent_id`, `enabled`, `is_domain`), show, update, delete; and a user's projects
 * (`GET /v3/users/{id}/projects`). Permissions are the domain's (`IdentityDirectory`).
 *
 * An exception to esi's rule that what a caller may not see is 404, kept as Keystone's default
 * policy: a token that is neither admin nor scoped to the project gets 403 for
 * `GET /v3/projects/{id}` — for every id, existing or not, so nothing is confirmed — and the
 * list is admin only (403). The `openstack` CLI relies on it: it falls back to the id it was
 * given only on a 403 (`openstack network rbac create --target-project <id>` as a non-admin);
 * on a 404 it fails. A caller's own projects: `GET /v3/auth/projects` or
 * `GET /v3/users/{id}/projects`. Unknown ids are 404 for the admin.
 */
import type { FastifyInstance } from 'fastify';
import type { IdentityApiDeps } from '../deps.ts';
import { PROJECT_LIST_QUERY, projectCreateInput, projectFilter, projectUpdateInput, queryBool, type Query } from '../inputs.ts';
import { collectionLinks, v3Root } from '../links.ts';
import { renderProject } from '../render.ts';
import { ProjectCreateBody, ProjectUpdateBody } from '../schemas.ts';
import { queryDoc, routeDoc } from '../../common/route-doc.ts';
import { ProjectCollection, ProjectResponse } from '../response-schemas.ts';

type IdParams = { Params: { id: string } };

/** Register the project routes. */
export function registerProjectRoutes(app: FastifyInstance, services: IdentityApiDeps): void {
  const { directory } = services.identity;
  const cfg = services.config;

  app.post('/projects', { config: { doc: routeDoc({ body: ProjectCreateBody, response: ProjectResponse }) } }, async (request, reply) => {
    const project = await directory.createProject(request.auth, projectCreateInput(request.body));
    return reply.code(201).send({ project: renderProject(project, v3Root(cfg)) });
  });

  app.get(
    '/projects',
    { config: { doc: routeDoc({ query: queryDoc(PROJECT_LIST_QUERY), response: ProjectCollection }) } },
    async (request) => {
      const query = request.query as Query;
      const filter = projectFilter(query);
      // No project in esi acts as a domain, so `?is_domain=true` selects nothing.
      const projects = queryBool(query, 'is_domain') === true ? [] : await directory.listProjects(request.auth, filter);
      const v3 = v3Root(cfg);
      return { projects: projects.map((p) => renderProject(p, v3)), links: collectionLinks(cfg, request) };
    },
  );

  app.get<IdParams>('/projects/:id', { config: { doc: routeDoc({ response: ProjectResponse, noQuery: true }) } }, async (request) => {
    const project = await directory.getProject(request.auth, request.params.id);
    return { project: renderProject(project, v3Root(cfg)) };
  });

  app.patch<IdParams>(
    '/projects/:id',
    { config: { doc: routeDoc({ body: ProjectUpdateBody, response: ProjectResponse }) } },
    async (request) => {
      const project = await directory.updateProject(request.auth, request.params.id, projectUpdateInput(request.body));
      return { project: renderProject(project, v3Root(cfg)) };
    },
  );

  app.delete<IdParams>('/projects/:id', { config: { doc: routeDoc({ answer: 'empty' }) } }, async (request, reply) => {
    await directory.deleteProject(request.auth, request.params.id);
    return reply.code(204).send();
  });

  app.get<IdParams>(
    '/users/:id/projects',
    { config: { doc: routeDoc({ response: ProjectCollection, noQuery: true }) } },
    async (request) => {
      const projects = await directory.listUserProjects(request.auth, request.params.id);
      const v3 = v3Root(cfg);
      return { projects: projects.map((p) => renderProject(p, v3)), links: collectionLinks(cfg, request) };
    },
  );
}
