/**
 * Trunks (Neutron `/v2.0/trunks`, the `trunk` extension): a parent port carrying its network
 * untagged and sub-ports carrying theirs tagged.
 *
 * - Create (`create_trunk`): the parent must be a port the caller may see and update, not
 *   already a trunk's parent or sub-port, and not bound to a node (409 `ParentPortInUse`).
 * - Sub-ports: ports of the trunk's own project (any port for an admin), each in at most one
 *   trunk, not bound themselves, each with a distinct VLAN id. `segmentation_type` is `vlan`
 *   with `segmentation_id` 1…4094, or `inherit` (the id is the sub-port network's VLAN; esi's
 *   own trunk commands use it). A sub-port gets `device_owner` `trunk:subport` and `device_id`
 *   = the trunk, as in Neutron; removal clears both. A port the caller may not see is 404;
 *   another project's port it sees (a port on the caller's network) is 403. Neutron's trunk
 *   plugin (`neutron/services/trunk/rules.py`) only needs the sub-port to be visible to the
 *   caller; esi is stricter because on a bare-metal switch a sub-port is a tagged VLAN of the
 *   trunk's node: taking a port of another project into one's trunk would rewrite that port
 *   (`device_owner`, `device_id`, binding) and leave it unusable to its owner.
 * - Adding or removing sub-ports of a trunk whose parent is bound reconfigures the switch
 *   port at once (tagged VLANs follow). Adding needs, for each new sub-port, what attaching it
 *   as a VIF would (`attach_port`: a network the caller owns or that is shared with it, see
 *   ./vifs.ts), since it puts the sub-port's VLAN on the node's switch port there and then.
 *   Deleting such a trunk is refused (409 `TrunkInUse`).
 * - Messages name another project's trunk only as "another trunk".
 */
import type { AuthContext } from '../auth.ts';
import { ConflictError, ForbiddenError, InvalidInputError, NotFoundError } from '../errors.ts';
import { newUuid } from '../ids.ts';
import type { NetworkAccess } from './access.ts';
import { bool, canonicalId, checkKeys, description, name, uuid, type Attrs, givenProject } from './attributes.ts';
import { switchKeyOf } from './binding.ts';
import { COMMON_ATTRS, filterNames, toPage, toQuery, type AttributeSpec, type ListRequest, type Page } from './listing.ts';
import { VLAN_MAX, VLAN_MIN, type SubPort, type Trunk } from './model.ts';
import type { NetworkTx } from './ports.ts';

const CREATE = new Set(['port_id', 'name', 'description', 'admin_state_up', 'sub_ports', 'project_id', 'tenant_id']);
const UPDATE = new Set(['name', 'description', 'admin_state_up']);
const READ_ONLY = new Set(['id', 'status', 'created_at', 'updated_at', 'revision_number']);
/** Attributes a request may name but not set, by method (Neutron's "Attribute 'x' not allowed in POST"). */
export const TRUNK_NOT_SETTABLE = {
  POST: READ_ONLY,
  PUT: new Set([...READ_ONLY, 'port_id', 'sub_ports', 'project_id', 'tenant_id']),
} as const;

const ATTRS: Readonly<Record<string, AttributeSpec>> = {
  ...COMMON_ATTRS,
  port_id: { column: 'port_id', type: 'id' },
  status: { column: 'status', type: 'string' },
  admin_state_up: { column: 'admin_state_up', type: 'bool' },
};

/** The attribute names a list filters on (any other is a 400). */
export const TRUNK_FILTERS = filterNames(ATTRS);

/** A sub-port as requested. */
interface SubPortRequest {
  readonly port_id: string;
  readonly segmentation_type: 'vlan' | 'inherit';
  readonly segmentation_id: number | null;
}

/** Parse a `sub_ports` list (create, add_subports). @throws InvalidInputError */
export function parseSubPorts(v: unknown, needSegmentation: boolean): SubPortRequest[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new InvalidInputError('Invalid input for sub_ports. Reason: must be a list.', 'HTTPBadRequest');
  return v.map((s: unknown) => {
    const o = s as Record<string, unknown> | null;
    if (!o || typeof o !== 'object' || typeof o.port_id !== 'string')
      throw new InvalidInputError(`Invalid input for sub_ports. Reason: '${JSON.stringify(s)}' has no port_id.`, 'HTTPBadRequest');
    if (!needSegmentation) return { port_id: canonicalId(o.port_id), segmentation_type: 'vlan', segmentation_id: null };
    const type = o.segmentation_type ?? 'vlan';
    if (type !== 'vlan' && type !== 'inherit')
      throw new InvalidInputError(
        `Invalid input for sub_ports. Reason: segmentation_type '${String(type)}' is not supported (vlan, inherit).`,
        'HTTPBadRequest',
      );
    let id: number | null = null;
    if (type === 'vlan') {
      const raw = typeof o.segmentation_id === 'string' && /^\d+$/.test(o.segmentation_id) ? Number(o.segmentation_id) : o.segmentation_id;
      if (typeof raw !== 'number' || !Number.isInteger(raw) || raw < VLAN_MIN || raw > VLAN_MAX) {
        throw new InvalidInputError(
          `Invalid input for operation: Segmentation ID '${String(o.segmentation_id)}' is out of range ${VLAN_MIN} through ${VLAN_MAX} for sub-port ${o.port_id}.`,
          'InvalidInput',
        );
      }
      id = raw;
    }
    return { port_id: canonicalId(o.port_id), segmentation_type: type, segmentation_id: id };
  });
}

/** Trunk operations; see the module documentation. */
export class TrunkService {
  constructor(private readonly access: NetworkAccess) {}

  private target(t: Pick<Trunk, 'project_id'>) {
    return { project_id: t.project_id, tenant_id: t.project_id };
  }

  /**
   * Check that every requested sub-port is visible to the caller and belongs to the trunk's
   * project (any project for an admin), before taking locks (a port's project never changes).
   * @throws NotFoundError (a port the caller may not see), ForbiddenError (another project's port)
   */
  private async ownSubPorts(ctx: AuthContext, trunkProject: string, reqs: readonly SubPortRequest[]): Promise<void> {
    const admin = this.access.isAdmin(ctx);
    for (const r of reqs) {
      const { port } = await this.access.port(ctx, r.port_id);
      if (!admin && port.project_id !== trunkProject) {
        throw new ForbiddenError(
          `Port ${r.port_id} belongs to another project: a trunk's sub-ports must be ports of the trunk's project.`,
          'PolicyNotAuthorized',
        );
      }
    }
  }

  /**
   * With the trunk's parent bound to a node, the new sub-ports go onto the node's switch port
   * at once: check `attach_port` on each, as a VIF attach checks a trunk's sub-ports.
   * @throws ForbiddenError (`PolicyNotAuthorized`)
   */
  private async checkAttachable(ctx: AuthContext, tx: NetworkTx, added: readonly SubPort[]): Promise<void> {
    for (const s of added) {
      const port = await tx.getPort(s.port_id);
      const network = port ? await tx.getNetwork(port.network_id) : null;
      if (!port || !network || !this.access.check('attach_port', this.access.childTarget(port, network, ctx), ctx)) {
        throw new ForbiddenError(
          `(rule:attach_port) is disallowed by policy: the trunk is attached to a node and sub-port ${s.port_id} is on a network you may not attach.`,
          'PolicyNotAuthorized',
        );
      }
    }
  }

  /**
   * Check requested sub-ports inside the lock (ports already checked visible by
   * {@link ownSubPorts}) and resolve `inherit` VLANs.
   * @throws NotFoundError (port), ConflictError (in a trunk, bound, duplicate VLAN), InvalidInputError
   */
  private async resolveSubPorts(
    ctx: AuthContext,
    tx: NetworkTx,
    parentId: string,
    existing: readonly SubPort[],
    reqs: readonly SubPortRequest[],
  ): Promise<SubPort[]> {
    const vlans = new Set(existing.map((s) => s.segmentation_id));
    const out: SubPort[] = [];
    for (const r of reqs) {
      const port = await tx.getPort(r.port_id);
      if (!port) throw new NotFoundError('port', r.port_id);
      if (port.id === parentId)
        throw new ConflictError(`Port ${port.id} is the parent port of the trunk and cannot be a sub-port.`, 'SubPortBindingError');
      const inTrunk = await tx.trunkOfPort(port.id);
      if (inTrunk)
        throw new ConflictError(
          `Port ${port.id} is currently in use by ${this.access.trunkRef(ctx, inTrunk.trunk)}.`,
          'PortInUseAsSubPort',
        );
      if (port.bound_port_uuid !== null)
        throw new ConflictError(`Port ${port.id} is bound to a bare-metal port and cannot be a sub-port.`, 'PortInUse');
      let vlan = r.segmentation_id;
      if (vlan === null) {
        const n = await tx.getNetwork(port.network_id);
        if (!n || n.segmentation_id === null)
          throw new InvalidInputError(
            `Invalid input for operation: sub-port ${port.id} cannot inherit a VLAN from a flat network.`,
            'InvalidInput',
          );
        vlan = n.segmentation_id;
      }
      if (vlans.has(vlan))
        throw new ConflictError(`segmentation_type vlan and segmentation_id ${vlan} already in use on trunk.`, 'DuplicateSubPort');
      vlans.add(vlan);
      out.push({ port_id: port.id, segmentation_type: 'vlan', segmentation_id: vlan });
    }
    return out;
  }

  /**
   * Create a trunk.
   * @throws NotFoundError (ports), ForbiddenError, InvalidInputError, ConflictError
   */
  async create(ctx: AuthContext, body: unknown): Promise<Trunk> {
    const a = checkKeys(body, 'trunk', CREATE, READ_ONLY, 'POST');
    const { port: parent, network } = await this.access.port(ctx, uuid(a, 'port_id'));
    const projectId = givenProject(a) ?? ctx.projectId ?? parent.project_id;
    if (projectId !== ctx.projectId && !this.access.isAdmin(ctx)) {
      throw new InvalidInputError(
        "Specifying 'project_id' or 'tenant_id' other than the authenticated project in request requires admin privileges",
        'HTTPBadRequest',
      );
    }
    this.access.authorize('create_trunk', { project_id: projectId, tenant_id: projectId }, ctx);
    this.access.authorize('update_port', this.access.childTarget(parent, network, ctx), ctx);
    const subReqs = parseSubPorts(a.sub_ports, true);
    await this.ownSubPorts(ctx, projectId, subReqs);
    const now = this.access.now();
    const keys = ['trunks', `port:${parent.id}`, ...subReqs.map((s) => `port:${s.port_id}`)];
    return this.access.repo.locked(keys, async (tx) => {
      const cur = await tx.getPort(parent.id);
      if (!cur) throw new NotFoundError('port', parent.id);
      if (cur.bound_port_uuid !== null || (await tx.trunkOfPort(cur.id))) {
        throw new ConflictError(`Port ${cur.id} is currently in use and is not eligible for use as a parent port.`, 'ParentPortInUse');
      }
      const trunk: Trunk = {
        id: newUuid(),
        name: name(a),
        description: description(a),
        project_id: projectId,
        port_id: cur.id,
        admin_state_up: bool(a, 'admin_state_up', true),
        status: 'DOWN',
        sub_ports: await this.resolveSubPorts(ctx, tx, cur.id, [], subReqs),
        created_at: now,
        updated_at: now,
        revision_number: 1,
      };
      await tx.insertTrunk(trunk);
      for (const s of trunk.sub_ports) await tx.updatePort(s.port_id, { device_owner: 'trunk:subport', device_id: trunk.id }, now);
      return (await tx.getTrunk(trunk.id))!;
    });
  }

  /** A trunk the caller may see. @throws NotFoundError */
  get(ctx: AuthContext, id: string): Promise<Trunk> {
    return this.access.trunk(ctx, id);
  }

  /** The sub-ports of a trunk (`get_subports`). */
  async subPorts(ctx: AuthContext, id: string): Promise<readonly SubPort[]> {
    const t = await this.access.trunk(ctx, id);
    this.access.authorize('get_subports', this.target(t), ctx);
    return t.sub_ports;
  }

  /** One page of the trunks the caller may see. */
  async list(ctx: AuthContext, req: ListRequest): Promise<Page<Trunk>> {
    const markerId = req.marker === null ? null : (await this.access.trunk(ctx, req.marker)).id;
    const rows = await this.access.repo.listTrunks(toQuery(req, ATTRS, this.access.listScope(ctx), () => true, markerId));
    return toPage(rows, req, (t) => (this.access.check('get_trunk', this.target(t), ctx) ? t : null));
  }

  /** Update name, description, admin state. @throws NotFoundError, ForbiddenError, InvalidInputError */
  async update(ctx: AuthContext, id: string, body: unknown): Promise<Trunk> {
    const t = await this.access.trunk(ctx, id);
    const a: Attrs = checkKeys(body, 'trunk', UPDATE, TRUNK_NOT_SETTABLE.PUT, 'PUT');
    this.access.authorize('update_trunk', this.target(t), ctx);
    const changes = {
      ...(a.name !== undefined ? { name: name(a) } : {}),
      ...(a.description !== undefined ? { description: description(a) } : {}),
      ...(a.admin_state_up !== undefined ? { admin_state_up: bool(a, 'admin_state_up', true) } : {}),
    };
    return this.changeBound(
      t,
      (tx, now) => tx.updateTrunk(t.id, changes, now),
      changes.admin_state_up !== undefined && changes.admin_state_up !== t.admin_state_up,
    );
  }

  /**
   * Add sub-ports (`PUT …/add_subports`): the trunk's project's ports; `attach_port` on each
   * when the trunk is attached to a node (see the module documentation).
   * @throws NotFoundError, ForbiddenError, ConflictError, InvalidInputError
   */
  async addSubPorts(ctx: AuthContext, id: string, body: unknown): Promise<Trunk> {
    const t = await this.access.trunk(ctx, id);
    this.access.authorize('add_subports', this.target(t), ctx);
    const reqs = parseSubPorts(checkKeys(body, 'sub_ports', new Set(['sub_ports']), new Set(), 'PUT').sub_ports, true);
    if (reqs.length === 0) throw new InvalidInputError('Invalid input for sub_ports. Reason: no sub-ports given.', 'HTTPBadRequest');
    await this.ownSubPorts(ctx, t.project_id, reqs);
    return this.changeBound(
      t,
      async (tx, now) => {
        const cur = (await tx.getTrunk(t.id))!;
        const added = await this.resolveSubPorts(ctx, tx, cur.port_id, cur.sub_ports, reqs);
        const parent = await tx.getPort(cur.port_id);
        if (parent?.bound_port_uuid) await this.checkAttachable(ctx, tx, added);
        await tx.addSubports(cur.id, added, now);
        for (const s of added) {
          const bound = parent?.bound_port_uuid
            ? { binding_host_id: parent.binding_host_id, binding_vnic_type: 'baremetal', binding_vif_type: 'other' }
            : {};
          await tx.updatePort(s.port_id, { device_owner: 'trunk:subport', device_id: cur.id, status: 'DOWN', ...bound }, now);
        }
      },
      true,
      reqs.map((r) => r.port_id),
    );
  }

  /** Remove sub-ports (`PUT …/remove_subports`). @throws NotFoundError (not a sub-port), ForbiddenError */
  async removeSubPorts(ctx: AuthContext, id: string, body: unknown): Promise<Trunk> {
    const t = await this.access.trunk(ctx, id);
    this.access.authorize('remove_subports', this.target(t), ctx);
    const reqs = parseSubPorts(checkKeys(body, 'sub_ports', new Set(['sub_ports']), new Set(), 'PUT').sub_ports, false);
    return this.changeBound(
      t,
      async (tx, now) => {
        const cur = (await tx.getTrunk(t.id))!;
        for (const r of reqs) {
          if (!cur.sub_ports.some((s) => s.port_id === r.port_id)) {
            throw new NotFoundError(
              'sub-port',
              r.port_id,
              `SubPort on trunk ${cur.id} with parent port ${cur.port_id} could not be found.`,
              'SubPortNotFound',
            );
          }
        }
        await tx.removeSubports(
          cur.id,
          reqs.map((r) => r.port_id),
          now,
        );
        for (const r of reqs) {
          await tx.updatePort(
            r.port_id,
            { device_owner: '', device_id: '', binding_host_id: '', binding_vif_type: 'unbound', binding_vif_details: {}, status: 'DOWN' },
            now,
          );
        }
      },
      true,
    );
  }

  /** Delete a trunk. @throws NotFoundError, ForbiddenError, ConflictError (`TrunkInUse`) */
  async delete(ctx: AuthContext, id: string): Promise<void> {
    const t = await this.access.trunk(ctx, id);
    this.access.authorize('delete_trunk', this.target(t), ctx);
    await this.access.repo.locked(['trunks', `port:${t.port_id}`], async (tx) => {
      const cur = await tx.getTrunk(t.id);
      if (!cur) return;
      const parent = await tx.getPort(cur.port_id);
      if (parent?.bound_port_uuid) throw new ConflictError(`Trunk ${cur.id} is currently in use.`, 'TrunkInUse');
      const now = this.access.now();
      for (const s of cur.sub_ports) await tx.updatePort(s.port_id, { device_owner: '', device_id: '' }, now);
      await tx.deleteTrunk(cur.id);
    });
  }

  /**
   * Run a trunk change under the trunk's locks; when its parent is bound and `touch` is set,
   * record new intent for its switch port and wake the reconciler.
   */
  private async changeBound(
    t: Trunk,
    change: (tx: NetworkTx, now: number) => Promise<void>,
    touch: boolean,
    extraPorts: readonly string[] = [],
  ): Promise<Trunk> {
    const keys = ['trunks', `port:${t.port_id}`, ...extraPorts.map((p) => `port:${p}`)];
    const { trunk, wake } = await this.access.repo.locked(keys, async (tx) => {
      const now = this.access.now();
      await change(tx, now);
      let wakeSwitch: string | null = null;
      if (touch) {
        const np = await tx.nodePortByVif(t.port_id);
        const key = np ? await switchKeyOf(tx, np) : null;
        if (key) {
          await tx.touchSwitchPorts([key], now);
          await tx.updateTrunk(t.id, { status: 'DOWN' }, now);
          wakeSwitch = key.switch_uuid;
        }
      }
      return { trunk: (await tx.getTrunk(t.id))!, wake: wakeSwitch };
    });
    if (wake) this.access.deps.wake.notifySwitch(wake);
    return trunk;
  }
}
