/**
 * Response schemas of the baremetal resources other than nodes and ports (TypeBox), for the
 * document (`/openapi/baremetal.json`): portgroups, chassis, volume connectors and targets, the
 * volume root, allocations and deploy templates, as Ironic shows them at the newest microversion
 * (`X-OpenStack-Ironic-API-Version: 1.82` or `latest`) without `fields` (Ironic API reference,
 * https://docs.openstack.org/api-ref/baremetal/; `convert_with_links` of
 * `ironic/api/controllers/v1/{portgroup,chassis,volume*,allocation,deploy_template}.py` in Ironic
 * 21.4). The lists show each resource's default fields (`DEFAULT_RETURN_FIELDS`), `/detail` and
 * `?detail=True` every field (described where a `/detail` path exists); `fields` a chosen few (not described).
 *
 * The wire format is fixed: every object is `additionalProperties: false` and every field is
 * required (test/api/ops/openapi-responses-baremetal-resources.test.ts checks real answers).
 */
import { Type, type TProperties, type TSchema } from '@sinclair/typebox';
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

/**
 * A portgroup (`GET /v1/portgroups/{ident}`, `POST /v1/portgroups`, `PATCH`, an item of
 * `/v1/portgroups/detail`; Ironic api-ref "Show Portgroup Details"). `mode` and `properties`
 * are shown at every version (as Ironic 21.4 does).
 */
export const PortgroupResponse = strict({
  uuid: Str,
  created_at: Time,
  updated_at: TimeOrNull,
  address: StrOrNull,
  extra: Dict,
  internal_info: Dict,
  mode: StrOrNull,
  name: StrOrNull,
  properties: Dict,
  standalone_ports_supported: Type.Boolean(),
  node_uuid: Str,
  links: Links,
  ports: Links,
});

/** An item of `GET /v1/portgroups`: uuid, address, name and links (Ironic's default fields). */
export const PortgroupListItem = strict({ uuid: Str, address: StrOrNull, name: StrOrNull, links: Links });

/** `GET /v1/portgroups` (and a node's `GET /v1/nodes/{node}/portgroups`). */
export const PortgroupCollection = page('portgroups', PortgroupListItem);

/** `GET /v1/portgroups/detail` (and `?detail=True`). */
export const PortgroupDetailCollection = page('portgroups', PortgroupResponse);

/** A chassis (`GET /v1/chassis/{uuid}`, `POST /v1/chassis`, `PATCH`; Ironic api-ref "Show Chassis Details"). */
export const ChassisResponse = strict({
  uuid: Str,
  created_at: Time,
  updated_at: TimeOrNull,
  description: StrOrNull,
  extra: Dict,
  links: Links,
  nodes: Links,
});

/** An item of `GET /v1/chassis`: uuid, description and links. */
export const ChassisListItem = strict({ uuid: Str, description: StrOrNull, links: Links });

/** `GET /v1/chassis`. */
export const ChassisCollection = page('chassis', ChassisListItem);

/** `GET /v1/chassis/detail`. */
export const ChassisDetailCollection = page('chassis', ChassisResponse);

/** A volume connector (`GET|PATCH /v1/volume/connectors/{uuid}`, `POST /v1/volume/connectors`; Ironic api-ref "Volume"). */
export const VolumeConnectorResponse = strict({
  uuid: Str,
  created_at: Time,
  updated_at: TimeOrNull,
  connector_id: Str,
  extra: Dict,
  type: Str,
  node_uuid: Str,
  links: Links,
});

/** An item of `GET /v1/volume/connectors`: Ironic's default fields. */
export const VolumeConnectorListItem = strict({ uuid: Str, node_uuid: Str, type: Str, connector_id: Str, links: Links });

/** `GET /v1/volume/connectors` (and a node's `GET /v1/nodes/{node}/volume/connectors`). */
export const VolumeConnectorCollection = page('connectors', VolumeConnectorListItem);

/**
 * A volume target (`GET|PATCH /v1/volume/targets/{uuid}`, `POST /v1/volume/targets`): its
 * `properties` as the caller may see them (secrets masked).
 */
export const VolumeTargetResponse = strict({
  uuid: Str,
  created_at: Time,
  updated_at: TimeOrNull,
  boot_index: Type.Integer(),
  extra: Dict,
  properties: Dict,
  volume_id: Str,
  volume_type: Str,
  node_uuid: Str,
  links: Links,
});

/** An item of `GET /v1/volume/targets`: Ironic's default fields. */
export const VolumeTargetListItem = strict({
  uuid: Str,
  node_uuid: Str,
  volume_type: Str,
  boot_index: Type.Integer(),
  volume_id: Str,
  links: Links,
});

/** `GET /v1/volume/targets` (and a node's `GET /v1/nodes/{node}/volume/targets`). */
export const VolumeTargetCollection = page('targets', VolumeTargetListItem);

/** `GET /v1/volume` (and `GET /v1/nodes/{node}/volume`): links to itself, its connectors and targets (Ironic `volume.convert`). */
export const VolumeRootResponse = strict({ links: Links, connectors: Links, targets: Links });

/**
 * An allocation (`GET /v1/allocations/{ident}`, `POST /v1/allocations`, `PATCH`, an item of
 * `GET /v1/allocations`, which shows every field; Ironic api-ref "Allocations"); `owner` from 1.60.
 */
export const AllocationResponse = strict({
  uuid: Str,
  name: StrOrNull,
  node_uuid: StrOrNull,
  state: Type.Union([Type.Literal('allocating'), Type.Literal('active'), Type.Literal('error')]),
  last_error: StrOrNull,
  resource_class: StrOrNull,
  traits: Type.Array(Str),
  candidate_nodes: Type.Array(Str),
  extra: Dict,
  owner: StrOrNull,
  created_at: Time,
  updated_at: TimeOrNull,
  links: Links,
});

/** `GET /v1/allocations`. */
export const AllocationCollection = page('allocations', AllocationResponse);

/** A deploy step of a template: its `args` with secrets masked (Ironic `mask_dict_password`). */
const DeployTemplateStep = strict({ interface: Str, step: Str, args: Dict, priority: Type.Integer() });

/**
 * A deploy template (`GET /v1/deploy_templates/{ident}`, `POST /v1/deploy_templates`, `PATCH`;
 * Ironic api-ref "Deploy Templates"), from 1.55.
 */
export const DeployTemplateResponse = strict({
  uuid: Str,
  created_at: Time,
  updated_at: TimeOrNull,
  name: Str,
  extra: Dict,
  links: Links,
  steps: Type.Array(DeployTemplateStep),
});

/** An item of `GET /v1/deploy_templates`: uuid, name and links. */
export const DeployTemplateListItem = strict({ uuid: Str, name: Str, links: Links });

/** `GET /v1/deploy_templates`. */
export const DeployTemplateCollection = page('deploy_templates', DeployTemplateListItem);
