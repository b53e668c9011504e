/**
 * Authentication and token management (Keystone API reference, v3 "Authentication and token
 * management"): issue (`POST /v3/auth/tokens`, public), validate (`GET`), check (`HEAD`) and
 * revoke (`DELETE`) a token named by `X-Subject-Token`; the caller's catalogue, projects and
 * system scope (`GET /v3/auth/catalog|projects|system`).
 *
 * Validate, check and revoke pass `identity:validate_token`, `identity:check_token` and
 * `identity:revoke_token` against the subject token's user (admin, service, or the token's own
 * user); a subject the caller may not act on is 404 like an unknown one
 * (src/domain/identity/subject-tokens.ts).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ForbiddenError, InvalidInputError } from '../../../domain/errors.ts';
import type { IdentityApiDeps } from '../deps.ts';
import { buildCatalog } from '../catalog.ts';
import { appCredentialAuthInput, usesApplicationCredential } from '../app-credential-inputs.ts';
import { authRequest, queryBool, type Query } from '../inputs.ts';
import { collectionLinks, publicBase, v3Root } from '../links.ts';
import { renderProject, renderToken } from '../render.ts';
import { AppCredentialAuthBody } from '../app-credential-inputs.ts';
import { AuthBody } from '../schemas.ts';
import { Type } from '@sinclair/typebox';
import { queryDoc, routeDoc } from '../../common/route-doc.ts';
import { AuthCatalogResponse, AuthSystemResponse, TokenResponse } from '../auth-response-schemas.ts';
import { ProjectCollection } from '../response-schemas.ts';

/** The query parameter `GET /v3/auth/tokens` reads (the token itself is in `X-Subject-Token`). */
export const TOKEN_QUERY = ['nocatalog'] as const;

/** Register the `/v3/auth/*` routes. */
export function registerAuthRoutes(app: FastifyInstance, services: IdentityApiDeps): void {
  const { tokens, subjects, directory } = services.identity;
  const catalogFor = (request: FastifyRequest) =>
    queryBool(request.query as Query, TOKEN_QUERY[0]) ? null : buildCatalog(publicBase(services.config), services.config.identity.region);

  app.post(
    '/auth/tokens',
    { config: { public: true, doc: routeDoc({ body: Type.Union([AuthBody, AppCredentialAuthBody]), response: TokenResponse }) } },
    async (request, reply) => {
      if (usesApplicationCredential(request.body)) {
        // Keystone's `application_credential` method (src/domain/identity/app-credentials.ts).
        const issued = await services.identity.appCredentials.authenticate(appCredentialAuthInput(request.body));
        return reply
          .code(201)
          .header('x-subject-token', issued.secret)
          .send(renderToken(issued, catalogFor(request)));
      }
      const auth = authRequest(request.body);
      const catalog = catalogFor(request);
      const issued =
        auth.method === 'password'
          ? await tokens.authenticatePassword(auth.credentials, auth.scope)
          : await tokens.authenticateToken(auth.token, auth.scope);
      return reply.code(201).header('x-subject-token', issued.secret).send(renderToken(issued, catalog));
    },
  );

  // An explicit HEAD (token check), documented as such (@fastify/swagger leaves HEAD routes out by default).
  app.head(
    '/auth/tokens',
    { config: { swagger: { exposeHeadRoute: true }, doc: routeDoc({ answer: 'empty' }) } },
    async (request, reply) => {
      await subjects.resolve(request.auth, subjectToken(request), 'check');
      return reply.code(200).send();
    },
  );

  app.get(
    '/auth/tokens',
    { config: { doc: routeDoc({ query: queryDoc(TOKEN_QUERY), response: TokenResponse }) } },
    async (request, reply) => {
      const secret = subjectToken(request);
      const catalog = catalogFor(request);
      const info = await subjects.resolve(request.auth, secret, 'validate');
      return reply.header('x-subject-token', secret).send(renderToken(info, catalog));
    },
  );

  app.delete('/auth/tokens', { config: { doc: routeDoc({ answer: 'empty' }) } }, async (request, reply) => {
    const secret = subjectToken(request);
    await subjects.revoke(request.auth, secret);
    return reply.code(204).send();
  });

  app.get('/auth/catalog', { config: { doc: routeDoc({ response: AuthCatalogResponse, noQuery: true }) } }, async (request) => {
    if (request.auth.projectId === null && request.auth.systemScope === null) {
      throw new ForbiddenError('A project-scoped token is required to produce a service catalog.');
    }
    return {
      catalog: buildCatalog(publicBase(services.config), services.config.identity.region),
      links: collectionLinks(services.config, request),
    };
  });

  app.get('/auth/projects', { config: { doc: routeDoc({ response: ProjectCollection, noQuery: true }) } }, async (request) => {
    const projects = await directory.listUserProjects(request.auth, request.auth.userId);
    const v3 = v3Root(services.config);
    return { projects: projects.map((p) => renderProject(p, v3)), links: collectionLinks(services.config, request) };
  });

  app.get('/auth/system', { config: { doc: routeDoc({ response: AuthSystemResponse, noQuery: true }) } }, async (request) => {
    const roles = await tokens.effectiveRoles(request.auth.userId, { type: 'system', id: 'all' });
    return { system: roles.length > 0 ? [{ all: true }] : [], links: collectionLinks(services.config, request) };
  });
}

/** The `X-Subject-Token` header. @throws InvalidInputError when it is missing */
function subjectToken(request: FastifyRequest): string {
  const h = request.headers['x-subject-token'];
  const v = Array.isArray(h) ? h[0] : h;
  if (!v) {
    throw new InvalidInputError(
      'Expecting to find X-Subject-Token in request headers. The server could not comply with the request since it is either malformed or otherwise incorrect. The client is assumed to be in error.',
      'ValidationError',
    );
  }
  return v;
}
