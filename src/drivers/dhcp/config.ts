/**
 * dnsmasq's configuration for one subnet — or several subnets of one network on one interface
 * (`moreSubnets`, one range and one set of options each) — as text: checking a
 * {@link DhcpSubnetConfig} and its hosts, and rendering the three files dnsmasq reads and the
 * command that starts it. Pure functions (no I/O); src/drivers/dhcp/dnsmasq.ts writes and runs
 * what they return.
 *
 * The layout follows Neutron's DHCP agent (`neutron/agent/linux/dhcp.py`, class `Dnsmasq`):
 * - a static range per subnet (`dhcp-range=set:subnet-<id>,<net>,static,<mask>,<lease>s`):
 *   only hosts listed in the hosts file get an address;
 * - a hosts file (`dhcp-hostsfile`, one `mac,set:<tag>…,ip[,hostname]` line per host) and an
 *   options file (`dhcp-optsfile`, `tag:subnet-<id>,option:router,…` lines), both re-read on
 *   SIGHUP; router (3), DNS (6), classless routes (121, and 249 for old Windows clients) as
 *   Neutron writes them, MTU (26) forced as Neutron's `--dhcp-option-force=option:mtu`;
 * - `--no-hosts --no-resolv --bind-interfaces --interface=… --except-interface=lo
 *   --leasefile-ro --pid-file`; no DNS service (`port=0`: esi serves no names).
 *
 * Beyond Neutron: `dhcp-ignore=tag:!known`, so an unknown MAC gets no answer at all; and
 * network boot as Ironic's `pxe`/`ipxe` boot interfaces ask Neutron for it
 * (`ironic/common/pxe_utils.py` `dhcp_options_for_instance`: `tag:ipxe` → the iPXE script URL,
 * `tag:!ipxe` → the firmware's boot file; Neutron's `--dhcp-match=set:ipxe,175`), with the
 * firmware file chosen by client architecture (option 93, RFC 4578: 0 BIOS, 7 and 9 x86-64
 * UEFI) instead of per node, and only for hosts tagged `boot` (dnsmasq tag `host-boot`).
 * Caller tags become dnsmasq tags `host-<tag>`, so they can never collide with the internal
 * ones (`known`, `ipxe`, `bios`, `efi64`, `subnet-<id>`).
 */
import path from 'node:path';
import { DhcpError, type DhcpExtraSubnet, type DhcpHost, type DhcpHostRoute, type DhcpSubnetConfig } from '../../domain/networking/dhcp.ts';
import { cidrContains, cidrsOverlap, ipText, parseCidr, parseIp, type Cidr } from '../../domain/networking/ipam.ts';

/** Default lease time, seconds (Neutron's `dhcp_lease_duration`). */
export const DEFAULT_LEASE_TIME_S = 86_400;
/** dnsmasq raises shorter leases to two minutes; esi refuses them instead. */
export const MIN_LEASE_TIME_S = 120;
/** Neutron's cap on `--dhcp-lease-max` (`dnsmasq_lease_max`). */
const LEASE_MAX_CAP = 16_777_216;

/**
 * A subnet configuration checked and normalised (canonical addresses, defaults applied). A
 * server of several subnets (`moreSubnets`) is the first one with the others in {@link more}.
 */
export interface CheckedSubnet {
  readonly id: string;
  readonly interface: string;
  readonly netns: string | null;
  readonly cidr: Cidr;
  readonly gateway: string | null;
  readonly dnsServers: readonly string[];
  /** Routes other than the default one; Neutron's rule: a `0.0.0.0/0` route is the gateway when none is set, else dropped. */
  readonly hostRoutes: readonly DhcpHostRoute[];
  readonly mtu: number | null;
  readonly leaseTimeS: number;
  readonly domain: string | null;
  readonly boot: {
    readonly tftpRoot: string;
    readonly biosFile: string;
    readonly uefiFile: string;
    readonly ipxeScriptUrl: string;
  } | null;
  /** The further subnets served on the same interface (the same interface, namespace, domain and boot; no `more` of their own). */
  readonly more: readonly CheckedSubnet[];
}

/** A host checked against its subnet: lower-case MAC, canonical address. */
export interface CheckedHost {
  readonly mac: string;
  readonly ip: string;
  readonly hostname: string | null;
  readonly tags: readonly string[];
}

/** Where the files of one subnet's dnsmasq live: `<dataDir>/dhcp/<id>/`. */
export interface DnsmasqPaths {
  readonly dir: string;
  readonly conf: string;
  readonly hosts: string;
  readonly opts: string;
  readonly pid: string;
  /** dnsmasq's log (its stderr, written by esi). */
  readonly log: string;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const IFNAME = /^[A-Za-z0-9_.@:+-]{1,15}$/;
const MAC = /^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/;
const LABEL = /^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$/;
const TAG = /^[A-Za-z0-9_-]{1,32}$/;
/** A file path dnsmasq can take on a line of its own: absolute, no comma (a field separator), no control character. */
const SAFE_PATH = /^\/[^,\u0000-\u001f\u007f]*$/;
/** A boot file name relative to the TFTP root. */
const BOOT_FILE = /^(?!\/)(?!.*(^|\/)\.\.(\/|$))[A-Za-z0-9_.+/-]{1,127}$/;

/**
 * The files of subnet `id` under `dataDir`.
 * @throws DhcpError when the directory cannot be named in dnsmasq's configuration (a comma or
 *   a control character in it)
 */
export function dnsmasqPaths(dataDir: string, id: string): DnsmasqPaths {
  const dir = path.join(path.resolve(dataDir), 'dhcp', id);
  if (!SAFE_PATH.test(dir)) fail(`dataDir: '${dataDir}' cannot be named in dnsmasq's configuration (a comma or control character)`);
  const f = (name: string): string => path.join(dir, name);
  return { dir, conf: f('conf'), hosts: f('hosts'), opts: f('opts'), pid: f('pid'), log: f('log') };
}

function fail(message: string): never {
  throw new DhcpError(message);
}

function ipv4(text: unknown, field: string): { text: string; value: bigint } {
  const ip = parseIp(text);
  if (!ip || ip.version !== 4) fail(`${field}: '${String(text)}' is not an IPv4 address`);
  return { text: ipText(4, ip.value), value: ip.value };
}

function inSubnet(c: Cidr, text: unknown, field: string): string {
  const ip = ipv4(text, field);
  if (ip.value < c.network || ip.value > c.last) fail(`${field}: ${ip.text} is not in ${c.text}`);
  if (c.prefix < 31 && (ip.value === c.network || ip.value === c.last))
    fail(`${field}: ${ip.text} is the network or broadcast address of ${c.text}`);
  return ip.text;
}

function checkDomain(d: string): string {
  const name = d.endsWith('.') ? d.slice(0, -1) : d;
  if (name.length > 253 || !name.split('.').every((l) => LABEL.test(l))) fail(`domain: '${d}' is not a DNS domain name`);
  return name;
}

type RangePart = Pick<CheckedSubnet, 'id' | 'cidr' | 'gateway' | 'dnsServers' | 'hostRoutes' | 'mtu' | 'leaseTimeS'>;

/** Check the per-subnet part of a configuration; `at` prefixes field names (`moreSubnets[1].`). */
function checkRange(cfg: DhcpExtraSubnet, at: string): RangePart {
  if (typeof cfg.id !== 'string' || !NAME.test(cfg.id)) fail(`${at}id: '${String(cfg.id)}' must be 1-64 of A-Z a-z 0-9 _ . - (a UUID)`);
  let cidr: Cidr;
  try {
    cidr = parseCidr(cfg.cidr);
  } catch (err) {
    fail(`${at}cidr: ${(err as Error).message}`);
  }
  if (cidr.version !== 4) fail(`${at}cidr: ${cidr.text} is not IPv4 (esi's DHCP service serves IPv4 subnets)`);
  let gateway = cfg.gateway === undefined || cfg.gateway === null ? null : inSubnet(cidr, cfg.gateway, `${at}gateway`);
  const dnsServers = (cfg.dnsServers ?? []).map((d, i) => ipv4(d, `${at}dnsServers[${i}]`).text);
  const hostRoutes: DhcpHostRoute[] = [];
  for (const [i, r] of (cfg.hostRoutes ?? []).entries()) {
    let dest: Cidr;
    try {
      dest = parseCidr(r.destination, `${at}hostRoutes[${i}].destination`);
    } catch (err) {
      fail((err as Error).message);
    }
    if (dest.version !== 4) fail(`${at}hostRoutes[${i}].destination: ${dest.text} is not IPv4`);
    const nexthop = ipv4(r.nexthop, `${at}hostRoutes[${i}].nexthop`).text;
    if (dest.prefix === 0) gateway ??= nexthop;
    else hostRoutes.push({ destination: dest.text, nexthop });
  }
  const mtu = cfg.mtu ?? null;
  if (mtu !== null && (!Number.isInteger(mtu) || mtu < 68 || mtu > 65_535)) fail(`${at}mtu: ${mtu} is not between 68 and 65535 bytes`);
  const leaseTimeS = cfg.leaseTimeS ?? DEFAULT_LEASE_TIME_S;
  if (!Number.isInteger(leaseTimeS) || leaseTimeS < MIN_LEASE_TIME_S || leaseTimeS > 0xffff_fffe)
    fail(`${at}leaseTimeS: ${leaseTimeS} must be a whole number of seconds, at least ${MIN_LEASE_TIME_S}`);
  return { id: cfg.id, cidr, gateway, dnsServers, hostRoutes, mtu, leaseTimeS };
}

/**
 * Check a subnet configuration (and its `moreSubnets`) and apply its defaults.
 * @throws DhcpError naming the first field that is wrong (IPv6 subnets are refused: esi's DHCP
 *   service is IPv4, as PXE and iPXE boot are here; so are further subnets that overlap another
 *   or repeat an id)
 */
export function checkSubnet(cfg: DhcpSubnetConfig): CheckedSubnet {
  if (typeof cfg.interface !== 'string' || !IFNAME.test(cfg.interface) || cfg.interface === 'lo')
    fail(`interface: '${String(cfg.interface)}' is not an interface name`);
  const netns = cfg.netns ?? null;
  if (netns !== null && (typeof netns !== 'string' || !NAME.test(netns))) fail(`netns: '${String(netns)}' is not a namespace name`);
  const first = checkRange(cfg, '');
  const domain = cfg.domain === undefined || cfg.domain === null ? null : checkDomain(cfg.domain);
  let boot: CheckedSubnet['boot'] = null;
  if (cfg.boot) {
    const b = cfg.boot;
    if (typeof b.tftpRoot !== 'string' || !SAFE_PATH.test(b.tftpRoot))
      fail(`boot.tftpRoot: '${String(b.tftpRoot)}' must be an absolute path without commas`);
    for (const k of ['biosFile', 'uefiFile'] as const)
      if (typeof b[k] !== 'string' || !BOOT_FILE.test(b[k]))
        fail(`boot.${k}: '${String(b[k])}' must be a file name relative to the TFTP root`);
    const url = URL.canParse(b.ipxeScriptUrl) ? new URL(b.ipxeScriptUrl) : null;
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || /[\s,\u0000-\u001f]/.test(b.ipxeScriptUrl))
      fail(`boot.ipxeScriptUrl: '${String(b.ipxeScriptUrl)}' must be an http(s) URL without commas or spaces`);
    if (b.ipxeScriptUrl.length > 255) fail('boot.ipxeScriptUrl: longer than a DHCP option holds (255 bytes)');
    boot = { tftpRoot: path.normalize(b.tftpRoot), biosFile: b.biosFile, uefiFile: b.uefiFile, ipxeScriptUrl: b.ipxeScriptUrl };
  }
  const shared = { interface: cfg.interface, netns, domain, boot };
  const more: CheckedSubnet[] = [];
  for (const [i, extra] of (cfg.moreSubnets ?? []).entries()) {
    const part = checkRange(extra, `moreSubnets[${i}].`);
    for (const other of [first, ...more]) {
      if (other.id === part.id) fail(`moreSubnets[${i}].id: subnet ${part.id} is listed twice`);
      if (cidrsOverlap(other.cidr, part.cidr)) fail(`moreSubnets[${i}].cidr: ${part.cidr.text} overlaps ${other.cidr.text}`);
    }
    more.push({ ...shared, ...part, more: [] });
  }
  return { ...shared, ...first, more };
}

/** Every subnet a server serves: the first, then its further ones. */
export function allSubnets(s: CheckedSubnet): readonly CheckedSubnet[] {
  return [s, ...s.more];
}

/**
 * Check hosts against their subnets: valid MACs, each address in one of the server's CIDRs, no
 * address twice, no MAC twice in one subnet (a MAC may hold one address in each of several
 * subnets, as a Neutron port with fixed IPs on two subnets of its network; dnsmasq then answers
 * with the first of its lines whose subnet the request comes from).
 * @throws DhcpError naming the offending host
 */
export function checkHosts(subnet: CheckedSubnet, hosts: readonly DhcpHost[]): CheckedHost[] {
  const subnets = allSubnets(subnet);
  const macs = new Set<string>();
  const ips = new Set<string>();
  return hosts.map((h, i) => {
    const mac = typeof h.mac === 'string' ? h.mac.toLowerCase() : '';
    if (!MAC.test(mac)) fail(`hosts[${i}].mac: '${String(h.mac)}' is not a MAC address`);
    const addr = ipv4(h.ip, `hosts[${i}].ip`);
    const home = subnets.find((s) => cidrContains(s.cidr, addr.value));
    if (!home) fail(`hosts[${i}].ip: ${addr.text} is not in ${subnets.map((s) => s.cidr.text).join(' or ')}`);
    const ip = inSubnet(home.cidr, h.ip, `hosts[${i}].ip`);
    if (macs.has(`${home.id} ${mac}`)) fail(`hosts[${i}]: MAC ${mac} is listed twice`);
    if (ips.has(ip)) fail(`hosts[${i}]: address ${ip} is given to two hosts`);
    macs.add(`${home.id} ${mac}`);
    ips.add(ip);
    const hostname = h.hostname ?? null;
    if (hostname !== null && (typeof hostname !== 'string' || !LABEL.test(hostname)))
      fail(`hosts[${i}].hostname: '${String(hostname)}' is not a host name (one DNS label)`);
    const tags = [...new Set(h.tags ?? [])];
    for (const t of tags)
      if (typeof t !== 'string' || !TAG.test(t)) fail(`hosts[${i}].tags: '${String(t)}' must be 1-32 of A-Z a-z 0-9 _ -`);
    return { mac, ip, hostname, tags };
  });
}

/** The dnsmasq tag of the subnet's range. */
export function subnetTag(s: CheckedSubnet): string {
  return `subnet-${s.id}`;
}

/** The dnsmasq tag a host's caller tag becomes. */
export function hostTag(tag: string): string {
  return `host-${tag}`;
}

function netmask(prefix: number): string {
  return ipText(4, prefix === 0 ? 0n : ((1n << 32n) - 1n) ^ ((1n << BigInt(32 - prefix)) - 1n));
}

/** The hosts file (`dhcp-hostsfile`): `mac[,set:host-<tag>…],ip[,hostname]`, one line per host. */
export function renderHostsFile(hosts: readonly CheckedHost[]): string {
  return hosts
    .map((h) => [h.mac, ...h.tags.map((t) => `set:${hostTag(t)}`), h.ip, ...(h.hostname ? [h.hostname] : [])].join(',') + '\n')
    .join('');
}

/**
 * The options file (`dhcp-optsfile`): the subnet's router, DNS servers and routes, and (with
 * `boot`) the boot file of each kind of client tagged `host-boot`. Without a gateway the router
 * option is sent empty, as Neutron does, so that dnsmasq does not offer itself as the router.
 */
export function renderOptsFile(s: CheckedSubnet): string {
  const lines: string[] = [];
  for (const one of allSubnets(s)) {
    const t = `tag:${subnetTag(one)}`;
    lines.push(one.gateway ? `${t},option:router,${one.gateway}` : `${t},option:router`);
    if (one.dnsServers.length > 0) lines.push(`${t},option:dns-server,${one.dnsServers.join(',')}`);
    if (one.hostRoutes.length > 0) {
      const gw = one.gateway ? [`0.0.0.0/0,${one.gateway}`] : [];
      const routes = [...one.hostRoutes.map((r) => `${r.destination},${r.nexthop}`), ...gw].join(',');
      lines.push(`${t},option:classless-static-route,${routes}`, `${t},249,${routes}`);
    }
  }
  if (s.boot) {
    const b = `tag:${hostTag('boot')}`;
    lines.push(
      `${b},tag:ipxe,option:bootfile-name,${s.boot.ipxeScriptUrl}`,
      `${b},tag:!ipxe,tag:efi64,option:bootfile-name,${s.boot.uefiFile}`,
      `${b},tag:!ipxe,tag:bios,option:bootfile-name,${s.boot.biosFile}`,
    );
  }
  return lines.join('\n') + '\n';
}

/** Options of {@link renderConfFile}. */
export interface ConfOptions {
  /** The user dnsmasq runs as once its sockets are open (dnsmasq's default: `nobody`). */
  readonly user: string;
}

/**
 * The configuration file (`--conf-file`): everything that does not change while the server
 * runs. Its log goes to stderr (`log-facility=-`), which esi copies into the log file.
 */
export function renderConfFile(s: CheckedSubnet, paths: DnsmasqPaths, o: ConfOptions): string {
  const subnets = allSubnets(s);
  const size = subnets.reduce((sum, one) => sum + one.cidr.last - one.cidr.network + 1n, 0n);
  const lines = [
    `# dnsmasq for subnet ${subnets.map((one) => one.id).join(', ')}, written by esi (src/drivers/dhcp); rewritten at every start.`,
    `user=${o.user}`,
    'no-hosts',
    'no-resolv',
    'port=0',
    'bind-interfaces',
    `interface=${s.interface}`,
    'except-interface=lo',
    `pid-file=${paths.pid}`,
    `dhcp-hostsfile=${paths.hosts}`,
    `dhcp-optsfile=${paths.opts}`,
    'leasefile-ro',
    ...subnets.map(
      (one) => `dhcp-range=set:${subnetTag(one)},${ipText(4, one.cidr.network)},static,${netmask(one.cidr.prefix)},${one.leaseTimeS}s`,
    ),
    `dhcp-lease-max=${size < BigInt(LEASE_MAX_CAP) ? size : LEASE_MAX_CAP}`,
    'dhcp-ignore=tag:!known',
    'log-facility=-',
    'log-dhcp',
  ];
  if (s.domain) lines.push(`domain=${s.domain}`);
  for (const one of subnets) if (one.mtu !== null) lines.push(`dhcp-option-force=tag:${subnetTag(one)},option:mtu,${one.mtu}`);
  if (s.boot) {
    lines.push(
      'dhcp-match=set:ipxe,175',
      'dhcp-userclass=set:ipxe,iPXE',
      'dhcp-match=set:bios,option:client-arch,0',
      'dhcp-match=set:efi64,option:client-arch,7',
      'dhcp-match=set:efi64,option:client-arch,9',
      'enable-tftp',
      `tftp-root=${s.boot.tftpRoot}`,
    );
  }
  return lines.join('\n') + '\n';
}

/**
 * The command that runs dnsmasq in the foreground (so that esi is its parent and sees it exit),
 * in the subnet's namespace when it has one (`ip netns exec` execs dnsmasq: the pid is
 * dnsmasq's).
 * @returns program and arguments for `child_process.spawn`
 */
export function dnsmasqCommand(s: CheckedSubnet, paths: DnsmasqPaths, binary: string): { command: string; args: string[] } {
  const own = [`--conf-file=${paths.conf}`, '--keep-in-foreground'];
  return s.netns ? { command: 'ip', args: ['netns', 'exec', s.netns, binary, ...own] } : { command: binary, args: own };
}
