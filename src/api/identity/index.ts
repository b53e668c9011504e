/**
 * The identity API plugin: a Keystone v3 subset at `/identity` (registered by
 * `src/server/app.ts` with prefix `/identity`), wire-compatible with keystoneauth,
 * python-keystoneclient and the `openstack` CLI.
 *
 * | file                 | routes                                                          |
 * |----------------------|-----------------------------------------------------------------|
 * | routes/discovery.ts  | `GET /identity`, `GET /identity/v3` (public)                     |
 * | routes/auth.ts       | `/v3/auth/tokens` (POST public; GET/HEAD/DELETE), `/v3/auth/*`   |
 * | routes/auth-scopes.ts | `/v3/auth/domains`                                             |
 * | routes/catalog-routes.ts | `/v3/services`, `/v3/endpoints` (read-only, admin)           |
 * | routes/projects.ts   | `/v3/projects`, `/v3/users/{id}/projects`                        |
 * | routes/users.ts      | `/v3/users`, `/v3/users/{id}/password` (POST public)             |
 * | routes/roles.ts      | `/v3/roles`                                                     |
 * | routes/grants.ts     | project and system grants, `/v3/role_assignments`               |
 * | routes/domains.ts    | `/v3/domains`                                                   |
 * | routes/groups.ts     | `/v3/groups`, members, `/v3/users/{id}/groups`, group grants    |
 * | routes/app-credentials.ts | `/v3/users/{id}/application_credentials`                   |
 *
 * Errors of every kind — domain errors, malformed bodies, unknown routes — are rendered by
 * `./errors.ts` in Keystone's `{"error": {code, title, message}}` format. The token check of
 * `src/api/common/auth.ts` guards the `/v3` routes except those marked public; it is not applied
 * to unknown paths, which are 404 whether or not a token is given.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { IdentityApiDeps } from './deps.ts';
import { registerTokenAuth } from '../common/auth.ts';
import { handleKeystoneError, notFoundBody } from './errors.ts';
import { publicBase } from './links.ts';
import { rejectNulInUrl } from './validation.ts';
import { registerAuthRoutes } from './routes/auth.ts';
import { registerAuthScopeRoutes } from './routes/auth-scopes.ts';
import { registerCatalogRoutes } from './routes/catalog-routes.ts';
import { registerDiscoveryRoutes } from './routes/discovery.ts';
import { registerDomainRoutes } from './routes/domains.ts';
import { registerGroupRoutes } from './routes/groups.ts';
import { registerAppCredentialRoutes } from './routes/app-credentials.ts';
import { registerGrantRoutes } from './routes/grants.ts';
import { registerProjectRoutes } from './routes/projects.ts';
import { registerRoleRoutes } from './routes/roles.ts';
import { registerUserRoutes } from './routes/users.ts';

/** Registers the identity API routes under the prefix given at registration (`/identity`). */
export const identityApi: FastifyPluginAsync<{ services: IdentityApiDeps }> = async (app, { services }) => {
  app.setErrorHandler(handleKeystoneError(`${publicBase(services.config)}/identity`));
  app.setNotFoundHandler((_request, reply) => reply.code(404).type('application/json').send(notFoundBody()));
  // Keystone bodies are JSON only: any other content type is refused (415) before a handler runs.
  app.removeContentTypeParser(['text/plain']);
  // No identity id, name or filter holds a NUL character: refuse it before any lookup.
  app.addHook('preValidation', async (request) => rejectNulInUrl(request.params, request.query));
  registerDiscoveryRoutes(app, services);
  await app.register(
    async (v3) => {
      registerTokenAuth(v3, services.identity.tokens);
      registerAuthRoutes(v3, services);
      registerAuthScopeRoutes(v3, services);
      registerCatalogRoutes(v3, services);
      registerProjectRoutes(v3, services);
      registerUserRoutes(v3, services);
      registerRoleRoutes(v3, services);
      registerGrantRoutes(v3, services);
      registerDomainRoutes(v3, services);
      registerGroupRoutes(v3, services);
      registerAppCredentialRoutes(v3, services);
    },
    { prefix: '/v3' },
  );
};
