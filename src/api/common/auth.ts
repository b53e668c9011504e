/**
 * Token authentication for every API service, as keystonemiddleware does for OpenStack
 * services: the `X-Auth-Token` header is validated and the caller's {@link AuthContext} is put
 * on `request.auth` before the body is even parsed.
 *
 * Routes marked `config: { public: true }` accept anonymous callers (and ignore a bad token);
 * every other route answers 401 (`UnauthorizedError`, rendered by the service's error mapper)
 * without a valid token.
 */
import type { FastifyInstance } from 'fastify';
import { ANONYMOUS, type AuthContext } from '../../domain/auth.ts';
import { UnauthorizedError } from '../../domain/errors.ts';
import type { TokenService } from '../../domain/identity/tokens.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated caller, or `ANONYMOUS`. Set by {@link registerTokenAuth}. */
    auth: AuthContext;
  }
  interface FastifyContextConfig {
    /** True for routes that need no token (discovery documents, agent lookup/heartbeat…). */
    public?: boolean;
  }
}

/**
 * Add the token check to an (encapsulated) Fastify instance; call once per API service plugin.
 * @throws UnauthorizedError from the hook for a missing or invalid token on a non-public route
 */
export function registerTokenAuth(app: FastifyInstance, tokens: TokenService): void {
  // Fastify 5 refuses an object as a decorator's initial value (it would be shared by every
  // request); start with null and set the context in the hook below, before any handler runs.
  if (!app.hasRequestDecorator('auth')) app.decorateRequest('auth', null as unknown as AuthContext);
  app.addHook('onRequest', async (request) => {
    const isPublic = request.routeOptions.config?.public === true;
    const header = request.headers['x-auth-token'];
    const token = Array.isArray(header) ? header[0] : header;
    if (!token) {
      request.auth = ANONYMOUS;
      if (!isPublic) throw new UnauthorizedError();
      return;
    }
    try {
      request.auth = (await tokens.validate(token)).context;
    } catch (err) {
      request.auth = ANONYMOUS;
      if (!isPublic) throw err;
    }
  });
}
