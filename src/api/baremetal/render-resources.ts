/**
 * Rendering of chassis, portgroups, volume connectors and volume targets in Ironic 21.4's JSON
 * shapes (`convert_with_links` of `ironic/api/controllers/v1/{chassis,portgroup,volume*}.py`;
 * https://docs.openstack.org/api-ref/baremetal/): fields in Ironic's order, ISO-8601
 * timestamps, self/bookmark links, and each resource's link list (`nodes` of a chassis, `ports`
 * of a portgroup). With a field selection only those fields and `links` are shown.
 *
 * Deliberate difference (docs/compatibility.md): Ironic 21.4 renders a chassis' `nodes` links
 * nested in a second list (`[[self, bookmark]]`, a stray comma in its code); esi renders them
 * as every other link list, as the API reference shows.
 */
import type { Chassis, Portgroup, VolumeConnector, VolumeTarget } from '../../domain/inventory/index.ts';
import { isoTime, links } from './render-fields.ts';

/** Every field of each resource, in Ironic's order (link lists excluded). */
export const CHASSIS_FIELDS = ['uuid', 'created_at', 'updated_at', 'description', 'extra'] as const;
export const PORTGROUP_FIELDS = [
  'uuid',
  'created_at',
  'updated_at',
  'address',
  'extra',
  'internal_info',
  'mode',
  'name',
  'properties',
  'standalone_ports_supported',
  'node_uuid',
] as const;
export const CONNECTOR_FIELDS = ['uuid', 'created_at', 'updated_at', 'connector_id', 'extra', 'type', 'node_uuid'] as const;
export const TARGET_FIELDS = [
  'uuid',
  'created_at',
  'updated_at',
  'boot_index',
  'extra',
  'properties',
  'volume_id',
  'volume_type',
  'node_uuid',
] as const;

/** Default fields of the lists (Ironic `DEFAULT_RETURN_FIELDS` / `_DEFAULT_RETURN_FIELDS`). */
export const CHASSIS_DEFAULT_FIELDS = ['uuid', 'description'];
export const PORTGROUP_DEFAULT_FIELDS = ['uuid', 'address', 'name'];
export const CONNECTOR_DEFAULT_FIELDS = ['uuid', 'node_uuid', 'type', 'connector_id'];
export const TARGET_DEFAULT_FIELDS = ['uuid', 'node_uuid', 'volume_type', 'boot_index', 'volume_id'];

const TIME_FIELDS = new Set(['created_at', 'updated_at']);

/**
 * Render an object: `fields` (already checked) or every field, then `links`, then the link
 * list (`extra`), shown when all fields are shown or when `fields` names it.
 */
function render(
  row: object,
  all: readonly string[],
  fields: readonly string[] | null,
  self: string,
  base: string,
  extra?: { key: string; path: string },
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const r = row as Record<string, unknown>;
  for (const f of all) {
    if (fields !== null && !fields.includes(f)) continue;
    out[f] = TIME_FIELDS.has(f) ? isoTime(r[f] as number | null) : (r[f] ?? null);
  }
  out.links = links(base, self);
  if (extra && (fields === null || fields.includes(extra.key))) out[extra.key] = links(base, extra.path);
  return out;
}

/** A chassis; `fields` null for all. */
export function renderChassis(c: Chassis, base: string, fields: readonly string[] | null): Record<string, unknown> {
  return render(c, CHASSIS_FIELDS, fields, `chassis/${c.uuid}`, base, { key: 'nodes', path: `chassis/${c.uuid}/nodes` });
}

/** A portgroup; `fields` null for all. */
export function renderPortgroup(pg: Portgroup, base: string, fields: readonly string[] | null): Record<string, unknown> {
  return render(pg, PORTGROUP_FIELDS, fields, `portgroups/${pg.uuid}`, base, { key: 'ports', path: `portgroups/${pg.uuid}/ports` });
}

/** A volume connector; `fields` null for all. */
export function renderConnector(c: VolumeConnector, base: string, fields: readonly string[] | null): Record<string, unknown> {
  return render(c, CONNECTOR_FIELDS, fields, `volume/connectors/${c.uuid}`, base);
}

/** A volume target (its properties as the caller may see them); `fields` null for all. */
export function renderTarget(t: VolumeTarget, base: string, fields: readonly string[] | null): Record<string, unknown> {
  return render(t, TARGET_FIELDS, fields, `volume/targets/${t.uuid}`, base);
}

/**
 * The volume root document (`GET /v1/volume`, `GET /v1/nodes/{node}/volume`): links to itself,
 * its connectors and its targets (Ironic `volume.convert`).
 * @param node the node identifier as requested, for a node's document
 */
export function renderVolumeRoot(base: string, node?: string): Record<string, unknown> {
  const prefix = node === undefined ? 'volume/' : `nodes/${node}/volume/`;
  return { links: links(base, prefix), connectors: links(base, `${prefix}connectors`), targets: links(base, `${prefix}targets`) };
}
