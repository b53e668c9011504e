/**
 * DHCP ports (Neutron's DHCP agent port): each network with at least one subnet whose
 * `enable_dhcp` is true has one port with `device_owner` `network:dhcp` and `device_id`
 * `dhcp<network id>`, owned by the network's project, holding one fixed IP in each DHCP-enabled
 * subnet — the first free address of the subnet's pools when it is taken, as Neutron's IPAM
 * gives the agent's port. It is the DHCP server's own address (./intents.ts
 * `server_address`) and users see it in port lists as in Neutron (the network's owner and
 * admins: it is a port of the network's project).
 *
 * {@link syncDhcpPort} keeps it so inside the network's lock whenever subnets change (create,
 * update of `enable_dhcp`, delete): it is created with the first DHCP-enabled subnet, gains and
 * loses addresses as subnets enable or disable DHCP or go, and is deleted with the last one.
 * Its address in a subnet being deleted goes with the subnet (Neutron deletes the DHCP port's
 * IP with it), so a subnet whose only other users are gone can be deleted. esi manages the
 * port: the port API refuses to delete it (409 `ServicePortInUse`) or to change its addresses.
 *
 * Deviation: Neutron's agent names it `dhcp<host uuid>-<network id>` (one per agent host);
 * esi has one DHCP server per network, hence `dhcp<network id>`.
 */
import { ConflictError } from '../errors.ts';
import { newUuid } from '../ids.ts';
import { neutronMac } from './binding.ts';
import { allocateIps, type FixedIpRequest } from './ip-allocation.ts';
import { DEVICE_OWNER_DHCP, type Network, type NetPort } from './model.ts';
import type { NetworkReads, NetworkRepository, NetworkTx } from './ports.ts';

/** The `device_id` of a network's DHCP port. */
export function dhcpDeviceId(networkId: string): string {
  return `dhcp${networkId}`;
}

/** True when the port is esi's DHCP port of its network. */
export function isDhcpPort(p: Pick<NetPort, 'device_owner' | 'device_id' | 'network_id'>): boolean {
  return p.device_owner === DEVICE_OWNER_DHCP && p.device_id === dhcpDeviceId(p.network_id);
}

/** The DHCP port of a network (the oldest, should there be several), or null. */
export async function dhcpPortOf(reads: NetworkReads, networkId: string): Promise<NetPort | null> {
  const ports = await reads.listPorts({
    filters: { network_id: [networkId], device_owner: [DEVICE_OWNER_DHCP], device_id: [dhcpDeviceId(networkId)] },
    visibleTo: null,
    sort: [{ key: 'created_at', dir: 'asc' }],
    limit: 1,
    markerId: null,
  });
  return ports[0] ?? null;
}

/**
 * Make the network's DHCP port match its subnets (call inside the network's lock): one address
 * in each DHCP-enabled subnet (kept when it has one, else the lowest free), none elsewhere; no
 * port when no subnet has DHCP.
 * @returns true when the port changed (created, re-addressed or deleted)
 * @throws ConflictError (`IpAddressGenerationFailure`) when a DHCP-enabled subnet has no free
 *   address for it — the caller's transaction then writes nothing
 */
export async function syncDhcpPort(tx: NetworkTx, network: Network, now: number): Promise<boolean> {
  const subnets = (await tx.subnetsOfNetworks([network.id])).filter((s) => s.enable_dhcp);
  const port = await dhcpPortOf(tx, network.id);
  if (subnets.length === 0) {
    if (!port) return false;
    await tx.deletePort(port.id);
    return true;
  }
  const held = port?.fixed_ips ?? [];
  const requested: FixedIpRequest[] = subnets.map((s) => {
    const kept = held.find((ip) => ip.subnet_id === s.id);
    return kept ? { subnet_id: s.id, ip_address: kept.ip_address } : { subnet_id: s.id };
  });
  let fixed;
  try {
    fixed = await allocateIps(tx, network.id, requested, held);
  } catch (err) {
    if (err instanceof ConflictError && err.code === 'IpAddressGenerationFailure')
      throw new ConflictError(`${err.message} The DHCP port of network ${network.id} needs one.`, err.code);
    throw err;
  }
  if (port) {
    const same =
      fixed.length === held.length && fixed.every((f, i) => f.subnet_id === held[i]!.subnet_id && f.ip_address === held[i]!.ip_address);
    if (same) return false;
    await tx.setPortIps(port.id, network.id, fixed, now);
    return true;
  }
  const base = {
    id: newUuid(),
    name: '',
    description: '',
    project_id: network.project_id,
    network_id: network.id,
    admin_state_up: true,
    status: 'ACTIVE' as const,
    device_owner: DEVICE_OWNER_DHCP,
    device_id: dhcpDeviceId(network.id),
    binding_host_id: '',
    binding_profile: {},
    binding_vnic_type: 'normal',
    binding_vif_type: 'unbound',
    binding_vif_details: {},
    fixed_ips: fixed,
    bound_port_uuid: null,
    created_at: now,
    updated_at: now,
    revision_number: 1,
  };
  await insertWithFreshMac(tx, base);
  return true;
}

/** Insert a port esi makes itself under a new `fa:16:3e` MAC (a clash is retried a few times). */
export async function insertWithFreshMac(tx: NetworkTx, port: Omit<NetPort, 'trunk_id' | 'mac_address'>): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await tx.insertPort({ ...port, mac_address: neutronMac() });
      return;
    } catch (err) {
      if (attempt >= 5 || !(err instanceof ConflictError) || err.code !== 'MacAddressInUse') throw err;
    }
  }
}

/** DHCP ports across networks (see the module documentation). */
export class DhcpPortService {
  constructor(
    private readonly repo: NetworkRepository,
    private readonly now: () => number,
  ) {}

  /**
   * Give every network with a DHCP-enabled subnet its DHCP port, and fix ports that are out of
   * step (networks made before DHCP ports existed, migration 0016). Idempotent.
   * @returns the ids of the networks whose DHCP port changed
   */
  async ensureAll(): Promise<string[]> {
    const changed: string[] = [];
    for (const id of await this.repo.dhcpNetworkIds()) {
      const did = await this.repo.locked([`network:${id}`], async (tx) => {
        const n = await tx.getNetwork(id);
        return n ? syncDhcpPort(tx, n, this.now()) : false;
      });
      if (did) changed.push(id);
    }
    return changed;
  }
}
