/**
 * Fixed-IP allocation for ports, inside the network's lock (Neutron's IPAM request rules):
 *
 * - no `fixed_ips`: one address from the first IPv4 subnet with a free address (else the first
 *   IPv6 one); a network without subnets gives none; all full → 409
 *   `IpAddressGenerationFailure`;
 * - `fixed_ips: []`: no address;
 * - `{subnet_id}`: the lowest free address of that subnet's pools;
 * - `{ip_address[, subnet_id]}`: that address, which must belong to a subnet of the network
 *   (and to the named one), and be free (409 `IpAddressAlreadyAllocated`); it may lie outside
 *   the pools (Neutron allows a specific address anywhere in the CIDR).
 */
import { ConflictError, InvalidInputError } from '../errors.ts';
import { cidrContains, ipText, lowestFree, parseCidr, parseIp, poolsIn } from './ipam.ts';
import type { FixedIp, Subnet } from './model.ts';
import type { NetworkTx } from './ports.ts';

/** A requested fixed IP, as given in a body. */
export interface FixedIpRequest {
  readonly subnet_id?: string;
  readonly ip_address?: string;
}

/**
 * Parse a `fixed_ips` attribute.
 * @returns null when absent, else the list
 * @throws InvalidInputError for a malformed list
 */
export function parseFixedIps(v: unknown): FixedIpRequest[] | null {
  if (v === undefined || v === null) return null;
  if (!Array.isArray(v))
    throw new InvalidInputError(
      "Invalid input for fixed_ips. Reason: Invalid data format for fixed IP: '" + JSON.stringify(v) + "'.",
      'HTTPBadRequest',
    );
  return v.map((f: unknown) => {
    const o = f as Record<string, unknown> | null;
    if (!o || typeof o !== 'object' || Array.isArray(o) || Object.keys(o).some((k) => k !== 'subnet_id' && k !== 'ip_address')) {
      throw new InvalidInputError(
        `Invalid input for fixed_ips. Reason: Invalid data format for fixed IP: '${JSON.stringify(f)}'.`,
        'HTTPBadRequest',
      );
    }
    if (o.subnet_id === undefined && o.ip_address === undefined) {
      throw new InvalidInputError(
        `Invalid input for fixed_ips. Reason: Invalid data format for fixed IP: '${JSON.stringify(f)}'.`,
        'HTTPBadRequest',
      );
    }
    if (o.ip_address !== undefined && !parseIp(o.ip_address)) {
      throw new InvalidInputError(
        `Invalid input for fixed_ips. Reason: '${String(o.ip_address)}' is not a valid IP address.`,
        'HTTPBadRequest',
      );
    }
    if (o.subnet_id !== undefined && typeof o.subnet_id !== 'string') {
      throw new InvalidInputError(`Invalid input for fixed_ips. Reason: '${String(o.subnet_id)}' is not a valid UUID.`, 'HTTPBadRequest');
    }
    return {
      ...(o.subnet_id !== undefined ? { subnet_id: o.subnet_id } : {}),
      ...(o.ip_address !== undefined ? { ip_address: o.ip_address as string } : {}),
    };
  });
}

/**
 * Allocate the fixed IPs of a port of `networkId` (call inside the network's lock).
 * @param keep addresses the port already holds (an update keeps them without a clash)
 * @throws InvalidInputError (unknown subnet, address outside it), ConflictError (in use, exhausted)
 */
export async function allocateIps(
  tx: NetworkTx,
  networkId: string,
  requested: FixedIpRequest[] | null,
  keep: readonly FixedIp[] = [],
): Promise<FixedIp[]> {
  const subnets = await tx.subnetsOfNetworks([networkId]);
  const held = new Set(keep.map((k) => `${k.subnet_id}/${k.ip_address}`));
  const taken = new Map<string, Set<bigint>>();
  const used = async (s: Subnet): Promise<Set<bigint>> => {
    let set = taken.get(s.id);
    if (!set) {
      set = new Set<bigint>();
      for (const ip of await tx.usedIps(s.id)) if (!held.has(`${s.id}/${ip}`)) set.add(parseIp(ip)!.value);
      taken.set(s.id, set);
    }
    return set;
  };
  const out: FixedIp[] = [];
  const fromSubnet = async (s: Subnet): Promise<FixedIp | null> => {
    const set = await used(s);
    const free = lowestFree(poolsIn(s.allocation_pools), set);
    if (free === null) return null;
    set.add(free);
    return { subnet_id: s.id, ip_address: ipText(s.ip_version, free) };
  };
  if (requested === null) {
    if (subnets.length === 0) return [];
    const ordered = [...subnets.filter((s) => s.ip_version === 4), ...subnets.filter((s) => s.ip_version === 6)];
    for (const s of ordered) {
      const ip = await fromSubnet(s);
      if (ip) return [ip];
    }
    throw new ConflictError(`No more IP addresses available on network ${networkId}.`, 'IpAddressGenerationFailure');
  }
  for (const r of requested) {
    const named = r.subnet_id !== undefined ? subnets.find((s) => s.id === r.subnet_id!.toLowerCase()) : undefined;
    if (r.subnet_id !== undefined && !named) {
      throw new InvalidInputError(
        `Invalid input for operation: Failed to create port on network ${networkId}, because fixed_ips included invalid subnet ${r.subnet_id}.`,
        'InvalidInput',
      );
    }
    if (r.ip_address === undefined) {
      const ip = await fromSubnet(named!);
      if (!ip) throw new ConflictError(`No more IP addresses available for subnet ${named!.id}.`, 'IpAddressGenerationFailure');
      out.push(ip);
      continue;
    }
    const addr = parseIp(r.ip_address)!;
    const subnet = (named ? [named] : subnets).find((s) => s.ip_version === addr.version && cidrContains(parseCidr(s.cidr), addr.value));
    if (!subnet)
      throw new InvalidInputError(
        `Invalid input for operation: IP address ${r.ip_address} is not a valid IP for the specified subnet.`,
        'InvalidInput',
      );
    const set = await used(subnet);
    const text = ipText(addr.version, addr.value);
    if (set.has(addr.value) || subnet.gateway_ip === text) {
      throw new ConflictError(`IP address ${text} already allocated in subnet ${subnet.id}`, 'IpAddressAlreadyAllocated');
    }
    set.add(addr.value);
    out.push({ subnet_id: subnet.id, ip_address: text });
  }
  return out;
}
