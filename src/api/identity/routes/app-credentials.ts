/**
 * Application credentials (Keystone API reference, v3 "Application Credentials"): create
 * (`POST /v3/users/{user_id}/application_credentials`, 201 with the secret, shown only then),
 * list (filter `name`), show and delete (`/v3/users/{user_id}/application_credentials/{id}`).
 * Rules, visibility and token revocation are the domain's (`ApplicationCredentials`,
 * src/domain/identity/app-credentials.ts); authenticating with one is `POST /v3/auth/tokens`
 * (routes/auth.ts). Access rules are not supported (400).
 */
import type { FastifyInstance } from 'fastify';
import type { IdentityApiDeps } from '../deps.ts';
import { appCredentialCreateInput } from '../app-credential-inputs.ts';
import { NAME_QUERY, nameFilter, type Query } from '../inputs.ts';
import { collectionLinks, v3Root } from '../links.ts';
import { renderAppCredential } from '../render.ts';
import { AppCredentialCreateBody } from '../app-credential-inputs.ts';
import { queryDoc, routeDoc } from '../../common/route-doc.ts';
import { AppCredentialCollection, AppCredentialCreateResponse, AppCredentialResponse } from '../response-schemas.ts';

type UserParams = { Params: { id: string } };
type OneParams = { Params: { id: string; credential: string } };

/** Register the application credential routes. */
export function registerAppCredentialRoutes(app: FastifyInstance, services: IdentityApiDeps): void {
  const { appCredentials } = services.identity;
  const cfg = services.config;
  const base = '/users/:id/application_credentials';

  app.post<UserParams>(
    base,
    { config: { doc: routeDoc({ body: AppCredentialCreateBody, response: AppCredentialCreateResponse }) } },
    async (request, reply) => {
      const { credential, secret } = await appCredentials.create(request.auth, request.params.id, appCredentialCreateInput(request.body));
      const roles = await appCredentials.rolesOf([credential]);
      return reply.code(201).send({ application_credential: renderAppCredential(credential, v3Root(cfg), roles, secret) });
    },
  );

  app.get<UserParams>(
    base,
    { config: { doc: routeDoc({ query: queryDoc(NAME_QUERY), response: AppCredentialCollection }) } },
    async (request) => {
      const list = await appCredentials.list(request.auth, request.params.id, nameFilter(request.query as Query));
      const roles = await appCredentials.rolesOf(list);
      const v3 = v3Root(cfg);
      return { application_credentials: list.map((c) => renderAppCredential(c, v3, roles)), links: collectionLinks(cfg, request) };
    },
  );

  app.get<OneParams>(
    `${base}/:credential`,
    { config: { doc: routeDoc({ response: AppCredentialResponse, noQuery: true }) } },
    async (request) => {
      const credential = await appCredentials.get(request.auth, request.params.id, request.params.credential);
      const roles = await appCredentials.rolesOf([credential]);
      return { application_credential: renderAppCredential(credential, v3Root(cfg), roles) };
    },
  );

  app.delete<OneParams>(`${base}/:credential`, { config: { doc: routeDoc({ answer: 'empty' }) } }, async (request, reply) => {
    await appCredentials.delete(request.auth, request.params.id, request.params.credential);
    return reply.code(204).send();
  });
}
