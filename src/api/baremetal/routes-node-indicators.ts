/**
 * Node indicator and NMI routes (https://docs.openstack.org/api-ref/baremetal/, "Node
 * Management"; Ironic 21.4 `IndicatorController`, `InjectNmiController`):
 *
 * | route                                                     | answer                         |
 * |-----------------------------------------------------------|--------------------------------|
 * | `GET /v1/nodes/{node}/management/indicators`              | 200 `{"indicators": [...]}`    |
 * | `GET /v1/nodes/{node}/management/indicators/{id@comp}`    | 200 `{"state": "on"}`          |
 * | `PUT /v1/nodes/{node}/management/indicators/{id@comp}`    | 204; body `{"state": "..."}`   |
 * | `PUT /v1/nodes/{node}/management/inject_nmi` (≥ 1.29)     | 204; body empty or `{}`        |
 *
 * Each indicator is `{name: "<id>@<component>", component, readonly, states, links}`, the links
 * naming the node as the request did (Ironic's behaviour). Like Ironic 21.4, the indicator routes
 * have no version gate (1.63 announced them but the controller does not check it); inject_nmi
 * before 1.29 is 404 "Resource could not be found.". The logic is src/domain/inventory/indicators.ts.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { NotFoundError } from '../../domain/errors.ts';
import { empty, nodeIdent, type BaremetalContext, type IdentParams } from './context.ts';
import { readQuery } from './query.ts';
import { links } from './render-fields.ts';
import { parseBody } from './schemas.ts';
import { routeDoc, type RouteDoc } from '../common/route-doc.ts';
import { NodeIndicatorsResponse, NodeIndicatorStateResponse } from './response-schemas-node.ts';

const NO_PARAMS = new Set<string>();
/** `PUT …/indicators/{name}`. */
const IndicatorBody = Type.Object({ state: Type.String() }, { additionalProperties: false });
/** `PUT …/inject_nmi`: no fields. */
const NmiBody = Type.Object({}, { additionalProperties: false });

type IndicatorParams = IdentParams & { indicator: string };
/** The route options of a JSON answer to a GET that reads no query parameter. */
const doc = (response: NonNullable<RouteDoc['response']>): { config: { doc: RouteDoc } } => ({
  config: { doc: routeDoc({ noQuery: true, response }) },
});

/** Register the indicator and NMI routes. */
export function nodeIndicatorRoutes(app: FastifyInstance, ctx: BaremetalContext): void {
  const { inventory, base } = ctx;

  app.get<{ Params: IdentParams }>('/nodes/:ident/management/indicators', doc(NodeIndicatorsResponse), async (req) => {
    readQuery(req.query, NO_PARAMS);
    const ident = nodeIdent(req, req.params.ident);
    const { indicators } = await inventory.nodes.indicators.list(req.auth, ident);
    return {
      indicators: indicators.map((i) => {
        const name = `${i.id}@${i.component}`;
        return {
          name,
          component: i.component,
          readonly: i.readonly,
          states: [...i.states],
          links: links(base, `nodes/${ident}/management/indicators/${name}`),
        };
      }),
    };
  });

  app.get<{ Params: IndicatorParams }>('/nodes/:ident/management/indicators/:indicator', doc(NodeIndicatorStateResponse), async (req) => {
    readQuery(req.query, NO_PARAMS);
    return { state: await inventory.nodes.indicators.get(req.auth, nodeIdent(req, req.params.ident), req.params.indicator) };
  });

  app.put<{ Params: IndicatorParams }>(
    '/nodes/:ident/management/indicators/:indicator',
    { config: { doc: routeDoc({ body: IndicatorBody, answer: 'empty' }) } },
    async (req, reply) => {
      readQuery(req.query, NO_PARAMS);
      const body = parseBody(IndicatorBody, req.body ?? {}, 'indicator request');
      await inventory.nodes.indicators.set(req.auth, nodeIdent(req, req.params.ident), req.params.indicator, body.state);
      return empty(reply, 204);
    },
  );

  app.put<{ Params: IdentParams }>(
    '/nodes/:ident/management/inject_nmi',
    { config: { doc: routeDoc({ body: NmiBody, answer: 'empty' }) } },
    async (req, reply) => {
      if (req.ironicVersion < 29) throw new NotFoundError('resource', req.params.ident, 'Resource could not be found.', 'NotFound');
      readQuery(req.query, NO_PARAMS);
      if (req.body !== undefined && req.body !== null) parseBody(NmiBody, req.body, 'inject NMI request');
      await inventory.nodes.indicators.injectNmi(req.auth, nodeIdent(req, req.params.ident));
      return empty(reply, 204);
    },
  );
}
