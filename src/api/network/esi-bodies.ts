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
