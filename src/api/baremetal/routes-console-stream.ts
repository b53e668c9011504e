/**
 * An esi addition to Ironic's console API: `GET /v1/nodes/{node}/states/console/stream`
 * upgraded to a websocket, authenticated with the caller's own Keystone token (`X-Auth-Token`
 * on the upgrade request). It is the `url` of `console_info` (`{"type": "websocket", …}`) once
 * the console is enabled. The same rules as the console token proxy apply
 * (src/domain/inventory/node-console.ts): `baremetal:node:get_console` to read (a node the caller
 * may not see closes with 4404), `esi:node:console:write` to type; `?read_only=true` asks for
 * less. The caller's token is re-validated at every grant re-check, so revoking it closes the
 * stream (4401). Wire format and close codes: src/api/common/console-ws.ts. A plain GET is a 400.
 */
import type { FastifyInstance } from 'fastify';
import { InvalidInputError } from '../../domain/errors.ts';
import { parseReadOnly, serveConsole, type ConsoleSocket } from '../common/console-ws.ts';
import { nodeIdent, type BaremetalContext, type IdentParams } from './context.ts';
import { queryDoc, routeDoc } from '../common/route-doc.ts';

/** The stream's one query parameter (`true` for a console that only reads); any other is ignored. */
const READ_ONLY = 'read_only';

/** Path of a node's console stream below `/v1`. */
export function consoleStreamPath(nodeUuid: string): string {
  return `/v1/nodes/${nodeUuid}/states/console/stream`;
}

/** Registers the console stream route. */
export function consoleStreamRoutes(app: FastifyInstance, ctx: BaremetalContext): void {
  app.route<{ Params: IdentParams; Querystring: { [READ_ONLY]?: unknown } }>({
    method: 'GET',
    url: '/nodes/:ident/states/console/stream',
    config: {
      doc: routeDoc({
        summary: 'The serial console as a websocket; a plain GET is a 400',
        query: queryDoc([READ_ONLY]),
        answer: 'empty',
        status: 101,
      }),
    },
    handler: async () => {
      throw new InvalidInputError(
        'This is the serial console websocket of the node: connect with a websocket client and your X-Auth-Token.',
      );
    },
    wsHandler: (socket: unknown, req) => {
      const readOnly = parseReadOnly(req.query[READ_ONLY]);
      return serveConsole(
        socket as ConsoleSocket,
        async () => {
          if (readOnly === null) throw new InvalidInputError('read_only must be true or false.');
          const header = req.headers['x-auth-token'];
          const secret = Array.isArray(header) ? header[0] : header;
          const tokens = ctx.services.identity.tokens;
          const stillValid =
            secret === undefined
              ? undefined
              : () =>
                  tokens.validate(secret).then(
                    () => true,
                    () => false,
                  );
          return ctx.services.consoles.openForCaller(req.auth, nodeIdent(req, req.params.ident), readOnly, stillValid);
        },
        req.log,
      );
    },
  });
}
