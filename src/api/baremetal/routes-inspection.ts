/**
 * Inspection routes (the node inventory:
 * https://docs.openstack.org/api-ref/baremetal/#node-inventory; the inventory format is
 * ironic-python-agent's, `ironic_python_agent/hardware.py`):
 *
 * - `POST /v1/continue_inspection` (public: the agent has no Keystone token) with the agent's
 *   inspection data `{inventory, …plugin data}` → 202 `{uuid}`; 400 malformed data, 404 no
 *   node waits for it, 409 while the node is held (the agent retries). Ironic added this
 *   endpoint in 1.84, beyond esi's maximum version; esi serves it at every version, as the
 *   agent needs it whatever it negotiated.
 * - `GET /v1/nodes/{ident}/inventory` (≥ 1.81) → `{inventory, plugin_data}`.
 *
 * The rules are in src/domain/inspection/service.ts.
 */
import type { FastifyInstance } from 'fastify';
import { NotFoundError } from '../../domain/errors.ts';
import { nodeIdent, type BaremetalContext, type IdentParams } from './context.ts';
import { readQuery } from './query.ts';
import { routeDoc } from '../common/route-doc.ts';
import { NodeInventoryResponse } from './response-schemas-node.ts';
import { InspectionDataBody, parseInspectionData } from './resource-body-schemas.ts';
import { ContinueInspectionResponse } from './response-schemas-services.ts';

const NO_PARAMS = new Set<string>();
/** First API version with the node inventory. */
const MIN_INVENTORY_MINOR = 81;

/** Register the inspection routes. */
export function inspectionRoutes(app: FastifyInstance, ctx: BaremetalContext): void {
  const inspection = ctx.services.inspection;

  const continueDoc = routeDoc({ body: InspectionDataBody, response: ContinueInspectionResponse });
  app.post('/continue_inspection', { config: { public: true, doc: continueDoc } }, async (req, reply) => {
    readQuery(req.query, new Set(['node_uuid']));
    const result = await inspection.continueInspection(parseInspectionData(req.body));
    return reply.code(202).send(result);
  });

  app.get<{ Params: IdentParams }>(
    '/nodes/:ident/inventory',
    { config: { doc: routeDoc({ noQuery: true, response: NodeInventoryResponse }) } },
    async (req) => {
      if (req.ironicVersion < MIN_INVENTORY_MINOR)
        throw new NotFoundError('resource', req.params.ident, 'The resource could not be found.', 'NotFound');
      readQuery(req.query, NO_PARAMS);
      return inspection.getInventory(req.auth, nodeIdent(req, req.params.ident));
    },
  );
}
