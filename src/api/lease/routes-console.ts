/**
 * The serial console proxy of the lease API: `GET /lease/console?token=<console token>`
 * upgraded to a websocket — the `access_url` that `POST /lease/v1/console_auth_tokens` returns
 * (esi-leap's `esi-leap-serial-console-proxy` listens on its own port 6083 and serves
 * `/?token=`, `esi_leap/console/websocketproxy.py` in https://github.com/CCI-MOC/esi-leap; esi
 * serves it on its one port).
 *
 * The token is the only credential (no `X-Auth-Token`: browsers cannot send headers on a
 * websocket). `read_only=1|true` asks for a read-only session whatever the token allows. Wire
 * format and close codes: src/api/common/console-ws.ts; rules: src/domain/inventory/node-console.ts.
 * A plain (non-websocket) GET is a 400 in esi-leap's error format.
 */
import type { FastifyInstance } from 'fastify';
import { InvalidInputError, UnauthorizedError } from '../../domain/errors.ts';
import type { LeaseApiDeps } from './deps.ts';
import { parseReadOnly, serveConsole, type ConsoleSocket } from '../common/console-ws.ts';
import { queryDoc, routeDoc } from '../common/route-doc.ts';

/** The query parameters the console websocket reads: the console token and `read_only`. */
export const CONSOLE_QUERY = ['token', 'read_only'] as const;

type ConsoleQuery = Partial<Record<(typeof CONSOLE_QUERY)[number], unknown>>;

/** Registers `GET /console` (websocket) on the lease plugin (prefix `/lease`). */
export function registerConsoleRoute(app: FastifyInstance, services: LeaseApiDeps): void {
  app.route<{ Querystring: ConsoleQuery }>({
    method: 'GET',
    url: '/console',
    // Public: the token in the query is the credential. A websocket's success is its upgrade (101).
    config: { public: true, doc: routeDoc({ answer: 'empty', status: 101, query: queryDoc(CONSOLE_QUERY) }) },
    handler: async () => {
      throw new InvalidInputError(
        'This is the serial console websocket: connect with a websocket client to the access_url of a console auth token.',
      );
    },
    wsHandler: (socket: unknown, req) => {
      const q = req.query;
      const token = typeof q.token === 'string' ? q.token : '';
      const readOnly = parseReadOnly(q.read_only);
      return serveConsole(
        socket as ConsoleSocket,
        async () => {
          if (token === '') throw new UnauthorizedError('A console token is required: ?token=<token>.', 'InvalidConsoleToken');
          if (readOnly === null) throw new InvalidInputError('read_only must be true or false.');
          return services.consoles.openWithToken(token, readOnly);
        },
        req.log,
      );
    },
  });
}
