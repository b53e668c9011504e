/**
 * IP address management for subnets: CIDR and address parsing (ipaddr.js), overlap checks,
 * gateways, allocation pools and picking free addresses — Neutron's IPAM ("reference" driver)
 * rules:
 *
 * - a CIDR must be a network address (`10.0.0.1/24` is refused, naming `10.0.0.0/24`);
 * - subnets of one network may not overlap (`overlapping CIDRs`, 400 in Neutron);
 * - the gateway defaults to the first host address; `null` means no gateway;
 * - allocation pools default to every host address except the gateway (IPv4: without the
 *   network and broadcast addresses; IPv6: without the subnet-router anycast address);
 * - pools must lie inside the CIDR, may not overlap each other nor contain the gateway;
 * - a port gets the lowest free address of the pools (Neutron picks randomly within a window;
 *   lowest-first is deterministic).
 *
 * Addresses are handled as bigints so IPv4 and IPv6 share the arithmetic.
 */
import ipaddr from 'ipaddr.js';
import { ConflictError, InvalidInputError } from '../errors.ts';
import type { AllocationPool } from './model.ts';

/** A parsed CIDR. */
export interface Cidr {
  readonly version: 4 | 6;
  /** Network address. */
  readonly network: bigint;
  readonly prefix: number;
  /** Last address of the CIDR. */
  readonly last: bigint;
  /** Canonical text, e.g. `10.0.0.0/24`, `2001:db8::/64`. */
  readonly text: string;
}

const BITS = { 4: 32, 6: 128 } as const;

function toBig(addr: ipaddr.IPv4 | ipaddr.IPv6): bigint {
  return addr.toByteArray().reduce((acc, b) => (acc << 8n) | BigInt(b), 0n);
}

/** The text of address `n` of an IP version (IPv6 in RFC 5952 form). */
export function ipText(version: 4 | 6, n: bigint): string {
  const bytes: number[] = [];
  let v = n;
  for (let i = 0; i < BITS[version] / 8; i++) {
    bytes.unshift(Number(v & 0xffn));
    v >>= 8n;
  }
  const addr = ipaddr.fromByteArray(bytes);
  return addr.kind() === 'ipv6' ? (addr as ipaddr.IPv6).toRFC5952String() : addr.toString();
}

/**
 * Parse one IP address (dotted quad or IPv6).
 * @returns version and value, or null when `text` is not an address
 */
export function parseIp(text: unknown): { version: 4 | 6; value: bigint } | null {
  if (typeof text !== 'string') return null;
  if (ipaddr.IPv4.isValidFourPartDecimal(text)) return { version: 4, value: toBig(ipaddr.IPv4.parse(text)) };
  if (!text.includes('%') && ipaddr.IPv6.isValid(text)) return { version: 6, value: toBig(ipaddr.IPv6.parse(text)) };
  return null;
}

/** The canonical text of an address, or null when it is none. */
export function canonicalIp(text: unknown): string | null {
  const p = parseIp(text);
  return p ? ipText(p.version, p.value) : null;
}

/**
 * Parse a CIDR as Neutron's subnet validator does.
 * @param field attribute name for messages (`cidr`, `destination`)
 * @throws InvalidInputError for text that is no CIDR, or one with host bits set
 */
export function parseCidr(text: unknown, field = 'cidr'): Cidr {
  if (typeof text !== 'string' || !text.includes('/'))
    throw new InvalidInputError(`Invalid input for ${field}. Reason: '${String(text)}' is not a valid IP subnet.`, 'HTTPBadRequest');
  const [addrText, prefixText] = text.split('/') as [string, string];
  const ip = parseIp(addrText);
  if (!ip || !/^\d{1,3}$/.test(prefixText) || Number(prefixText) > BITS[ip.version]) {
    throw new InvalidInputError(`Invalid input for ${field}. Reason: '${text}' is not a valid IP subnet.`, 'HTTPBadRequest');
  }
  const prefix = Number(prefixText);
  const hostBits = BigInt(BITS[ip.version] - prefix);
  const network = (ip.value >> hostBits) << hostBits;
  const canonical = `${ipText(ip.version, network)}/${prefix}`;
  if (network !== ip.value) {
    throw new InvalidInputError(
      `Invalid input for ${field}. Reason: '${text}' isn't a recommended CIDR, it should be specified as '${canonical}'.`,
      'HTTPBadRequest',
    );
  }
  return { version: ip.version, network, prefix, last: network + (1n << hostBits) - 1n, text: canonical };
}

/** True when the two CIDRs share at least one address. */
export function cidrsOverlap(a: Cidr, b: Cidr): boolean {
  return a.version === b.version && a.network <= b.last && b.network <= a.last;
}

/** True when address `n` lies in the CIDR. */
export function cidrContains(c: Cidr, n: bigint): boolean {
  return n >= c.network && n <= c.last;
}

/** First and last addresses hosts may use (IPv4 excludes network and broadcast, IPv6 the anycast address). */
function hostRange(c: Cidr): { first: bigint; last: bigint } | null {
  if (c.version === 4) {
    if (c.prefix >= 31) return { first: c.network, last: c.last };
    return { first: c.network + 1n, last: c.last - 1n };
  }
  if (c.prefix === 128) return { first: c.network, last: c.last };
  return { first: c.network + 1n, last: c.last };
}

/**
 * The gateway: the default (first host address) when `requested` is undefined, none when null.
 * @throws InvalidInputError for an address that is not one, or not a host address of the CIDR
 */
export function resolveGateway(c: Cidr, requested: unknown): bigint | null {
  if (requested === null) return null;
  if (requested === undefined) {
    const h = hostRange(c);
    return h && c.version === 4 && c.prefix >= 31 ? null : (h?.first ?? null);
  }
  const ip = parseIp(requested);
  if (!ip || ip.version !== c.version)
    throw new InvalidInputError(
      `Invalid input for gateway_ip. Reason: '${String(requested)}' is not a valid IP address.`,
      'HTTPBadRequest',
    );
  const h = hostRange(c);
  if (!h || ip.value < h.first || ip.value > h.last) {
    throw new InvalidInputError(`Invalid input for operation: Gateway IP ${String(requested)} is not a host address of subnet ${c.text}.`);
  }
  return ip.value;
}

/** A pool as numbers. */
export interface Range {
  readonly start: bigint;
  readonly end: bigint;
}

/**
 * The allocation pools: the defaults (every host address but the gateway) when `requested` is
 * undefined, else the requested ones, checked.
 * @throws InvalidInputError for malformed pools, pools outside the CIDR or overlapping each other;
 *   ConflictError (`GatewayConflictWithAllocationPools`) for a pool containing the gateway
 */
export function resolvePools(c: Cidr, gateway: bigint | null, requested: unknown): Range[] {
  const h = hostRange(c);
  if (requested === undefined || requested === null) {
    if (!h) return [];
    const out: Range[] = [];
    if (gateway === null || gateway < h.first || gateway > h.last) out.push({ start: h.first, end: h.last });
    else {
      if (gateway > h.first) out.push({ start: h.first, end: gateway - 1n });
      if (gateway < h.last) out.push({ start: gateway + 1n, end: h.last });
    }
    return out;
  }
  if (!Array.isArray(requested))
    throw new InvalidInputError('Invalid input for allocation_pools. Reason: must be a list of {start, end}.', 'HTTPBadRequest');
  const pools: Range[] = requested.map((p: unknown) => {
    const o = p as { start?: unknown; end?: unknown } | null;
    const s = parseIp(o?.start);
    const e = parseIp(o?.end);
    if (!o || typeof o !== 'object' || !s || !e || s.version !== c.version || e.version !== c.version) {
      throw new InvalidInputError(
        `Invalid input for allocation_pools. Reason: ${JSON.stringify(p)} is not a valid {start, end} pool of IPv${c.version} addresses.`,
        'HTTPBadRequest',
      );
    }
    if (s.value > e.value)
      throw new InvalidInputError(`Invalid input for operation: The allocation pool ${o.start}-${o.end} is not valid (start after end).`);
    if (!h || s.value < h.first || e.value > h.last) {
      throw new InvalidInputError(
        `Invalid input for operation: The allocation pool ${o.start}-${o.end} spans beyond the subnet cidr ${c.text}.`,
      );
    }
    return { start: s.value, end: e.value };
  });
  const sorted = [...pools].sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i]!.start <= sorted[i - 1]!.end) {
      throw new InvalidInputError(
        `Invalid input for operation: Found overlapping allocation pools: ${poolText(c.version, sorted[i - 1]!)} and ${poolText(c.version, sorted[i]!)}.`,
      );
    }
  }
  if (gateway !== null) {
    const hit = sorted.find((p) => gateway >= p.start && gateway <= p.end);
    if (hit) {
      throw new ConflictError(
        `Gateway ip ${ipText(c.version, gateway)} conflicts with allocation pool ${poolText(c.version, hit)}.`,
        'GatewayConflictWithAllocationPools',
      );
    }
  }
  return sorted;
}

function poolText(version: 4 | 6, r: Range): string {
  return `${ipText(version, r.start)}-${ipText(version, r.end)}`;
}

/** Pools as the API shows them. */
export function poolsOut(version: 4 | 6, pools: readonly Range[]): AllocationPool[] {
  return pools.map((p) => ({ start: ipText(version, p.start), end: ipText(version, p.end) }));
}

/** Pools as stored (`{start, end}` texts) back to numbers. */
export function poolsIn(pools: readonly AllocationPool[]): Range[] {
  return pools.map((p) => ({ start: parseIp(p.start)!.value, end: parseIp(p.end)!.value }));
}

/**
 * The lowest address of the pools that is not in use.
 * @param used addresses in use in this subnet
 * @returns the address, or null when the pools are exhausted
 */
export function lowestFree(pools: readonly Range[], used: ReadonlySet<bigint>): bigint | null {
  for (const p of pools) {
    for (let a = p.start; a <= p.end; a++) {
      if (!used.has(a)) return a;
    }
  }
  return null;
}

/** True when address `n` lies in one of the pools. */
export function inPools(pools: readonly Range[], n: bigint): boolean {
  return pools.some((p) => n >= p.start && n <= p.end);
}
