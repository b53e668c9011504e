/**
 * Where webhooks may be sent (pure rules). A webhook makes the server send an HTTP request to a
 * URL a tenant chose; left open, that is a server-side request forgery: a tenant could make
 * esi POST to its own loopback services, to the cloud's metadata address (169.254.169.254), to
 * the operator's private network or to the server itself. So, unless an operator allows it
 * (`ESI_WEBHOOK_ALLOW_PRIVATE`, for sites whose receivers are internal), a tenant's webhook may
 * not target:
 *
 * - loopback, unspecified, private (RFC 1918, unique-local), shared (100.64/10), link-local,
 *   multicast, reserved and documentation ranges — every IANA special-purpose range that is not
 *   globally reachable, IPv4 and IPv6, including IPv4 embedded in IPv6 (mapped, NAT64, 6to4);
 * - the server's own addresses and host names (its interfaces, its public URL's host);
 * - `localhost` and `*.localhost` (RFC 6761).
 *
 * The check runs twice: on the URL when a webhook is created or its URL changed (IP literals and
 * the names above; webhook admins are trusted and may register internal receivers), and on every
 * address a host name resolves to when a delivery connects (the transport's lookup, see
 * `src/conductor/webhook-worker.ts`), so a name that resolves — or is re-pointed — to a
 * restricted address reaches nothing. An admin's receiver on a private address is therefore
 * named by its IP address, or the operator allows private targets.
 *
 * Address classes come from ipaddr.js (IANA special-purpose registries), as in
 * `src/domain/networking/ipam.ts`.
 */
import ipaddr from 'ipaddr.js';

/** Where webhooks may be delivered, from the configuration and the host. */
export interface WebhookTargets {
  /** Operator setting: every project's webhooks may target private and loopback addresses. */
  readonly allowPrivate: boolean;
  /** The server's own IP addresses and host names (lower case), refused like private ones. */
  readonly ownHosts: readonly string[];
}

/** Targets when nothing is allowed beyond public addresses and the server has no known names. */
export const PUBLIC_ONLY: WebhookTargets = Object.freeze({ allowPrivate: false, ownHosts: [] });

/** A parsed address (zone index dropped), IPv4-mapped IPv6 as IPv4, or null for a non-address. */
function parse(ip: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  const bare = ip.replace(/%.*$/, '');
  if (ipaddr.IPv4.isValidFourPartDecimal(bare)) return ipaddr.IPv4.parse(bare);
  if (ipaddr.IPv6.isValid(bare)) return ipaddr.process(bare);
  return null;
}

/** IPv4-compatible IPv6 (`::a.b.c.d`, deprecated; with `::` and `::1`): never a public target. */
const V4_COMPATIBLE = ipaddr.parseCIDR('::/96');

function restricted(addr: ipaddr.IPv4 | ipaddr.IPv6): boolean {
  if (addr.kind() === 'ipv4') return addr.range() !== 'unicast';
  const v6 = addr as ipaddr.IPv6;
  if (v6.match(V4_COMPATIBLE)) return true;
  const bytes = v6.toByteArray();
  // IPv4 embedded in IPv6 follows the IPv4 rules: NAT64 (64:ff9b::/96) and 6to4 (2002::/16).
  if (v6.range() === 'rfc6052') return restricted(ipaddr.fromByteArray(bytes.slice(12, 16)));
  if (v6.range() === '6to4') return restricted(ipaddr.fromByteArray(bytes.slice(2, 6)));
  return v6.range() !== 'unicast';
}

function same(a: ipaddr.IPv4 | ipaddr.IPv6, b: ipaddr.IPv4 | ipaddr.IPv6): boolean {
  return a.kind() === b.kind() && a.toNormalizedString() === b.toNormalizedString();
}

/**
 * True when an IP address is one a tenant's webhook may not reach: any range ipaddr.js does not
 * classify as global `unicast` (loopback, private, link-local, shared, reserved, documentation,
 * multicast, Teredo…), IPv4 embedded in IPv6 judged as IPv4, or one of `ownHosts`. A string
 * that is not an IP address is false.
 */
export function isRestrictedAddress(ip: string, ownHosts: readonly string[] = []): boolean {
  const addr = parse(ip);
  if (addr === null) return false;
  return (
    restricted(addr) ||
    ownHosts.some((h) => {
      const own = parse(h);
      return own !== null && same(own, addr);
    })
  );
}

/**
 * Why a URL's host may not receive a tenant's webhook, or null when it may (as far as the URL
 * shows: a host name is checked again on every address it resolves to at delivery).
 * @param hostname the URL's `hostname` (IPv6 literals in brackets, as `URL` gives them)
 */
export function restrictedHost(hostname: string, targets: WebhookTargets): string | null {
  if (targets.allowPrivate) return null;
  const host = hostname
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return 'a loopback host name';
  if (targets.ownHosts.includes(host)) return "this server's own address";
  if (isRestrictedAddress(host, targets.ownHosts)) return "a loopback, private, link-local or reserved address, or this server's own";
  return null;
}
