/**
 * More response schemas of the lease API (TypeBox; ./response-schemas.ts has offers, leases and
 * nodes): esi-leap's events and console auth tokens (`esi_leap/api/controllers/v1/event.py`,
 * `console_auth_token.py` in https://github.com/CCI-MOC/esi-leap; ./render.ts), esi-leap's
 * `null` answer to a DELETE, and esi's additive resources (docs/leasing.md "Beyond esi-leap"):
 * quotas, owner lease policies, webhooks and their deliveries (./render-extra.ts).
 *
 * The wire format is fixed: every object is `additionalProperties: false` and every field
 * required (test/api/ops/openapi-responses-image-lease.test.ts checks real answers against
 * them). Times are esi-leap's: naive ISO 8601 in UTC.
 */
import { Type } from '@sinclair/typebox';

const Str = Type.String();
const StrOrNull = Type.Union([Type.String(), Type.Null()]);
const IntOrNull = Type.Union([Type.Integer(), Type.Null()]);
const Time = Type.String({ description: 'naive ISO 8601, UTC' });
const TimeOrNull = Type.Union([Time, Type.Null()]);
const strict = { additionalProperties: false } as const;

/** esi-leap's answer to a DELETE (an offer, a lease, console tokens; esi's quotas, policies, webhooks): JSON `null`, status 200. */
export const NullAnswer = Type.Null({ description: 'esi-leap answers a DELETE with 200 and the JSON null' });

/** An event (esi-leap's `Event`: a lease or offer changed; the lessee and owner it concerns). */
export const EventResponse = Type.Object(
  {
    id: Type.Integer(),
    event_type: Type.String({ description: 'e.g. esi_leap.lease.fulfill.end' }),
    event_time: Time,
    object_type: Type.Union([Type.Literal('lease'), Type.Literal('offer')]),
    object_uuid: Str,
    resource_type: Str,
    resource_uuid: Str,
    lessee_id: StrOrNull,
    owner_id: StrOrNull,
  },
  strict,
);

/** `GET /v1/events`. */
export const EventCollection = Type.Object({ events: Type.Array(EventResponse) }, strict);

/** `POST /v1/console_auth_tokens`: the token and the websocket URL of the console proxy. */
export const ConsoleTokenResponse = Type.Object(
  { node_uuid: Str, token: Str, access_url: Type.String({ description: 'ws[s]://<host>/lease/console?token=<token>' }) },
  strict,
);

/** A project's lease quota with its usage (esi). */
export const LeaseQuotaResponse = Type.Object(
  {
    project_id: Str,
    project: StrOrNull,
    max_nodes: IntOrNull,
    max_node_hours: IntOrNull,
    window_hours: Type.Integer(),
    usage: Type.Object({ nodes_now: Type.Integer(), peak_nodes: Type.Integer(), node_hours_in_window: Type.Number() }, strict),
  },
  strict,
);

/** `GET /v1/quotas`. */
export const LeaseQuotaCollection = Type.Object({ quotas: Type.Array(LeaseQuotaResponse) }, strict);

/** An owner lease policy (esi): for all the owner's nodes, or one (`resource_uuid`). */
export const LeasePolicyResponse = Type.Object(
  {
    uuid: Str,
    project_id: Str,
    project: StrOrNull,
    resource_uuid: StrOrNull,
    resource: StrOrNull,
    max_lease_seconds: IntOrNull,
    min_gap_seconds: IntOrNull,
    allowed_projects: Type.Union([Type.Array(Str), Type.Null()]),
    erase_devices: Type.Boolean(),
    created_at: Time,
    updated_at: Time,
  },
  strict,
);

/** `GET /v1/lease_policies`. */
export const LeasePolicyCollection = Type.Object({ lease_policies: Type.Array(LeasePolicyResponse) }, strict);

/** A webhook (esi); the secret is write-only, shown as `******`. */
export const WebhookResponse = Type.Object(
  {
    uuid: Str,
    project_id: Str,
    name: StrOrNull,
    url: Str,
    secret: Type.Literal('******'),
    event_types: Type.Array(Str),
    enabled: Type.Boolean(),
    created_at: Time,
    updated_at: Time,
  },
  strict,
);

/** `GET /v1/webhooks`. */
export const WebhookCollection = Type.Object({ webhooks: Type.Array(WebhookResponse) }, strict);

/** A delivery of an event to a webhook: its status and attempts (the payload is not repeated). */
export const WebhookDeliveryResponse = Type.Object(
  {
    id: Type.Integer(),
    webhook_uuid: Str,
    event_id: IntOrNull,
    event_type: Str,
    status: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')]),
    attempts: Type.Integer(),
    next_attempt_at: TimeOrNull,
    last_attempt_at: TimeOrNull,
    last_status_code: IntOrNull,
    last_error: StrOrNull,
    created_at: Time,
    delivered_at: TimeOrNull,
  },
  strict,
);

/** `GET /v1/webhooks/{uuid}/deliveries`. */
export const WebhookDeliveryCollection = Type.Object({ deliveries: Type.Array(WebhookDeliveryResponse) }, strict);
