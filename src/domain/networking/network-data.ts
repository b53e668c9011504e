/**
 * `network_data.json` for a node's config drive, generated from its VIFs as Nova does for
 * instances and Ironic's neutron network interface does for bare metal (`get_node_network_data`)
 * — the OpenStack network metadata format
 * (https://docs.openstack.org/nova/latest/user/metadata.html#openstack-format-metadata),
 * which cloud-init's ConfigDrive datasource applies:
 *
 * - `links`: one `phy` link per bare-metal port with a tenant VIF (`id` the bare-metal port's
 *   UUID, its MAC, the network's MTU); a trunk's sub-ports are `vlan` links on it;
 * - `networks`: one `ipv4` (static) entry per fixed IPv4 address of each VIF, with its netmask,
 *   the subnet's gateway as default route (the first network only, so the node has one default
 *   route) and its host routes, and the DNS servers as `services`;
 * - `services`: the DNS servers of all those subnets.
 *
 * Static addresses: esi's tenant subnets have no DHCP server yet, so the node takes the address
 * esi allocated from the config drive. IPv6 addresses are left out.
 */
import type { Network, NetPort, Subnet } from './model.ts';
import type { NetworkReads } from './ports.ts';
import { vifEntitled, vifOf } from './binding.ts';

/** A JSON object (the generated document). */
type Json = Record<string, unknown>;

/** The dotted netmask of an IPv4 prefix length. */
export function netmaskOf(prefix: number): string {
  const bits = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
  return [24, 16, 8, 0].map((s) => (bits >>> s) & 0xff).join('.');
}

/**
 * The node's `network_data.json`, or null when it has no VIF with an IPv4 address.
 * @param nodeUuid the node
 */
export async function networkDataFor(reads: NetworkReads, nodeUuid: string): Promise<Json | null> {
  // Only VIFs that may still carry traffic (attached by an admin or by the project that holds
  // the node now): a stale VIF is no more written into the instance than onto the switch.
  const nics = (await reads.nodePorts(nodeUuid)).filter((np) => vifOf(np) !== null && vifEntitled(np));
  if (nics.length === 0) return null;
  const ports = await reads.portsByIds(nics.map((np) => vifOf(np)!));
  const trunks = await reads.trunksByIds([...ports.values()].flatMap((p) => (p.trunk_id ? [p.trunk_id] : [])));
  const subPorts = await reads.portsByIds([...trunks.values()].flatMap((t) => t.sub_ports.map((s) => s.port_id)));
  const all = [...ports.values(), ...subPorts.values()];
  const nets = await reads.networksByIds(all.map((p) => p.network_id));
  const subnets = new Map((await reads.subnetsOfNetworks([...nets.keys()])).map((s) => [s.id, s]));
  const links: Json[] = [];
  const networks: Json[] = [];
  const dns = new Set<string>();
  const addNetworks = (port: NetPort, link: string): void => {
    const net = nets.get(port.network_id);
    for (const ip of port.fixed_ips) {
      const subnet = subnets.get(ip.subnet_id);
      if (subnet === undefined || subnet.ip_version !== 4 || net === undefined) continue;
      networks.push(ipv4Network(`network${networks.length}`, link, ip.ip_address, subnet, net, networks.length === 0));
      for (const d of subnet.dns_nameservers) dns.add(d);
    }
  };
  for (const np of nics) {
    const port = ports.get(vifOf(np)!);
    if (port === undefined) continue;
    const net = nets.get(port.network_id);
    links.push({ id: np.uuid, type: 'phy', ethernet_mac_address: np.address.toLowerCase(), mtu: net?.mtu ?? null, vif_id: port.id });
    addNetworks(port, np.uuid);
    const trunk = port.trunk_id ? trunks.get(port.trunk_id) : undefined;
    for (const s of trunk?.sub_ports ?? []) {
      const sub = subPorts.get(s.port_id);
      if (sub === undefined) continue;
      const id = `${np.uuid}.${s.segmentation_id}`;
      links.push({
        id,
        type: 'vlan',
        vlan_link: np.uuid,
        vlan_id: s.segmentation_id,
        vlan_mac_address: np.address.toLowerCase(),
        mtu: nets.get(sub.network_id)?.mtu ?? null,
        vif_id: sub.id,
      });
      addNetworks(sub, id);
    }
  }
  if (networks.length === 0) return null;
  return { links, networks, services: [...dns].map((address) => ({ type: 'dns', address })) };
}

/** One static IPv4 network entry. */
function ipv4Network(id: string, link: string, ip: string, subnet: Subnet, net: Network, defaultRoute: boolean): Json {
  const prefix = Number(subnet.cidr.split('/')[1]);
  const routes: Json[] = subnet.host_routes.map((r) => {
    const [dest, len] = r.destination.split('/');
    return { network: dest, netmask: netmaskOf(Number(len)), gateway: r.nexthop };
  });
  if (defaultRoute && subnet.gateway_ip !== null) routes.push({ network: '0.0.0.0', netmask: '0.0.0.0', gateway: subnet.gateway_ip });
  return {
    id,
    type: 'ipv4',
    link,
    ip_address: ip,
    netmask: netmaskOf(prefix),
    routes,
    network_id: net.id,
    services: subnet.dns_nameservers.map((address) => ({ type: 'dns', address })),
  };
}
