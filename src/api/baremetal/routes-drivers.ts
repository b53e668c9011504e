/**
 * Driver and conductor routes (https://docs.openstack.org/api-ref/baremetal/#drivers-drivers and
 * "Conductors"): `GET /v1/drivers` (`type`, `detail`, `fields` ≥1.77), `GET /v1/drivers/{name}` (`fields`),
 * `GET /v1/drivers/{name}/properties`, `GET /v1/drivers/{name}/raid/logical_disk_properties`
 * (≥1.12, else 406), and from 1.49 `GET /v1/conductors[/{hostname}]` (`detail`). System-level
 * resources: admins and observers. Driver vendor passthru: ./routes-vendor-passthru.ts.
 */
import type { FastifyInstance } from 'fastify';
import { InvalidInputError, NotFoundError } from '../../domain/errors.ts';
import type { DriverInfo } from '../../domain/inventory/driver-service.ts';
import { INTERFACE_KINDS } from '../../domain/hardware/interfaces.ts';
import type { BaremetalContext } from './context.ts';
import { NotAcceptableError, requireVersion } from './microversion.ts';
import { boolParam, limitParam, listParam, nextArgs, readQuery, sortDirParam, type Query } from './query.ts';
import { collection, links, renderConductor } from './render.ts';
import { queryDoc, routeDoc } from '../common/route-doc.ts';
import {
  ConductorCollection,
  ConductorResponse,
  DriverCollection,
  DriverPropertiesResponse,
  DriverResponse,
} from './response-schemas-services.ts';

/** Interface kinds whose default/enabled fields a driver shows later than 1.30 (Ironic `hide_fields_in_newer_versions`). */
const INTERFACE_FIELD_VERSIONS: Readonly<Partial<Record<string, number>>> = Object.freeze({ storage: 33, rescue: 38, bios: 40 });
/** The API version of `fields` on drivers (Ironic `MINOR_77_DRIVER_FIELDS_SELECTOR`). */
const DRIVER_FIELDS_VERSION = 77;
/** Query parameters of `GET /v1/drivers`. */
const DRIVER_LIST_PARAMS: ReadonlySet<string> = new Set(['type', 'detail', 'fields']);
/** Query parameters of `GET /v1/drivers/{name}`. */
const DRIVER_SHOW_PARAMS: ReadonlySet<string> = new Set(['fields']);
/** Query parameters of `GET /v1/conductors`. */
const CONDUCTOR_LIST_PARAMS: ReadonlySet<string> = new Set(['detail', 'limit', 'marker', 'sort_dir']);

/**
 * A driver in Ironic's shape; `detail` adds the default and enabled interfaces (≥1.30; storage
 * ≥1.33, rescue ≥1.38, bios ≥1.40). With `fields` (≥1.77), only those and `links`.
 * @throws InvalidInputError for a field the driver does not show
 */
function renderDriver(d: DriverInfo, version: number, base: string, detail: boolean, fields?: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = { name: d.name, hosts: [...d.hosts] };
  if (version >= 30) out.type = 'dynamic';
  out.links = links(base, `drivers/${d.name}`);
  if (version >= 14) out.properties = links(base, `drivers/${d.name}/properties`);
  if (detail && version >= 30) {
    for (const kind of INTERFACE_KINDS) {
      if (version < (INTERFACE_FIELD_VERSIONS[kind] ?? 30)) continue;
      out[`default_${kind}_interface`] = d.interfaces[kind][0] ?? null;
      out[`enabled_${kind}_interfaces`] = [...d.interfaces[kind]];
    }
  }
  if (fields === undefined) return out;
  const invalid = fields.filter((f) => !Object.hasOwn(out, f));
  if (invalid.length > 0) throw new InvalidInputError(`Field(s) "${invalid.join(', ')}" are not valid`);
  return Object.fromEntries(Object.entries(out).filter(([k]) => k === 'links' || fields.includes(k)));
}

/** The `fields` of a driver request (≥1.77, else 406 as Ironic). */
function driverFields(q: Query, version: number): string[] | undefined {
  const fields = listParam(q, 'fields');
  if (fields !== undefined && version < DRIVER_FIELDS_VERSION) throw new NotAcceptableError();
  return fields;
}

/** Register the driver and conductor routes. */
export function driverRoutes(app: FastifyInstance, ctx: BaremetalContext): void {
  const { inventory, base } = ctx;

  for (const p of ['/drivers', '/drivers.json']) {
    app.get(p, { config: { doc: routeDoc({ query: queryDoc(DRIVER_LIST_PARAMS), response: DriverCollection }) } }, async (req) => {
      const v = req.ironicVersion;
      const q = readQuery(req.query, DRIVER_LIST_PARAMS);
      const detail = boolParam(q, 'detail') ?? false;
      if (q.fields !== undefined && detail) throw new InvalidInputError('Can not specify ?detail=True and fields in the same request.');
      if ((q.type !== undefined || q.detail !== undefined) && v < 30)
        throw new NotAcceptableError('Request not acceptable. The minimal required API version should be 1.30');
      const fields = driverFields(q, v);
      if (q.type !== undefined && q.type !== 'classic' && q.type !== 'dynamic') {
        throw new InvalidInputError(`Invalid driver type "${q.type}"; expected classic or dynamic.`);
      }
      const drivers = q.type === 'classic' ? [] : await inventory.drivers.list(req.auth);
      return { drivers: drivers.map((d) => renderDriver(d, v, base, detail, fields)) };
    });
  }

  const showDoc = routeDoc({ query: queryDoc(DRIVER_SHOW_PARAMS), response: DriverResponse });
  app.get<{ Params: { name: string } }>('/drivers/:name', { config: { doc: showDoc } }, async (req) => {
    const fields = driverFields(readQuery(req.query, DRIVER_SHOW_PARAMS), req.ironicVersion);
    return renderDriver(await inventory.drivers.get(req.auth, req.params.name), req.ironicVersion, base, true, fields);
  });

  const properties = { config: { doc: routeDoc({ noQuery: true, response: DriverPropertiesResponse }) } };
  app.get<{ Params: { name: string } }>('/drivers/:name/properties', properties, async (req) => {
    readQuery(req.query, new Set());
    return inventory.drivers.properties(req.auth, req.params.name);
  });

  app.get<{ Params: { name: string } }>('/drivers/:name/raid/logical_disk_properties', properties, async (req) => {
    readQuery(req.query, new Set());
    if (req.ironicVersion < 12) throw new NotAcceptableError();
    return inventory.drivers.raidLogicalDiskProperties(req.auth, req.params.name);
  });

  const gate = (v: number): void => {
    if (v < 49) throw new NotFoundError('resource', 'conductors', 'The resource could not be found.', 'NotFound');
  };
  for (const p of ['/conductors', '/conductors.json']) {
    app.get(p, { config: { doc: routeDoc({ query: queryDoc(CONDUCTOR_LIST_PARAMS), response: ConductorCollection }) } }, async (req) => {
      gate(req.ironicVersion);
      const q = readQuery(req.query, CONDUCTOR_LIST_PARAMS);
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

  app.get<{ Params: { hostname: string } }>(
    '/conductors/:hostname',
    { config: { doc: routeDoc({ noQuery: true, response: ConductorResponse }) } },
    async (req) => {
      gate(req.ironicVersion);
      readQuery(req.query, new Set());
      return renderConductor(await inventory.drivers.getConductor(req.auth, req.params.hostname), base, true);
    },
  );
}
