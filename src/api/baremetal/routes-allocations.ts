/**
 * Allocation routes (Ironic ≥ 1.52,
 * https://docs.openstack.org/api-ref/baremetal/#allocations-allocations):
 * `GET|POST /v1/allocations`, `GET|PATCH|DELETE /v1/allocations/{uuid or name}`,
 * `GET|DELETE /v1/nodes/{node}/allocation`.
 *
 * Version rules (Ironic 21.4): before 1.52 a GET is 404 and any other method 405; `PATCH` needs
 * 1.57 (405 before); `node` in the body (backfill) 1.58 (400 before, as Ironic) and `owner` 1.60 (406 before); the
 * `owner` field and filter are hidden / refused (406) before 1.60. Create answers 201 with a
 * `Location`; the list shows every field (no reduced default) and a `next` link on full pages.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { InvalidInputError, NotFoundError } from '../../domain/errors.ts';
import { isUuidLike } from '../../domain/ids.ts';
import { isJsonObject } from '../../domain/inventory/masking.ts';
import { isValidLogicalName } from '../../domain/inventory/validation.ts';
import { ALLOCATION_FIELDS, type Allocation } from '../../domain/scheduling/model.ts';
import { empty, nodeIdent, type BaremetalContext, type IdentParams } from './context.ts';
import { MethodNotAllowedError, NotAcceptableError } from './microversion.ts';
import { checkFields } from './node-list.ts';
import { limitParam, listParam, nextArgs, readQuery, sortDirParam, uuidParam } from './query.ts';
import { collection, isoTime, links } from './render.ts';
import { queryDoc, routeDoc } from '../common/route-doc.ts';
import { AllocationCollection, AllocationResponse } from './response-schemas-resources.ts';
import { AllocationCreateBody, parseAllocationCreate, parsePatchDocument } from './resource-body-schemas.ts';
import { PatchBody } from './schemas.ts';

/** First version with allocations, PATCH, backfill and owner. */
const V_ALLOCATIONS = 52;
const V_PATCH = 57;
const V_BACKFILL = 58;
const V_OWNER = 60;

const KNOWN = new Set<string>(ALLOCATION_FIELDS);
const LIST_PARAMS = new Set(['node', 'resource_class', 'state', 'owner', 'fields', 'limit', 'marker', 'sort_key', 'sort_dir']);
const SHOW_PARAMS = new Set(['fields']);
const NO_PARAMS = new Set<string>();

/** True when an allocation field exists at this version. */
function fieldAllowed(field: string, version: number): boolean {
  return field !== 'owner' || version >= V_OWNER;
}

/** An allocation in Ironic's shape; `fields` already checked, null for every field of the version. */
export function renderAllocation(a: Allocation, version: number, base: string, fields: readonly string[] | null): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of fields ?? ALLOCATION_FIELDS.filter((x) => fieldAllowed(x, version))) {
    const v = (a as unknown as Record<string, unknown>)[f];
    out[f] = f === 'created_at' || f === 'updated_at' ? isoTime(v as number | null) : Array.isArray(v) ? [...v] : (v ?? null);
  }
  out.links = links(base, `allocations/${a.uuid}`);
  return out;
}

/**
 * The allocation identifier of a route (`:ident`, `.json` suffix dropped): a UUID or a logical
 * name (Ironic 21.4 `args.uuid_or_name`).
 * @throws InvalidInputError (400) for anything else, e.g. a name with a space
 */
function allocationIdent(raw: string): string {
  const ident = raw.replace(/\.json$/, '');
  if (!isUuidLike(ident) && !isValidLogicalName(ident)) throw new InvalidInputError(`Expected UUID or name for allocation_ident: ${ident}`);
  return ident;
}

/** 404 (GET) or 405 (other methods) before 1.52. */
function gate(req: FastifyRequest, min = V_ALLOCATIONS): void {
  if (req.ironicVersion >= min) return;
  if (req.method === 'GET' && min === V_ALLOCATIONS) throw new NotFoundError('resource', '', 'The resource could not be found.');
  throw new MethodNotAllowedError(`The method ${req.method} is not allowed for this resource at API version 1.${req.ironicVersion}.`);
}

/**
 * The body fields newer than the request's version: `node` (backfill) before 1.58 is 400
 * "Cannot set node when creating an allocation in this API version" (Ironic raises `Invalid`
 * there), `owner` before 1.60 is 406. Checked before the body's shape (`parseAllocationCreate`),
 * so a body that is no object passes here and is refused there.
 */
function checkBodyVersion(body: unknown, version: number): void {
  if (!isJsonObject(body)) return;
  if (body.node !== undefined && body.node !== null && version < V_BACKFILL)
    throw new InvalidInputError('Cannot set node when creating an allocation in this API version');
  if (body.owner !== undefined && body.owner !== null && version < V_OWNER)
    throw new NotAcceptableError(`Field owner requires API version 1.${V_OWNER} or later.`);
}

/** Register the allocation routes. */
export function allocationRoutes(app: FastifyInstance, ctx: BaremetalContext): void {
  const allocations = () => ctx.services.scheduling.allocations;
  const { base } = ctx;

  for (const p of ['/allocations', '/allocations.json']) {
    app.get(p, { config: { doc: routeDoc({ query: queryDoc(LIST_PARAMS), response: AllocationCollection }) } }, async (req) => {
      gate(req);
      const v = req.ironicVersion;
      const q = readQuery(req.query, LIST_PARAMS);
      if (q.owner !== undefined && v < V_OWNER)
        throw new NotAcceptableError(`Request not acceptable. The minimal required API version should be 1.${V_OWNER}`);
      const fields = listParam(q, 'fields') ?? null;
      if (fields !== null) checkFields(fields, v, KNOWN, fieldAllowed);
      const sortKey = q.sort_key ?? 'id';
      if (sortKey === 'owner' && v < V_OWNER) throw new NotAcceptableError(`Sorting by owner requires API version 1.${V_OWNER} or later.`);
      const limit = limitParam(q);
      const items = await allocations().list(req.auth, {
        ...(q.node !== undefined ? { node: nodeIdent(req, q.node) } : {}),
        ...(q.resource_class !== undefined ? { resourceClass: q.resource_class } : {}),
        ...(q.state !== undefined ? { state: q.state } : {}),
        ...(q.owner !== undefined ? { owner: q.owner } : {}),
        limit,
        marker: uuidParam(q, 'marker') ?? null,
        sortKey,
        sortDir: sortDirParam(q),
      });
      return collection(
        'allocations',
        items.map((a) => renderAllocation(a, v, base, fields)),
        { limit, lastUuid: items.at(-1)?.uuid ?? null, base, resource: 'allocations', args: nextArgs(q) },
      );
    });

    app.post(p, { config: { doc: routeDoc({ body: AllocationCreateBody, response: AllocationResponse }) } }, async (req, reply) => {
      gate(req);
      readQuery(req.query, NO_PARAMS);
      checkBodyVersion(req.body, req.ironicVersion);
      const a = await allocations().create(req.auth, parseAllocationCreate(req.body));
      reply.code(201).header('location', `${base}/v1/allocations/${a.uuid}`);
      return renderAllocation(a, req.ironicVersion, base, null);
    });
  }

  const showDoc = routeDoc({ query: queryDoc(SHOW_PARAMS), response: AllocationResponse });
  app.get<{ Params: IdentParams }>('/allocations/:ident', { config: { doc: showDoc } }, async (req) => {
    gate(req);
    const v = req.ironicVersion;
    const fields = listParam(readQuery(req.query, SHOW_PARAMS), 'fields') ?? null;
    if (fields !== null) checkFields(fields, v, KNOWN, fieldAllowed);
    return renderAllocation(await allocations().get(req.auth, allocationIdent(req.params.ident)), v, base, fields);
  });

  app.patch<{ Params: IdentParams }>(
    '/allocations/:ident',
    { config: { doc: routeDoc({ body: PatchBody, response: AllocationResponse }) } },
    async (req) => {
      gate(req, V_PATCH);
      readQuery(req.query, NO_PARAMS);
      const ident = allocationIdent(req.params.ident);
      return renderAllocation(await allocations().update(req.auth, ident, parsePatchDocument(req.body)), req.ironicVersion, base, null);
    },
  );

  app.delete<{ Params: IdentParams }>('/allocations/:ident', { config: { doc: routeDoc({ answer: 'empty' }) } }, async (req, reply) => {
    gate(req);
    readQuery(req.query, NO_PARAMS);
    await allocations().delete(req.auth, allocationIdent(req.params.ident));
    return empty(reply, 204);
  });

  app.get<{ Params: IdentParams }>(
    '/nodes/:ident/allocation',
    { config: { doc: routeDoc({ query: queryDoc(SHOW_PARAMS), response: AllocationResponse }) } },
    async (req) => {
      gate(req);
      const v = req.ironicVersion;
      const fields = listParam(readQuery(req.query, SHOW_PARAMS), 'fields') ?? null;
      if (fields !== null) checkFields(fields, v, KNOWN, fieldAllowed);
      return renderAllocation(await allocations().getForNode(req.auth, nodeIdent(req, req.params.ident)), v, base, fields);
    },
  );

  app.delete<{ Params: IdentParams }>(
    '/nodes/:ident/allocation',
    { config: { doc: routeDoc({ answer: 'empty' }) } },
    async (req, reply) => {
      gate(req);
      readQuery(req.query, NO_PARAMS);
      await allocations().deleteForNode(req.auth, nodeIdent(req, req.params.ident));
      return empty(reply, 204);
    },
  );
}
