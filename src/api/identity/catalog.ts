/**
 * The service catalogue every scoped token carries, as a devstack cloud announces its services:
 * one entry per esi API, each with a `public`, `internal` and `admin` endpoint at the same URL
 * (esi serves every API on one port under a path prefix).
 *
 * {@link CATALOG_SERVICES} is the single list of announced services.
 *
 * Format: Keystone v3 token `catalog` (Keystone API reference, "Password authentication with
 * scoped authorization"): `[{type, name, id, endpoints: [{id, interface, region, region_id,
 * url}]}]`. Ids are stable (derived from the service type), so clients may cache them.
 */
import { createHash } from 'node:crypto';

/** One announced service: its catalogue type, its OpenStack service name and its path prefix. */
export interface CatalogService {
  readonly type: string;
  readonly name: string;
  /** Path prefix under the public URL, e.g. `/baremetal`. */
  readonly path: string;
}

/** The services esi announces, in catalogue order. */
export const CATALOG_SERVICES: readonly CatalogService[] = Object.freeze([
  { type: 'identity', name: 'keystone', path: '/identity' },
  { type: 'baremetal', name: 'ironic', path: '/baremetal' },
  { type: 'lease', name: 'esi-leap', path: '/lease' },
  { type: 'image', name: 'glance', path: '/image' },
  { type: 'network', name: 'neutron', path: '/network' },
  { type: 'compute', name: 'nova', path: '/compute/v2.1' },
]);

const INTERFACES = ['public', 'internal', 'admin'] as const;

/** One catalogue endpoint. */
export interface CatalogEndpoint {
  readonly id: string;
  readonly interface: (typeof INTERFACES)[number];
  readonly region: string;
  readonly region_id: string;
  readonly url: string;
}

/** One catalogue entry. */
export interface CatalogEntry {
  readonly type: string;
  readonly name: string;
  readonly id: string;
  readonly endpoints: readonly CatalogEndpoint[];
}

function stableId(...parts: string[]): string {
  return createHash('sha256').update(parts.join('\u0000')).digest('hex').slice(0, 32);
}

/**
 * Build the catalogue.
 * @param baseUrl public base URL, no trailing slash (e.g. `http://127.0.0.1:8585`)
 * @param region region name (config `identity.region`, default `RegionOne`)
 */
export function buildCatalog(baseUrl: string, region: string): CatalogEntry[] {
  return CATALOG_SERVICES.map((s) => ({
    type: s.type,
    name: s.name,
    id: stableId('service', s.type),
    endpoints: INTERFACES.map((iface) => ({
      id: stableId('endpoint', s.type, iface, region),
      interface: iface,
      region,
      region_id: region,
      url: `${baseUrl}${s.path}`,
    })),
  }));
}
