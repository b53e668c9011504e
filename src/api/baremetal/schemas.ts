/**
 * Request body schemas of the baremetal API (TypeBox), mirroring Ironic 21.4's JSON schemas
 * (`additionalProperties: false`: unknown keys are a 400) and argument validators, plus
 * {@link parseBody}, which checks a body and turns the first violation into a 400.
 *
 * Booleans accept oslo boolean strings as Ironic does (`"true"`, `"off"` …); the domain
 * normalises them. Values are checked here for shape only; meaning (MACs, traits, states) is
 * the domain's job.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { InvalidInputError } from '../../domain/errors.ts';

const Str = Type.String();
const StrOrNull = Type.Union([Type.String(), Type.Null()]);
const BoolLike = Type.Union([Type.Boolean(), Type.String(), Type.Null()]);
const ObjOrNull = Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()]);

const interfaceFields = Object.fromEntries(
  ['bios', 'boot', 'console', 'deploy', 'inspect', 'management', 'network', 'power', 'raid', 'rescue', 'storage', 'vendor'].map((k) => [
    `${k}_interface`,
    Type.Optional(StrOrNull),
  ]),
);

/** `POST /v1/nodes` (Ironic `node_schema`). */
export const NodeCreateBody = Type.Object(
  {
    automated_clean: Type.Optional(BoolLike),
    boot_mode: Type.Optional(StrOrNull),
    chassis_uuid: Type.Optional(StrOrNull),
    conductor_group: Type.Optional(StrOrNull),
    console_enabled: Type.Optional(BoolLike),
    description: Type.Optional(Type.Union([Type.String({ maxLength: 4096 }), Type.Null()])),
    driver: Str,
    driver_info: Type.Optional(ObjOrNull),
    extra: Type.Optional(ObjOrNull),
    instance_info: Type.Optional(ObjOrNull),
    instance_uuid: Type.Optional(StrOrNull),
    lessee: Type.Optional(StrOrNull),
    maintenance: Type.Optional(BoolLike),
    name: Type.Optional(StrOrNull),
    network_data: Type.Optional(ObjOrNull),
    owner: Type.Optional(StrOrNull),
    properties: Type.Optional(ObjOrNull),
    resource_class: Type.Optional(Type.Union([Type.String({ maxLength: 80 }), Type.Null()])),
    retired: Type.Optional(BoolLike),
    retired_reason: Type.Optional(StrOrNull),
    secure_boot: Type.Optional(BoolLike),
    shard: Type.Optional(StrOrNull),
    uuid: Type.Optional(StrOrNull),
    ...interfaceFields,
  },
  { additionalProperties: false },
);

/** `POST /v1/ports` (Ironic `PORT_SCHEMA`). */
export const PortCreateBody = Type.Object(
  {
    address: Str,
    node_uuid: Str,
    extra: Type.Optional(ObjOrNull),
    is_smartnic: Type.Optional(BoolLike),
    local_link_connection: Type.Optional(ObjOrNull),
    physical_network: Type.Optional(Type.Union([Type.String({ maxLength: 64 }), Type.Null()])),
    portgroup_uuid: Type.Optional(StrOrNull),
    pxe_enabled: Type.Optional(BoolLike),
    uuid: Type.Optional(StrOrNull),
  },
  { additionalProperties: false },
);

/** A JSON-PATCH document (Ironic `args.patch`). */
export const PatchBody = Type.Array(
  Type.Object(
    {
      op: Type.Union([Type.Literal('add'), Type.Literal('replace'), Type.Literal('remove')]),
      path: Type.String({ pattern: '^(/[\\w-]+)+$' }),
      value: Type.Optional(Type.Unknown()),
    },
    { additionalProperties: false },
  ),
  { minItems: 1 },
);

/** `PUT …/states/power`. */
export const PowerBody = Type.Object(
  { target: Str, timeout: Type.Optional(Type.Union([Type.Integer(), Type.Null()])) },
  { additionalProperties: false },
);

/** `PUT …/states/provision`. */
export const ProvisionBody = Type.Object(
  {
    target: Str,
    configdrive: Type.Optional(Type.Union([Type.String(), Type.Object({}, { additionalProperties: true }), Type.Null()])),
    clean_steps: Type.Optional(Type.Union([Type.Array(Type.Unknown()), Type.Null()])),
    deploy_steps: Type.Optional(Type.Union([Type.Array(Type.Unknown()), Type.Null()])),
    rescue_password: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    disable_ramdisk: Type.Optional(BoolLike),
  },
  { additionalProperties: false },
);

/** `PUT …/states/console`. */
export const ConsoleBody = Type.Object({ enabled: Type.Union([Type.Boolean(), Type.String()]) }, { additionalProperties: false });

/** `PUT …/maintenance` (the body may be absent). */
export const MaintenanceBody = Type.Object({ reason: Type.Optional(StrOrNull) }, { additionalProperties: false });

/** `PUT …/management/boot_device`. */
export const BootDeviceBody = Type.Object({ boot_device: Str, persistent: Type.Optional(BoolLike) }, { additionalProperties: false });

/** `PUT …/traits`. */
export const TraitsBody = Type.Object({ traits: Type.Array(Type.Unknown()) }, { additionalProperties: false });

const compiled = new WeakMap<TSchema, TypeCheck<TSchema>>();

/**
 * Check a body against a schema.
 * @param what names the body in messages (e.g. `node`)
 * @returns the body, typed
 * @throws InvalidInputError naming the first offending field
 */
export function parseBody<S extends TSchema>(schema: S, body: unknown, what: string): Static<S> {
  let check = compiled.get(schema) as TypeCheck<S> | undefined;
  if (!check) {
    check = TypeCompiler.Compile(schema);
    compiled.set(schema, check);
  }
  if (check.Check(body)) return body;
  const first = check.Errors(body).First();
  if (!first) throw new InvalidInputError(`Invalid ${what}.`);
  const field = first.path === '' ? what : first.path.replace(/^\//, '').replace(/\//g, '.');
  if (first.message === 'Unexpected property') throw new InvalidInputError(`Invalid ${what}: unexpected field "${field}".`);
  if (first.value === undefined) throw new InvalidInputError(`Invalid ${what}: "${field}" is a required property.`);
  throw new InvalidInputError(`Invalid ${what}: ${field}: ${first.message}.`);
}
