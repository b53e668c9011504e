/**
 * Webhooks (pure rules): what a subscription is, which events it receives, what is sent, how it
 * is signed and when a failed delivery is retried. esi-leap notifies through oslo.messaging and
 * an event table (`esi_leap/objects/notification.py`); esi adds per-project HTTPS webhooks
 * beside the event API (additive, docs/leasing.md).
 *
 * - A webhook belongs to a project and receives the events that project sees in
 *   `GET /v1/events` (where it is the lessee or the owner), optionally only some event types
 *   (`esi_leap.lease.fulfill.end`, or a prefix such as `esi_leap.offer.*`).
 * - Each event is written to an outbox row per webhook in the same transaction as the event,
 *   so nothing is lost; a worker sends the rows (at least once) and records the outcome.
 * - Body: `{"event": <the event as GET /v1/events shows it>, "object": <the lease or offer>}`.
 * - Headers: `X-ESI-Event` (type), `X-ESI-Delivery` (delivery id, the same on every retry),
 *   `X-ESI-Timestamp` (epoch seconds of this attempt) and
 *   `X-ESI-Signature: sha256=<hex HMAC-SHA256(secret, "<timestamp>.<body>")>`: a receiver
 *   recomputes it and refuses old timestamps (replay protection).
 * - A 2xx answer is success; anything else (other status, timeout, connection error) is retried
 *   with exponential back-off — base × 2^(attempt−1), capped at one hour — up to the maximum
 *   number of attempts, then the delivery is `failed`.
 */
import { createHmac } from 'node:crypto';
import { InvalidInputError } from '../errors.ts';
import { EVENT_TYPES } from './events.ts';
import type { LeasingEvent, NewLeasingEvent } from './model.ts';
import { formatLeaseTime } from './time.ts';
import { restrictedHost, type WebhookTargets } from './webhook-targets.ts';

/** A project's webhook. The secret is never shown; the store keeps it sealed. */
export interface Webhook {
  readonly uuid: string;
  readonly project_id: string;
  readonly name: string | null;
  readonly url: string;
  /** Event types (exact, or a prefix ending in `*`); empty = every type. */
  readonly event_types: readonly string[];
  readonly enabled: boolean;
  readonly created_at: number;
  readonly updated_at: number;
}

/** Delivery statuses. */
export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/** One outbox row: an event to send to one webhook. */
export interface WebhookDelivery {
  readonly id: number;
  readonly webhook_uuid: string;
  readonly event_id: number | null;
  readonly event_type: string;
  /** The JSON body sent. */
  readonly payload: string;
  readonly status: DeliveryStatus;
  readonly attempts: number;
  readonly next_attempt_at: number;
  readonly last_attempt_at: number | null;
  readonly last_status_code: number | null;
  readonly last_error: string | null;
  readonly created_at: number;
  readonly delivered_at: number | null;
}

/** Shortest and longest accepted secret, characters. */
export const SECRET_MIN = 16;
export const SECRET_MAX = 256;
/** Longest accepted URL, characters. */
export const URL_MAX = 2048;
/** Most webhooks one project may have. */
export const WEBHOOKS_PER_PROJECT = 20;
/** Longest retry delay, ms. */
export const MAX_RETRY_DELAY_MS = 3_600_000;

/**
 * Check a webhook URL: absolute http(s), no user information (it would be a secret shown in
 * listings), at most {@link URL_MAX} characters, and — when `targets` is given (a tenant's
 * webhook) — a host a tenant may reach (`./webhook-targets.ts`: no loopback, private,
 * link-local or reserved address, nor the server's own).
 * @param targets where a tenant's webhooks may go; omitted for webhook admins (any host)
 * @returns the URL as given
 * @throws InvalidInputError
 */
export function checkWebhookUrl(url: string, targets?: WebhookTargets): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new InvalidInputError(`Invalid webhook url ${url.slice(0, 80)}: not an absolute URL.`, 'InvalidWebhookUrl');
  }
  if (url.length > URL_MAX) throw new InvalidInputError(`Invalid webhook url: longer than ${URL_MAX} characters.`, 'InvalidWebhookUrl');
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new InvalidInputError(
      `Invalid webhook url: the scheme must be http or https, not ${parsed.protocol.replace(':', '')}.`,
      'InvalidWebhookUrl',
    );
  }
  if (parsed.username !== '' || parsed.password !== '') {
    throw new InvalidInputError(
      'Invalid webhook url: user information (user:password@) is not allowed; the signature authenticates esi.',
      'InvalidWebhookUrl',
    );
  }
  const restricted = targets ? restrictedHost(parsed.hostname, targets) : null;
  if (restricted !== null) {
    throw new InvalidInputError(
      `Invalid webhook url: its host is ${restricted}; webhooks reach public addresses only.`,
      'InvalidWebhookUrl',
    );
  }
  return url;
}

/** Check a secret's length. @throws InvalidInputError (without echoing the secret) */
export function checkWebhookSecret(secret: string): string {
  if (secret.length < SECRET_MIN || secret.length > SECRET_MAX) {
    throw new InvalidInputError(
      `Invalid webhook secret: it must be ${SECRET_MIN} to ${SECRET_MAX} characters long.`,
      'InvalidWebhookSecret',
    );
  }
  return secret;
}

/**
 * Check subscribed event types: each a known type or a prefix of one ending in `*`.
 * @throws InvalidInputError naming the first unknown type
 */
export function checkEventTypes(types: readonly string[]): string[] {
  if (types.length > EVENT_TYPES.length) throw new InvalidInputError('Invalid event_types: too many entries.', 'InvalidEventTypes');
  for (const t of types) {
    const ok = t.endsWith('*') ? EVENT_TYPES.some((e) => e.startsWith(t.slice(0, -1))) : EVENT_TYPES.includes(t);
    if (!ok)
      throw new InvalidInputError(
        `Invalid event type ${t.slice(0, 80)}: expected one of ${EVENT_TYPES.join(', ')}, or a prefix ending in *.`,
        'InvalidEventTypes',
      );
  }
  return [...new Set(types)];
}

/** True when a subscription receives `eventType` (empty subscription = everything). */
export function subscribes(eventTypes: readonly string[], eventType: string): boolean {
  if (eventTypes.length === 0) return true;
  return eventTypes.some((t) => (t.endsWith('*') ? eventType.startsWith(t.slice(0, -1)) : t === eventType));
}

/** The projects whose webhooks receive an event: its lessee and its owner. */
export function eventParties(event: Pick<NewLeasingEvent, 'lessee_id' | 'owner_id'>): string[] {
  return [...new Set([event.lessee_id, event.owner_id].filter((p): p is string => p !== null))];
}

/**
 * The JSON body of a delivery: the event as `GET /v1/events` renders it, and the lease or
 * offer it is about (esi-leap field names, times naive UTC ISO-8601).
 */
export function webhookPayload(event: NewLeasingEvent, id: number): string {
  const e: LeasingEvent = { ...event, id };
  return JSON.stringify({
    event: {
      id: e.id,
      event_type: e.event_type,
      event_time: formatLeaseTime(e.event_time),
      object_type: e.object_type,
      object_uuid: e.object_uuid,
      resource_type: e.resource_type,
      resource_uuid: e.resource_uuid,
      lessee_id: e.lessee_id,
      owner_id: e.owner_id,
    },
    object: event.subject ?? null,
  });
}

/**
 * The signature header value of a body: `sha256=<hex HMAC-SHA256(secret, "<timestamp>.<body>")>`.
 * @param timestampS epoch seconds, as sent in `X-ESI-Timestamp`
 */
export function signWebhook(secret: string, timestampS: number, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestampS}.${body}`).digest('hex')}`;
}

/**
 * Delay before the next attempt after `attempts` failed ones: base × 2^(attempts−1), capped at
 * {@link MAX_RETRY_DELAY_MS}.
 */
export function retryDelay(attempts: number, baseMs: number): number {
  return Math.min(baseMs * 2 ** Math.min(Math.max(attempts - 1, 0), 30), MAX_RETRY_DELAY_MS);
}
