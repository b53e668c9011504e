/**
 * Port routes (https://docs.openstack.org/api-ref/baremetal/#ports-ports): `GET /v1/ports[/detail]`
 * (filters `node`, `node_uuid`, `address`, `portgroup` ≥1.24), `POST /v1/ports` (201 + Location),
 * `GET|PATCH|DELETE /v1/ports/{uuid}`. Ports have no names: a non-UUID identifier is a 400 (look a
 * MAC up with `?address=`).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { InvalidInputError } from '../../domain/errors.ts';
import { isUuidLike } from '../../domain/ids.ts';
import type { BaremetalContext } from './context.ts';
import { empty } from './context.ts';
import { DETAIL_QUERY_VERSION, NotAcceptableError, PORT_DEFAULT_FIELDS, PORT_FIELD_VERSIONS, portFieldAllowed } from './microversion.ts';
import { checkFields } from './node-list.ts';
import { boolParam, limitParam, listParam, nextArgs, readQuery, sortDirParam, uuidParam } from './query.ts';
import { collection, portFieldsAt, renderPort } from './render.ts';
import { parseBody, PatchBody, PortCreateBody } from './schemas.ts';
import { PortCollection, PortDetailCollection, PortResponse } from './response-schemas.ts';
import { queryDoc, routeDoc } from '../common/route-doc.ts';

const KNOWN_PORT_FIELDS = new Set([
  'uuid',
  'address',
  'node_uuid',
  'portgroup_uuid',
  'extra',
  'internal_info',
  'local_link_connection',
  'pxe_enabled',
  'physical_network',
  'is_smartnic',
  'created_at',
  'updated_at',
]);
const PAGING = ['marker', 'limit', 'sort_key', 'sort_dir', 'address', 'portgroup'];
/** The `portgroup` filter (and the portgroups' port lists) from 1.24. */
const PORTGROUP_FILTER_VERSION = 24;
const NO_PARAMS = new Set<string>();
/** Query parameters of `GET /v1/ports/{uuid}`. */
const SHOW_PARAMS: ReadonlySet<string> = new Set(['fields']);

/**
 * The query parameters of a port list (what {@link listPorts} allows): paging and filters, the
 * node filters unless the list is a node's, and `fields` and `detail` unless it is a `…/detail` one.
 * @param opts.node true for a node's ports
 */
export function portListParams(opts: { detailPath: boolean; node: boolean }): ReadonlySet<string> {
  return new Set([...PAGING, ...(opts.node ? [] : ['node', 'node_uuid']), ...(opts.detailPath ? [] : ['fields', 'detail'])]);
}

/** A port UUID route parameter. @throws InvalidInputError when not a UUID */
function portUuid(uuid: string): string {
  const u = uuid.replace(/\.json$/, '');
  if (!isUuidLike(u)) throw new InvalidInputError(`Expected a UUID for port: ${uuid}`, 'InvalidUUID');
  return u;
}

/**
 * List ports (also used by `/v1/nodes/{id}/ports` and `/v1/portgroups/{id}/ports`).
 * @param opts.node the parent node identifier, when listing a node's ports
 * @param opts.portgroup the parent portgroup identifier, when listing a portgroup's ports
 */
export async function listPorts(
  ctx: BaremetalContext,
  req: FastifyRequest,
  opts: { detailPath: boolean; node?: string; portgroup?: string },
): Promise<Record<string, unknown>> {
  const v = req.ironicVersion;
  const q = readQuery(req.query, portListParams({ detailPath: opts.detailPath, node: opts.node !== undefined }));
  const detail = boolParam(q, 'detail');
  if (detail !== undefined && v < DETAIL_QUERY_VERSION)
    throw new InvalidInputError(`Invalid query parameter ?detail=${q.detail} received.`);
  const requested = listParam(q, 'fields');
  if (requested !== undefined && detail) throw new InvalidInputError('Can not specify ?detail=True and fields in the same request.');
  if (requested !== undefined) checkFields(requested, v, KNOWN_PORT_FIELDS, portFieldAllowed);
  const sortKey = q.sort_key ?? 'id';
  if (PORT_FIELD_VERSIONS[sortKey] !== undefined && !portFieldAllowed(sortKey, v))
    throw new NotAcceptableError(`Sorting by ${sortKey} requires a newer API version.`);
  const nodeUuid = uuidParam(q, 'node_uuid');
  const node = opts.node ?? nodeUuid ?? q.node;
  if (node !== undefined && v < 5 && !isUuidLike(node)) throw new NotAcceptableError('Node names require API version 1.5 or later.');
  if (q.portgroup !== undefined && v < PORTGROUP_FILTER_VERSION)
    throw new NotAcceptableError(`The portgroup filter requires API version 1.${PORTGROUP_FILTER_VERSION} or later.`);
  const portgroup = opts.portgroup ?? q.portgroup;
  const fields = opts.detailPath || detail ? null : (requested ?? PORT_DEFAULT_FIELDS.filter((f) => portFieldAllowed(f, v)));
  const limit = limitParam(q);
  const ports = await ctx.inventory.ports.list(req.auth, {
    ...(node !== undefined ? { node } : {}),
    ...(q.address !== undefined ? { address: q.address } : {}),
    ...(portgroup !== undefined ? { portgroup } : {}),
    limit,
    marker: uuidParam(q, 'marker') ?? null,
    sortKey,
    sortDir: sortDirParam(q),
  });
  const parent = opts.node !== undefined ? `nodes/${opts.node}/` : opts.portgroup !== undefined ? `portgroups/${opts.portgroup}/` : '';
  const resource = `${parent}ports${opts.detailPath ? '/detail' : ''}`;
  return collection(
    'ports',
    ports.map((p) => renderPort(p, v, ctx.base, fields)),
    { limit, lastUuid: ports.at(-1)?.uuid ?? null, base: ctx.base, resource, args: nextArgs(q) },
  );
}

/** Register the port routes. */
export function portRoutes(app: FastifyInstance, ctx: BaremetalContext): void {
  const { inventory, base } = ctx;
  for (const detailPath of [false, true]) {
    const path = detailPath ? '/ports/detail' : '/ports';
    const response = detailPath ? PortDetailCollection : PortCollection;
    for (const p of [path, `${path}.json`])
      app.get(p, { config: { doc: routeDoc({ query: queryDoc(portListParams({ detailPath, node: false })), response }) } }, async (req) =>
        listPorts(ctx, req, { detailPath }),
      );
  }

  for (const p of ['/ports', '/ports.json']) {
    app.post(p, { config: { doc: routeDoc({ body: PortCreateBody, response: PortResponse }) } }, async (req, reply) => {
      const v = req.ironicVersion;
      readQuery(req.query, NO_PARAMS);
      const body = parseBody(PortCreateBody, req.body, 'port');
      for (const [field, min] of Object.entries(PORT_FIELD_VERSIONS)) {
        const value = (body as Record<string, unknown>)[field];
        if (v < min && value !== undefined && value !== null)
          throw new NotAcceptableError(`Field ${field} requires API version 1.${min} or later.`);
      }
      const port = await inventory.ports.create(req.auth, body);
      reply.code(201).header('location', `${base}/v1/ports/${port.uuid}`);
      return renderPort(port, v, base, null);
    });
  }

  const showDoc = routeDoc({ query: queryDoc(SHOW_PARAMS), response: PortResponse });
  app.get<{ Params: { uuid: string } }>('/ports/:uuid', { config: { doc: showDoc } }, async (req) => {
    const v = req.ironicVersion;
    const fields = listParam(readQuery(req.query, SHOW_PARAMS), 'fields') ?? null;
    if (fields !== null) checkFields(fields, v, KNOWN_PORT_FIELDS, portFieldAllowed);
    return renderPort(await inventory.ports.get(req.auth, portUuid(req.params.uuid)), v, base, fields ?? portFieldsAt(v));
  });

  app.patch<{ Params: { uuid: string } }>(
    '/ports/:uuid',
    { config: { doc: routeDoc({ body: PatchBody, response: PortResponse }) } },
    async (req) => {
      const v = req.ironicVersion;
      readQuery(req.query, NO_PARAMS);
      const ops = parseBody(PatchBody, req.body, 'patch');
      for (const op of ops) {
        const root = op.path.split('/')[1] ?? '';
        const min = PORT_FIELD_VERSIONS[root];
        if (min !== undefined && v < min) throw new NotAcceptableError(`Field ${root} requires API version 1.${min} or later.`);
      }
      return renderPort(await inventory.ports.update(req.auth, portUuid(req.params.uuid), ops), v, base, null);
    },
  );

  app.delete<{ Params: { uuid: string } }>('/ports/:uuid', { config: { doc: routeDoc({ answer: 'empty' }) } }, async (req, reply) => {
    readQuery(req.query, NO_PARAMS);
    await inventory.ports.delete(req.auth, portUuid(req.params.uuid));
    return empty(reply, 204);
  });
}
