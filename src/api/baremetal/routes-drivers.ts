/**
 * Driver and conductor routes (https://docs.openstack.org/api-ref/baremetal/#drivers-drivers and
 * "Conductors"): `GET /v1/drivers` (`type`, `detail`), `GET /v1/drivers/{name}`,
 * `GET /v1/drivers/{name}/properties`, and from 1.49 `GET /v1/conductors[/{hostname}]` (`detail`).
 * System-level resources: admins and observers.
 */
import type { FastifyInstance } from 'fastify';
import { InvalidInputError, NotFoundError } from '../../domain/errors.ts';
import type { DriverInfo } from '../../domain/inventory/driver-service.ts';
import { INTERFACE_KINDS } from '../../domain/hardware/interfaces.ts';
import type { BaremetalContext } from './context.ts';
import { NotAcceptableError, requireVersion } from './microversion.ts';
import { boolParam, limitParam, nextArgs, readQuery, sortDirParam } from './query.ts';
import { collection, links, renderConductor } from './render.ts';

/** A driver in Ironic's shape; `detail` adds the default and enabled interfaces (≥1.30). */
function renderDriver(d: DriverInfo, version: number, base: string, detail: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = { name: d.name, hosts: [...d.hosts] };
  if (version >= 30) out.type = 'dynamic';
  out.links = links(base, `drivers/${d.name}`);
  if (version >= 14) out.properties = links(base, `drivers/${d.name}/properties`);
  if (detail && version >= 30) {
    for (const kind of INTERFACE_KINDS) {
      out[`default_${kind}_interface`] = d.interfaces[kind][0] ?? null;
      out[`enabled_${kind}_interfaces`] = [...d.interfaces[kind]];
    }
  }
  return out;
}

/** Register the driver and conductor routes. */
export function driverRoutes(app: FastifyInstance, ctx: BaremetalContext): void {
  const { inventory, base } = ctx;

  for (const p of ['/drivers', '/drivers.json']) {
    app.get(p, async (req) => {
      const v = req.ironicVersion;
      const q = readQuery(req.query, new Set(['type', 'detail']));
      if ((q.type !== undefined || q.detail !== undefined) && v < 30)
        throw new NotAcceptableError('Request not acceptable. The minimal required API version should be 1.30');
      if (q.type !== undefined && q.type !== 'classic' && q.type !== 'dynamic') {
        throw new InvalidInputError(`Invalid driver type "${q.type}"; expected classic or dynamic.`);
      }
      const detail = boolParam(q, 'detail') ?? false;
      const drivers = q.type === 'classic' ? [] : await inventory.drivers.list(req.auth);
      return { drivers: drivers.map((d) => renderDriver(d, v, base, detail)) };
    });
  }

  app.get<{ Params: { name: string } }>('/drivers/:name', async (req) => {
    readQuery(req.query, new Set());
    return renderDriver(await inventory.drivers.get(req.auth, req.params.name), req.ironicVersion, base, true);
  });

  app.get<{ Params: { name: string } }>('/drivers/:name/properties', async (req) => {
    readQuery(req.query, new Set());
    return inventory.drivers.properties(req.auth, req.params.name);
  });

  const gate = (v: number): void => {
    if (v < 49) throw new NotFoundError('resource', 'conductors', 'The resource could not be found.', 'NotFound');
  };
  for (const p of ['/conductors', '/conductors.json']) {
    app.get(p, async (req) => {
      gate(req.ironicVersion);
      const q = readQuery(req.query, new Set(['detail', 'limit', 'marker', 'sort_dir']));
      const detail = boolParam(q, 'detail') ?? false;
      if (q.detail !== undefined) requireVersion(req.ironicVersion, 43, 'detail');
      const limit = limitParam(q);
      const dir = sortDirParam(q);
      let list = await inventory.drivers.listConductors(req.auth);
      if (dir === 'desc') list = list.reverse();
      if (q.marker !== undefined) list = list.filter((c) => (dir === 'asc' ? c.hostname > q.marker! : c.hostname < q.marker!));
      const page = list.slice(0, limit);
      return collection(
        'conductors',
        page.map((c) => renderConductor(c, base, detail)),
        { limit, lastUuid: page.at(-1)?.hostname ?? null, base, resource: 'conductors', args: nextArgs(q) },
      );
    });
  }

  app.get<{ Params: { hostname: string } }>('/conductors/:hostname', async (req) => {
    gate(req.ironicVersion);
    readQuery(req.query, new Set());
    return renderConductor(await inventory.drivers.getConductor(req.auth, req.params.hostname), base, true);
  });
}
