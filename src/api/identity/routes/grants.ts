/**
 * Role grants and role assignments (Keystone API reference, v3 "Roles": "Assign role to user on
 * project", "Check whether user has role assignment on project", "Unassign role from user on
 * project", "List role assignments for user on project"; "System Role Assignments"; "List role
 * assignments").
 *
 * Grant answers are 204 without a body. Revoking a grant revokes the user's tokens on that scope
 * at once (domain `RoleGrants.revoke`).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AuthContext } from '../../../domain/auth.ts';
import { ForbiddenError } from '../../../domain/errors.ts';
import type { AssignmentTarget, Identity, ListedAssignment, RoleAssignment } from '../../../domain/identity/index.ts';
import type { IdentityApiDeps } from '../deps.ts';
import { ASSIGNMENT_LIST_QUERY, assignmentListQuery, type Query } from '../inputs.ts';
import { collectionLinks, v3Root } from '../links.ts';
import { renderAssignment, renderRole, type AssignmentNames } from '../render.ts';
import { RoleAssignmentCollection, RoleCollection } from '../response-schemas.ts';
import { queryDoc, routeDoc } from '../../common/route-doc.ts';

type GrantParams = { Params: { project?: string; user: string; role: string } };
type ListParams = { Params: { project?: string; user: string } };

/** Register grant routes on projects and on the system, and `GET /v3/role_assignments`. */
export function registerGrantRoutes(app: FastifyInstance, services: IdentityApiDeps): void {
  const { grants } = services.identity;
  const cfg = services.config;
  const assignment = (request: FastifyRequest<GrantParams>): RoleAssignment => ({
    user_id: request.params.user,
    role_id: request.params.role,
    target: targetOf(request.params.project),
  });
  const noContent = (reply: FastifyReply): FastifyReply => reply.code(204).send();
  const empty = { config: { doc: routeDoc({ answer: 'empty' }) } };
  const check = { config: { doc: routeDoc({ answer: 'empty', noQuery: true }) } };

  for (const base of ['/projects/:project/users/:user/roles', '/system/users/:user/roles']) {
    const one = `${base}/:role`;
    // A grant's PUT reads no body: all it needs is in the URL.
    app.put<GrantParams>(one, { config: { doc: routeDoc({ noBody: true, answer: 'empty' }) } }, async (request, reply) => {
      await grants.grant(request.auth, assignment(request));
      return noContent(reply);
    });
    app.head<GrantParams>(one, empty, async (request, reply) => {
      await grants.check(request.auth, assignment(request));
      return noContent(reply);
    });
    app.get<GrantParams>(one, check, async (request, reply) => {
      await grants.check(request.auth, assignment(request));
      return noContent(reply);
    });
    app.delete<GrantParams>(one, empty, async (request, reply) => {
      await grants.revoke(request.auth, assignment(request));
      return noContent(reply);
    });
    app.get<ListParams>(base, { config: { doc: routeDoc({ response: RoleCollection, noQuery: true }) } }, async (request) => {
      const roles = await grants.rolesOf(request.auth, request.params.user, targetOf(request.params.project));
      const v3 = v3Root(cfg);
      return { roles: roles.map((r) => renderRole(r, v3)), links: collectionLinks(cfg, request) };
    });
  }

  app.get(
    '/role_assignments',
    { config: { doc: routeDoc({ query: queryDoc(ASSIGNMENT_LIST_QUERY), response: RoleAssignmentCollection }) } },
    async (request) => {
      const q = assignmentListQuery(request.query as Query);
      const list = q.matchesNothing ? [] : await grants.listAssignments(request.auth, q.query);
      const names = q.includeNames ? await assignmentNames(services.identity, request.auth, list) : null;
      const v3 = v3Root(cfg);
      return { role_assignments: list.map((a) => renderAssignment(a, v3, names)), links: collectionLinks(cfg, request) };
    },
  );
}

function targetOf(project: string | undefined): AssignmentTarget {
  return project !== undefined ? { type: 'project', id: project } : { type: 'system', id: 'all' };
}

/**
 * Names for `include_names`: role names where the caller may list roles, user names of the
 * users the caller may read, and the names of the projects, groups and domains in the listed
 * assignments (which the caller was already allowed to list).
 */
async function assignmentNames(identity: Identity, ctx: AuthContext, list: readonly ListedAssignment[]): Promise<AssignmentNames> {
  const roles = await identity.grants.listRoles(ctx, {}).catch((err: unknown) => {
    if (err instanceof ForbiddenError) return [];
    throw err;
  });
  const userIds = list.flatMap((a) => ('user_id' in a ? [a.user_id] : []));
  const users = await identity.directory.readableUsers(ctx, [...new Set(userIds)]);
  const projects = await identity.directory.projectsByIds(list.flatMap((a) => (a.target.type === 'project' ? [a.target.id] : [])));
  const groups = await identity.groups.groupsByIds(list.flatMap((a) => ('group_id' in a ? [a.group_id] : [])));
  const domainIds = [
    ...users.map((u) => u.domain_id),
    ...[...projects.values()].map((p) => p.domain_id),
    ...[...groups.values()].map((g) => g.domain_id),
    ...list.flatMap((a) => (a.target.type === 'domain' ? [a.target.id] : [])),
  ];
  return {
    roles: new Map(roles.map((r) => [r.id, r.name])),
    users: new Map(users.map((u) => [u.id, u])),
    projects,
    groups,
    domains: await identity.domains.namesByIds(domainIds),
  };
}
