/**
 * A router's external gateway (Neutron `external_gateway_info`, extensions `external-net` and
 * `ext-gw-mode`): parsing the attribute, the attribute rules it triggers, and setting it inside
 * a transaction.
 *
 * Setting a gateway makes a gateway port on the external network — `device_owner`
 * `network:router_gateway`, `device_id` the router, project '' (as Neutron: no project owns it,
 * so only admins see it in port lists) — with one address from the external network's subnets
 * (the lowest free of the first IPv4 subnet with one, or `external_fixed_ips`, admin only).
 * `enable_snat` defaults to true whenever the gateway is set without it (Neutron's
 * `enable_snat_by_default`, applied on every gateway update). Changing the network replaces the
 * port; `external_fixed_ips` on the same network re-addresses it; clearing the gateway
 * (`{}` or null) deletes it.
 *
 * Refusals (nothing written): a network the caller may not see (404), one that is not external
 * (400 `BadRequest`), no free address or no subnet (409 `IpAddressGenerationFailure`), external
 * subnets overlapping an interface subnet (400 `BadRequest`), clearing or moving a gateway that
 * floating IPs use (409 `RouterExternalGatewayInUseByFloatingIp`, ./fip-links.ts).
 */
import type { AuthContext } from '../auth.ts';
import { ConflictError, InvalidInputError } from '../errors.ts';
import { isUuidLike, newUuid } from '../ids.ts';
import type { NetworkAccess } from './access.ts';
import { canonicalId } from './attributes.ts';
import { insertWithFreshMac } from './dhcp-ports.ts';
import { checkGatewayNotInUse } from './fip-links.ts';
import { allocateIps, parseFixedIps, type FixedIpRequest } from './ip-allocation.ts';
import { cidrsOverlap, parseCidr } from './ipam.ts';
import { DEVICE_OWNER_ROUTER_GATEWAY, type FixedIp, type Network, type Router, type RouterGateway } from './model.ts';
import type { NetworkTx } from './ports.ts';

/** A requested gateway. */
export interface GatewayRequest {
  readonly network_id: string;
  /** Absent: true (Neutron's default). */
  readonly enable_snat?: boolean;
  /** Absent: one address chosen by IPAM. */
  readonly external_fixed_ips?: FixedIpRequest[];
}

const GATEWAY_KEYS = new Set(['network_id', 'enable_snat', 'external_fixed_ips']);

function invalidGateway(reason: string): InvalidInputError {
  return new InvalidInputError(`Invalid input for external_gateway_info. Reason: ${reason}.`, 'HTTPBadRequest');
}

/**
 * Parse `external_gateway_info`.
 * @returns undefined when absent, null to clear the gateway (`null` or `{}`), else the request
 * @throws InvalidInputError for a malformed value
 */
export function parseGatewayInfo(v: unknown): GatewayRequest | null | undefined {
  if (v === undefined) return undefined;
  if (v === null) return null;
  if (typeof v !== 'object' || Array.isArray(v)) throw invalidGateway(`'${JSON.stringify(v)}' is not a dictionary`);
  const o = v as Record<string, unknown>;
  if (Object.keys(o).length === 0) return null;
  const unknown = Object.keys(o).filter((k) => !GATEWAY_KEYS.has(k));
  if (unknown.length > 0) {
    const qos = unknown.includes('qos_policy_id') ? ' (QoS policies are not supported by esi)' : '';
    throw invalidGateway(`Unexpected keys supplied: ${unknown.join(', ')}${qos}`);
  }
  if (typeof o.network_id !== 'string' || !isUuidLike(o.network_id)) throw invalidGateway(`'${String(o.network_id)}' is not a valid UUID`);
  if (o.enable_snat !== undefined && typeof o.enable_snat !== 'boolean')
    throw invalidGateway(`'${String(o.enable_snat)}' is not a valid boolean value`);
  let ips: FixedIpRequest[] | undefined;
  if (o.external_fixed_ips !== undefined && o.external_fixed_ips !== null) {
    try {
      ips = parseFixedIps(o.external_fixed_ips) ?? undefined;
      // An empty list asks for nothing in particular, as Neutron reads it: IPAM chooses.
      if (ips?.length === 0) ips = undefined;
    } catch (err) {
      throw new InvalidInputError((err as Error).message.replace('fixed_ips', 'external_fixed_ips'), 'HTTPBadRequest');
    }
  }
  return {
    network_id: canonicalId(o.network_id),
    ...(o.enable_snat !== undefined ? { enable_snat: o.enable_snat } : {}),
    ...(ips !== undefined ? { external_fixed_ips: ips } : {}),
  };
}

/**
 * Check the attribute rules of a gateway in a create or update (Neutron's
 * `<op>:external_gateway_info[:network_id|:enable_snat|:external_fixed_ips]`, each when given).
 * @throws ForbiddenError naming the rule
 */
export function authorizeGateway(
  access: NetworkAccess,
  op: 'create_router' | 'update_router',
  req: GatewayRequest | null,
  router: Pick<Router, 'project_id'>,
  ctx: AuthContext,
): void {
  const target = access.routerTarget(router);
  access.authorize(`${op}:external_gateway_info`, target, ctx);
  if (req === null) return;
  access.authorize(`${op}:external_gateway_info:network_id`, target, ctx);
  if (req.enable_snat !== undefined) access.authorize(`${op}:external_gateway_info:enable_snat`, target, ctx);
  if (req.external_fixed_ips !== undefined) access.authorize(`${op}:external_gateway_info:external_fixed_ips`, target, ctx);
}

/**
 * The external network of a request, as the caller sees it.
 * @throws NotFoundError (invisible), InvalidInputError (`BadRequest`: not external)
 */
export async function externalNetwork(access: NetworkAccess, ctx: AuthContext, req: GatewayRequest): Promise<Network> {
  const n = await access.network(ctx, req.network_id);
  if (!n.router_external) throw new InvalidInputError(`Bad router request: Network ${n.id} is not an external network.`, 'BadRequest');
  return n;
}

/**
 * Refuse subnets of `candidate` that overlap subnets of the router's other ports.
 * @param exclude router ports whose subnets do not count (the port being replaced)
 * @throws InvalidInputError (`BadRequest`) naming both subnets
 */
export async function checkRouterOverlap(
  tx: NetworkTx,
  routerId: string,
  candidate: readonly FixedIp[],
  exclude: readonly string[],
): Promise<void> {
  const others = (await tx.routerPorts(routerId)).filter((p) => !exclude.includes(p.port_id));
  const ips = await tx.fixedIpsOf(others.map((p) => p.port_id));
  const theirs = [...new Set([...ips.values()].flat().map((f) => f.subnet_id))];
  const mine = [...new Set(candidate.map((f) => f.subnet_id))];
  const subnets = new Map<string, { cidr: string }>();
  for (const id of [...theirs, ...mine]) {
    const s = await tx.getSubnet(id);
    if (s) subnets.set(id, s);
  }
  for (const m of mine) {
    for (const t of theirs) {
      const a = subnets.get(m);
      const b = subnets.get(t);
      if (a && b && cidrsOverlap(parseCidr(a.cidr), parseCidr(b.cidr))) {
        throw new InvalidInputError(
          `Bad router request: Cidr ${a.cidr} of subnet ${m} overlaps with cidr ${b.cidr} of subnet ${t}.`,
          'BadRequest',
        );
      }
    }
  }
}

/**
 * Set, change or clear a router's gateway (inside a transaction holding the router's lock and
 * the locks of the old and new external networks).
 * @param network the new external network (checked by {@link externalNetwork}), null to clear
 * @throws ConflictError (`IpAddressGenerationFailure`, `IpAddressAlreadyAllocated`),
 *   InvalidInputError (addresses not on the network, overlap)
 */
export async function applyGateway(
  tx: NetworkTx,
  router: Router,
  req: GatewayRequest | null,
  network: Network | null,
  now: number,
): Promise<void> {
  const old = router.gateway;
  if (req === null || network === null) {
    if (!old) return;
    await checkGatewayNotInUse(tx, router);
    await tx.setRouterGateway(router.id, null, now);
    await tx.deletePort(old.port_id);
    return;
  }
  const snat = req.enable_snat ?? true;
  if (old && old.network_id === network.id) {
    if (req.external_fixed_ips !== undefined) {
      const port = (await tx.getPort(old.port_id))!;
      const ips = await allocateIps(tx, network.id, req.external_fixed_ips, port.fixed_ips);
      if (ips.length === 0) throw noAddress(network.id);
      await checkRouterOverlap(tx, router.id, ips, [old.port_id]);
      await tx.setPortIps(port.id, network.id, ips, now);
    }
    await tx.setRouterGateway(router.id, { ...old, enable_snat: snat }, now);
    return;
  }
  if (old) {
    await checkGatewayNotInUse(tx, router);
    await tx.setRouterGateway(router.id, null, now);
    await tx.deletePort(old.port_id);
  }
  const ips = await allocateIps(tx, network.id, req.external_fixed_ips ?? null);
  if (ips.length === 0) throw noAddress(network.id);
  await checkRouterOverlap(tx, router.id, ips, []);
  const portId = newUuid();
  await insertWithFreshMac(tx, {
    id: portId,
    name: '',
    description: '',
    project_id: '',
    network_id: network.id,
    admin_state_up: true,
    status: 'ACTIVE',
    device_owner: DEVICE_OWNER_ROUTER_GATEWAY,
    device_id: router.id,
    binding_host_id: '',
    binding_profile: {},
    binding_vnic_type: 'normal',
    binding_vif_type: 'unbound',
    binding_vif_details: {},
    fixed_ips: ips,
    bound_port_uuid: null,
    created_at: now,
    updated_at: now,
    revision_number: 1,
  });
  const gateway: RouterGateway = { network_id: network.id, port_id: portId, enable_snat: snat };
  await tx.setRouterGateway(router.id, gateway, now);
}

function noAddress(networkId: string): ConflictError {
  return new ConflictError(
    `No more IP addresses available on network ${networkId}: it has no subnet to take the router gateway address from.`,
    'IpAddressGenerationFailure',
  );
}
