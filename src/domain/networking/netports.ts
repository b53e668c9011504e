/**
 * Ports (Neutron `/v2.0/ports` with the `binding` extension).
 *
 * - Create on a network the caller may see (`create_port`); attribute rules guard a chosen
 *   MAC, chosen addresses, a `network:*` device owner and the binding fields (Neutron's
 *   defaults: the network's owner or an admin). The MAC is Neutron's `fa:16:3e:…` form unless
 *   given; addresses come from ./ip-allocation.ts, under the network's lock.
 * - `binding:host_id`/`binding:profile` are not written through this API: esi binds a port to
 *   a bare-metal node by VIF attach (`POST /baremetal/v1/nodes/{node}/vifs`), which sets them
 *   (src/domain/networking/binding.ts). Admins get a 400 saying so; others the policy's 403.
 * - Read: the binding fields only for callers passing `get_port:binding:*` (admins); a trunk's
 *   parent carries `trunk_details`.
 * - Update: name, description, admin state, device owner/id, addresses, MAC (admin, unbound
 *   ports only). A change of the admin state of a bound port reconfigures its switch port.
 * - Delete: refused for a trunk's parent or sub-port (409, Neutron's `PortInUseAsTrunkParent`
 *   and `PortInUseAsSubPort`); a bound port is unbound first (its switch port is quarantined).
 * - Ports esi manages — a router's gateway and interface ports, a network's DHCP port — are
 *   not deleted through this API (409 `ServicePortInUse`, Neutron's "cannot be deleted directly
 *   via the port API") and keep their addresses, MAC and device fields (409); they go with
 *   `remove_router_interface`, the router's gateway, or the last DHCP-enabled subnet.
 * - External networks (`router:external`): only admins, the network's owner, and projects it
 *   is shared with create ports on them (403 otherwise; Neutron answers 404 for a network the
 *   project does not own and that is not shared, but esi shows external networks to everyone).
 * - Floating IPs (./fip-links.ts): deleting a port disassociates its floating IPs and deletes
 *   the port forwards to it; a change of addresses may not drop a fixed IP a floating IP is
 *   associated with (400) and deletes the forwards to an address it drops.
 * - Every change wakes the dataplane for the network's DHCP service (its hosts).
 */
import type { AuthContext } from '../auth.ts';
import { ConflictError, ForbiddenError, InvalidInputError } from '../errors.ts';
import { newUuid } from '../ids.ts';
import { sharedWithCaller, type NetworkAccess } from './access.ts';
import { bool, checkKeys, description, mac, name, str, uuid, type Attrs, givenProject } from './attributes.ts';
import { neutronMac, switchKeyOf, unbindPort } from './binding.ts';
import { allocateIps, parseFixedIps } from './ip-allocation.ts';
import { COMMON_ATTRS, filterNames, rowRules, toPage, toQuery, type AttributeSpec, type ListRequest, type Page } from './listing.ts';
import { dhcpDeviceId, isDhcpPort } from './dhcp-ports.ts';
import { DEVICE_OWNER_FLOATINGIP, type Network, type NetPort } from './model.ts';
import { onPortIpsChange, releasePorts } from './fip-links.ts';
import type { NetPortChanges, NetworkReads } from './ports.ts';

/** Why esi manages a port (a router's or the network's DHCP port), or null for a user's port. */
async function managedBy(reads: NetworkReads, p: NetPort): Promise<string | null> {
  const rp = await reads.routerPortOf(p.id);
  if (rp) return `has device owner ${rp.port_type} (router ${rp.router_id})`;
  if (isDhcpPort(p)) return `it is the DHCP port ${dhcpDeviceId(p.network_id)} of network ${p.network_id}, which esi manages`;
  if (p.device_owner === DEVICE_OWNER_FLOATINGIP) return `has device owner ${DEVICE_OWNER_FLOATINGIP} (floating IP ${p.device_id})`;
  return null;
}

/** A port as one caller sees it. */
export interface PortView {
  readonly port: NetPort;
  /** Attributes the caller may not read (`binding:host_id`…). */
  readonly hidden: ReadonlySet<string>;
  /** For a trunk's parent: the sub-ports with their MACs. */
  readonly trunkDetails: {
    trunk_id: string;
    sub_ports: Array<{ segmentation_id: number; segmentation_type: string; port_id: string; mac_address: string }>;
  } | null;
}

const BINDING = ['binding:host_id', 'binding:profile', 'binding:vif_type', 'binding:vif_details'] as const;
const CREATE = new Set([
  'network_id',
  'name',
  'description',
  'admin_state_up',
  'mac_address',
  'fixed_ips',
  'device_owner',
  'device_id',
  'binding:host_id',
  'binding:profile',
  'binding:vnic_type',
  'project_id',
  'tenant_id',
  'security_groups',
]);
const UPDATE = new Set([
  'name',
  'description',
  'admin_state_up',
  'mac_address',
  'fixed_ips',
  'device_owner',
  'device_id',
  'binding:host_id',
  'binding:profile',
  'binding:vnic_type',
]);
const READ_ONLY = new Set([
  'id',
  'status',
  'created_at',
  'updated_at',
  'revision_number',
  'binding:vif_type',
  'binding:vif_details',
  'trunk_details',
]);
/** Attributes a request may name but not set, by method (Neutron's "Attribute 'x' not allowed in POST"). */
export const PORT_NOT_SETTABLE = { POST: READ_ONLY, PUT: new Set([...READ_ONLY, 'network_id', 'project_id', 'tenant_id']) } as const;
const VNIC_TYPES = new Set(['normal', 'baremetal']);

const ATTRS: Readonly<Record<string, AttributeSpec>> = {
  ...COMMON_ATTRS,
  network_id: { column: 'network_id', type: 'id' },
  mac_address: { column: 'mac_address', type: 'string' },
  admin_state_up: { column: 'admin_state_up', type: 'bool' },
  status: { column: 'status', type: 'string' },
  device_owner: { column: 'device_owner', type: 'string' },
  device_id: { column: 'device_id', type: 'string' },
  'binding:host_id': { column: 'binding_host_id', type: 'string', readRule: 'get_port:binding:host_id', sortable: false },
  'binding:vnic_type': { column: 'binding_vnic_type', type: 'string', sortable: false },
  fixed_ip_address: { column: 'fixed_ip_address', type: 'string', sortable: false },
  fixed_ip_subnet: { column: 'fixed_ip_subnet', type: 'id', sortable: false },
};

/** The attribute names a list filters on (any other is a 400) plus `fixed_ips` (`ip_address=…` or `subnet_id=…`). */
export const PORT_FILTERS = filterNames(ATTRS, 'fixed_ips');

/** Port operations; see the module documentation. */
export class NetPortService {
  constructor(private readonly access: NetworkAccess) {}

  /** The caller's views of ports (sub-port MACs in one query). */
  async views(ctx: AuthContext, ports: readonly NetPort[], networks?: ReadonlyMap<string, Network>): Promise<PortView[]> {
    const nets = networks ?? (await this.access.repo.networksByIds(ports.map((p) => p.network_id)));
    const trunks = await this.access.repo.trunksByIds(ports.flatMap((p) => (p.trunk_id ? [p.trunk_id] : [])));
    const subs = await this.access.repo.portsByIds([...trunks.values()].flatMap((t) => t.sub_ports.map((s) => s.port_id)));
    return ports.map((port) => {
      const n = nets.get(port.network_id);
      const target = n ? this.access.childTarget(port, n, ctx) : { project_id: port.project_id };
      const hidden = new Set(BINDING.filter((b) => !this.access.check(`get_port:${b}`, target, ctx)));
      const t = port.trunk_id ? trunks.get(port.trunk_id) : undefined;
      const trunkDetails = t
        ? {
            trunk_id: t.id,
            sub_ports: t.sub_ports.map((s) => ({
              segmentation_id: s.segmentation_id,
              segmentation_type: s.segmentation_type,
              port_id: s.port_id,
              mac_address: subs.get(s.port_id)?.mac_address ?? '',
            })),
          }
        : null;
      return { port, hidden, trunkDetails };
    });
  }

  private async view(ctx: AuthContext, port: NetPort): Promise<PortView> {
    return (await this.views(ctx, [port]))[0]!;
  }

  /** Check the attribute rules of a create or update body. */
  private attributeRules(op: 'create_port' | 'update_port', a: Attrs, target: Record<string, unknown>, ctx: AuthContext): void {
    if (a.device_owner !== undefined && a.device_owner !== '')
      this.access.authorize(`${op}:device_owner`, { ...target, 'port:network_device': String(a.device_owner).startsWith('network:') }, ctx);
    if (a.mac_address !== undefined) this.access.authorize(`${op}:mac_address`, target, ctx);
    const fixed = Array.isArray(a.fixed_ips) ? (a.fixed_ips as Array<Record<string, unknown>>) : [];
    if (fixed.some((f) => f && f.ip_address !== undefined)) this.access.authorize(`${op}:fixed_ips:ip_address`, target, ctx);
    else if (fixed.some((f) => f && f.subnet_id !== undefined)) this.access.authorize(`${op}:fixed_ips:subnet_id`, target, ctx);
    const host = a['binding:host_id'];
    if (host !== undefined && host !== null && typeof host !== 'string')
      throw new InvalidInputError(
        `Invalid input for binding:host_id. Reason: '${JSON.stringify(host)}' is not a valid string.`,
        'HTTPBadRequest',
      );
    const profile = a['binding:profile'];
    if (profile !== undefined && profile !== null && (typeof profile !== 'object' || Array.isArray(profile))) {
      throw new InvalidInputError(
        `Invalid input for binding:profile. Reason: '${JSON.stringify(profile)}' is not a dictionary.`,
        'HTTPBadRequest',
      );
    }
    for (const b of ['binding:host_id', 'binding:profile'] as const) {
      const v = a[b];
      const set = v !== undefined && v !== null && v !== '' && !(typeof v === 'object' && Object.keys(v).length === 0);
      if (!set) continue;
      this.access.authorize(`${op}:${b}`, target, ctx);
      throw new InvalidInputError(
        `Invalid input for ${b}. Reason: esi binds ports to bare-metal nodes by VIF attach (openstack baremetal node vif attach), not by setting ${b}.`,
        'HTTPBadRequest',
      );
    }
  }

  /**
   * Create a port.
   * @throws NotFoundError (network), ForbiddenError, InvalidInputError, ConflictError (MAC or
   *   address in use, addresses exhausted)
   */
  async create(ctx: AuthContext, body: unknown): Promise<PortView> {
    const a = checkKeys(body, 'port', CREATE, READ_ONLY, 'POST');
    const network = await this.access.network(ctx, uuid(a, 'network_id'));
    const projectId = givenProject(a) ?? ctx.projectId;
    if (!projectId || (projectId !== ctx.projectId && !this.access.isAdmin(ctx))) {
      throw new InvalidInputError(
        "Specifying 'project_id' or 'tenant_id' other than the authenticated project in request requires admin privileges",
        'HTTPBadRequest',
      );
    }
    const target = this.access.childTarget({ project_id: projectId }, network, ctx);
    this.access.authorize('create_port', target, ctx);
    if (network.router_external && !sharedWithCaller(network, ctx) && !this.access.check('admin_or_network_owner', target, ctx))
      throw new ForbiddenError(`Only an admin or the network's owner may create ports on external network ${network.id}.`);
    this.attributeRules('create_port', a, target, ctx);
    if (Array.isArray(a.security_groups) ? a.security_groups.length > 0 : a.security_groups !== undefined && a.security_groups !== null) {
      throw new InvalidInputError(
        'Invalid input for security_groups. Reason: security groups are not supported by esi (bare-metal ports are not filtered).',
        'HTTPBadRequest',
      );
    }
    const vnic = str(a, 'binding:vnic_type', 'normal');
    if (!VNIC_TYPES.has(vnic))
      throw new InvalidInputError(
        `Invalid input for binding:vnic_type. Reason: '${vnic}' is not in ${JSON.stringify([...VNIC_TYPES])}.`,
        'HTTPBadRequest',
      );
    const requestedIps = parseFixedIps(a.fixed_ips);
    const given = a.mac_address !== undefined ? mac(a, 'mac_address') : null;
    const now = this.access.now();
    const port = await this.access.repo.locked([`network:${network.id}`], async (tx) => {
      if (!(await tx.getNetwork(network.id))) throw new ConflictError(`Network ${network.id} was deleted meanwhile.`, 'NetworkNotFound');
      const fixed_ips = await allocateIps(tx, network.id, requestedIps);
      const base = {
        id: newUuid(),
        name: name(a),
        description: description(a),
        project_id: projectId,
        network_id: network.id,
        admin_state_up: bool(a, 'admin_state_up', true),
        status: 'DOWN' as const,
        device_owner: str(a, 'device_owner', ''),
        device_id: str(a, 'device_id', ''),
        binding_host_id: '',
        binding_profile: {},
        binding_vnic_type: vnic,
        binding_vif_type: 'unbound',
        binding_vif_details: {},
        fixed_ips,
        bound_port_uuid: null,
        created_at: now,
        updated_at: now,
        revision_number: 1,
      };
      for (let attempt = 0; ; attempt++) {
        try {
          await tx.insertPort({ ...base, mac_address: given ?? neutronMac() });
          break;
        } catch (err) {
          if (given !== null || attempt >= 5 || !(err instanceof ConflictError) || err.code !== 'MacAddressInUse') throw err;
        }
      }
      return (await tx.getPort(base.id))!;
    });
    this.access.deps.dataplane.notifyDhcp(port.network_id);
    return this.view(ctx, port);
  }

  /** A port the caller may see. @throws NotFoundError */
  async get(ctx: AuthContext, id: string): Promise<PortView> {
    return this.view(ctx, (await this.access.port(ctx, id)).port);
  }

  /** One page of the ports the caller may see (`fixed_ips=ip_address=…` filters supported). */
  async list(ctx: AuthContext, req: ListRequest): Promise<Page<PortView>> {
    const filters: Record<string, string[]> = {};
    for (const [k, values] of Object.entries(req.filters)) {
      if (k !== 'fixed_ips') {
        filters[k] = [...values];
        continue;
      }
      for (const v of values) {
        const m = /^(ip_address|subnet_id)=(.*)$/.exec(v);
        if (!m)
          throw new InvalidInputError(
            `Invalid input for fixed_ips filter: '${v}' (use ip_address=<ip> or subnet_id=<id>).`,
            'HTTPBadRequest',
          );
        const key = m[1] === 'ip_address' ? 'fixed_ip_address' : 'fixed_ip_subnet';
        filters[key] = [...(filters[key] ?? []), m[2]!];
      }
    }
    const markerId = req.marker === null ? null : (await this.access.port(ctx, req.marker)).port.id;
    const own = { project_id: ctx.projectId, tenant_id: ctx.projectId, 'network:project_id': ctx.projectId };
    const q = toQuery({ ...req, filters }, ATTRS, this.access.listScope(ctx), (rule) => this.access.check(rule, own, ctx), markerId);
    const rules = ['get_port', ...rowRules({ ...req, filters }, ATTRS)];
    const rows = await this.access.repo.listPorts(q);
    const nets = await this.access.repo.networksByIds(rows.map((p) => p.network_id));
    const page = toPage(rows, req, (p) => {
      const n = nets.get(p.network_id);
      if (!n) return null;
      const target = this.access.childTarget(p, n, ctx);
      return rules.every((r) => this.access.check(r, target, ctx)) ? p : null;
    });
    return { items: await this.views(ctx, page.items, nets), more: page.more };
  }

  /** Update a port. @throws NotFoundError, ForbiddenError, InvalidInputError, ConflictError */
  async update(ctx: AuthContext, id: string, body: unknown): Promise<PortView> {
    const { port, network } = await this.access.port(ctx, id);
    const a = checkKeys(body, 'port', UPDATE, PORT_NOT_SETTABLE.PUT, 'PUT');
    const target = this.access.childTarget(port, network, ctx);
    this.access.authorize('update_port', target, ctx);
    this.attributeRules('update_port', a, target, ctx);
    const changes: { -readonly [K in keyof NetPortChanges]: NetPortChanges[K] } = {};
    if (a.name !== undefined) changes.name = name(a);
    if (a.description !== undefined) changes.description = description(a);
    if (a.admin_state_up !== undefined) changes.admin_state_up = bool(a, 'admin_state_up', true);
    if (a.device_owner !== undefined) changes.device_owner = str(a, 'device_owner', '');
    if (a.device_id !== undefined) changes.device_id = str(a, 'device_id', '');
    if (a['binding:vnic_type'] !== undefined) {
      const vnic = str(a, 'binding:vnic_type', 'normal');
      if (!VNIC_TYPES.has(vnic))
        throw new InvalidInputError(
          `Invalid input for binding:vnic_type. Reason: '${vnic}' is not in ${JSON.stringify([...VNIC_TYPES])}.`,
          'HTTPBadRequest',
        );
      changes.binding_vnic_type = vnic;
    }
    if (a.mac_address !== undefined) changes.mac_address = mac(a, 'mac_address');
    const requestedIps = parseFixedIps(a.fixed_ips);
    const routers: string[] = [];
    const updated = await this.access.repo.locked([`network:${network.id}`, `port:${port.id}`], async (tx) => {
      const cur = await tx.getPort(port.id);
      if (!cur) throw new ConflictError(`Port ${port.id} was deleted meanwhile.`, 'PortNotFound');
      const managed =
        requestedIps !== null || changes.mac_address !== undefined || changes.device_owner !== undefined || changes.device_id !== undefined
          ? await managedBy(tx, cur)
          : null;
      if (managed !== null)
        throw new ConflictError(`Port ${cur.id} cannot change its addresses, MAC or device here: ${managed}.`, 'ServicePortInUse');
      const now = this.access.now();
      if (changes.mac_address !== undefined && changes.mac_address !== cur.mac_address && cur.bound_port_uuid !== null) {
        throw new ConflictError(
          `Port ${cur.id} is bound to a bare-metal port; detach the VIF before changing its MAC address.`,
          'PortBound',
        );
      }
      if (requestedIps !== null) {
        const ips = await allocateIps(tx, cur.network_id, requestedIps, cur.fixed_ips);
        routers.push(...(await onPortIpsChange(tx, cur.id, ips, now)));
        await tx.setPortIps(cur.id, cur.network_id, ips, now);
      }
      await tx.updatePort(cur.id, changes, now);
      if (changes.admin_state_up !== undefined && changes.admin_state_up !== cur.admin_state_up && cur.bound_port_uuid !== null) {
        const np = await tx.nodePortByVif(cur.id);
        const key = np ? await switchKeyOf(tx, np) : null;
        if (key) await tx.touchSwitchPorts([key], now);
        return { port: (await tx.getPort(cur.id))!, wake: key?.switch_uuid ?? null };
      }
      return { port: (await tx.getPort(cur.id))!, wake: null };
    });
    if (updated.wake) this.access.deps.wake.notifySwitch(updated.wake);
    this.access.deps.dataplane.notifyDhcp(updated.port.network_id);
    for (const r of routers) this.access.deps.dataplane.notifyRouter(r);
    return this.view(ctx, updated.port);
  }

  /**
   * Delete a port. A port in a trunk is 409 naming the trunk only when the caller may see it
   * (a network's owner may delete another project's port on its network, not learn its trunk).
   * @throws NotFoundError, ForbiddenError, ConflictError (in a trunk)
   */
  async delete(ctx: AuthContext, id: string): Promise<void> {
    const { port, network } = await this.access.port(ctx, id);
    this.access.authorize('delete_port', this.access.childTarget(port, network, ctx), ctx);
    const np = port.bound_port_uuid !== null ? await this.access.repo.nodePortByVif(port.id) : null;
    const keys = [`network:${network.id}`, `port:${port.id}`, ...(np ? [`node:${np.node_uuid}`] : [])];
    const routers: string[] = [];
    const wake = await this.access.repo.locked(keys, async (tx) => {
      const cur = await tx.getPort(port.id);
      if (!cur) return null;
      const managed = await managedBy(tx, cur);
      if (managed !== null)
        throw new ConflictError(`Port ${cur.id} cannot be deleted directly via the port API: ${managed}.`, 'ServicePortInUse');
      const trunk = await tx.trunkOfPort(cur.id);
      if (trunk?.role === 'parent')
        throw new ConflictError(
          `Port ${cur.id} is currently a parent port for ${this.access.trunkRef(ctx, trunk.trunk)}.`,
          'PortInUseAsTrunkParent',
        );
      if (trunk?.role === 'subport')
        throw new ConflictError(
          `Port ${cur.id} is currently a subport for ${this.access.trunkRef(ctx, trunk.trunk)}.`,
          'PortInUseAsSubPort',
        );
      const now = this.access.now();
      // Its floating IPs are disassociated, its forwards deleted (Neutron); an admin's floating
      // IP on a project's port is the admin's to disassociate (409 FipAssociated).
      const mine = (f: { project_id: string }) => this.access.isAdmin(ctx) || f.project_id === ctx.projectId;
      routers.push(...(await releasePorts(tx, [cur.id], now, 'disassociate', mine)));
      const key = cur.bound_port_uuid !== null ? await unbindPort(tx, cur, now) : null;
      if (key) await tx.touchSwitchPorts([key], now);
      await tx.deletePort(cur.id);
      return key?.switch_uuid ?? null;
    });
    if (wake) this.access.deps.wake.notifySwitch(wake);
    this.access.deps.dataplane.notifyDhcp(network.id);
    for (const r of routers) this.access.deps.dataplane.notifyRouter(r);
  }
}
