/**
 * Response schemas of the baremetal service documents (TypeBox), for the document
 * (`/openapi/baremetal.json`): the discovery documents (`/`, `/v1`), drivers and their properties
 * (their vendor passthru: ./response-schemas-node.ts, shared with nodes), conductors, shards, and the ramdisk's lookup and inspection answers, as
 * Ironic 21.4 shows them at the newest microversion (`X-OpenStack-Ironic-API-Version: 1.82` or
 * `latest`) without `fields` (Ironic API reference, https://docs.openstack.org/api-ref/baremetal/;
 * `ironic/api/controllers/{root,v1/__init__,v1/driver,v1/conductor,v1/shard,v1/ramdisk}.py`).
 *
 * The wire format is fixed: every object is `additionalProperties: false` and every field is
 * required, except the maps whose keys are the driver's (properties) and the free-form JSON
 * Ironic passes through (test/api/ops/openapi-responses-baremetal-resources.test.ts
 * checks real answers).
 */
import { Type, type TProperties, type TSchema } from '@sinclair/typebox';
import { INTERFACE_KINDS } from '../../domain/hardware/interfaces.ts';
import { Links } from './response-schemas.ts';

const Str = Type.String();
const StrOrNull = Type.Union([Type.String(), Type.Null()]);
const Dict = Type.Object({}, { additionalProperties: true });
/** A time as Python's `isoformat()` of an aware UTC datetime (`2016-08-18T22:28:49.653000+00:00`). */
const Time = Type.String({ description: 'ISO 8601 with offset' });
const TimeOrNull = Type.Union([Time, Type.Null()]);
/** The `next` link of a full page (absent on the last page). */
const Next = Type.Optional(Type.String({ description: 'URL of the next page, when the page is full' }));

/** A strict object (the wire format is fixed). */
const strict = <P extends TProperties>(props: P) => Type.Object(props, { additionalProperties: false });
/** `{<key>: items, next?}`: a page of a collection. */
const page = (key: string, item: TSchema) => Type.Object({ [key]: Type.Array(item), next: Next }, { additionalProperties: false });

/** The version object of the discovery documents (`id`, `links`, `status`, `min_version`, `version`). */
const VersionObject = strict({
  id: Type.Literal('v1'),
  links: Links,
  status: Type.Literal('CURRENT'),
  min_version: Str,
  version: Str,
});

/** `GET /baremetal/` (Ironic api-ref "List API versions"): the service and its one version. */
export const RootResponse = strict({
  name: Str,
  description: Str,
  default_version: VersionObject,
  versions: Type.Array(VersionObject),
});

/**
 * `GET /baremetal/v1` (Ironic api-ref "Show v1 API"): links to every resource; at 1.82 all of
 * them (older versions leave out those they lack: `portgroups` before 1.23, `shards` before 1.82…).
 */
export const V1Response = strict({
  id: Type.Literal('v1'),
  links: Links,
  media_types: strict({ base: Str, type: Str }),
  chassis: Links,
  nodes: Links,
  ports: Links,
  drivers: Links,
  version: VersionObject,
  portgroups: Links,
  volume: Links,
  lookup: Links,
  heartbeat: Links,
  conductors: Links,
  allocations: Links,
  events: Links,
  deploy_templates: Links,
  shards: Links,
});

/** The fields of a driver every view shows (`type` ≥ 1.30, `properties` ≥ 1.14). */
const driverFields = { name: Str, hosts: Type.Array(Str), type: Type.Literal('dynamic'), links: Links, properties: Links };

/** An item of `GET /v1/drivers` (Ironic api-ref "List drivers"). */
export const DriverListItem = strict(driverFields);

/** `GET /v1/drivers`. */
export const DriverCollection = strict({ drivers: Type.Array(DriverListItem) });

/**
 * A driver with its interfaces (`GET /v1/drivers/{name}`, an item of `?detail=True`; Ironic
 * api-ref "Show driver details"): `default_<kind>_interface` and `enabled_<kind>_interfaces` for
 * every interface kind.
 */
export const DriverResponse = strict({
  ...driverFields,
  ...Object.fromEntries(
    INTERFACE_KINDS.flatMap((k) => [
      [`default_${k}_interface`, StrOrNull],
      [`enabled_${k}_interfaces`, Type.Array(Str)],
    ]),
  ),
});

/**
 * `GET /v1/drivers/{name}/properties` and `…/raid/logical_disk_properties`: each property's
 * name and its description (Ironic api-ref "Show driver properties", "Show driver logical disk
 * properties").
 */
export const DriverPropertiesResponse = Type.Record(Str, Str);

/** A conductor in the list (`GET /v1/conductors`, Ironic api-ref "List Conductors"). */
export const ConductorListItem = strict({ hostname: Str, conductor_group: Str, alive: Type.Boolean(), links: Links });

/** `GET /v1/conductors`. */
export const ConductorCollection = page('conductors', ConductorListItem);

/** One conductor (`GET /v1/conductors/{hostname}`, an item of `?detail=True`): with its drivers and times. */
export const ConductorResponse = strict({
  hostname: Str,
  conductor_group: Str,
  alive: Type.Boolean(),
  drivers: Type.Array(Str),
  created_at: Time,
  updated_at: TimeOrNull,
  links: Links,
});

/** `GET /v1/shards` (Ironic api-ref "Shards"): each shard's name and its node count. */
export const ShardCollection = strict({ shards: Type.Array(strict({ name: Str, count: Type.Integer() })) });

/**
 * `GET /v1/lookup` (Ironic api-ref "Agent Lookup"): the node as the agent needs it (secrets
 * masked) and the agent's configuration; `agent_token` is shown on the first lookup only
 * (`******` after).
 */
export const LookupResponse = strict({
  node: strict({ uuid: Str, properties: Dict, instance_info: Dict, driver_internal_info: Dict, links: Links }),
  config: strict({
    metrics: Dict,
    metrics_statsd: Dict,
    heartbeat_timeout: Type.Integer(),
    agent_token: Str,
    agent_token_required: Type.Boolean(),
    disable_deep_image_inspection: Type.Boolean(),
    permitted_image_formats: Type.Array(Str),
    enable_bios_bootloader_install: Type.Boolean(),
  }),
});

/** `POST /v1/continue_inspection` (202; Ironic api-ref "Continue inspection"): the node's UUID. */
export const ContinueInspectionResponse = strict({ uuid: Str });
