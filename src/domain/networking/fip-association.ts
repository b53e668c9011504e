/**
 * Associating a floating IP with a port's fixed IP (Neutron `l3_db.py`
 * `_check_and_get_fip_assoc` and `_internal_fip_assoc_data`), in two steps so that the locks
 * are known before the transaction: {@link Association.plan} reads as the caller (the port must
 * be visible, and the caller's own unless it is an admin) and names the locks (the port, the
 * routers that could serve it); {@link Association.resolve}, inside the transaction, picks the
 * fixed IP and the router again from what is committed and checks that the fixed IP has no
 * other floating IP on the network. The rules and their errors are listed in ./floating-ips.ts.
 */
import type { AuthContext } from '../auth.ts';
import { ConflictError, InvalidInputError, NotFoundError } from '../errors.ts';
import type { NetworkAccess } from './access.ts';
import type { Attrs } from './attributes.ts';
import { canonicalId } from './attributes.ts';
import { ipv4FixedIps, routerFor, serviceRole } from './fip-links.ts';
import { parseIp } from './ipam.ts';
import type { FloatingIp, NetPort } from './model.ts';
import type { NetworkTx } from './ports.ts';
import { routerLock } from './routers.ts';

/** An association asked for: the port and, optionally, which of its fixed IPs. */
export interface AssociationRequest {
  readonly port_id: string;
  readonly fixed_ip_address?: string;
}

/** What {@link Association.plan} found: the port and the locks the transaction needs. */
export interface AssociationPlan {
  readonly request: AssociationRequest;
  readonly portId: string;
  /** Routers that could serve the association when planned. */
  readonly candidates: readonly string[];
  readonly locks: readonly string[];
}

/** The association as it will be written. */
export interface ResolvedAssociation {
  readonly port: NetPort;
  readonly fixedIp: string;
  readonly routerId: string;
}

function bad(msg: string): InvalidInputError {
  return new InvalidInputError(`Bad floatingip request: ${msg}`, 'BadRequest');
}

/**
 * Parse `port_id` and `fixed_ip_address` of a floating IP body.
 * @returns undefined: no change (absent; on create also `port_id: null`); null: disassociate
 *   (update with `port_id: null`); else the request
 * @throws InvalidInputError for values of the wrong kind, and `fixed_ip_address` without `port_id`
 */
export function parseAssociation(a: Attrs, mode: 'create' | 'update'): AssociationRequest | null | undefined {
  const port = a.port_id;
  const fixed = a.fixed_ip_address;
  if (port !== undefined && port !== null && (typeof port !== 'string' || port === ''))
    throw new InvalidInputError(`Invalid input for port_id. Reason: '${String(port)}' is not a valid UUID.`, 'HTTPBadRequest');
  if (fixed !== undefined && fixed !== null && !parseIp(fixed))
    throw new InvalidInputError(
      `Invalid input for fixed_ip_address. Reason: '${String(fixed)}' is not a valid IP address.`,
      'HTTPBadRequest',
    );
  if (fixed !== undefined && fixed !== null && (port === undefined || port === null))
    throw bad('fixed_ip_address cannot be specified without a port_id.');
  if (port === undefined) return undefined;
  if (port === null) return mode === 'update' ? null : undefined;
  return { port_id: canonicalId(port), ...(typeof fixed === 'string' ? { fixed_ip_address: fixed } : {}) };
}

/** The two steps of an association; see the module documentation. */
export class Association {
  constructor(private readonly access: NetworkAccess) {}

  /**
   * Check the port as the caller and name the locks.
   * @throws NotFoundError (`PortNotFound`), InvalidInputError (another project's port)
   */
  async plan(
    ctx: AuthContext,
    fip: Pick<FloatingIp, 'project_id' | 'floating_network_id'>,
    req: AssociationRequest,
  ): Promise<AssociationPlan> {
    const { port } = await this.access.port(ctx, req.port_id);
    if (!this.access.isAdmin(ctx) && port.project_id !== fip.project_id)
      throw bad(`Cannot process floating IP association with Port ${port.id}, since that port is owned by a different project.`);
    const subnets = [...new Set(port.fixed_ips.map((f) => f.subnet_id))];
    const candidates = new Set<string>();
    for (const s of subnets) for (const r of await this.access.repo.routersBetween(fip.floating_network_id, s)) candidates.add(r);
    return { request: req, portId: port.id, candidates: [...candidates], locks: [`port:${port.id}`, ...[...candidates].map(routerLock)] };
  }

  /**
   * Pick the fixed IP and the router from what is committed (inside the plan's locks).
   * @throws InvalidInputError, NotFoundError (`ExternalGatewayForFloatingIPNotFound`),
   *   ConflictError (`FloatingIPPortAlreadyAssociated`, or the routers changed meanwhile)
   */
  async resolve(
    tx: NetworkTx,
    fip: Pick<FloatingIp, 'id' | 'floating_network_id'> & { floating_ip_address?: string },
    plan: AssociationPlan,
  ): Promise<ResolvedAssociation> {
    const port = await tx.getPort(plan.portId);
    if (!port) throw new NotFoundError('port', plan.portId);
    const role = await serviceRole(tx, port);
    if (role !== null) throw bad(`Port ${port.id} is unable to be assigned a floating IP: ${role}.`);
    const want = plan.request.fixed_ip_address;
    let fixed;
    if (want !== undefined) {
      if (parseIp(want)!.version !== 4)
        throw bad(`Cannot process floating IP association with ${want}, since that is not an IPv4 address.`);
      fixed = port.fixed_ips.find((f) => f.ip_address === want);
      if (!fixed) throw bad(`Port ${port.id} does not have fixed ip ${want}.`);
    } else {
      const v4 = ipv4FixedIps(port);
      if (v4.length === 0) throw bad(`Cannot add floating IP to port ${port.id} that has no fixed IPv4 addresses.`);
      if (v4.length > 1)
        throw bad(`Port ${port.id} has multiple fixed IPv4 addresses.  Must provide a specific IPv4 address when assigning a floating IP.`);
      fixed = v4[0]!;
    }
    const subnet = await tx.getSubnet(fixed.subnet_id);
    const routerId = subnet ? await routerFor(tx, fip.floating_network_id, subnet) : null;
    if (routerId === null)
      throw new NotFoundError(
        'router',
        fixed.subnet_id,
        `External network ${fip.floating_network_id} is not reachable from subnet ${fixed.subnet_id}.  Therefore, cannot associate Port ${port.id} with a Floating IP.`,
        'ExternalGatewayForFloatingIPNotFound',
      );
    if (!plan.candidates.includes(routerId))
      throw new ConflictError(
        `The routers between port ${port.id} and network ${fip.floating_network_id} changed meanwhile; please retry.`,
      );
    const taken = (await tx.floatingIpsOfPorts([port.id])).find(
      (o) => o.id !== fip.id && o.floating_network_id === fip.floating_network_id && o.fixed_ip_address === fixed.ip_address,
    );
    if (taken)
      throw new ConflictError(
        `Cannot associate floating IP ${fip.floating_ip_address ?? ''} (${fip.id}) with port ${port.id} using fixed IP ${fixed.ip_address}, as that fixed IP already has a floating IP on external network ${fip.floating_network_id}.`,
        'FloatingIPPortAlreadyAssociated',
      );
    return { port, fixedIp: fixed.ip_address, routerId };
  }
}
