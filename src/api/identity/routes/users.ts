/**
 * Users (Keystone API reference, v3 "Users"): create, list (filters `name`, `domain_id`,
 * `enabled`), show, update, delete, and a user's own password change (`POST
 * /v3/users/{id}/password`, public: the original password authenticates it). A user the caller may not read is 404 (the domain lets
 * admins read every user and a user read itself). Passwords are accepted, never shown.
 */
import type { FastifyInstance } from 'fastify';
import type { IdentityApiDeps } from '../deps.ts';
import { passwordChangeInput, USER_LIST_QUERY, userCreateInput, userFilter, userUpdateInput, type Query } from '../inputs.ts';
import { collectionLinks, v3Root } from '../links.ts';
import { renderUser } from '../render.ts';
import { PasswordChangeBody, UserCreateBody, UserUpdateBody } from '../schemas.ts';
import { queryDoc, routeDoc } from '../../common/route-doc.ts';
import { UserCollection, UserResponse } from '../response-schemas.ts';

type IdParams = { Params: { id: string } };

/** Register the user routes. */
export function registerUserRoutes(app: FastifyInstance, services: IdentityApiDeps): void {
  const { directory } = services.identity;
  const cfg = services.config;

  app.post('/users', { config: { doc: routeDoc({ body: UserCreateBody, response: UserResponse }) } }, async (request, reply) => {
    const user = await directory.createUser(request.auth, userCreateInput(request.body));
    return reply.code(201).send({ user: renderUser(user, v3Root(cfg)) });
  });

  app.get('/users', { config: { doc: routeDoc({ query: queryDoc(USER_LIST_QUERY), response: UserCollection }) } }, async (request) => {
    const users = await directory.listUsers(request.auth, userFilter(request.query as Query));
    const v3 = v3Root(cfg);
    return { users: users.map((u) => renderUser(u, v3)), links: collectionLinks(cfg, request) };
  });

  app.get<IdParams>('/users/:id', { config: { doc: routeDoc({ response: UserResponse, noQuery: true }) } }, async (request) => {
    const user = await directory.getUser(request.auth, request.params.id);
    return { user: renderUser(user, v3Root(cfg)) };
  });

  app.patch<IdParams>('/users/:id', { config: { doc: routeDoc({ body: UserUpdateBody, response: UserResponse }) } }, async (request) => {
    const user = await directory.updateUser(request.auth, request.params.id, userUpdateInput(request.body));
    return { user: renderUser(user, v3Root(cfg)) };
  });

  // Keystone "Change password for user": no token needed, the original password is the
  // credential; the domain checks it (wrong → 401) and revokes the user's other tokens.
  app.post<IdParams>(
    '/users/:id/password',
    { config: { public: true, doc: routeDoc({ body: PasswordChangeBody, answer: 'empty' }) } },
    async (request, reply) => {
      await directory.changePassword(request.auth, request.params.id, passwordChangeInput(request.body));
      return reply.code(204).send();
    },
  );

  app.delete<IdParams>('/users/:id', { config: { doc: routeDoc({ answer: 'empty' }) } }, async (request, reply) => {
    await directory.deleteUser(request.auth, request.params.id);
    return reply.code(204).send();
  });
}
