/**
 * Request body schemas of allocations, deploy templates, events, the ramdisk's heartbeat and
 * inspection data (TypeBox), mirroring Ironic 21.4's JSON schemas
 * (`ALLOCATION_SCHEMA`, `TEMPLATE_SCHEMA`, `EVENTS_SCHEMA`, the heartbeat's and
 * `continue_inspection`'s arguments), with the parser of each body. (Vendor passthru arguments:
 * ./node-body-schemas.ts `VendorPassthruArgs`, for nodes and drivers alike.)
 *
 * Each parser runs the domain's own checks first (their messages are the API's, as Ironic words
 * them: src/domain/scheduling/allocation-input.ts, src/domain/inventory/deploy-templates.ts,
 * events.ts, patch.ts, src/domain/inspection/inventory.ts), then checks the body against its
 * schema and returns it typed (`Static<typeof Schema>`). The schemas admit every body the domain
 * admits, so the second check refuses nothing the first let through; the domain's rules the
 * schema cannot say (a required `resource_class` unless backfilling; trait syntax; UUIDs) stay
 * the domain's.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { InvalidInputError } from '../../domain/errors.ts';
import { validateInspectionData } from '../../domain/inspection/inventory.ts';
import { DEPLOY_STEP_INTERFACES } from '../../domain/inventory/deploy-steps.ts';
import { parseDeployTemplate } from '../../domain/inventory/deploy-templates.ts';
import { NETWORK_EVENTS, parseEvents } from '../../domain/inventory/events.ts';
import { isJsonObject } from '../../domain/inventory/masking.ts';
import { parsePatch } from '../../domain/inventory/patch.ts';
import { parseAllocationBody } from '../../domain/scheduling/allocation-input.ts';
import { PatchBody, parseBody } from './schemas.ts';

const StrOrNull = Type.Union([Type.String(), Type.Null()]);
const Obj = Type.Object({}, { additionalProperties: true });
const ObjOrNull = Type.Union([Obj, Type.Null()]);
const NonEmpty = Type.String({ minLength: 1 });

/**
 * Check a body with the domain's parser (its messages), then against the schema (the type).
 * @throws InvalidInputError (400)
 */
function checked<S extends TSchema>(schema: S, body: unknown, what: string, domainCheck: (body: unknown) => unknown): Static<S> {
  domainCheck(body);
  return parseBody(schema, body, what);
}

/**
 * `POST /v1/allocations` (Ironic `ALLOCATION_SCHEMA`): `resource_class` is required unless the
 * body names a `node` to backfill (≥ 1.58); `owner` from 1.60.
 */
export const AllocationCreateBody = Type.Object(
  {
    resource_class: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 80 }), Type.Null()])),
    traits: Type.Optional(Type.Union([Type.Array(Type.String()), Type.Null()])),
    candidate_nodes: Type.Optional(Type.Union([Type.Array(NonEmpty), Type.Null()])),
    name: Type.Optional(StrOrNull),
    uuid: Type.Optional(StrOrNull),
    extra: Type.Optional(ObjOrNull),
    owner: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 255 }), Type.Null()])),
    node: Type.Optional(Type.Union([NonEmpty, Type.Null()])),
  },
  { additionalProperties: false },
);

/** The body of `POST /v1/allocations`. @throws InvalidInputError with Ironic's words */
export function parseAllocationCreate(body: unknown): Static<typeof AllocationCreateBody> {
  return checked(AllocationCreateBody, body, 'allocation', parseAllocationBody);
}

/**
 * A JSON-PATCH document read by the domain's patch parser (`PatchError` messages), for
 * `PATCH /v1/allocations/{ident}`: {@link PatchBody}.
 * @throws InvalidInputError
 */
export function parsePatchDocument(body: unknown): Static<typeof PatchBody> {
  return checked(PatchBody, body, 'patch', parsePatch);
}

/** A deploy step of a template (`priority` an integer ≥ 0, or a string of digits). */
const DeployStepBody = Type.Object(
  {
    interface: Type.Union(DEPLOY_STEP_INTERFACES.map((i) => Type.Literal(i))),
    step: NonEmpty,
    args: Obj,
    priority: Type.Union([Type.Integer({ minimum: 0 }), Type.String({ pattern: '^[0-9]+$' })]),
  },
  { additionalProperties: false },
);

/**
 * `POST /v1/deploy_templates` (Ironic `TEMPLATE_SCHEMA`): `name` a trait, at least one step;
 * `description` is accepted and, as in Ironic 21.4, neither stored nor shown.
 */
export const DeployTemplateCreateBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255 }),
    steps: Type.Array(DeployStepBody, { minItems: 1 }),
    extra: Type.Optional(ObjOrNull),
    description: Type.Optional(Type.Union([Type.String({ maxLength: 255 }), Type.Null()])),
    uuid: Type.Optional(StrOrNull),
  },
  { additionalProperties: false },
);

/** The body of `POST /v1/deploy_templates`. @throws InvalidInputError with Ironic's words */
export function parseDeployTemplateCreate(body: unknown): Static<typeof DeployTemplateCreateBody> {
  return checked(DeployTemplateCreateBody, body, 'deploy template', parseDeployTemplate);
}

/** `PATCH /v1/deploy_templates/{ident}`: a JSON-PATCH document; an empty one changes nothing. */
export const DeployTemplatePatchBody = Type.Array(PatchBody.items);

/** The body of `PATCH /v1/deploy_templates/{ident}`. @throws InvalidInputError (`PatchError`) */
export function parseDeployTemplatePatch(body: unknown): Static<typeof DeployTemplatePatchBody> {
  return checked(DeployTemplatePatchBody, body, 'patch', (b) => (Array.isArray(b) && b.length === 0 ? b : parsePatch(b)));
}

const Uuid = Type.String({ maxLength: 255, description: 'a UUID' });
const OptionalStr = Type.Optional(Type.Union([Type.String({ maxLength: 255 }), Type.Null()]));

/** One network event (Ironic `NETWORK_EVENT_VALIDATOR`). */
const NetworkEventBody = Type.Object(
  {
    event: Type.Union(NETWORK_EVENTS.map((e) => Type.Literal(e))),
    port_id: Uuid,
    mac_address: Type.String({ maxLength: 255, description: 'a MAC address' }),
    status: Type.String({ maxLength: 255 }),
    device_id: OptionalStr,
    'binding:host_id': OptionalStr,
    'binding:vnic_type': OptionalStr,
  },
  { additionalProperties: false },
);

/** `POST /v1/events` (Ironic `EVENTS_SCHEMA`): at least one event. */
export const EventsBody = Type.Object({ events: Type.Array(NetworkEventBody, { minItems: 1 }) }, { additionalProperties: false });

/** The body of `POST /v1/events`. @throws InvalidInputError ("Schema error for evts: …") */
export function parseEventsBody(body: unknown): Static<typeof EventsBody> {
  return checked(EventsBody, body, 'events', parseEvents);
}

/** A heartbeat string of at most `max` characters (null allowed unless `required`). */
const hbString = (max: number, nullable = true) =>
  Type.Optional(nullable ? Type.Union([Type.String({ maxLength: max }), Type.Null()]) : Type.String({ maxLength: max }));

/**
 * `POST /v1/heartbeat/{node}` (Ironic 21.4 `HeartbeatController.post` arguments): the agent's
 * `callback_url` and `agent_token` (the domain requires both), its version, CA and status.
 */
export const HeartbeatBody = Type.Object(
  {
    callback_url: hbString(2048, false),
    agent_token: hbString(256, false),
    agent_version: hbString(64),
    agent_verify_ca: hbString(65_536),
    agent_status: Type.Optional(Type.Union([Type.Literal('start'), Type.Literal('end'), Type.Literal('error'), Type.Null()])),
    agent_status_message: hbString(4096),
  },
  { additionalProperties: false },
);

/** The longest `agent_status` (its values are shorter; Ironic's limit). */
const AGENT_STATUS_MAX = 16;
/** Each heartbeat key, its longest value (the schema's `maxLength`) and whether null is allowed, in the schema's order. */
const HEARTBEAT_LIMITS: ReadonlyArray<[string, number, boolean]> = Object.entries(HeartbeatBody.properties).map(([key, s]) => {
  const members = ((s as TSchema).anyOf as TSchema[] | undefined) ?? [s];
  const str = members.find((m) => m.type === 'string' || m.type === undefined);
  return [key, (str?.maxLength as number | undefined) ?? AGENT_STATUS_MAX, members.some((m) => m.type === 'null')];
});

/**
 * The body of `POST /v1/heartbeat/{node}`.
 * @throws InvalidInputError: not an object, an unknown key, a value too long or no string, an
 *   unknown `agent_status`
 */
export function parseHeartbeat(body: unknown): Static<typeof HeartbeatBody> {
  if (!isJsonObject(body)) throw new InvalidInputError('The heartbeat body must be a JSON object with callback_url and agent_token.');
  const unknown = Object.keys(body).filter((k) => !Object.hasOwn(HeartbeatBody.properties, k));
  if (unknown.length > 0) throw new InvalidInputError(`Unknown attribute(s) in heartbeat: ${unknown.join(', ')}`);
  for (const [key, max, nullable] of HEARTBEAT_LIMITS) {
    const v = body[key];
    if (v === undefined || (v === null && nullable)) continue;
    if (typeof v !== 'string' || v.length > max)
      throw new InvalidInputError(`Invalid ${key} in heartbeat: expected a string of at most ${max} characters.`);
  }
  return checked(HeartbeatBody, body, 'heartbeat', () => {
    if (body.agent_status != null && !['start', 'end', 'error'].includes(body.agent_status as string))
      throw new InvalidInputError('Invalid agent_status in heartbeat: expected one of start, end, error.');
  });
}

const Count = Type.Integer({ minimum: 0, description: 'bytes' });

/**
 * `POST /v1/continue_inspection`: the agent's inspection data, `{inventory, …plugin data}`
 * (ironic-python-agent's inventory format, `ironic_python_agent/hardware.py`).
 */
export const InspectionDataBody = Type.Object(
  {
    inventory: Type.Object(
      {
        cpu: Type.Object({ count: Type.Integer({ minimum: 1 }), architecture: NonEmpty }, { additionalProperties: true }),
        memory: Type.Object({}, { additionalProperties: true, description: 'with physical_mb or total (positive integers)' }),
        interfaces: Type.Array(Obj),
        disks: Type.Array(Type.Object({ size: Count }, { additionalProperties: true })),
      },
      { additionalProperties: true },
    ),
    root_disk: Type.Optional(Type.Union([Type.Object({ size: Count }, { additionalProperties: true }), Type.Null()])),
  },
  { additionalProperties: true, description: 'the inventory and the plugin data (every other key)' },
);

/** The body of `POST /v1/continue_inspection`. @throws InvalidInputError ("Invalid inspection data: …") */
export function parseInspectionData(body: unknown): Static<typeof InspectionDataBody> {
  return checked(InspectionDataBody, body, 'inspection data', validateInspectionData);
}
