/**
 * Flavor routes (Nova v2.1): `GET|POST /flavors`, `GET /flavors/detail`, `GET|PUT|DELETE
 * /flavors/{id}` (PUT ≥ 2.55), extra specs `GET|POST /flavors/{id}/os-extra_specs` and
 * `GET|PUT|DELETE /flavors/{id}/os-extra_specs/{key}`, access lists `GET
 * /flavors/{id}/os-flavor-access` and `POST /flavors/{id}/action`
 * (`addTenantAccess`/`removeTenantAccess`). Create answers 200 (Nova), delete 202.
 */
import type { FastifyInstance } from 'fastify';
import { InvalidInputError } from '../../domain/errors.ts';
import { isJsonObject } from '../../domain/inventory/masking.ts';
import type { Compute } from '../../domain/compute/index.ts';
import { MethodNotAllowed } from './errors.ts';
import { limitOf, readQuery } from './query.ts';
import { renderFlavor } from './render.ts';
import { checkNovaBody, FlavorCreateBody, FlavorUpdateBody } from './bodies.ts';
import { FlavorCollection, FlavorDetailCollection, FlavorResponse } from './response-schemas.ts';
import { checkDescription, parseExtraSpecs, parseFlavorBody, parseTenant } from '../../domain/compute/flavor-input.ts';
import { ExtraSpecBody, ExtraSpecsBody, FlavorActionBody } from './bodies-actions.ts';
import { ExtraSpecResponse, ExtraSpecsResponse, FlavorAccessResponse } from './response-schemas-extra.ts';
import { queryDoc, routeDoc } from '../common/route-doc.ts';

interface IdParams {
  id: string;
}

/** The query parameters the flavor lists read (Nova ignores any other). */
export const FLAVOR_LIST_QUERY = ['is_public', 'minRam', 'minDisk', 'sort_key', 'sort_dir', 'marker', 'limit'] as const;

/** Register the flavor routes on the `/v2.1` scope. */
export function flavorRoutes(app: FastifyInstance, compute: Compute, base: string): void {
  const { flavors } = compute;

  for (const detail of [false, true]) {
    app.get(
      detail ? '/flavors/detail' : '/flavors',
      { config: { doc: routeDoc({ query: queryDoc(FLAVOR_LIST_QUERY), response: detail ? FlavorDetailCollection : FlavorCollection }) } },
      async (req) => {
        const q = readQuery(req.query);
        const limit = limitOf(q);
        const list = await flavors.list(req.auth, {
          ...(q.is_public !== undefined ? { isPublic: q.is_public } : {}),
          ...(q.minRam !== undefined ? { minRam: q.minRam } : {}),
          ...(q.minDisk !== undefined ? { minDisk: q.minDisk } : {}),
          ...(q.sort_key !== undefined ? { sortKey: q.sort_key } : {}),
          ...(q.sort_dir !== undefined ? { sortDir: q.sort_dir } : {}),
          ...(q.marker !== undefined ? { marker: q.marker } : {}),
          limit,
        });
        const out: Record<string, unknown> = { flavors: list.map((f) => renderFlavor(f, req.novaVersion, base, detail)) };
        const last = list.at(-1);
        if (list.length === limit && last !== undefined) {
          const params = new URLSearchParams({ ...q, limit: String(limit), marker: last.flavorid });
          out.flavors_links = [{ rel: 'next', href: `${base}/v2.1/flavors${detail ? '/detail' : ''}?${params.toString()}` }];
        }
        return out;
      },
    );
  }

  app.post('/flavors', { config: { doc: routeDoc({ body: FlavorCreateBody, response: FlavorResponse }) } }, async (req) => {
    const allowDescription = req.novaVersion >= 55;
    const body = checkNovaBody(FlavorCreateBody, req.body, () => parseFlavorBody(req.body, allowDescription));
    const f = await flavors.create(req.auth, body, allowDescription);
    return { flavor: renderFlavor(f, req.novaVersion, base, true) };
  });

  app.get<{ Params: IdParams }>(
    '/flavors/:id',
    { config: { doc: routeDoc({ response: FlavorResponse, noQuery: true }) } },
    async (req) => ({
      flavor: renderFlavor(await flavors.get(req.auth, req.params.id), req.novaVersion, base, true),
    }),
  );

  app.put<{ Params: IdParams }>(
    '/flavors/:id',
    { config: { doc: routeDoc({ body: FlavorUpdateBody, response: FlavorResponse }) } },
    async (req) => {
      if (req.novaVersion < 55) throw new MethodNotAllowed('Updating a flavor needs microversion 2.55 or later.');
      const b = checkNovaBody(FlavorUpdateBody, req.body, () => {
        const raw = req.body;
        if (
          !isJsonObject(raw) ||
          Object.keys(raw).length !== 1 ||
          !isJsonObject(raw.flavor) ||
          Object.keys(raw.flavor).join() !== 'description'
        ) {
          throw new InvalidInputError(
            'Invalid input for field/attribute flavor. Only \'description\' can be updated: {"flavor": {"description": …}}.',
          );
        }
        checkDescription(raw.flavor.description);
      });
      return { flavor: renderFlavor(await flavors.update(req.auth, req.params.id, b.flavor.description), req.novaVersion, base, true) };
    },
  );

  app.delete<{ Params: IdParams }>('/flavors/:id', { config: { doc: routeDoc({ answer: 'empty' }) } }, async (req, reply) => {
    await flavors.delete(req.auth, req.params.id);
    return reply.code(202).send();
  });

  app.get<{ Params: IdParams }>(
    '/flavors/:id/os-extra_specs',
    { config: { doc: routeDoc({ response: ExtraSpecsResponse, noQuery: true }) } },
    async (req) => ({
      extra_specs: { ...(await flavors.extraSpecs(req.auth, req.params.id)) },
    }),
  );

  app.post<{ Params: IdParams }>(
    '/flavors/:id/os-extra_specs',
    { config: { doc: routeDoc({ body: ExtraSpecsBody, response: ExtraSpecsResponse }) } },
    async (req) => {
      const body = checkNovaBody(ExtraSpecsBody, req.body, () => parseExtraSpecs(req.body));
      return { extra_specs: await flavors.setExtraSpecs(req.auth, req.params.id, body) };
    },
  );

  app.get<{ Params: IdParams & { key: string } }>(
    '/flavors/:id/os-extra_specs/:key',
    { config: { doc: routeDoc({ response: ExtraSpecResponse, noQuery: true }) } },
    async (req) => ({
      [req.params.key]: await flavors.extraSpec(req.auth, req.params.id, req.params.key),
    }),
  );

  app.put<{ Params: IdParams & { key: string } }>(
    '/flavors/:id/os-extra_specs/:key',
    { config: { doc: routeDoc({ body: ExtraSpecBody, response: ExtraSpecResponse }) } },
    async (req) => {
      const body = checkNovaBody(ExtraSpecBody, req.body, () => parseExtraSpecs(req.body, req.params.key));
      return flavors.setExtraSpecs(req.auth, req.params.id, body, req.params.key);
    },
  );

  app.delete<{ Params: IdParams & { key: string } }>(
    '/flavors/:id/os-extra_specs/:key',
    { config: { doc: routeDoc({ answer: 'empty' }) } },
    async (req, reply) => {
      await flavors.deleteExtraSpec(req.auth, req.params.id, req.params.key);
      return reply.code(200).send();
    },
  );

  const accessList = (flavorid: string, projects: string[]) => ({
    flavor_access: projects.map((p) => ({ flavor_id: flavorid, tenant_id: p })),
  });

  app.get<{ Params: IdParams }>(
    '/flavors/:id/os-flavor-access',
    { config: { doc: routeDoc({ response: FlavorAccessResponse, noQuery: true }) } },
    async (req) => accessList(req.params.id, await flavors.access(req.auth, req.params.id)),
  );

  app.post<{ Params: IdParams }>(
    '/flavors/:id/action',
    { config: { doc: routeDoc({ body: FlavorActionBody, response: FlavorAccessResponse }) } },
    async (req) => {
      const b = checkNovaBody(FlavorActionBody, req.body, () => {
        const raw = req.body;
        if (!isJsonObject(raw) || Object.keys(raw).length !== 1)
          throw new InvalidInputError('The action body must have exactly one of addTenantAccess, removeTenantAccess.');
        const [action] = Object.keys(raw);
        if (action !== 'addTenantAccess' && action !== 'removeTenantAccess')
          throw new InvalidInputError(`There is no such action: ${String(action).slice(0, 40)}`);
        parseTenant(raw[action]);
      });
      const [add, arg] = 'addTenantAccess' in b ? [true, b.addTenantAccess] : [false, b.removeTenantAccess];
      return accessList(req.params.id, await flavors.changeAccess(req.auth, req.params.id, add, arg));
    },
  );
}
