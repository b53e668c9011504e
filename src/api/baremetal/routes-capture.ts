/**
 * Image capture (an esi addition to the baremetal API; src/domain/deploy/capture.ts):
 *
 * - `POST /v1/nodes/{node}/capture` with `{"image_id": "<uuid>"}` → 202 with a `Location` to
 *   the node's states; the node moves to `servicing` and the conductor captures its disk into
 *   the image. 400 for a bad body or a node/image that cannot be captured, 404 for a node or
 *   image the caller may not see, 409 for an image that already has data or a locked node.
 */
import type { FastifyInstance } from 'fastify';
import { InvalidInputError } from '../../domain/errors.ts';
import { isJsonObject } from '../../domain/inventory/masking.ts';
import { empty, nodeIdent, type BaremetalContext, type IdentParams } from './context.ts';
import { readQuery } from './query.ts';
import { CaptureBody, unexpectedKeys } from './node-body-schemas.ts';
import { routeDoc } from '../common/route-doc.ts';

const NO_PARAMS = new Set<string>();

/** Register the capture route. */
export function captureRoutes(app: FastifyInstance, ctx: BaremetalContext): void {
  app.post<{ Params: IdentParams }>(
    '/nodes/:ident/capture',
    { config: { doc: routeDoc({ body: CaptureBody, answer: 'empty' }) } },
    async (req, reply) => {
      readQuery(req.query, NO_PARAMS);
      const body = req.body;
      if (!isJsonObject(body)) throw new InvalidInputError('The capture request must be a JSON object {"image_id": "<uuid>"}.');
      // The image id's value is the domain's to check, after the node's visibility.
      const unknown = unexpectedKeys(CaptureBody, body);
      if (unknown.length > 0) throw new InvalidInputError(`Unknown attribute(s) in the capture request: ${unknown.join(', ')}`);
      const ident = nodeIdent(req, req.params.ident);
      await ctx.services.capture.capture(req.auth, ident, body.image_id);
      return empty(reply, 202, `${ctx.base}/v1/nodes/${ident}/states`);
    },
  );
}
