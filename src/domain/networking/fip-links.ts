/**
 * What floating IPs (./floating-ips.ts) and port forwardings (./port-forwardings.ts) share, and
 * the rules the rest of the networking area applies because they exist — Neutron's `l3_db.py`
 * and the port forwarding plugin's callbacks:
 *
 * - the router that serves a floating IP for a fixed IP: among the routers whose gateway is on
 *   the floating IP's network and that have an interface on the fixed IP's subnet, the one whose
 *   interface holds the subnet's `gateway_ip`, else the first (`get_router_for_floatingip`);
 * - a floating IP is `ACTIVE` while a router serves it, else `DOWN`;
 * - deleting a port disassociates its floating IPs (409 `FipAssociated` when one of them is
 *   another project's and the caller is not an admin) and deletes the port forwardings to it;
 *   at lease end the node's ports lose their floating IPs (deleted) and forwards
 *   ({@link releasePorts});
 * - a port cannot drop the fixed IP a floating IP is associated with (400); forwards to a fixed
 *   IP it drops are deleted ({@link onPortIpsChange});
 * - a router interface whose subnet a floating IP or forward needs cannot be removed (409
 *   `RouterInterfaceInUseByFloatingIP`), nor can a gateway they need be cleared or moved (409
 *   `RouterExternalGatewayInUseByFloatingIp`).
 *
 * Every function runs inside the caller's transaction and returns the routers whose dataplane
 * intent changed, for the caller to wake after the commit.
 */
import { ConflictError, InvalidInputError } from '../errors.ts';
import { isDhcpPort } from './dhcp-ports.ts';
import { cidrContains, parseCidr, parseIp } from './ipam.ts';
import {
  DEVICE_OWNER_FLOATINGIP,
  type FixedIp,
  type FloatingIp,
  type FloatingIpStatus,
  type NetPort,
  type Router,
  type Subnet,
} from './model.ts';
import type { NetworkReads, NetworkTx } from './ports.ts';

/** A floating IP's status for the router that serves it (null: none). */
export function fipStatus(routerId: string | null): FloatingIpStatus {
  return routerId === null ? 'DOWN' : 'ACTIVE';
}

/** Lock key of a floating IP. */
export function floatingIpLock(id: string): string {
  return `floatingip:${id}`;
}

/** The IPv4 fixed IPs of a port, in order. */
export function ipv4FixedIps(p: Pick<NetPort, 'fixed_ips'>): FixedIp[] {
  return p.fixed_ips.filter((f) => parseIp(f.ip_address)?.version === 4);
}

/**
 * Why a port cannot take a floating IP or a forward (a port esi manages: a network's DHCP port,
 * a router's port, a floating IP's own port), or null when it can.
 */
export async function serviceRole(reads: NetworkReads, p: NetPort): Promise<string | null> {
  if (isDhcpPort(p)) return 'it is the DHCP port of its network';
  if (p.device_owner === DEVICE_OWNER_FLOATINGIP) return 'it holds a floating IP';
  const rp = await reads.routerPortOf(p.id);
  return rp ? `it is a port of router ${rp.router_id}` : null;
}

/**
 * The router that connects `subnet` to external network `externalNetworkId` (see the module
 * documentation), or null when none does.
 */
export async function routerFor(reads: NetworkReads, externalNetworkId: string, subnet: Subnet): Promise<string | null> {
  const ids = await reads.routersBetween(externalNetworkId, subnet.id);
  if (ids.length <= 1 || subnet.gateway_ip === null) return ids[0] ?? null;
  for (const id of ids) {
    const ports = (await reads.routerPorts(id)).map((p) => p.port_id);
    const ips = [...(await reads.fixedIpsOf(ports)).values()].flat();
    if (ips.some((f) => f.subnet_id === subnet.id && f.ip_address === subnet.gateway_ip)) return id;
  }
  return ids[0]!;
}

/**
 * After port forwardings of a floating IP went: a floating IP with no port and no forward left
 * is served by no router (Neutron clears `router_id` with the last forward).
 */
export async function settleFipRouter(tx: NetworkTx, fipId: string, now: number): Promise<void> {
  const f = await tx.getFloatingIp(fipId);
  if (!f || f.fixed_port_id !== null || f.router_id === null) return;
  if (((await tx.portForwardingsOf([fipId])).get(fipId) ?? []).length > 0) return;
  await tx.updateFloatingIp(fipId, { router_id: null, status: 'DOWN' }, now);
}

/**
 * Ports that go away (deleted, or their node's lease ended): their floating IPs are
 * disassociated (`disassociate`, Neutron's port delete) or deleted with their address
 * (`delete`, lease end), and the forwards to them deleted.
 * @param mayDisassociate for `disassociate`: whether the caller may disassociate this floating
 *   IP (else 409 `FipAssociated`, as Neutron answers a project whose port holds an admin's)
 * @returns the routers whose intent changed
 */
export async function releasePorts(
  tx: NetworkTx,
  portIds: readonly string[],
  now: number,
  mode: 'disassociate' | 'delete',
  mayDisassociate: (f: FloatingIp) => boolean = () => true,
): Promise<string[]> {
  const routers = new Set<string>();
  for (const f of await tx.floatingIpsOfPorts(portIds)) {
    if (mode === 'disassociate' && !mayDisassociate(f))
      throw new ConflictError(
        `Unable to complete the operation on port ${f.fixed_port_id} because the port still has an associated floating IP.`,
        'FipAssociated',
      );
    if (f.router_id) routers.add(f.router_id);
    if (mode === 'delete') {
      await tx.deleteFloatingIp(f.id);
      await tx.deletePort(f.floating_port_id);
    } else {
      await tx.updateFloatingIp(f.id, { fixed_port_id: null, fixed_ip_address: null, router_id: null, status: 'DOWN' }, now);
    }
  }
  const forwards = await tx.portForwardingsOfPorts(portIds);
  for (const pf of forwards) await tx.deletePortForwarding(pf.id, now);
  for (const fipId of new Set(forwards.map((pf) => pf.floatingip_id))) {
    const f = await tx.getFloatingIp(fipId);
    if (f?.router_id) routers.add(f.router_id);
    await settleFipRouter(tx, fipId, now);
  }
  return [...routers];
}

/**
 * A port's fixed IPs are about to become `next`: refuse when the fixed IP a floating IP is
 * associated with goes (Neutron's `prevent_internal_ip_change_for_fip`, 400); delete the
 * forwards whose internal IP goes (Neutron's port forwarding plugin does the same).
 * @returns the routers whose intent changed
 * @throws InvalidInputError (`BadRequest`)
 */
export async function onPortIpsChange(tx: NetworkTx, portId: string, next: readonly FixedIp[], now: number): Promise<string[]> {
  const kept = new Set(next.map((f) => f.ip_address));
  for (const f of await tx.floatingIpsOfPorts([portId])) {
    if (f.fixed_ip_address !== null && !kept.has(f.fixed_ip_address))
      throw new InvalidInputError(
        `Bad port request: Cannot update the fixed_ips of the port ${portId}, because its original fixed_ip has been associated to a floating ip.`,
        'BadRequest',
      );
  }
  const routers = new Set<string>();
  const gone = (await tx.portForwardingsOfPorts([portId])).filter((pf) => !kept.has(pf.internal_ip_address));
  for (const pf of gone) await tx.deletePortForwarding(pf.id, now);
  for (const fipId of new Set(gone.map((pf) => pf.floatingip_id))) {
    const f = await tx.getFloatingIp(fipId);
    if (f?.router_id) routers.add(f.router_id);
    await settleFipRouter(tx, fipId, now);
  }
  return [...routers];
}

/**
 * Refuse to remove router `routerId`'s interface on `subnet` while a floating IP it serves is
 * associated with, or forwards to, an address of that subnet (Neutron's
 * `_check_router_interface_not_in_use`).
 * @throws ConflictError (`RouterInterfaceInUseByFloatingIP`)
 */
export async function checkInterfaceNotInUse(tx: NetworkTx, routerId: string, subnet: Subnet): Promise<void> {
  const fips = await tx.floatingIpsOfRouter(routerId);
  if (fips.length === 0) return;
  const cidr = parseCidr(subnet.cidr);
  const inSubnet = (ip: string | null): boolean => {
    const a = ip === null ? null : parseIp(ip);
    return a !== null && a.version === cidr.version && cidrContains(cidr, a.value);
  };
  const forwards = [...(await tx.portForwardingsOf(fips.map((f) => f.id))).values()].flat();
  const used = [
    ...fips.flatMap((f) => (f.fixed_port_id !== null && inSubnet(f.fixed_ip_address) ? [f.fixed_port_id] : [])),
    ...forwards.flatMap((pf) => (inSubnet(pf.internal_ip_address) ? [pf.internal_port_id] : [])),
  ];
  const ips = await tx.fixedIpsOf(used);
  if ([...ips.values()].flat().some((f) => f.subnet_id === subnet.id))
    throw new ConflictError(
      `Router interface for subnet ${subnet.id} on router ${routerId} cannot be deleted, as it is required by one or more floating IPs.`,
      'RouterInterfaceInUseByFloatingIP',
    );
}

/**
 * Refuse to clear or move router `r`'s gateway while it serves floating IPs (Neutron's
 * `_delete_current_gw_port`).
 * @throws ConflictError (`RouterExternalGatewayInUseByFloatingIp`)
 */
export async function checkGatewayNotInUse(tx: NetworkTx, r: Router): Promise<void> {
  if (!r.gateway || (await tx.floatingIpsOfRouter(r.id)).length === 0) return;
  throw new ConflictError(
    `Gateway cannot be updated for router ${r.id}, since a gateway to external network ${r.gateway.network_id} is required by one or more floating IPs.`,
    'RouterExternalGatewayInUseByFloatingIp',
  );
}
