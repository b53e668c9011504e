/**
 * Request body schemas of the compute API (TypeBox), at the newest microversion esi serves, and
 * the check that holds a body to one: Nova's `servers.create`, `keypairs.create`,
 * `flavor_manage.create` and flavor update schemas (nova/api/openstack/compute/schemas/), limited
 * to what a bare-metal cloud takes.
 *
 * A body the schema refuses is Nova's 400 with the words of the domain's parser
 * (src/domain/compute/server-input.ts, flavor-input.ts, keypairs.ts), which is asked to read it
 * first; what the domain then refuses beyond shape (microversion limits, ranges, unsupported
 * features such as block device mappings) it refuses when the handler calls it. Values are
 * checked here for shape only.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { compiledCheck, firstError } from '../common/schema-check.ts';
import { InvalidInputError } from '../../domain/errors.ts';

const Str = Type.String();
const StrOrNull = Type.Union([Type.String(), Type.Null()]);
const Dict = Type.Object({}, { additionalProperties: true });
/** Nova's boolean: a JSON boolean or a boolean word (`true`, `yes`, `on`, `1`…). */
const BoolLike = Type.Union([Type.Boolean(), Type.String()]);
/** Nova's integer: a JSON integer or a string of digits. */
const IntLike = Type.Union([Type.Integer(), Type.String({ pattern: '^\\s*[0-9]+\\s*$' })]);
/** An attribute esi does not support: absent, or an empty list (the domain says why otherwise). */
const EmptyList = (what: string): TSchema => Type.Array(Type.Unknown(), { description: `not supported by esi (${what}): empty or absent` });
/** An image or flavor reference: an id, or a URL ending in one. */
const Ref = Type.Union([Type.String({ minLength: 1 }), Type.Integer({ minimum: 0 })]);

/** A network request of a server: a network, a port or a fixed address (`tag` from 2.42). */
const NetworkRequest = Type.Object(
  { uuid: Type.Optional(Str), port: Type.Optional(StrOrNull), fixed_ip: Type.Optional(Str), tag: Type.Optional(Str) },
  { additionalProperties: true },
);

/** `POST /servers` (Nova `base_create` with 2.19 `description`, 2.37 `networks`, 2.90 `hostname`). */
export const ServerCreateBody = Type.Object(
  {
    server: Type.Object(
      {
        name: Type.String({ minLength: 1, maxLength: 255 }),
        imageRef: Ref,
        flavorRef: Ref,
        networks: Type.Optional(Type.Union([Type.Literal('auto'), Type.Literal('none'), Type.Array(NetworkRequest)])),
        key_name: Type.Optional(StrOrNull),
        user_data: Type.Optional(Type.Union([Type.String({ description: 'base64' }), Type.Null()])),
        min_count: Type.Optional(IntLike),
        max_count: Type.Optional(IntLike),
        return_reservation_id: Type.Optional(Type.Union([BoolLike, Type.Null()])),
        metadata: Type.Optional(Type.Union([Type.Record(Type.String(), Type.String()), Type.Null()])),
        availability_zone: Type.Optional(Type.Union([Type.String({ description: 'nova only' }), Type.Null()])),
        config_drive: Type.Optional(Type.Union([BoolLike, Type.Null()])),
        security_groups: Type.Optional(Type.Array(Type.Object({ name: Type.Optional(Str) }, { additionalProperties: true }))),
        adminPass: Type.Optional(StrOrNull),
        'OS-DCF:diskConfig': Type.Optional(Type.Union([Type.Literal('AUTO'), Type.Literal('MANUAL')])),
        personality: Type.Optional(EmptyList('file injection')),
        block_device_mapping: Type.Optional(EmptyList('block device mappings')),
        block_device_mapping_v2: Type.Optional(EmptyList('block device mappings')),
        tags: Type.Optional(EmptyList('server tags')),
        accessIPv4: Type.Optional(StrOrNull),
        accessIPv6: Type.Optional(StrOrNull),
        description: Type.Optional(Type.Union([Type.String({ maxLength: 255 }), Type.Null()])),
        hostname: Type.Optional(Type.Union([Type.String({ maxLength: 63 }), Type.Null()])),
      },
      { additionalProperties: false },
    ),
    'os:scheduler_hints': Type.Optional(Dict),
    'OS-SCH-HNT:scheduler_hints': Type.Optional(Dict),
  },
  { additionalProperties: false },
);

/** `POST /os-keypairs` (`type` from 2.2, `user_id` from 2.10). */
export const KeypairCreateBody = Type.Object(
  {
    keypair: Type.Object(
      {
        name: Type.String({ minLength: 1, maxLength: 255, pattern: '^[a-zA-Z0-9 _-]+$' }),
        public_key: Type.Optional(Type.String({ description: 'OpenSSH public key; generated when absent' })),
        type: Type.Optional(Type.Literal('ssh')),
        user_id: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

/** `POST /flavors` (`description` from 2.55). */
export const FlavorCreateBody = Type.Object(
  {
    flavor: Type.Object(
      {
        name: Type.String({ minLength: 1, maxLength: 255 }),
        id: Type.Optional(Type.Union([Type.String({ maxLength: 255 }), Type.Integer({ minimum: 0 }), Type.Null()])),
        ram: IntLike,
        vcpus: IntLike,
        disk: IntLike,
        'OS-FLV-EXT-DATA:ephemeral': Type.Optional(IntLike),
        swap: Type.Optional(Type.Union([IntLike, Type.Literal('')])),
        rxtx_factor: Type.Optional(Type.Union([Type.Number(), Type.String(), Type.Null()])),
        'os-flavor-access:is_public': Type.Optional(BoolLike),
        'OS-FLV-DISABLED:disabled': Type.Optional(BoolLike),
        description: Type.Optional(Type.Union([Type.String({ maxLength: 65535 }), Type.Null()])),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

/** `PUT /flavors/{id}` (2.55): only the description changes. */
export const FlavorUpdateBody = Type.Object(
  { flavor: Type.Object({ description: Type.Union([Type.String({ maxLength: 65535 }), Type.Null()]) }, { additionalProperties: false }) },
  { additionalProperties: false },
);

/**
 * A body held to its schema.
 * @param wordRefusal the domain's parser of the same body, called when the schema refuses it so
 *   that its message is the answer (it throws); a body it would take is refused with the
 *   schema's own words
 * @throws InvalidInputError (Nova's 400)
 */
export function checkNovaBody<S extends TSchema>(schema: S, body: unknown, wordRefusal: () => unknown): Static<S> {
  const check = compiledCheck(schema);
  if (check.Check(body)) return body;
  wordRefusal();
  const { path: field, message } = firstError(check, body);
  throw new InvalidInputError(`Invalid input for field/attribute ${field}. ${message ?? 'Invalid body'}.`);
}
