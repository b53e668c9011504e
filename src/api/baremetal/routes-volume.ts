/**
 * Volume routes (https://docs.openstack.org/api-ref/baremetal/#volume-volume; Ironic 21.4
 * `VolumeController`, `VolumeConnectorsController`, `VolumeTargetsController`), all from 1.32
 * (404 before, as Ironic):
 * - `GET /v1/volume` and `GET /v1/nodes/{node}/volume`: link documents;
 * - `GET /v1/volume/{connectors,targets}` (filter `node`; `detail=True` from 1.32, Ironic has no
 *   `/detail` path here), `POST` (201 + Location), `GET|PATCH|DELETE …/{uuid}` (UUID only);
 * - `GET /v1/nodes/{node}/volume/{connectors,targets}`: a node's objects; writes and single
 *   objects below a node are Ironic's OperationNotPermitted (403).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { BoundListRequest, VolumeConnector, VolumeTarget } from '../../domain/inventory/index.ts';
import { NotFoundError } from '../../domain/errors.ts';
import type { AuthContext } from '../../domain/auth.ts';
import { empty, nodeIdent, type BaremetalContext, type IdentParams } from './context.ts';
import { readQuery } from './query.ts';
import { collection } from './render.ts';
import {
  CONNECTOR_DEFAULT_FIELDS,
  CONNECTOR_FIELDS,
  renderConnector,
  renderTarget,
  renderVolumeRoot,
  TARGET_DEFAULT_FIELDS,
  TARGET_FIELDS,
} from './render-resources.ts';
import {
  notPermitted,
  parseResourceList,
  parseShowFields,
  resourceListParams,
  SHOW_PARAMS,
  type ResourceListSpec,
} from './resource-list.ts';
import { ConnectorCreateBody, TargetCreateBody } from './resource-schemas.ts';
import { PatchBody, parseBody } from './schemas.ts';
import { queryDoc, routeDoc } from '../common/route-doc.ts';
import {
  VolumeConnectorCollection,
  VolumeConnectorResponse,
  VolumeRootResponse,
  VolumeTargetCollection,
  VolumeTargetResponse,
} from './response-schemas-resources.ts';
import type { TSchema } from '@sinclair/typebox';

/** Volume connectors and targets exist from 1.32. */
export const VOLUME_VERSION = 32;
const NO_PARAMS = new Set<string>();

/** The operations of one kind of volume object, as the routes call them. */
interface Kind<T extends { uuid: string }> {
  readonly path: 'connectors' | 'targets';
  readonly body: typeof ConnectorCreateBody | typeof TargetCreateBody;
  readonly what: 'connector' | 'target';
  /** The documented answers: one object, and a page of the list. */
  readonly one: TSchema;
  readonly page: TSchema;
  readonly spec: ResourceListSpec;
  render(row: T, base: string, fields: readonly string[] | null): Record<string, unknown>;
  list(ctx: AuthContext, req: BoundListRequest): Promise<T[]>;
  get(ctx: AuthContext, uuid: string): Promise<T>;
  create(ctx: AuthContext, body: unknown): Promise<T>;
  update(ctx: AuthContext, uuid: string, body: unknown): Promise<T>;
  delete(ctx: AuthContext, uuid: string): Promise<void>;
}

const spec = (known: readonly string[], defaults: readonly string[]): ResourceListSpec => ({
  known: new Set([...known, 'links']),
  defaults,
  detailVersion: VOLUME_VERSION,
  filters: ['node'],
  fieldsWithDetail: "Can't fetch a subset of fields with 'detail' set",
});

function gate(req: FastifyRequest): void {
  if (req.ironicVersion < VOLUME_VERSION) throw new NotFoundError('resource', req.url, 'The resource could not be found.', 'NotFound');
}

/** Register the volume routes. */
export function volumeRoutes(app: FastifyInstance, ctx: BaremetalContext): void {
  const { base } = ctx;
  const volume = ctx.inventory.volume;

  for (const p of ['/volume', '/volume.json']) {
    app.get(p, { config: { doc: routeDoc({ noQuery: true, response: VolumeRootResponse }) } }, async (req) => {
      gate(req);
      readQuery(req.query, NO_PARAMS);
      await volume.root(req.auth);
      return renderVolumeRoot(base);
    });
  }
  const nodeRootDoc = routeDoc({ noQuery: true, response: VolumeRootResponse });
  app.get<{ Params: IdentParams }>('/nodes/:ident/volume', { config: { doc: nodeRootDoc } }, async (req) => {
    gate(req);
    readQuery(req.query, NO_PARAMS);
    const ident = nodeIdent(req, req.params.ident);
    await volume.root(req.auth, ident);
    return renderVolumeRoot(base, ident);
  });

  const connectors: Kind<VolumeConnector> = {
    path: 'connectors',
    body: ConnectorCreateBody,
    what: 'connector',
    one: VolumeConnectorResponse,
    page: VolumeConnectorCollection,
    spec: spec(CONNECTOR_FIELDS, CONNECTOR_DEFAULT_FIELDS),
    render: renderConnector,
    list: (c, r) => volume.listConnectors(c, r),
    get: (c, u) => volume.getConnector(c, u),
    create: (c, b) => volume.createConnector(c, b),
    update: (c, u, b) => volume.updateConnector(c, u, b),
    delete: (c, u) => volume.deleteConnector(c, u),
  };
  const targets: Kind<VolumeTarget> = {
    path: 'targets',
    body: TargetCreateBody,
    what: 'target',
    one: VolumeTargetResponse,
    page: VolumeTargetCollection,
    spec: spec(TARGET_FIELDS, TARGET_DEFAULT_FIELDS),
    render: renderTarget,
    list: (c, r) => volume.listTargets(c, r),
    get: (c, u) => volume.getTarget(c, u),
    create: (c, b) => volume.createTarget(c, b),
    update: (c, u, b) => volume.updateTarget(c, u, b),
    delete: (c, u) => volume.deleteTarget(c, u),
  };
  kindRoutes(app, ctx, connectors);
  kindRoutes(app, ctx, targets);
}

function kindRoutes<T extends { uuid: string }>(app: FastifyInstance, ctx: BaremetalContext, k: Kind<T>): void {
  const { base } = ctx;
  const top = `/volume/${k.path}`;

  // The lists are no `…/detail` collections (Ironic has none for volume objects).
  const listDoc = routeDoc({ query: queryDoc(resourceListParams(k.spec, false)), response: k.page });
  const list = async (req: FastifyRequest, node?: string): Promise<Record<string, unknown>> => {
    const l = parseResourceList(req.query, req.ironicVersion, false, k.spec);
    const nodeFilter = node ?? l.query.node;
    const items = await k.list(req.auth, {
      ...(nodeFilter !== undefined ? { node: nodeFilter } : {}),
      limit: l.limit,
      marker: l.marker,
      sortKey: l.sortKey,
      sortDir: l.sortDir,
    });
    return collection(
      k.path,
      items.map((row) => k.render(row, base, l.fields)),
      {
        limit: l.limit,
        lastUuid: items.at(-1)?.uuid ?? null,
        base,
        resource: node === undefined ? top.slice(1) : `nodes/${node}${top}`,
        args: l.args,
      },
    );
  };

  for (const p of [top, `${top}.json`]) {
    app.get(p, { config: { doc: listDoc } }, async (req) => {
      gate(req);
      return list(req);
    });
    app.post(p, { config: { doc: routeDoc({ body: k.body, response: k.one }) } }, async (req, reply) => {
      gate(req);
      readQuery(req.query, NO_PARAMS);
      const row = await k.create(req.auth, parseBody(k.body, req.body, k.what));
      reply.code(201).header('location', `${base}/v1${top}/${row.uuid}`);
      return k.render(row, base, null);
    });
  }
  const showDoc = routeDoc({ query: queryDoc(SHOW_PARAMS), response: k.one });
  app.get<{ Params: { uuid: string } }>(`${top}/:uuid`, { config: { doc: showDoc } }, async (req) => {
    gate(req);
    const fields = parseShowFields(req.query, req.ironicVersion, k.spec);
    return k.render(await k.get(req.auth, req.params.uuid.replace(/\.json$/, '')), base, fields);
  });
  app.patch<{ Params: { uuid: string } }>(
    `${top}/:uuid`,
    { config: { doc: routeDoc({ body: PatchBody, response: k.one }) } },
    async (req) => {
      gate(req);
      readQuery(req.query, NO_PARAMS);
      const ops = parseBody(PatchBody, req.body, 'patch');
      return k.render(await k.update(req.auth, req.params.uuid, ops), base, null);
    },
  );
  app.delete<{ Params: { uuid: string } }>(`${top}/:uuid`, { config: { doc: routeDoc({ answer: 'empty' }) } }, async (req, reply) => {
    gate(req);
    readQuery(req.query, NO_PARAMS);
    await k.delete(req.auth, req.params.uuid);
    return empty(reply, 204);
  });

  app.get<{ Params: IdentParams }>(`/nodes/:ident${top}`, { config: { doc: listDoc } }, async (req) => {
    gate(req);
    return list(req, nodeIdent(req, req.params.ident));
  });
  // Writes and single objects below a node: Ironic's OperationNotPermitted (403), after the
  // checks Ironic makes first — the create body's schema, and the object's lookup (400, 404).
  const refused = `Always refused below a node: 403 OperationNotPermitted, as in Ironic (use /v1${top})`;
  app.post<{ Params: IdentParams }>(
    `/nodes/:ident${top}`,
    { config: { doc: routeDoc({ body: k.body, answer: 'empty', summary: refused }) } },
    async (req) => {
      gate(req);
      parseBody(k.body, req.body, k.what);
      throw notPermitted();
    },
  );
  for (const method of ['GET', 'PATCH', 'DELETE'] as const) {
    app.route<{ Params: IdentParams & { uuid: string } }>({
      method,
      url: `/nodes/:ident${top}/:uuid`,
      // The body is never read: the lookup comes first, then the refusal.
      config: {
        doc: routeDoc({
          answer: 'empty',
          summary: refused,
          ...(method === 'PATCH' ? { noBody: true } : {}),
          ...(method === 'GET' ? { noQuery: true } : {}),
        }),
      },
      handler: async (req) => {
        gate(req);
        await k.get(req.auth, req.params.uuid);
        throw notPermitted();
      },
    });
  }
}
