/**
 * Request body schemas of the compute API's actions and extra specs (TypeBox), as Nova's JSON
 * schemas have them (nova/api/openstack/compute/schemas/: `servers.py` actions, `rebuild`,
 * `console_output.py`, `flavors_extraspecs.py`, `flavor_access.py`), held to a body with
 * ./bodies.ts `checkNovaBody` whose refusals are the domain parser's words
 * (src/domain/compute/server-action-input.ts, flavor-input.ts). Shape only: each schema admits
 * at least what the domain parser admits (microversion limits, value rules, unsupported
 * features are the domain's).
 */
import { Type } from '@sinclair/typebox';

const strict = { additionalProperties: false } as const;
/** An action without arguments: `null` (what novaclient and openstacksdk send) or `{}`. */
const NoArguments = Type.Union([Type.Null(), Type.Object({}, strict)]);

/** `rebuild`: the image (required) and what else changes; keys by microversion (see the domain's table). */
const Rebuild = Type.Object(
  {
    imageRef: Type.String({ minLength: 1, description: 'an image id or a URL of one' }),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    adminPass: Type.Optional(Type.String({ maxLength: 255 })),
    metadata: Type.Optional(Type.Object({}, { additionalProperties: true })),
    preserve_ephemeral: Type.Optional(Type.Union([Type.Boolean(), Type.String({ description: 'a boolean word' })])),
    'OS-DCF:diskConfig': Type.Optional(Type.Union([Type.Literal('AUTO'), Type.Literal('MANUAL')])),
    accessIPv4: Type.Optional(Type.Union([Type.Literal(''), Type.Null()], { description: 'not supported by esi: empty or null' })),
    accessIPv6: Type.Optional(Type.Union([Type.Literal(''), Type.Null()], { description: 'not supported by esi: empty or null' })),
    personality: Type.Optional(Type.Array(Type.Unknown(), { maxItems: 0, description: 'before 2.57; empty only' })),
    description: Type.Optional(Type.Union([Type.String({ maxLength: 255 }), Type.Null()], { description: '2.19 and later' })),
    key_name: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 255 }), Type.Null()], { description: '2.54 and later' })),
    user_data: Type.Optional(Type.Union([Type.String({ description: 'base64' }), Type.Null()], { description: '2.57 and later' })),
    trusted_image_certificates: Type.Optional(Type.Null({ description: '2.63 and later; null only' })),
    hostname: Type.Optional(Type.String({ maxLength: 63, description: '2.90 and later' })),
  },
  strict,
);

/**
 * `POST /servers/{id}/action` (Nova's api-ref, "Servers - run an action"): exactly one of
 * `os-start`, `os-stop`, `reboot` (`{"type": "SOFT"|"HARD"}`), `rebuild`, `os-getConsoleOutput`
 * (`{"length": N}`, -1 or null for all).
 */
export const ServerActionBody = Type.Union([
  Type.Object({ 'os-start': NoArguments }, strict),
  Type.Object({ 'os-stop': NoArguments }, strict),
  Type.Object(
    { reboot: Type.Object({ type: Type.String({ description: 'SOFT or HARD (any of Soft, soft, Hard, hard)' }) }, strict) },
    strict,
  ),
  Type.Object({ rebuild: Rebuild }, strict),
  Type.Object(
    {
      'os-getConsoleOutput': Type.Object(
        { length: Type.Optional(Type.Union([Type.Integer({ minimum: -1 }), Type.String({ pattern: '^-?[0-9]{1,9}$' }), Type.Null()])) },
        strict,
      ),
    },
    strict,
  ),
]);

/** A value of an extra spec: a string (numbers and booleans are taken as their text). */
const SpecValue = Type.Union([Type.String({ maxLength: 255 }), Type.Number(), Type.Boolean()]);

/** `POST /flavors/{id}/os-extra_specs` (Nova's api-ref, "Create extra specs for a flavor"): specs to add or replace. */
export const ExtraSpecsBody = Type.Object(
  { extra_specs: Type.Record(Type.String({ description: '1 to 255 characters of [a-zA-Z0-9-_:. ]' }), SpecValue) },
  strict,
);

/** `PUT /flavors/{id}/os-extra_specs/{key}` (Nova's api-ref, "Update an extra spec"): `{"<key>": value}`, the key of the URL. */
export const ExtraSpecBody = Type.Record(Type.String({ description: 'the key of the URL' }), SpecValue, {
  minProperties: 1,
  maxProperties: 1,
});

/** The argument of a flavor access action: the project. */
const TenantArg = Type.Object({ tenant: Type.String({ minLength: 1, maxLength: 255, description: 'a project id' }) }, strict);

/** `POST /flavors/{id}/action` (Nova's api-ref, "Flavors access"): `addTenantAccess` or `removeTenantAccess`. */
export const FlavorActionBody = Type.Union([
  Type.Object({ addTenantAccess: TenantArg }, strict),
  Type.Object({ removeTenantAccess: TenantArg }, strict),
]);
