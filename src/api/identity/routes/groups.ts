/**
 * Groups (Keystone API reference, v3 "Groups"): create, list (filters `name`, `domain_id`), show,
 * update, delete; members (`PUT`/`HEAD`/`GET`/`DELETE /v3/groups/{id}/users/{user_id}`, `GET
 * /v3/groups/{id}/users` with the user filters); a user's groups (`GET /v3/users/{id}/groups`,
 * filter `name`); and role grants to groups on projects and domains (v3 "Roles": "Assign role to
 * group on project/domain", check, unassign, list), which count for every member.
 *
 * Visibility and permissions are the domain's (`IdentityGroups`, `RoleGrants`): a group the
 * caller may not read is 404; grant routes are admin-only (403) as the user grants are. Answers
 * of `PUT`, `HEAD`, check and `DELETE` are 204 without a body.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AssignmentTarget, GroupAssignment } from '../../../domain/identity/index.ts';
import type { IdentityApiDeps } from '../deps.ts';
import { GROUP_LIST_QUERY, groupCreateInput, groupFilter, groupUpdateInput } from '../group-domain-inputs.ts';
import { NAME_QUERY, nameFilter, USER_LIST_QUERY, userFilter, type Query } from '../inputs.ts';
import { collectionLinks, v3Root } from '../links.ts';
import { renderGroup, renderRole, renderUser } from '../render.ts';
import { GroupCreateBody, GroupUpdateBody } from '../group-domain-inputs.ts';
import { queryDoc, routeDoc, type RouteDoc } from '../../common/route-doc.ts';
import { GroupCollection, GroupResponse, RoleCollection, UserCollection, UserGroupCollection } from '../response-schemas.ts';

type IdParams = { Params: { id: string } };
type MemberParams = { Params: { id: string; user: string } };
type GrantParams = { Params: { project?: string; domain?: string; group: string; role: string } };
type GrantListParams = { Params: { project?: string; domain?: string; group: string } };

/** Register the group routes, membership routes and group grant routes. */
export function registerGroupRoutes(app: FastifyInstance, services: IdentityApiDeps): void {
  const { groups, grants } = services.identity;
  const cfg = services.config;
  const noContent = (reply: FastifyReply): FastifyReply => reply.code(204).send();
  const empty = { config: { doc: routeDoc({ answer: 'empty' }) } };
  /** PUTs of a membership or grant: all they need is in the URL. */
  const put = { config: { doc: routeDoc({ noBody: true, answer: 'empty' }) } };
  const answer = (response: RouteDoc['response']) => ({ config: { doc: routeDoc({ response, noQuery: true }) } });
  const list = (response: RouteDoc['response'], names: Iterable<string>) => ({
    config: { doc: routeDoc({ response, query: queryDoc(names) }) },
  });
  const check = { config: { doc: routeDoc({ answer: 'empty', noQuery: true }) } };

  app.post('/groups', { config: { doc: routeDoc({ body: GroupCreateBody, response: GroupResponse }) } }, async (request, reply) => {
    const group = await groups.createGroup(request.auth, groupCreateInput(request.body));
    return reply.code(201).send({ group: renderGroup(group, v3Root(cfg)) });
  });

  app.get('/groups', list(GroupCollection, GROUP_LIST_QUERY), async (request) => {
    const list = await groups.listGroups(request.auth, groupFilter(request.query as Query));
    const v3 = v3Root(cfg);
    return { groups: list.map((g) => renderGroup(g, v3)), links: collectionLinks(cfg, request) };
  });

  app.get<IdParams>('/groups/:id', answer(GroupResponse), async (request) => {
    const group = await groups.getGroup(request.auth, request.params.id);
    return { group: renderGroup(group, v3Root(cfg)) };
  });

  app.patch<IdParams>('/groups/:id', { config: { doc: routeDoc({ body: GroupUpdateBody, response: GroupResponse }) } }, async (request) => {
    const group = await groups.updateGroup(request.auth, request.params.id, groupUpdateInput(request.body));
    return { group: renderGroup(group, v3Root(cfg)) };
  });

  app.delete<IdParams>('/groups/:id', empty, async (request, reply) => {
    await groups.deleteGroup(request.auth, request.params.id);
    return noContent(reply);
  });

  app.get<IdParams>('/groups/:id/users', list(UserCollection, USER_LIST_QUERY), async (request) => {
    const users = await groups.listUsers(request.auth, request.params.id, userFilter(request.query as Query));
    const v3 = v3Root(cfg);
    return { users: users.map((u) => renderUser(u, v3)), links: collectionLinks(cfg, request) };
  });

  const member = '/groups/:id/users/:user';
  app.put<MemberParams>(member, put, async (request, reply) => {
    await groups.addUser(request.auth, request.params.id, request.params.user);
    return noContent(reply);
  });
  app.head<MemberParams>(member, empty, async (request, reply) => {
    await groups.checkUser(request.auth, request.params.id, request.params.user);
    return noContent(reply);
  });
  app.get<MemberParams>(member, check, async (request, reply) => {
    await groups.checkUser(request.auth, request.params.id, request.params.user);
    return noContent(reply);
  });
  app.delete<MemberParams>(member, empty, async (request, reply) => {
    await groups.removeUser(request.auth, request.params.id, request.params.user);
    return noContent(reply);
  });

  app.get<IdParams>('/users/:id/groups', list(UserGroupCollection, NAME_QUERY), async (request) => {
    const list = await groups.listGroupsForUser(request.auth, request.params.id, nameFilter(request.query as Query));
    const v3 = v3Root(cfg);
    return {
      groups: list.map((g) => ({ ...renderGroup(g, v3), membership_expires_at: null })),
      links: collectionLinks(cfg, request),
    };
  });

  const assignment = (request: FastifyRequest<GrantParams>): GroupAssignment => ({
    group_id: request.params.group,
    role_id: request.params.role,
    target: targetOf(request.params),
  });
  for (const base of ['/projects/:project/groups/:group/roles', '/domains/:domain/groups/:group/roles']) {
    const one = `${base}/:role`;
    app.put<GrantParams>(one, put, async (request, reply) => {
      await grants.grantGroup(request.auth, assignment(request));
      return noContent(reply);
    });
    app.head<GrantParams>(one, empty, async (request, reply) => {
      await grants.checkGroup(request.auth, assignment(request));
      return noContent(reply);
    });
    app.get<GrantParams>(one, check, async (request, reply) => {
      await grants.checkGroup(request.auth, assignment(request));
      return noContent(reply);
    });
    app.delete<GrantParams>(one, empty, async (request, reply) => {
      await grants.revokeGroup(request.auth, assignment(request));
      return noContent(reply);
    });
    app.get<GrantListParams>(base, answer(RoleCollection), async (request) => {
      const roles = await grants.groupRolesOf(request.auth, request.params.group, targetOf(request.params));
      const v3 = v3Root(cfg);
      return { roles: roles.map((r) => renderRole(r, v3)), links: collectionLinks(cfg, request) };
    });
  }
}

function targetOf(params: { project?: string; domain?: string }): AssignmentTarget {
  return params.project !== undefined ? { type: 'project', id: params.project } : { type: 'domain', id: params.domain! };
}
