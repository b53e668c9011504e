/**
 * The attributes of a port forwarding body (Neutron `floating-ip-port-forwarding` with
 * `floating-ip-port-forwarding-port-ranges` and `-description`), parsed with Neutron's rules:
 *
 * - `protocol`: `tcp` or `udp` (any case; Neutron takes other IP protocols, but esi's dataplane
 *   forwards these two — others are 400);
 * - `internal_port`, `external_port`: integers (or digit strings) 1…65535; null means "not given";
 * - `internal_port_range`, `external_port_range`: `"first:last"` (or one port, `"N"`, or an
 *   integer), 1…65535, first ≤ last; a port and a range given together must say the same;
 * - ranges map N:N (equal lengths, one to one) or N:1 (an external range onto one internal
 *   port); an internal range of another length than the external one is 400 (Neutron's
 *   `_validate_ranges`, "must be N-N or 1-N");
 * - `internal_ip_address`: an IPv4 address; `internal_port_id`: a UUID; `description` ≤ 255.
 *
 * Output: the attributes present, each normalised; absent ones are left out, so an update can
 * merge them over the stored port forwarding.
 */
import { InvalidInputError } from '../errors.ts';
import { isUuidLike } from '../ids.ts';
import { canonicalId, description, int, type Attrs } from './attributes.ts';
import { parseIp } from './ipam.ts';
import type { PortForwardingProtocol, PortRange } from './model.ts';

/** The attributes a port forwarding body may set. */
export const PF_ATTRIBUTES = [
  'protocol',
  'internal_port_id',
  'internal_ip_address',
  'internal_port',
  'external_port',
  'internal_port_range',
  'external_port_range',
  'description',
] as const;

/** A parsed body: only what it gave. */
export interface PortForwardingInput {
  protocol?: PortForwardingProtocol;
  internal_port_id?: string;
  internal_ip_address?: string;
  internal_port?: PortRange;
  external_port?: PortRange;
  description?: string;
}

function invalid(attr: string, reason: string): InvalidInputError {
  return new InvalidInputError(`Invalid input for ${attr}. Reason: ${reason}.`, 'HTTPBadRequest');
}

/** A `BadRequest` in Neutron's port forwarding wording. */
export function badPf(msg: string): InvalidInputError {
  return new InvalidInputError(`Bad port_forwarding request: ${msg}`, 'BadRequest');
}

/** `"first:last"` of a range (`"25:25"` for one port), as Neutron renders it. */
export function rangeText(r: PortRange): string {
  return `${r[0]}:${r[1]}`;
}

/**
 * Parse a port range value (`"a:b"`, `"n"` or an integer).
 * @throws InvalidInputError naming the attribute
 */
export function parseRange(attr: string, v: unknown): PortRange {
  const text = typeof v === 'number' && Number.isInteger(v) ? String(v) : v;
  const m = typeof text === 'string' ? /^(\d{1,5})(?::(\d{1,5}))?$/.exec(text.trim()) : null;
  const a = m ? Number(m[1]) : NaN;
  const b = m ? Number(m[2] ?? m[1]) : NaN;
  if (!m || a < 1 || b > 65535 || a > b) throw invalid(attr, `'${String(v)}' is not a valid port range (first:last, 1 through 65535)`);
  return [a, b];
}

/** One side (internal or external) from its port and range attributes, or undefined when neither is given. */
function side(a: Attrs, which: 'internal' | 'external'): PortRange | undefined {
  const portAttr = `${which}_port`;
  const rangeAttr = `${which}_port_range`;
  const port = a[portAttr] === undefined || a[portAttr] === null ? undefined : int(a, portAttr, 0, 1, 65535);
  const range = a[rangeAttr] === undefined || a[rangeAttr] === null ? undefined : parseRange(rangeAttr, a[rangeAttr]);
  if (port !== undefined && range !== undefined && (range[0] !== port || range[1] !== port))
    throw badPf(`You can not use ${portAttr} and ${rangeAttr} with different values in the same request.`);
  return range ?? (port !== undefined ? [port, port] : undefined);
}

/**
 * Parse a body's attributes (keys already checked).
 * @throws InvalidInputError for a value of the wrong kind or out of range
 */
export function parsePortForwarding(a: Attrs): PortForwardingInput {
  const out: PortForwardingInput = {};
  if (a.protocol !== undefined) {
    const p = typeof a.protocol === 'string' ? a.protocol.toLowerCase() : a.protocol;
    if (p !== 'tcp' && p !== 'udp')
      throw invalid('protocol', `'${String(a.protocol)}' is not in ['tcp', 'udp'] (esi forwards tcp and udp)`);
    out.protocol = p;
  }
  if (a.internal_port_id !== undefined) {
    const v = a.internal_port_id;
    if (typeof v !== 'string' || !isUuidLike(v)) throw invalid('internal_port_id', `'${String(v)}' is not a valid UUID`);
    out.internal_port_id = canonicalId(v);
  }
  if (a.internal_ip_address !== undefined && a.internal_ip_address !== null) {
    const ip = parseIp(a.internal_ip_address);
    if (!ip) throw invalid('internal_ip_address', `'${String(a.internal_ip_address)}' is not a valid IP address`);
    if (ip.version !== 4) throw badPf(`The internal IP address ${String(a.internal_ip_address)} is not an IPv4 address.`);
    out.internal_ip_address = a.internal_ip_address as string;
  }
  const internal = side(a, 'internal');
  const external = side(a, 'external');
  if (internal) out.internal_port = internal;
  if (external) out.external_port = external;
  if (a.description !== undefined) out.description = description(a);
  return out;
}

/**
 * Check the relation of the two ranges (N:N with equal lengths, or N:1).
 * @throws InvalidInputError (`BadRequest`)
 */
export function checkRelation(internal: PortRange, external: PortRange): void {
  const i = internal[1] - internal[0];
  if (i > 0 && i !== external[1] - external[0])
    throw badPf('Invalid ranges of internal and/or external ports. The relation between internal and external ports must be N-N or 1-N.');
}

/** True when two ranges share a port. */
export function rangesOverlap(a: PortRange, b: PortRange): boolean {
  return Math.max(a[0], b[0]) <= Math.min(a[1], b[1]);
}
