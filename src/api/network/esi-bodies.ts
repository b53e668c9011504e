/**
 * Request bodies of esi's additive network endpoints (./routes-esi.ts; docs/networking.md), as
 * TypeBox schemas, and their parser: a body is checked against its schema attribute by
 * attribute, in the schema's order, and a refusal is Neutron's 400 (`HTTPBadRequest`) with
 * esi's wording:
 *
 * | refusal                                     | message                                  |
 * |---------------------------------------------|------------------------------------------|
 * | not a JSON object                           | `The request body must be a JSON object.` |
 * | a required attribute missing, null or empty | `node is required.`                      |
 * | a string attribute of another type          | `network must be a string.`              |
 * | a list attribute not a list of strings      | `ports must be a list of strings.`       |
 * | a boolean attribute of another type         | `all must be a boolean.`                 |
 *
 * Attributes a schema does not name are ignored; null stands for absent (except for booleans).
 */
import { Type, type Static, type TObject, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { InvalidInputError } from '../../domain/errors.ts';
import { DESCRIPTION_MAX, NAME_MAX, VLAN_MAX, VLAN_MIN } from '../../domain/networking/index.ts';

const OptStr = Type.Optional(Type.Union([Type.String(), Type.Null()]));
const OptList = Type.Optional(Type.Union([Type.Array(Type.String()), Type.Null()]));
const open = { additionalProperties: true } as const;

/** `POST /v2.0/esi/node-networks` (`esi node network attach`): the node, and a network, port or trunk. */
export const NodeNetworkAttachBody = Type.Object(
  {
    node: Type.String({ minLength: 1, description: 'node name or UUID' }),
    network: OptStr,
    port: OptStr,
    trunk: OptStr,
    mac_address: OptStr,
  },
  open,
);

/** `POST /v2.0/esi/node-networks/detach` (`esi node network detach`): some ports of a node, or all. */
export const NodeNetworkDetachBody = Type.Object(
  { node: Type.String({ minLength: 1, description: 'node name or UUID' }), all: Type.Optional(Type.Boolean()), ports: OptList },
  open,
);

/** `POST /v2.0/esi/trunks` (`esi trunk create`): a name, its native network and tagged networks. */
export const EsiTrunkCreateBody = Type.Object({ name: OptStr, native_network: OptStr, tagged_networks: OptList }, open);

/** `POST /v2.0/esi/trunks/{trunk}/add-networks` and `remove-networks`: the tagged networks. */
export const EsiTrunkNetworksBody = Type.Object({ tagged_networks: OptList }, open);

/**
 * `POST /v2.0/switches/{switch}/ports` (`esi switch port register`): `{"switch_port": {...}}`,
 * the switch's name for the port and the node its cable reaches (both required; the handler
 * says so in one message).
 */
export const SwitchPortRegisterAttrs = Type.Object({ port_id: OptStr, node: OptStr }, open);

/** The documented body of `POST /v2.0/switches/{switch}/ports`: {@link SwitchPortRegisterAttrs} in its wrapper. */
export const SwitchPortRegisterBody = Type.Object({ switch_port: SwitchPortRegisterAttrs }, { additionalProperties: false });

/** The JSON type an attribute's schema wants (its non-null member), for the refusal's wording. */
function wanted(schema: TSchema): string {
  const members = (schema.anyOf as TSchema[] | undefined) ?? [schema];
  return String(members.find((m) => m.type !== 'null')?.type);
}

/**
 * An esi body, checked against its schema (see the module documentation).
 * @param schema one of this module's body schemas
 * @param body the request body as sent
 * @returns the body, typed by the schema
 * @throws InvalidInputError (400) with the messages in the module documentation
 */
export function parseEsiBody<S extends TObject>(schema: S, body: unknown): Static<S> {
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw new InvalidInputError('The request body must be a JSON object.', 'HTTPBadRequest');
  const given = body as Record<string, unknown>;
  const required = new Set(schema.required ?? []);
  for (const [k, s] of Object.entries(schema.properties)) {
    const v = given[k];
    const type = wanted(s);
    if (required.has(k) && (v === undefined || v === null || v === '')) throw new InvalidInputError(`${k} is required.`, 'HTTPBadRequest');
    if (v === undefined || Value.Check(s, v)) continue;
    if (type === 'array') throw new InvalidInputError(`${k} must be a list of strings.`, 'HTTPBadRequest');
    if (type === 'boolean') throw new InvalidInputError(`${k} must be a boolean.`, 'HTTPBadRequest');
    throw new InvalidInputError(`${k} must be a string.`, 'HTTPBadRequest');
  }
  if (Value.Check(schema, body)) return body;
  throw new InvalidInputError('The request body must be a JSON object.', 'HTTPBadRequest');
}

const SwitchName = Type.String({ minLength: 1, maxLength: NAME_MAX });
/** The flat VLAN: an integer (or digits) in the VLAN range; null for the default (1). */
const FlatVlan = Type.Union([Type.Integer({ minimum: VLAN_MIN, maximum: VLAN_MAX }), Type.String({ pattern: '^-?\\d+$' }), Type.Null()]);
const DriverInfo = Type.Object({}, { additionalProperties: true, description: "the driver's settings; secrets are write-only" });

/**
 * The attributes of `POST /v2.0/switches` (esi; docs/networking.md): the switch's name (the
 * `switch_info` bare-metal ports name), its chassis id (`switch_id`), the driver that programs it
 * and the driver's settings; checked by the domain (src/domain/networking/switches.ts `newSwitch`).
 */
export const SwitchCreateAttrs = Type.Object(
  {
    name: SwitchName,
    switch_id: Type.String({ minLength: 1, maxLength: NAME_MAX, description: 'usually a MAC address' }),
    driver: Type.String({ description: 'linux-bridge, ssh-cli or fake (those enabled)' }),
    description: Type.Optional(Type.Union([Type.String({ maxLength: DESCRIPTION_MAX }), Type.Null()])),
    driver_info: Type.Optional(Type.Union([DriverInfo, Type.Null()])),
    flat_vlan: Type.Optional(FlatVlan),
  },
  { additionalProperties: false },
);

/** `POST /v2.0/switches`: {@link SwitchCreateAttrs} in its wrapper. */
export const SwitchCreateBody = Type.Object({ switch: SwitchCreateAttrs }, { additionalProperties: false });

/**
 * The attributes of `PUT /v2.0/switches/{switch}` (esi): any of the settings but the driver; a
 * secret left out of `driver_info` (or given as `******`) keeps its value, null removes it.
 */
export const SwitchUpdateAttrs = Type.Object(
  {
    name: Type.Optional(SwitchName),
    switch_id: Type.Optional(Type.String({ minLength: 1, maxLength: NAME_MAX })),
    description: Type.Optional(Type.Union([Type.String({ maxLength: DESCRIPTION_MAX }), Type.Null()])),
    driver_info: Type.Optional(DriverInfo),
    flat_vlan: Type.Optional(FlatVlan),
  },
  { additionalProperties: false },
);

/** `PUT /v2.0/switches/{switch}`: {@link SwitchUpdateAttrs} in its wrapper. */
export const SwitchUpdateBody = Type.Object({ switch: SwitchUpdateAttrs }, { additionalProperties: false });
