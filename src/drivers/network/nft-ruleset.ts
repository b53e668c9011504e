/**
 * A router's nftables ruleset (Debian `nftables`, the `nft` program), as text for `nft -f`: one
 * table `ip esi_router` in the router's namespace, the whole of what Neutron's L3 agent puts in
 * its iptables chains (`neutron-l3-agent-PREROUTING/float-snat/snat`), rendered from a
 * {@link RouterIntent}. Pure functions; ./l3-agent.ts writes the file and applies it.
 *
 * The file adds the table (a no-op when it exists), deletes it and defines it again, and `nft -f`
 * runs a file as one transaction: the kernel holds the old ruleset or the new one, never a mix,
 * and applying the same file again leaves the same ruleset.
 *
 * | chain         | hook (priority)          | rules                                                                 |
 * |---------------|--------------------------|-----------------------------------------------------------------------|
 * | `prerouting`  | nat prerouting (dstnat)  | port forwards: `ip daddr F tcp dport E dnat to I:P`; floating IPs: `ip daddr F dnat to I` |
 * | `postrouting` | nat postrouting (srcnat) | floating IPs `oifname qg ip saddr I snat to F`; hairpin (a tenant reaching a floating IP of its own router) masqueraded; SNAT `oifname qg ip saddr {tenant CIDRs} snat to G` |
 * | `forward`     | filter forward, policy drop | DNAT flows only while their address is still published (set `published`: G and the floating IPs), likewise SNAT flows; established; what came by DNAT; all from tenant legs; from the gateway to tenant legs only when SNAT is off (routable tenant addresses) |
 * | `input`       | filter input             | new TCP/UDP from the gateway leg dropped: the router itself serves nothing outside, so a port of a floating IP that is not forwarded gets no answer |
 *
 * With `admin_state_up` false the NAT chains are empty and `forward` drops everything.
 */
import { DataplaneError, type FloatingIpIntent, type PortForwardIntent, type RouterIntent } from '../../domain/networking/dataplane.ts';
import { ipText, parseIp } from '../../domain/networking/ipam.ts';
import { checkId } from './names.ts';

/** The table's family and name. */
export const NFT_TABLE = 'ip esi_router';

/** The device names the ruleset matches. */
export interface RulesetDevices {
  /** The gateway leg (`qg-…`), or null without a gateway. */
  readonly gateway: string | null;
  /** The interface legs (`qr-…`). */
  readonly interfaces: readonly string[];
}

function fail(msg: string): never {
  throw new DataplaneError(msg);
}

/** A canonical IPv4 address. @throws DataplaneError */
export function ipv4(text: string, what: string): string {
  const ip = parseIp(text);
  if (!ip || ip.version !== 4) fail(`${what}: '${String(text)}' is not an IPv4 address`);
  return ipText(4, ip.value);
}

/**
 * An interface address `ip/prefixlen`, checked, and the CIDR of its subnet.
 * @throws DataplaneError
 */
export function ifaceAddress(text: string, what: string): { ip: string; prefix: number; address: string; cidr: string } {
  const [addr, len, extra] = String(text).split('/');
  const prefix = Number(len);
  if (extra !== undefined || !/^\d{1,2}$/.test(len ?? '') || prefix > 32) fail(`${what}: '${String(text)}' is not ip/prefixlen`);
  const ip = ipv4(addr ?? '', what);
  const value = parseIp(ip)!.value;
  const host = BigInt(32 - prefix);
  return { ip, prefix, address: `${ip}/${prefix}`, cidr: `${ipText(4, (value >> host) << host)}/${prefix}` };
}

function port(n: number, what: string): number {
  if (!Number.isInteger(n) || n < 1 || n > 65_535) fail(`${what}: ${n} is not a port (1-65535)`);
  return n;
}

function range(r: readonly [number, number], what: string): [number, number] {
  const a = port(r[0], what);
  const b = port(r[1], what);
  if (b < a) fail(`${what}: ${a}-${b} is not a range`);
  return [a, b];
}

const span = ([a, b]: readonly [number, number]): string => (a === b ? `${a}` : `${a}-${b}`);

/** The DNAT rule of one port forward (checked). */
export function portForwardRule(pf: PortForwardIntent): string {
  const what = `port forward ${pf.id}`;
  if (pf.protocol !== 'tcp' && pf.protocol !== 'udp') fail(`${what}: protocol '${String(pf.protocol)}' is not tcp or udp`);
  const fip = ipv4(pf.floating_ip, `${what} floating_ip`);
  const inside = ipv4(pf.internal_ip, `${what} internal_ip`);
  const ext = range(pf.external_port, `${what} external_port`);
  const int = range(pf.internal_port, `${what} internal_port`);
  const match = `ip daddr ${fip} ${pf.protocol} dport ${span(ext)}`;
  if (int[0] === int[1]) return `${match} dnat to ${inside}:${int[0]}`;
  if (int[1] - int[0] !== ext[1] - ext[0])
    fail(`${what}: internal ports ${span(int)} and external ports ${span(ext)} differ in length (equal lengths, or one internal port)`);
  if (int[0] === ext[0]) return `${match} dnat to ${inside}`;
  // A shifted range: one map entry per port (nft maps each external port to its internal one).
  const entries = Array.from({ length: ext[1] - ext[0] + 1 }, (_, i) => `${ext[0] + i} : ${int[0] + i}`);
  return `${match} dnat to ${inside} : ${pf.protocol} dport map { ${entries.join(', ')} }`;
}

/** Sorting key so that the same intent always renders the same text, whatever order it lists things in. */
const byKey =
  <T>(key: (t: T) => string) =>
  (a: T, b: T): number =>
    key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0;

function checkOverlaps(forwards: readonly PortForwardIntent[]): void {
  for (const [i, a] of forwards.entries())
    for (const b of forwards.slice(i + 1))
      if (
        ipv4(a.floating_ip, 'floating_ip') === ipv4(b.floating_ip, 'floating_ip') &&
        a.protocol === b.protocol &&
        a.external_port[0] <= b.external_port[1] &&
        b.external_port[0] <= a.external_port[1]
      )
        fail(`port forwards ${a.id} and ${b.id} overlap on ${a.floating_ip} ${a.protocol} ${span(a.external_port)}`);
}

const names = (devs: readonly string[]): string => (devs.length === 1 ? `"${devs[0]}"` : `{ ${devs.map((d) => `"${d}"`).join(', ')} }`);

/**
 * The addresses the router publishes on its gateway leg: the gateway address and every floating
 * IP it serves (associated ones and those with port forwards), sorted, each once.
 */
export function publishedAddresses(intent: RouterIntent): string[] {
  if (!intent.gateway) return [];
  const fips = [...intent.floating_ips.map((f) => f.floating_ip), ...intent.port_forwards.map((p) => p.floating_ip)];
  const all = [ifaceAddress(intent.gateway.address, 'gateway address').ip, ...fips.map((f) => ipv4(f, 'floating_ip'))];
  return [...new Set(all)].sort(
    byKey((s: string) =>
      s
        .split('.')
        .map((o) => o.padStart(3, '0'))
        .join('.'),
    ),
  );
}

/**
 * The file for `nft -f`: the router's table, replaced atomically.
 * @throws DataplaneError for an intent that cannot be rendered (bad address or port, overlapping
 *   port forwards, floating IPs or port forwards without a gateway)
 */
export function renderRuleset(intent: RouterIntent, devs: RulesetDevices): string {
  checkId(intent.router_id, 'router id');
  const gw = intent.gateway;
  const qg = devs.gateway;
  if (!gw && (intent.floating_ips.length > 0 || intent.port_forwards.length > 0))
    fail(`router ${intent.router_id}: floating IPs and port forwards need an external gateway`);
  if (gw && !qg) fail(`router ${intent.router_id}: no gateway device named`);
  checkOverlaps(intent.port_forwards);
  const up = intent.admin_state_up;
  const published = publishedAddresses(intent);
  const fips = [...intent.floating_ips].sort(byKey((f: FloatingIpIntent) => f.id));
  const forwards = [...intent.port_forwards].sort(byKey((p: PortForwardIntent) => `${p.floating_ip} ${p.protocol} ${p.id}`));
  const tenantCidrs = [...new Set(intent.interfaces.map((i) => ifaceAddress(i.address, `interface ${i.port_id} address`).cidr))].sort();
  const qr = [...devs.interfaces].sort();

  const pre: string[] = [];
  const post: string[] = [];
  const fwd: string[] = [];
  if (up) {
    for (const pf of forwards) pre.push(portForwardRule(pf));
    for (const f of fips) {
      const fip = ipv4(f.floating_ip, `floating IP ${f.id}`);
      const fixed = ipv4(f.fixed_ip, `floating IP ${f.id} fixed_ip`);
      pre.push(`ip daddr ${fip} dnat to ${fixed}`);
      post.push(`oifname "${qg}" ip saddr ${fixed} snat to ${fip}`);
    }
    if (qr.length > 0) post.push(`iifname ${names(qr)} oifname ${names(qr)} ct status dnat masquerade`);
    if (gw?.snat && tenantCidrs.length > 0) {
      const gwIp = ifaceAddress(gw.address, 'gateway address').ip;
      const from = tenantCidrs.length === 1 ? tenantCidrs[0] : `{ ${tenantCidrs.join(', ')} }`;
      post.push(`oifname "${qg}" ip saddr ${from} snat to ${gwIp}`);
    }
    fwd.push('ct state invalid drop', 'ct status dnat ct original ip daddr != @published drop');
    if (qg)
      fwd.push(
        `oifname "${qg}" ct status snat ct reply ip daddr != @published drop`,
        `iifname "${qg}" ct status snat ct reply ip daddr != @published drop`,
      );
    fwd.push('ct state established,related accept', 'ct status dnat accept');
    if (qr.length > 0) fwd.push(`iifname ${names(qr)} accept`);
    if (qg && qr.length > 0 && gw && !gw.snat) fwd.push(`iifname "${qg}" oifname ${names(qr)} accept`);
  }
  const input = qg ? [`iifname "${qg}" ct state new meta l4proto { tcp, udp } drop`] : [];

  const chain = (name: string, head: string, rules: readonly string[]): string[] => [
    `\tchain ${name} {`,
    `\t\t${head}`,
    ...rules.map((r) => `\t\t${r}`),
    '\t}',
  ];
  return [
    `# Router ${intent.router_id}: written by esi (src/drivers/network), applied with nft -f as one transaction.`,
    `table ${NFT_TABLE} {}`,
    `delete table ${NFT_TABLE}`,
    `table ${NFT_TABLE} {`,
    `\tcomment "esi router ${intent.router_id}"`,
    '\tset published {',
    '\t\ttype ipv4_addr',
    ...(published.length > 0 ? [`\t\telements = { ${published.join(', ')} }`] : []),
    '\t}',
    ...chain('prerouting', 'type nat hook prerouting priority dstnat; policy accept;', pre),
    ...chain('postrouting', 'type nat hook postrouting priority srcnat; policy accept;', post),
    ...chain('forward', 'type filter hook forward priority filter; policy drop;', fwd),
    ...chain('input', 'type filter hook input priority filter; policy accept;', input),
    '}',
    '',
  ].join('\n');
}
