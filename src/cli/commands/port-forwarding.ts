/**
 * `esi port forwarding create|delete|purge`: python-esiclient's port forwarding commands
 * (`esiclient/v1/port_forwarding.py` in https://github.com/CCI-MOC/python-esiclient), made of
 * standard Neutron calls to esi's `/network/v2.0` (floating IPs with their embedded
 * `port_forwardings`, `/floatingips/{id}/port_forwardings`, ports, networks, subnets).
 *
 * A port spec is `[<external port>:]<internal port>[/<protocol>]` (`22`, `8080:80`, `53/udp`):
 * the external port defaults to the internal one, the protocol to `tcp`; ports are 0–65535 and
 * the protocol `tcp` or `udp`, as esiclient checks them (esi also refuses trailing text, which
 * esiclient's prefix match ignores).
 *
 * create `<internal ip | port name | port uuid> <floating ip address | external network>`:
 * 1. the internal side: a port by name or ID (the address is its first IPv4 fixed IP), or an
 *    address — the one port holding it (`GET /ports?fixed_ips=ip_address=X`, on
 *    `--internal-ip-network` when given; several are an error), else a new port
 *    `esi-autocreated-<ip>` on `--internal-ip-network`/`--internal-ip-subnet` (the subnet
 *    containing the address when only the network is given);
 * 2. the external side: the floating IP with that address, or, for an external network, the
 *    caller's floating IP on that network that already forwards to the internal address (so a
 *    re-run reuses it — esiclient allocates a new one on every run), else a new one;
 * 3. per spec, a forward with the same internal address, internal port, external port and
 *    protocol is reported as it is, else one is created (`POST …/port_forwardings`).
 * Nothing is created until every lookup has succeeded.
 *
 * delete `-p SPEC… <internal ip> <floating ip>` deletes, per spec, the forward of that external
 * port, protocol and internal address (esiclient ignores the protocol; esi matches it, so
 * `-p 53` never removes the UDP forward of port 53); a spec matching nothing is a warning on
 * stderr. purge `<floating ip>…` deletes every forward of those floating IPs, after finding all
 * of them. Each command prints the forwards it created, found or deleted: ID, Internal Port,
 * External Port, Protocol, Internal IP, External IP (esiclient's columns).
 */
import net from 'node:net';
import type { Command } from 'commander';
import { collect } from '../filters.ts';
import { addOutputOptions, printList, type OutputOptions } from '../output.ts';
import { CliError, withSession, type Session } from '../session.ts';
import { findNetwork, pickByName } from './node-provision.ts';

/** One `-p` spec: ports 0–65535. */
export interface PortSpec {
  readonly internalPort: number;
  readonly externalPort: number;
  readonly protocol: 'tcp' | 'udp';
}

/** A Neutron object as the API returns it. */
type Neutron = Record<string, any>;

const SPEC_RE = /^(?:(\d+):)?(\d+)(?:\/(\w+))?$/;
const UUID_RE = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const LABELS = ['ID', 'Internal Port', 'External Port', 'Protocol', 'Internal IP', 'External IP'];

/**
 * Parse `[<external port>:]<internal port>[/<protocol>]`.
 * @throws CliError for another shape, a port outside 0–65535, a protocol other than tcp/udp
 */
export function parsePortSpec(text: string): PortSpec {
  const m = SPEC_RE.exec(text.trim());
  if (!m)
    throw new CliError(
      `invalid port forward specification "${text}": use [<external_port>:]<internal_port>[/<protocol>], e.g. 22, 8080:80, 53/udp.`,
    );
  const internalPort = Number(m[2]);
  const externalPort = m[1] === undefined ? internalPort : Number(m[1]);
  for (const port of [internalPort, externalPort])
    if (port > 65535) throw new CliError(`port ${port} out of range in "${text}" (ports are 0-65535).`);
  const protocol = (m[3] ?? 'tcp').toLowerCase();
  if (protocol !== 'tcp' && protocol !== 'udp') throw new CliError(`protocol ${m[3]} in "${text}" is not tcp or udp.`);
  return { internalPort, externalPort, protocol };
}

/** A spec as esiclient prints it: `<external>:<internal>/<protocol>`. */
export function specText(p: PortSpec): string {
  return `${p.externalPort}:${p.internalPort}/${p.protocol}`;
}

/** Every `-p` spec, parsed before any request. @throws CliError for none, or a bad one */
function parseSpecs(texts: readonly string[]): PortSpec[] {
  if (texts.length === 0) throw new CliError('You must specify at least one port with --port (e.g. -p 22 -p 8080:80/tcp).');
  return texts.map(parsePortSpec);
}

/** `text` when it is an IPv4 or IPv6 address. @throws CliError naming `what` otherwise */
function requireIp(text: string, what: string): string {
  if (net.isIP(text) === 0) throw new CliError(`${text} is not an IP address (the ${what}).`);
  return text;
}

/** A printed row: one forward of one floating IP. */
function row(fip: Neutron, pf: Neutron): unknown[] {
  return [
    pf.id,
    pf.internal_port ?? pf.internal_port_range ?? '',
    pf.external_port ?? pf.external_port_range ?? '',
    pf.protocol,
    pf.internal_ip_address,
    fip.floating_ip_address,
  ];
}

/** The caller's project (null for a system-scoped token). */
async function projectOf(s: Session): Promise<string | null> {
  return ((await s.authenticate()).body.project?.id as string | undefined) ?? null;
}

/**
 * The floating IP with this address (`GET /floatingips?floating_ip_address=`).
 * @throws CliError when the caller sees none (another project's is not found either)
 */
async function findFloatingIp(s: Session, address: string): Promise<Neutron> {
  const found = ((await s.call('network', 'GET', '/v2.0/floatingips', { query: { floating_ip_address: address } }))?.floatingips ??
    []) as Neutron[];
  if (found.length === 0) throw new CliError(`floating ip ${address} was not found (or you may not use it).`, 404);
  return pickByName(s, found, 'project_id', 'floating ip', address);
}

/**
 * The forwards of a floating IP: those embedded in it (Neutron's
 * `expose-port-forwarding-in-fip`, which esi has), else `GET …/port_forwardings`. Embedded
 * forwards carry no ranges: a forward without `external_port` (a range) is read from the list.
 */
async function forwardsOf(s: Session, fip: Neutron): Promise<Neutron[]> {
  const embedded = fip.port_forwardings as Neutron[] | undefined;
  if (Array.isArray(embedded) && embedded.every((f) => f.external_port !== undefined && f.external_port !== null)) return [...embedded];
  const res = await s.call('network', 'GET', `/v2.0/floatingips/${encodeURIComponent(fip.id)}/port_forwardings`);
  return (res?.port_forwardings ?? []) as Neutron[];
}

/** A Neutron object (`ports`, `subnets`) by ID or name. @throws CliError when none or several */
async function findByIdent(s: Session, collection: 'ports' | 'subnets', what: string, ident: string): Promise<Neutron> {
  const single = collection.slice(0, -1);
  if (UUID_RE.test(ident)) {
    try {
      return (await s.call('network', 'GET', `/v2.0/${collection}/${encodeURIComponent(ident)}`))[single];
    } catch (err) {
      if (!(err instanceof CliError && err.status === 404)) throw err;
    }
  }
  const found = ((await s.call('network', 'GET', `/v2.0/${collection}`, { query: { name: ident } }))?.[collection] ?? []) as Neutron[];
  return pickByName(s, found, 'project_id', what, ident);
}

/** The address a forward to a named port uses: its first IPv4 fixed IP (else its first). */
function portAddress(port: Neutron): string {
  const ips = ((port.fixed_ips ?? []) as Array<{ ip_address: string }>).map((f) => f.ip_address);
  const address = ips.find((ip) => net.isIPv4(ip)) ?? ips[0];
  if (address === undefined) throw new CliError(`port ${port.name || port.id} has no fixed IP to forward to.`);
  return address;
}

/** Whether `ip` lies in `cidr` (same IP version). */
function inCidr(ip: string, cidr: string): boolean {
  const [base, bits] = cidr.split('/');
  const family = net.isIP(ip);
  if (!base || bits === undefined || family === 0 || family !== net.isIP(base)) return false;
  const list = new net.BlockList();
  const type = family === 4 ? 'ipv4' : 'ipv6';
  list.addSubnet(base, Number(bits), type);
  return list.check(ip, type);
}

/** The internal side of a new forward: its port (null: to be created) and address. */
interface InternalSide {
  port: Neutron | null;
  readonly address: string;
  readonly network: Neutron | null;
  readonly subnet: Neutron | null;
}

/**
 * Resolve the internal descriptor (address, port name or ID) without creating anything.
 * @throws CliError for an unknown port, several ports holding the address, a subnet not on the network
 */
async function resolveInternal(s: Session, ident: string, o: CreateOptions): Promise<InternalSide> {
  if (net.isIP(ident) === 0) {
    const port = await findByIdent(s, 'ports', 'port', ident);
    return { port, address: portAddress(port), network: null, subnet: null };
  }
  const network = o.internalIpNetwork ? await findNetwork(s, o.internalIpNetwork) : null;
  const subnet = o.internalIpSubnet ? await findByIdent(s, 'subnets', 'subnet', o.internalIpSubnet) : null;
  if (network && subnet && subnet.network_id !== network.id)
    throw new CliError(`subnet ${o.internalIpSubnet} is not on network ${o.internalIpNetwork}.`);
  const networkId = (network?.id ?? subnet?.network_id ?? undefined) as string | undefined;
  const ports = ((await s.call('network', 'GET', '/v2.0/ports', { query: { fixed_ips: `ip_address=${ident}`, network_id: networkId } }))
    ?.ports ?? []) as Neutron[];
  if (ports.length > 1)
    throw new CliError(`found multiple ports matching address ${ident} (${ports.length}); name the network with --internal-ip-network.`);
  return { port: ports[0] ?? null, address: ident, network, subnet };
}

/**
 * Create the port `esi-autocreated-<ip>` holding the address, on the given subnet or on the
 * network's subnet that contains it.
 * @throws CliError when neither network nor subnet is known, or no subnet contains the address
 */
async function createPort(s: Session, side: InternalSide): Promise<Neutron> {
  const networkId = (side.network?.id ?? side.subnet?.network_id) as string | undefined;
  if (networkId === undefined)
    throw new CliError(`no port has the address ${side.address}; to create one, give --internal-ip-network (or --internal-ip-subnet).`);
  let subnet = side.subnet;
  if (!subnet) {
    const subnets = ((await s.call('network', 'GET', '/v2.0/subnets', { query: { network_id: networkId } }))?.subnets ?? []) as Neutron[];
    subnet = subnets.find((sn) => typeof sn.cidr === 'string' && inCidr(side.address, sn.cidr)) ?? null;
    if (!subnet) throw new CliError(`unable to find a subnet for address ${side.address} on network ${side.network?.name || networkId}.`);
  }
  const body = {
    port: {
      name: `esi-autocreated-${side.address}`,
      network_id: networkId,
      fixed_ips: [{ subnet_id: subnet.id, ip_address: side.address }],
    },
  };
  return (await s.call('network', 'POST', '/v2.0/ports', { body })).port;
}

/** Whether a forward is the one a spec asks for to this address. */
function sameForward(pf: Neutron, address: string, spec: PortSpec): boolean {
  return (
    pf.internal_ip_address === address &&
    pf.internal_port === spec.internalPort &&
    pf.external_port === spec.externalPort &&
    pf.protocol === spec.protocol
  );
}

/**
 * The caller's floating IP on `networkId` that already forwards to `address` (the one with
 * the most of the specs in place), or null.
 */
async function reusableFloatingIp(
  s: Session,
  networkId: string,
  address: string,
  specs: readonly PortSpec[],
): Promise<{ fip: Neutron; forwards: Neutron[] } | null> {
  const query = { floating_network_id: networkId, project_id: (await projectOf(s)) ?? undefined };
  const fips = ((await s.call('network', 'GET', '/v2.0/floatingips', { query }))?.floatingips ?? []) as Neutron[];
  let best: { fip: Neutron; forwards: Neutron[]; score: number } | null = null;
  for (const fip of fips) {
    if (fip.port_id) continue;
    const forwards = await forwardsOf(s, fip);
    if (!forwards.some((pf) => pf.internal_ip_address === address)) continue;
    const score = specs.filter((spec) => forwards.some((pf) => sameForward(pf, address, spec))).length;
    if (!best || score > best.score) best = { fip, forwards, score };
  }
  return best && { fip: best.fip, forwards: best.forwards };
}

/** Options of `create`. */
interface CreateOptions extends OutputOptions {
  readonly port: string[];
  readonly description?: string;
  readonly internalIpNetwork?: string;
  readonly internalIpSubnet?: string;
}

/** `create`: find or create the port, the floating IP and each forward; the printed rows. */
async function create(s: Session, internal: string, external: string, specs: readonly PortSpec[], o: CreateOptions): Promise<unknown[][]> {
  const side = await resolveInternal(s, internal, o);
  let fip: Neutron | null = null;
  let forwards: Neutron[] = [];
  let fipNetwork: Neutron | null = null;
  if (net.isIP(external) !== 0) {
    fip = await findFloatingIp(s, external);
    forwards = await forwardsOf(s, fip);
  } else {
    fipNetwork = await findNetwork(s, external);
    const reused = await reusableFloatingIp(s, fipNetwork.id, side.address, specs);
    if (reused) ({ fip, forwards } = reused);
  }
  const port = side.port ?? (await createPort(s, side));
  fip ??= (await s.call('network', 'POST', '/v2.0/floatingips', { body: { floatingip: { floating_network_id: fipNetwork!.id } } }))
    .floatingip as Neutron;
  const rows: unknown[][] = [];
  for (const spec of specs) {
    let pf = forwards.find((f) => sameForward(f, side.address, spec));
    if (!pf) {
      const body = {
        port_forwarding: {
          internal_port_id: port.id,
          internal_ip_address: side.address,
          internal_port: spec.internalPort,
          external_port: spec.externalPort,
          protocol: spec.protocol,
          ...(o.description !== undefined ? { description: o.description } : {}),
        },
      };
      const path = `/v2.0/floatingips/${encodeURIComponent(fip.id)}/port_forwardings`;
      pf = (await s.call('network', 'POST', path, { body })).port_forwarding as Neutron;
      forwards.push(pf);
    }
    rows.push(row(fip, pf));
  }
  return rows;
}

/** Delete forwards of one floating IP. */
async function deleteForwards(s: Session, fip: Neutron, forwards: readonly Neutron[]): Promise<void> {
  for (const pf of forwards)
    await s.call('network', 'DELETE', `/v2.0/floatingips/${encodeURIComponent(fip.id)}/port_forwardings/${encodeURIComponent(pf.id)}`);
}

/** Register `port forwarding create|delete|purge` (on the `port` group, made when missing). */
export function registerPortForwardingCommands(program: Command): void {
  const port =
    program.commands.find((c) => c.name() === 'port') ??
    program.command('port').description('network ports (python-esiclient `esi port …`)');
  const fwd = port
    .command('forwarding')
    .description('port forwards from a floating IP to an internal address (python-esiclient `esi port forwarding`)');
  const portOption = [
    '-p, --port <spec>',
    'a port forward [<external_port>:]<internal_port>[/<protocol>], e.g. 22, 8080:80, 53/udp (repeatable)',
  ] as const;

  addOutputOptions(
    fwd
      .command('create')
      .description('forward ports of a floating IP (found, or made on an external network) to an internal address or port')
      .argument('<internal>', 'internal IP address, port name or port UUID')
      .argument('<external>', 'floating IP address, or external network name or UUID (a floating IP is allocated on it)')
      .option('-d, --description <text>', 'description of the new port forwards')
      .option('--internal-ip-network <network>', 'network on which to find or create the port of an internal address')
      .option('--internal-ip-subnet <subnet>', 'subnet on which to create the port of an internal address')
      .option(...portOption, collect, [] as string[]),
  ).action(async (internal: string, external: string, o: CreateOptions) => {
    const specs = parseSpecs(o.port);
    const rows = await withSession((s) => create(s, internal, external, specs, o));
    printList(LABELS, rows, o);
  });

  addOutputOptions(
    fwd
      .command('delete')
      .description("delete a floating IP's port forwards to an internal address, by external port and protocol")
      .argument('<internal>', 'internal IP address')
      .argument('<external>', 'floating IP address')
      .option(...portOption, collect, [] as string[]),
  ).action(async (internal: string, external: string, o: { port: string[] } & OutputOptions) => {
    const specs = parseSpecs(o.port);
    const address = requireIp(internal, 'internal address');
    requireIp(external, 'floating IP');
    const rows = await withSession(async (s) => {
      const fip = await findFloatingIp(s, external);
      const forwards = await forwardsOf(s, fip);
      const doomed: Neutron[] = [];
      for (const spec of specs) {
        const pf = forwards.find(
          (f) => f.external_port === spec.externalPort && f.protocol === spec.protocol && f.internal_ip_address === address,
        );
        if (!pf)
          process.stderr.write(`esi: warning: port forwarding matching ${specText(spec)} to ${address} on ${external} does not exist\n`);
        else if (!doomed.includes(pf)) doomed.push(pf);
      }
      await deleteForwards(s, fip, doomed);
      return doomed.map((pf) => row(fip, pf));
    });
    printList(LABELS, rows, o);
  });

  addOutputOptions(
    fwd.command('purge').description('delete every port forward of the floating IPs').argument('<floating-ip...>', 'floating IP addresses'),
  ).action(async (addresses: string[], o: OutputOptions) => {
    for (const a of addresses) requireIp(a, 'floating IP');
    const rows = await withSession(async (s) => {
      const found: Array<{ fip: Neutron; forwards: Neutron[] }> = [];
      for (const a of addresses) {
        const fip = await findFloatingIp(s, a);
        if (!found.some((f) => f.fip.id === fip.id)) found.push({ fip, forwards: await forwardsOf(s, fip) });
      }
      const out: unknown[][] = [];
      for (const { fip, forwards } of found) {
        await deleteForwards(s, fip, forwards);
        out.push(...forwards.map((pf) => row(fip, pf)));
      }
      return out;
    });
    printList(LABELS, rows, o);
  });
}
