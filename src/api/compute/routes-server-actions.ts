/**
 * Server actions (Nova v2.1 `POST /servers/{id}/action`; the domain is
 * src/domain/compute/server-actions.ts): `os-start`, `os-stop` and `reboot` answer 202 with no
 * body; `rebuild` answers 202 with the server (`{server: {...}}`, Nova's detailed view at the
 * request's microversion, plus `adminPass` when the request gave one); `os-getConsoleOutput`
 * answers 200 `{"output": "..."}`.
 */
import type { FastifyInstance } from 'fastify';
import type { ServerActions } from '../../domain/compute/index.ts';
import { parseServerAction } from '../../domain/compute/server-action-input.ts';
import { renderServer } from './render.ts';
import { checkNovaBody } from './bodies.ts';
import { ServerActionBody } from './bodies-actions.ts';
import { ServerActionResponse } from './response-schemas-extra.ts';
import { routeDoc } from '../common/route-doc.ts';

/** Register the action route on the `/v2.1` scope. */
export function serverActionRoutes(app: FastifyInstance, actions: ServerActions, base: string): void {
  const doc = routeDoc({ body: ServerActionBody, response: ServerActionResponse });
  app.post<{ Params: { id: string } }>('/servers/:id/action', { config: { doc } }, async (req, reply) => {
    const body = checkNovaBody(ServerActionBody, req.body, () => parseServerAction(req.body, req.novaVersion));
    const outcome = await actions.act(req.auth, req.params.id, body, req.novaVersion);
    switch (outcome.kind) {
      case 'accepted':
        return reply.code(202).send();
      case 'rebuilt': {
        const server = renderServer(outcome.view, req.novaVersion, base);
        if (outcome.adminPass !== null) server.adminPass = outcome.adminPass;
        return reply.code(202).send({ server });
      }
      case 'console':
        return { output: outcome.output };
    }
  });
}
