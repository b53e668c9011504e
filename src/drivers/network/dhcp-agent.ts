/**
 * The DHCP half of the tenant dataplane, as Neutron's DHCP agent: per network a namespace
 * `qdhcp-<network id>` with one leg `tap<port>` on the network's segment carrying the DHCP
 * port's address in every DHCP subnet, and one supervised dnsmasq (src/drivers/dhcp/dnsmasq.ts,
 * Debian's dnsmasq) serving all those subnets, answering only the intent's hosts.
 *
 * - Files: `<stateDir>/dhcp/<network id>/` (dnsmasq's conf, hosts, opts, pid and log).
 * - A changed host list is applied in place (dnsmasq re-reads its hosts file, same process); a
 *   changed subnet (range, gateway, DNS, routes, MTU, lease time) restarts dnsmasq (~0.1 s; all
 *   addresses are fixed, so no client notices).
 * - A killed dnsmasq is restarted by its supervisor; a namespace deleted under us (or replaced
 *   by another of the same name) is recreated by the next `apply`, dnsmasq with it; a dnsmasq
 *   left by an earlier run of esi is ended before ours starts (DnsmasqServer does this).
 * - No rogue-DHCP check here: a lessee may run its own DHCP server on its own network.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { DataplaneError, type DhcpNetworkIntent } from '../../domain/networking/dataplane.ts';
import type { DhcpHost, DhcpSubnetConfig } from '../../domain/networking/dhcp.ts';
import { DnsmasqServer, type DhcpLog } from '../dhcp/dnsmasq.ts';
import { dnsmasqPaths } from '../dhcp/config.ts';
import { dnsmasqsUsing, terminate } from '../dhcp/files.ts';
import { addNamespace, deleteNamespace, namespaceIdentity, namespaceNames } from './commands.ts';
import { segmentVlanMtu, type WantedLeg } from './leg-plan.ts';
import type { LegWiring } from './legs.ts';
import { DHCP_NS_PREFIX, checkId, dhcpNamespace, idOfNamespace, legNames } from './names.ts';
import { ifaceAddress } from './nft-ruleset.ts';
import { KeyedQueue } from './queue.ts';

/** Options of {@link DhcpAgent}. */
export interface DhcpAgentOptions {
  /** Directory of the dataplane's files; dnsmasq's go to `<stateDir>/dhcp/<network id>/`. */
  readonly stateDir: string;
  readonly log: DhcpLog;
  /** The flat networks' VLAN on the bridge. */
  readonly flatVlan: number;
  /** The dnsmasq program (default /usr/sbin/dnsmasq). */
  readonly dnsmasqBinary?: string;
  /** The user dnsmasq drops to (default `nobody`). */
  readonly dnsmasqUser?: string;
}

interface Served {
  readonly server: DnsmasqServer;
  /** The server configuration it runs with (JSON). */
  readonly config: string;
  /** Its hosts (JSON). */
  hosts: string;
  /** The namespace it runs in ({@link namespaceIdentity}; dnsmasq pins it, so its inode is not reused meanwhile). */
  readonly nsIdentity: string;
  /** Its leg's peer (to remove it if the namespace vanishes). */
  readonly peer: string;
}

/** The leg and the dnsmasq configuration an intent means. @throws DataplaneError for a bad intent */
export function dhcpPlan(
  intent: DhcpNetworkIntent,
  flatVlan: number,
): { ns: string; leg: WantedLeg; config: DhcpSubnetConfig; hosts: DhcpHost[] } {
  const networkId = checkId(intent.segment.network_id, 'network id');
  const ns = dhcpNamespace(networkId);
  const names = legNames('dhcp', intent.port_id ?? networkId);
  const mac = String(intent.mac).toLowerCase();
  if (!/^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/.test(mac))
    throw new DataplaneError(`network ${networkId}: DHCP port MAC '${intent.mac}' is not one`);
  const addresses = intent.subnets.map((s) => ifaceAddress(s.server_address, `subnet ${s.subnet_id} server_address`));
  for (const [i, s] of intent.subnets.entries())
    if (addresses[i]!.cidr !== s.cidr)
      throw new DataplaneError(`subnet ${s.subnet_id}: server_address ${s.server_address} is not an address of ${s.cidr}`);
  const leg: WantedLeg = {
    kind: 'dhcp',
    ...names,
    mac,
    ...segmentVlanMtu(intent.segment, flatVlan),
    addresses: addresses.map((a) => a.address),
  };
  const subnets = intent.subnets.map((s) => ({
    id: s.subnet_id,
    cidr: s.cidr,
    gateway: s.gateway_ip,
    dnsServers: s.dns_nameservers,
    hostRoutes: s.host_routes,
    mtu: intent.segment.mtu,
    leaseTimeS: s.lease_time_s,
  }));
  const [first, ...more] = subnets;
  const config: DhcpSubnetConfig = { ...first!, id: networkId, interface: names.device, netns: ns, moreSubnets: more };
  return { ns, leg, config, hosts: intent.subnets.flatMap((s) => s.hosts) };
}

/** The DHCP half of the dataplane; see the module documentation. */
export class DhcpAgent {
  readonly #o: DhcpAgentOptions;
  readonly #legs: LegWiring;
  readonly #served = new Map<string, Served>();
  readonly #queue = new KeyedQueue();

  constructor(legs: LegWiring, o: DhcpAgentOptions) {
    this.#legs = legs;
    this.#o = o;
  }

  #dataDir(): string {
    return path.resolve(this.#o.stateDir);
  }

  /** Make the network's DHCP service match `intent` (an intent without subnets removes it). */
  apply(intent: DhcpNetworkIntent): Promise<void> {
    const networkId = checkId(intent.segment.network_id, 'network id');
    if (intent.subnets.length === 0) return this.remove(networkId);
    return this.#queue.run(networkId, () => this.#apply(networkId, intent));
  }

  async #apply(networkId: string, intent: DhcpNetworkIntent): Promise<void> {
    const { ns, leg, config, hosts } = dhcpPlan(intent, this.#o.flatVlan);
    let served = this.#served.get(networkId);
    let identity = await namespaceIdentity(ns);
    if (served && served.nsIdentity !== identity) {
      // The namespace dnsmasq ran in is gone (or is another now): dnsmasq goes with it.
      await this.#stop(networkId);
      await this.#legs.removeAll(null, [served.peer]);
      served = undefined;
    }
    if (identity === null) {
      await addNamespace(ns);
      identity = await namespaceIdentity(ns);
    }
    const changes = await this.#legs.converge(ns, [leg]);
    const configKey = JSON.stringify(config);
    // A leg made anew means the interface dnsmasq was bound to is gone: it starts again.
    if (served && served.config === configKey && changes.created.length === 0) {
      const hostsKey = JSON.stringify(hosts);
      if (served.hosts !== hostsKey) {
        await served.server.setHosts(hosts).catch((err: Error) => {
          throw new DataplaneError(`network ${networkId}: ${err.message}`, { cause: err });
        });
        served.hosts = hostsKey;
      }
      return;
    }
    if (served) await this.#stop(networkId);
    let server: DnsmasqServer;
    try {
      server = new DnsmasqServer(config, {
        dataDir: this.#dataDir(),
        log: this.#o.log,
        rogueCheckIntervalS: 0,
        ...(this.#o.dnsmasqBinary ? { binary: this.#o.dnsmasqBinary } : {}),
        ...(this.#o.dnsmasqUser ? { user: this.#o.dnsmasqUser } : {}),
      });
      await fs.mkdir(this.#dataDir(), { recursive: true, mode: 0o755 });
      await server.start(hosts);
    } catch (err) {
      throw new DataplaneError(`network ${networkId}: DHCP server: ${(err as Error).message}`, { cause: err });
    }
    this.#served.set(networkId, { server, config: configKey, hosts: JSON.stringify(hosts), nsIdentity: identity!, peer: leg.peer });
  }

  async #stop(networkId: string): Promise<void> {
    const served = this.#served.get(networkId);
    this.#served.delete(networkId);
    await served?.server.stop();
  }

  /** Stop and remove the network's DHCP service: dnsmasq (ours, or one left by an earlier run), leg, namespace, files. */
  remove(networkId: string): Promise<void> {
    checkId(networkId, 'network id');
    return this.#queue.run(networkId, async () => {
      const ns = dhcpNamespace(networkId);
      const orphan = this.#served.get(networkId)?.peer;
      await this.#stop(networkId);
      const paths = dnsmasqPaths(this.#dataDir(), networkId);
      for (const pid of await dnsmasqsUsing(paths.conf, paths.pid)) await terminate(pid, 5000);
      const present = (await namespaceIdentity(ns)) !== null;
      await this.#legs.removeAll(present ? ns : null, orphan ? [orphan] : []);
      if (present) await deleteNamespace(ns);
      await fs.rm(paths.dir, { recursive: true, force: true });
    });
  }

  /** The networks whose DHCP namespace exists. */
  async realised(): Promise<string[]> {
    return (await namespaceNames()).flatMap((n) => idOfNamespace(n, DHCP_NS_PREFIX) ?? []);
  }

  /** Stop every dnsmasq of this agent (namespaces and legs stay; the next apply starts them again). */
  async close(): Promise<void> {
    await Promise.all([...this.#served.keys()].map((id) => this.#queue.run(id, () => this.#stop(id))));
  }
}
