/**
 * External events (Ironic 21.4 `EventsController`, `POST /v1/events`, API ≥ 1.54): Neutron
 * tells Ironic about its ports — `network.bind_port`, `network.unbind_port`,
 * `network.delete_port`. Ironic 21.4 validates the body and logs each event; nothing else
 * happens. esi does the same: it is its own Neutron (its switch reconciler binds ports), so an
 * event from an outside Neutron carries nothing esi acts on, and accepting one claims nothing.
 *
 * Body (Ironic's `EVENTS_SCHEMA` and `NETWORK_EVENT_VALIDATOR`): `{"events": [event, …]}` with at
 * least one event and no other key; each event `{"event", "port_id", "mac_address", "status"}`
 * plus optional `device_id`, `binding:host_id`, `binding:vnic_type` (string or null), no other
 * key; `port_id`, `device_id` and `binding:host_id` UUIDs, `mac_address` a MAC address; esi
 * also refuses strings longer than 255 characters, which no Neutron field holds.
 * Rule `baremetal:events:post` (admins and services).
 */
import type { AuthContext } from '../auth.ts';
import { InvalidInputError } from '../errors.ts';
import { isUuidLike } from '../ids.ts';
import type { Policy } from '../policy/types.ts';

/** The event names Ironic 21.4 accepts. */
export const NETWORK_EVENTS: readonly string[] = ['network.bind_port', 'network.unbind_port', 'network.delete_port'];

/** One accepted event, as received. */
export interface NetworkEvent {
  readonly event: string;
  readonly port_id: string;
  readonly mac_address: string;
  readonly status: string;
  readonly device_id?: string | null;
  readonly 'binding:host_id'?: string | null;
  readonly 'binding:vnic_type'?: string | null;
}

const REQUIRED = ['event', 'port_id', 'mac_address', 'status'] as const;
const OPTIONAL = ['device_id', 'binding:host_id', 'binding:vnic_type'] as const;
const MAC_RE = /^([0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}$/;
/** Longest string esi takes in an event (Ironic's schema sets none; Neutron's columns hold 255). */
const MAX_LENGTH = 255;

/** A plain JSON object, or null. */
function objectOrNull(v: unknown): Record<string, unknown> | null {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
}

/**
 * Check one event (see the module documentation).
 * @throws InvalidInputError naming the event's index and the problem
 */
function checkEvent(raw: unknown, i: number): NetworkEvent {
  const e = objectOrNull(raw);
  const where = `events[${i}]`;
  if (e === null) throw new InvalidInputError(`Schema error for evts: ${where} is not of type 'object'`);
  if (typeof e.event !== 'string' || !NETWORK_EVENTS.includes(e.event))
    throw new InvalidInputError(`Schema error for evts: ${where}.event must be one of ${NETWORK_EVENTS.join(', ')}`);
  for (const k of REQUIRED) {
    if (e[k] === undefined) throw new InvalidInputError(`Schema error for evts: '${k}' is a required property of ${where}`);
    if (typeof e[k] !== 'string') throw new InvalidInputError(`Schema error for evts: ${where}.${k} is not of type 'string'`);
  }
  for (const k of OPTIONAL)
    if (e[k] !== undefined && e[k] !== null && typeof e[k] !== 'string')
      throw new InvalidInputError(`Schema error for evts: ${where}.${k} is not of type 'string', 'null'`);
  const extra = Object.keys(e).filter((k) => !(REQUIRED as readonly string[]).includes(k) && !(OPTIONAL as readonly string[]).includes(k));
  if (extra.length > 0)
    throw new InvalidInputError(
      `Schema error for evts: Additional properties are not allowed ('${extra.join("', '")}' unexpected) in ${where}`,
    );
  for (const k of [...REQUIRED, ...OPTIONAL]) {
    const v = e[k];
    if (typeof v === 'string' && v.length > MAX_LENGTH)
      throw new InvalidInputError(`Schema error for evts: ${where}.${k} is longer than ${MAX_LENGTH} characters`);
  }
  for (const k of ['port_id', 'device_id', 'binding:host_id'] as const) {
    const v = e[k];
    if (typeof v === 'string' && !isUuidLike(v)) throw new InvalidInputError(`Expected UUID for ${k}: ${v}`);
  }
  if (!MAC_RE.test(e.mac_address as string)) throw new InvalidInputError(`Expected a MAC address but received ${String(e.mac_address)}.`);
  return e as unknown as NetworkEvent;
}

/**
 * Check the body of `POST /v1/events` (see the module documentation).
 * @returns the events
 * @throws InvalidInputError ("Schema error for evts: …", Ironic's words)
 */
export function parseEvents(body: unknown): NetworkEvent[] {
  const b = objectOrNull(body);
  if (b === null) throw new InvalidInputError("Schema error for evts: the body is not of type 'object'");
  const extra = Object.keys(b).filter((k) => k !== 'events');
  if (extra.length > 0)
    throw new InvalidInputError(`Schema error for evts: Additional properties are not allowed ('${extra.join("', '")}' unexpected)`);
  if (!Array.isArray(b.events)) throw new InvalidInputError("Schema error for evts: 'events' is a required property of type 'array'");
  if (b.events.length === 0) throw new InvalidInputError('Schema error for evts: [] is too short');
  return b.events.map(checkEvent);
}

/** `POST /v1/events`; see the module documentation. */
export class EventService {
  constructor(private readonly policy: Policy) {}

  /**
   * Validate and accept external events (the body is checked before the policy, as Ironic's
   * validating decorator runs first).
   * @returns the events, for the caller to log
   * @throws InvalidInputError (body), ForbiddenError (`baremetal:events:post`)
   */
  post(ctx: AuthContext, body: unknown): NetworkEvent[] {
    const events = parseEvents(body);
    this.policy.authorize('baremetal:events:post', {}, ctx);
    return events;
  }
}
