/**
 * The dashboard API plugin: the web dashboard's own endpoints at `/dashboard/v1` (registered by
 * `src/server/app.ts` with prefix `/dashboard`; the dashboard's pages are served beside it by
 * ./pages.ts).
 *
 * | file               | routes                                                        |
 * |--------------------|---------------------------------------------------------------|
 * | routes-changes.ts  | `GET /v1/changes`: the live channel (server-sent events)      |
 *
 * Every route needs `X-Auth-Token` (src/api/common/auth.ts); errors answer in Keystone's format
 * (`{"error": {"code", "title", "message"}}`, src/api/identity/errors.ts), 401s with
 * `WWW-Authenticate`. Open streams end at once when the server closes (`preClose`), so that a
 * shutdown does not wait for readers to leave.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { registerTokenAuth } from '../common/auth.ts';
import { notFoundBody, toKeystoneError } from '../identity/errors.ts';
import type { DashboardApiDeps } from './deps.ts';
import { registerChangeRoutes } from './routes-changes.ts';

/** Registers the dashboard API routes under the prefix given at registration (`/dashboard`). */
export const dashboardApi: FastifyPluginAsync<{ services: DashboardApiDeps }> = async (app, { services }) => {
  const authUri = `${services.config.publicUrl}/identity`;
  app.setErrorHandler((err: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const { status, body, internal } = toKeystoneError(err);
    if (internal) request.log.error({ err }, 'dashboard API: unexpected error');
    if (status === 401) void reply.header('www-authenticate', `Keystone uri="${authUri}"`);
    return reply.code(status).type('application/json').send(body);
  });
  app.setNotFoundHandler((_request, reply) => reply.code(404).type('application/json').send(notFoundBody()));
  const open = new Set<() => void>();
  app.addHook('preClose', async () => {
    for (const close of [...open]) close();
  });
  await app.register(
    async (v1) => {
      registerTokenAuth(v1, services.identity.tokens);
      registerChangeRoutes(v1, services, open);
    },
    { prefix: '/v1' },
  );
};
