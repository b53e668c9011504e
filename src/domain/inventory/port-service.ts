/**
 * `PortService`: the network ports of nodes (`/v1/ports`, `/v1/nodes/{id}/ports`).
 *
 * Sources: https://docs.openstack.org/api-ref/baremetal/#ports-ports and Ironic 21.4
 * `PortsController` and the conductor's `update_port`: create needs `address` (a MAC, stored
 * lower-case, unique → 409) and `node_uuid`; `local_link_connection` is validated; `internal_info`
 * is read-only; a MAC change of a deployed node needs maintenance; connectivity changes
 * (`pxe_enabled`, `local_link_connection`, `physical_network`, `portgroup_uuid`) need the node in
 * enroll, manageable, inspecting or inspect wait, or in maintenance. A port is visible exactly when
 * its node is (owner or lessee, as Ironic's `check_port_policy_and_retrieve`); rules
 * `baremetal:port:*` are judged against the node.
 *
 * Portgroups (issue 18, Ironic's `PortsController.post/patch`, `validate_port_physnet` and the
 * network interfaces' `port_changed`): `portgroup_uuid` names a portgroup of the port's own node
 * (else 400); the ports of a portgroup share one `physical_network` (else 409); a portgroup that
 * does not support standalone ports refuses members with PXE enabled or a VIF (409); lists take
 * `portgroup` (UUID or name; not together with a node, 403 as Ironic's OperationNotPermitted).
 *
 * esi additions (issue 14): a change of a port's wiring or hardware fields (`address`,
 * `is_smartnic`, `local_link_connection`, `node_uuid`, `physical_network`, `portgroup_uuid`,
 * `pxe_enabled`) also needs `baremetal:port:update:<field>` (owner and admin by default, not the
 * lessee); and a `local_link_connection` that names a port of a switch esi manages is checked
 * and held through the {@link SwitchPortGuard} (only admin, or the owner of the node the switch
 * port is registered to, may name it; one bare-metal port per switch port, else 409).
 */
import type { AuthContext } from '../auth.ts';
import { ConflictError, ForbiddenError, InvalidInputError, LockedError, NotFoundError } from '../errors.ts';
import { newUuid } from '../ids.ts';
import { isJsonObject, type JsonObject } from './masking.ts';
import { PORT_SORT_KEYS, type Node, type Port } from './model.ts';
import type { Portgroup } from './resource-model.ts';
import { PortgroupService } from './portgroup-service.ts';
import type { NodeAccess } from './node-access.ts';
import { applyPatch, parsePatch, rootOf } from './patch.ts';
import type { PortFilters, PortWriteResult } from './ports.ts';
import { canonicalUuid, normalizeLocalLinkConnection, normalizeMac, requireBool, requireUuid } from './validation.ts';

/** Keys a port create body may have (Ironic `PORT_SCHEMA`). */
const CREATE_KEYS = new Set([
  'address',
  'extra',
  'is_smartnic',
  'local_link_connection',
  'node_uuid',
  'physical_network',
  'portgroup_uuid',
  'pxe_enabled',
  'uuid',
]);
/** Roots a port PATCH may touch (Ironic `PATCH_ALLOWED_FIELDS`). */
const PATCHABLE = [
  'address',
  'extra',
  'is_smartnic',
  'local_link_connection',
  'node_uuid',
  'physical_network',
  'portgroup_uuid',
  'pxe_enabled',
];
const CONNECTIVITY = ['portgroup_uuid', 'pxe_enabled', 'local_link_connection', 'physical_network'] as const;
const CONNECTIVITY_STATES = new Set(['enroll', 'inspecting', 'inspect wait', 'manageable']);

/** A port list request. */
export interface PortListRequest {
  /** A node UUID or name to list the ports of. */
  readonly node?: string;
  /** A MAC address (normalised here). */
  readonly address?: string;
  /** A portgroup UUID or name whose member ports to list (not together with `node`). */
  readonly portgroup?: string;
  readonly limit: number;
  readonly marker: string | null;
  readonly sortKey: string;
  readonly sortDir: 'asc' | 'desc';
}

/** Fields whose change needs `baremetal:port:update:<field>` besides `baremetal:port:update`. */
const GUARDED_FIELDS: Readonly<Record<string, string>> = {
  address: 'address',
  is_smartnic: 'is_smartnic',
  local_link_connection: 'local_link_connection',
  node_id: 'node_uuid',
  physical_network: 'physical_network',
  portgroup_uuid: 'portgroup_uuid',
  pxe_enabled: 'pxe_enabled',
};

/** Validated port values from a create body or a patched port document. */
interface PortValues {
  address: string;
  extra: JsonObject;
  local_link_connection: Record<string, string>;
  pxe_enabled: boolean;
  physical_network: string | null;
  is_smartnic: boolean;
  portgroup_uuid: string | null;
}

function portValues(doc: Readonly<JsonObject>): PortValues {
  const isSmartNic =
    doc.is_smartnic === undefined || doc.is_smartnic === null ? false : (requireBool('is_smartnic', doc.is_smartnic) as boolean);
  const extra = doc.extra ?? {};
  if (!isJsonObject(extra)) throw new InvalidInputError('Invalid value for extra: must be an object.');
  const physnet = doc.physical_network ?? null;
  if (physnet !== null && (typeof physnet !== 'string' || physnet.length > 64))
    throw new InvalidInputError('physical_network must be a string of at most 64 characters.');
  if (physnet === '') throw new InvalidInputError('A non-empty value is required when setting physical_network');
  const portgroup = doc.portgroup_uuid ?? null;
  return {
    address: normalizeMac(doc.address),
    extra,
    local_link_connection: normalizeLocalLinkConnection(doc.local_link_connection, isSmartNic),
    pxe_enabled:
      doc.pxe_enabled === undefined || doc.pxe_enabled === null ? true : (requireBool('pxe_enabled', doc.pxe_enabled) as boolean),
    physical_network: physnet,
    is_smartnic: isSmartNic,
    portgroup_uuid: portgroup === null ? null : requireUuid('portgroup_uuid', portgroup),
  };
}

/** Port operations; see the module documentation. */
export class PortService {
  private readonly portgroups: PortgroupService;

  constructor(private readonly access: NodeAccess) {
    this.portgroups = new PortgroupService(access);
  }

  private get deps() {
    return this.access.deps;
  }

  /** The port's node, or a 404 for the port when the caller may not see that node. */
  private async visible(ctx: AuthContext, uuid: string, rule: string): Promise<{ port: Port; node: Node }> {
    const canonical = canonicalUuid(uuid);
    if (canonical === null) throw new InvalidInputError(`Expected a UUID for port: ${uuid}`, 'InvalidUUID');
    const port = await this.deps.ports.get(canonical);
    const node = port ? await this.deps.nodes.getById(port.node_id) : null;
    if (!port || !node || !this.access.canSee(ctx, node)) throw new NotFoundError('port', uuid);
    this.access.authorize(ctx, node, [rule]);
    return { port, node };
  }

  /** The node a body names, for create or move; unknown or invisible nodes are a 400. */
  private async targetNode(ctx: AuthContext, nodeUuid: unknown, rule: string): Promise<Node> {
    const uuid = requireUuid('node_uuid', nodeUuid);
    const node = await this.deps.nodes.get(uuid);
    if (!node || !this.access.canSee(ctx, node)) throw new InvalidInputError(`Node ${uuid} could not be found.`, 'NodeNotFound');
    this.access.authorize(ctx, node, [rule]);
    return node;
  }

  private unwrap(r: PortWriteResult, what: string): Port | null {
    if (r.ok) return r.port;
    if (r.reason === 'reserved')
      throw new LockedError(`The node of port ${what} is locked by a conductor, please retry after the current operation is completed.`);
    if (r.reason === 'portgroup') throw new InvalidInputError('Port can not be added to a portgroup belonging to a different node.');
    throw new NotFoundError('port', what);
  }

  /**
   * Write a port whose cabling names `llc` on `node`: hold the switch port first (403/409 from
   * the guard), then write; give it up again when the write fails, and let go of any other
   * switch port the port held when it succeeds.
   */
  private async cabled(
    ctx: AuthContext,
    node: Node,
    portUuid: string,
    llc: Readonly<Record<string, string>>,
    write: () => Promise<Port>,
  ): Promise<Port> {
    const guard = this.deps.switchPorts;
    const hold = guard ? await guard.claim(ctx, node, portUuid, llc) : null;
    let port: Port;
    try {
      port = await write();
    } catch (err) {
      await hold?.abort();
      throw err;
    }
    if (hold) await hold.commit();
    else await guard?.release(portUuid);
    return port;
  }

  /**
   * Check the portgroup a port is to belong to (see the module documentation).
   * @param portUuid the port (its own physical network is not compared with itself)
   * @param creating true for a create (Ironic's create message for standalone ports)
   * @throws InvalidInputError (unknown portgroup, another node's); ConflictError (physical
   *   network, standalone ports)
   */
  private async checkPortgroup(
    v: PortValues,
    node: Node,
    portUuid: string,
    creating: boolean,
    vif: string | null,
  ): Promise<Portgroup | null> {
    if (v.portgroup_uuid === null) return null;
    const pg = await this.deps.resources.portgroups.get(v.portgroup_uuid);
    if (!pg) throw new InvalidInputError(`Portgroup ${v.portgroup_uuid} could not be found.`, 'PortgroupNotFound');
    if (pg.node_id !== node.id) throw new InvalidInputError('Port can not be added to a portgroup belonging to a different node.');
    const physnets = await this.deps.resources.portgroups.memberPhysnets(pg.uuid, creating ? null : portUuid);
    if (physnets.length > 0 && physnets[0] !== v.physical_network) {
      throw new ConflictError(
        `Port with physical network ${v.physical_network ?? 'None'} cannot become a member of port group ${pg.uuid} which has ports in physical network ${physnets[0] ?? 'None'}.`,
      );
    }
    if (!pg.standalone_ports_supported && (v.pxe_enabled || vif !== null)) {
      const reason = [
        ...(v.pxe_enabled ? ["'pxe_enabled' was set to True"] : []),
        ...(vif !== null ? [`VIF ${vif} is attached to the port`] : []),
      ];
      throw new ConflictError(
        creating
          ? `Port group ${pg.uuid} doesn't support standalone ports. This port cannot be created as a member of that portgroup as the port's 'pxe_enabled' field was set to True.`
          : `Port group ${pg.uuid} doesn't support standalone ports. This port ${portUuid} cannot be a member of that port group because of: ${reason.join(', ')}`,
      );
    }
    return pg;
  }

  /**
   * Create a port (`baremetal:port:create`, judged on the node).
   * @throws InvalidInputError (unknown keys, bad MAC, unknown node…); ConflictError (duplicate
   *   MAC or uuid); ForbiddenError; LockedError
   */
  async create(ctx: AuthContext, body: unknown): Promise<Port> {
    if (!isJsonObject(body)) throw new InvalidInputError('The port must be a JSON object.');
    const unknown = Object.keys(body).filter((k) => !CREATE_KEYS.has(k));
    if (unknown.length > 0) throw new InvalidInputError(`Unexpected fields in port: ${unknown.join(', ')}.`);
    for (const k of ['address', 'node_uuid']) if (!Object.hasOwn(body, k)) throw new InvalidInputError(`'${k}' is a required property`);
    const node = await this.targetNode(ctx, body.node_uuid, 'baremetal:port:create');
    const v = portValues(body);
    const uuid = body.uuid === undefined || body.uuid === null ? newUuid() : requireUuid('uuid', body.uuid);
    if (await this.deps.ports.get(uuid)) throw new ConflictError(`A port with UUID ${uuid} already exists.`, 'PortAlreadyExists');
    await this.checkPortgroup(v, node, uuid, true, null);
    return this.cabled(ctx, node, uuid, v.local_link_connection, async () =>
      this.unwrap(await this.deps.ports.insert({ uuid, node_id: node.id, internal_info: {}, ...v }, this.deps.clock.now()), uuid)!,
    );
  }

  /** A port the caller may see (`baremetal:port:get`). */
  async get(ctx: AuthContext, uuid: string): Promise<Port> {
    const canonical = canonicalUuid(uuid);
    if (canonical === null) throw new InvalidInputError(`Expected a UUID for port: ${uuid}`, 'InvalidUUID');
    const port = await this.deps.ports.get(canonical);
    // Only the node's owner and lessee are judged: its base slice, not the whole row.
    const node = port ? await this.deps.nodes.sliceBy('id', port.node_id) : null;
    if (!port || !node || !this.access.canSee(ctx, node)) throw new NotFoundError('port', uuid);
    this.access.authorize(ctx, node, ['baremetal:port:get']);
    return port;
  }

  /**
   * One page of the ports the caller may see: `baremetal:port:list_all`, else
   * `baremetal:port:list` limited to ports of nodes the caller's project owns or leases.
   * With `node`, that node must be visible (404 otherwise).
   */
  async list(ctx: AuthContext, req: PortListRequest): Promise<Port[]> {
    const filters: { -readonly [K in keyof PortFilters]: PortFilters[K] } = {};
    if (req.node !== undefined && req.portgroup !== undefined)
      throw new ForbiddenError('Operation not permitted.', 'OperationNotPermitted');
    if (req.node !== undefined) filters.nodeId = (await this.access.visibleSlice(ctx, req.node, [])).id;
    if (req.portgroup !== undefined)
      filters.portgroupUuid = (await this.portgroups.visible(ctx, req.portgroup, 'baremetal:node:get')).portgroup.uuid;
    if (!this.deps.policy.check('baremetal:port:list_all', {}, ctx)) {
      if (!ctx.projectId) throw new ForbiddenError('Access was denied to the following resource: baremetal:port:list_all');
      this.deps.policy.authorize('baremetal:port:list', {}, ctx);
      filters.project = ctx.projectId;
    }
    if (req.address !== undefined) filters.address = normalizeMac(req.address);
    if (!PORT_SORT_KEYS.has(req.sortKey)) throw new InvalidInputError(`The sort_key value ${req.sortKey} is an invalid field for sorting`);
    let marker: Port | null = null;
    if (req.marker !== null) {
      const m = canonicalUuid(req.marker);
      marker = m ? await this.deps.ports.get(m) : null;
      const mnode = marker ? await this.deps.nodes.sliceBy('id', marker.node_id) : null;
      if (!marker || !mnode || !this.access.canSee(ctx, mnode)) throw new NotFoundError('port', req.marker);
    }
    return this.deps.ports.list({ filters, limit: req.limit, marker, sortKey: req.sortKey, sortDir: req.sortDir });
  }

  /**
   * Update a port with a JSON-PATCH (`baremetal:port:update`; moving it to another node also
   * needs `baremetal:port:create` on that node).
   */
  async update(ctx: AuthContext, uuid: string, body: unknown): Promise<Port> {
    const ops = parsePatch(body);
    for (const op of ops) {
      const root = rootOf(op.path);
      if (!PATCHABLE.includes(root))
        throw new InvalidInputError(`Cannot patch ${op.path}. Only the following can be updated: ${PATCHABLE.join(', ')}`);
    }
    const { port, node } = await this.visible(ctx, uuid, 'baremetal:port:update');
    const doc: JsonObject = {
      address: port.address,
      extra: port.extra,
      is_smartnic: port.is_smartnic,
      local_link_connection: port.local_link_connection,
      node_uuid: port.node_uuid,
      physical_network: port.physical_network,
      portgroup_uuid: port.portgroup_uuid,
      pxe_enabled: port.pxe_enabled,
    };
    const patched = applyPatch(doc, ops);
    const v = portValues(patched);
    const changes: Record<string, unknown> = {};
    for (const [k, val] of Object.entries(v))
      if (JSON.stringify(val) !== JSON.stringify((port as unknown as JsonObject)[k])) changes[k] = val;
    let target = node;
    const newNodeUuid = requireUuid('node_uuid', patched.node_uuid);
    if (newNodeUuid !== port.node_uuid) {
      target = await this.targetNode(ctx, newNodeUuid, 'baremetal:port:create');
      changes.node_id = target.id;
    }
    if (Object.keys(changes).length === 0) return port;
    this.access.authorize(
      ctx,
      node,
      Object.keys(changes).flatMap((k) => (GUARDED_FIELDS[k] !== undefined ? [`baremetal:port:update:${GUARDED_FIELDS[k]}`] : [])),
    );
    const vif = port.internal_info.tenant_vif_port_id;
    if (
      typeof vif === 'string' &&
      vif !== '' &&
      ['address', 'local_link_connection', 'physical_network', 'node_id', 'portgroup_uuid'].some((k) => Object.hasOwn(changes, k))
    ) {
      throw new ConflictError(
        `Port ${port.uuid} has VIF ${vif} attached; detach it before changing the port's address, node or connectivity.`,
        'PortHasVif',
      );
    }
    if (['portgroup_uuid', 'physical_network', 'pxe_enabled', 'node_id'].some((k) => Object.hasOwn(changes, k)))
      await this.checkPortgroup(v, target, port.uuid, false, typeof vif === 'string' && vif !== '' ? vif : null);
    for (const n of target === node ? [node] : [node, target]) {
      if (changes.address !== undefined && (n.provision_state === 'active' || n.instance_uuid !== null) && !n.maintenance) {
        throw new ConflictError(
          `Cannot update hardware address for port ${port.uuid} as node ${n.uuid} is active or has instance UUID assigned`,
          'InvalidState',
        );
      }
      if (CONNECTIVITY.some((k) => Object.hasOwn(changes, k)) && !(CONNECTIVITY_STATES.has(n.provision_state) || n.maintenance)) {
        throw new ConflictError(
          `Port ${port.uuid} can not have any connectivity attributes (${CONNECTIVITY.join(', ')}) updated unless node ${n.uuid} is in a ${[...CONNECTIVITY_STATES].join(', ')} state or in maintenance mode. The current state is ${n.provision_state}.`,
          'InvalidState',
        );
      }
    }
    const write = async (): Promise<Port> => this.unwrap(await this.deps.ports.update(port.uuid, changes, this.deps.clock.now()), uuid)!;
    if (!Object.hasOwn(changes, 'local_link_connection') && !Object.hasOwn(changes, 'node_id')) return write();
    return this.cabled(ctx, target, port.uuid, v.local_link_connection, write);
  }

  /** Delete a port (`baremetal:port:delete`). */
  async delete(ctx: AuthContext, uuid: string): Promise<void> {
    const { port } = await this.visible(ctx, uuid, 'baremetal:port:delete');
    const vif = port.internal_info.tenant_vif_port_id;
    if (typeof vif === 'string' && vif !== '')
      throw new ConflictError(`Port ${port.uuid} has VIF ${vif} attached; detach it before deleting the port.`, 'PortHasVif');
    this.unwrap(await this.deps.ports.delete(port.uuid), uuid);
    await this.deps.switchPorts?.release(port.uuid);
  }
}
