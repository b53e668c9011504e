/**
 * Response schemas of the baremetal API (TypeBox), for the document (`/openapi/baremetal.json`):
 * the node and the port as Ironic shows them at the newest microversion
 * (`X-OpenStack-Ironic-API-Version: 1.82` or `latest`) without `fields`, and their collections
 * (Ironic API reference, https://docs.openstack.org/api-ref/baremetal/; `hide_fields_in_newer_versions`
 * in Ironic 21.4). Older microversions show fewer fields, and `fields` a chosen few.
 *
 * The wire format is fixed, so every object is `additionalProperties: false` and every field is
 * required (test/api/ops/openapi-responses.test.ts checks real answers against them). Values a
 * caller may not read are still there, as Ironic's redaction text (`** Redacted … **`).
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { INTERFACE_KINDS } from '../../domain/hardware/interfaces.ts';

const Str = Type.String();
const StrOrNull = Type.Union([Type.String(), Type.Null()]);
const BoolOrNull = Type.Union([Type.Boolean(), Type.Null()]);
const Dict = Type.Object({}, { additionalProperties: true });
/** A time as Python's `isoformat()` of an aware UTC datetime (`2016-08-18T22:28:49.653000+00:00`). */
const Time = Type.String({ description: 'ISO 8601 with offset' });
const TimeOrNull = Type.Union([Time, Type.Null()]);

/** `[self, bookmark]` links (`{href, rel}`). */
export const Links = Type.Array(Type.Object({ href: Str, rel: Str, type: Type.Optional(Str) }, { additionalProperties: false }));

/** The `next` link of a full page (absent on the last page). */
const Next = Type.Optional(Type.String({ description: 'URL of the next page, when the page is full' }));

/** A node's fields at the newest microversion, in Ironic's order. */
const nodeFields: Record<string, TSchema> = {
  uuid: Str,
  name: StrOrNull,
  description: StrOrNull,
  driver: Str,
  chassis_uuid: StrOrNull,
  resource_class: StrOrNull,
  conductor_group: Str,
  shard: StrOrNull,
  owner: StrOrNull,
  lessee: StrOrNull,
  instance_uuid: StrOrNull,
  allocation_uuid: StrOrNull,
  traits: Type.Array(Str),
  driver_info: Dict,
  driver_internal_info: Dict,
  instance_info: Dict,
  properties: Dict,
  extra: Dict,
  network_data: Dict,
  power_state: StrOrNull,
  target_power_state: StrOrNull,
  provision_state: Str,
  target_provision_state: StrOrNull,
  provision_updated_at: TimeOrNull,
  last_error: StrOrNull,
  fault: StrOrNull,
  reservation: StrOrNull,
  maintenance: Type.Boolean(),
  maintenance_reason: StrOrNull,
  protected: Type.Boolean(),
  protected_reason: StrOrNull,
  retired: Type.Boolean(),
  retired_reason: StrOrNull,
  automated_clean: BoolOrNull,
  console_enabled: Type.Boolean(),
  clean_step: Dict,
  deploy_step: Dict,
  raid_config: Dict,
  target_raid_config: Dict,
  inspection_started_at: TimeOrNull,
  inspection_finished_at: TimeOrNull,
  boot_mode: StrOrNull,
  secure_boot: BoolOrNull,
  ...Object.fromEntries(INTERFACE_KINDS.map((i) => [`${i}_interface`, StrOrNull])),
  created_at: Time,
  updated_at: TimeOrNull,
  conductor: StrOrNull,
};

/** A node (`GET /v1/nodes/{ident}`, `POST /v1/nodes`, an item of `/v1/nodes/detail`). */
export const NodeResponse = Type.Object(
  { ...nodeFields, links: Links, ports: Links, states: Links, portgroups: Links, volume: Links },
  { additionalProperties: false },
);

/** An item of `GET /v1/nodes`: Ironic's short form. */
export const NodeListItem = Type.Object(
  {
    instance_uuid: StrOrNull,
    maintenance: Type.Boolean(),
    power_state: StrOrNull,
    provision_state: Str,
    uuid: Str,
    name: StrOrNull,
    links: Links,
  },
  { additionalProperties: false },
);

/** `GET /v1/nodes`. */
export const NodeCollection = Type.Object({ nodes: Type.Array(NodeListItem), next: Next }, { additionalProperties: false });

/** `GET /v1/nodes/detail`. */
export const NodeDetailCollection = Type.Object({ nodes: Type.Array(NodeResponse), next: Next }, { additionalProperties: false });

/** A port (`GET /v1/ports/{uuid}`, `POST /v1/ports`, an item of `/v1/ports/detail`). */
export const PortResponse = Type.Object(
  {
    uuid: Str,
    address: Str,
    node_uuid: Str,
    portgroup_uuid: StrOrNull,
    extra: Dict,
    internal_info: Dict,
    local_link_connection: Dict,
    pxe_enabled: Type.Boolean(),
    physical_network: StrOrNull,
    is_smartnic: Type.Boolean(),
    created_at: Time,
    updated_at: TimeOrNull,
    links: Links,
  },
  { additionalProperties: false },
);

/** An item of `GET /v1/ports`: uuid, address and links. */
export const PortListItem = Type.Object({ uuid: Str, address: Str, links: Links }, { additionalProperties: false });

/** `GET /v1/ports`. */
export const PortCollection = Type.Object({ ports: Type.Array(PortListItem), next: Next }, { additionalProperties: false });

/** `GET /v1/ports/detail`. */
export const PortDetailCollection = Type.Object({ ports: Type.Array(PortResponse), next: Next }, { additionalProperties: false });
