/**
 * Request body schemas of chassis, portgroups and volume objects (TypeBox), mirroring Ironic
 * 21.4's JSON schemas (`CHASSIS_SCHEMA`, `PORTGROUP_SCHEMA`, `CONNECTOR_SCHEMA`, `TARGET_SCHEMA`;
 * `additionalProperties: false`, so an unknown key is a 400). Values are checked for shape only;
 * their meaning (UUIDs, MACs, names, booleans) is the domain's. Checked with `parseBody`
 * (`schemas.ts`).
 */
import { Type } from '@sinclair/typebox';

const StrOrNull = Type.Union([Type.String(), Type.Null()]);
const ObjOrNull = Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()]);

/** `POST /v1/chassis`. */
export const ChassisCreateBody = Type.Object(
  {
    uuid: Type.Optional(StrOrNull),
    extra: Type.Optional(ObjOrNull),
    description: Type.Optional(Type.Union([Type.String({ maxLength: 255 }), Type.Null()])),
  },
  { additionalProperties: false },
);

/** `POST /v1/portgroups`. */
export const PortgroupCreateBody = Type.Object(
  {
    address: Type.Optional(StrOrNull),
    extra: Type.Optional(ObjOrNull),
    mode: Type.Optional(StrOrNull),
    name: Type.Optional(StrOrNull),
    node_uuid: Type.String(),
    properties: Type.Optional(ObjOrNull),
    standalone_ports_supported: Type.Optional(Type.Union([Type.String(), Type.Boolean(), Type.Null()])),
    uuid: Type.Optional(StrOrNull),
  },
  { additionalProperties: false },
);

/** `POST /v1/volume/connectors`. */
export const ConnectorCreateBody = Type.Object(
  {
    connector_id: Type.String(),
    extra: Type.Optional(ObjOrNull),
    node_uuid: Type.String(),
    type: Type.String(),
    uuid: Type.Optional(StrOrNull),
  },
  { additionalProperties: false },
);

/** `POST /v1/volume/targets` (`boot_index` an integer, as JSON schema's `integer`). */
export const TargetCreateBody = Type.Object(
  {
    boot_index: Type.Integer(),
    extra: Type.Optional(ObjOrNull),
    node_uuid: Type.String(),
    properties: Type.Optional(ObjOrNull),
    volume_id: Type.String(),
    volume_type: Type.String(),
    uuid: Type.Optional(StrOrNull),
  },
  { additionalProperties: false },
);
