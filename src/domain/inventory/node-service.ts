/**
 * `NodeService`: every node operation of the baremetal API, with Ironic's policy and state
 * rules, over the {@link NodeRepository} port. Methods take the caller's {@link AuthContext}
 * first. Lookups follow Ironic 21.4's `check_node_policy_and_retrieve` (`ironic/api/controllers/v1/utils.py`) (missing or invisible → 404, action refused →
 * 403); state requests record intent and wake the conductor (`ConductorPort.notifyNode`).
 *
 * Microversion rules (which verbs, fields and filters a request may use) are the API's job;
 * this service receives requests the API has already admitted.
 */
import type { AuthContext } from '../auth.ts';
import { ConflictError, ForbiddenError, InvalidInputError, InvalidStateError, NotFoundError } from '../errors.ts';
import type { BootDevice, BootDeviceInfo, DriverNode } from '../hardware/interfaces.ts';
import { conductorFor } from './conductors.ts';
import type { JsonObject } from './masking.ts';
import { NODE_SORT_KEYS, type Node, type NodeField, type NodeSlice } from './model.ts';
import { nodeLocked, NodeAccess, type InventoryDeps } from './node-access.ts';
import { checkImageSource } from './requester.ts';
import { requestPower, requestProvision, setConsole, setMaintenance, type ProvisionParams } from './node-actions.ts';
import { planCreate } from './node-create.ts';
import { NodeIndicators } from './indicators.ts';
import * as mgmt from './node-management.ts';
import { checkNodePatchPaths, nodePatchRules, planNodeUpdate } from './node-update.ts';
import { applyPatch, parsePatch, patchValues, rootOf } from './patch.ts';
import type { NodeFilters, NodeListQuery } from './ports.ts';
import { nodeTarget, redactionMemo, type NodeView } from './presentation.ts';
import { DELETE_ALLOWED_STATES, isProvisionState, isProvisionVerb } from './states.ts';
import { canonicalUuid } from './validation.ts';
import { removeLesseeVolumes } from './volume-service.ts';

/** A node list request (after the API's version checks). */
export interface NodeListRequest {
  readonly filters: NodeFilters;
  /** Page size, 1…1000. */
  readonly limit: number;
  /** UUID of the last node of the previous page. */
  readonly marker: string | null;
  readonly sortKey: string;
  readonly sortDir: 'asc' | 'desc';
  /** Fields the caller wants; null for every field. */
  readonly fields: readonly NodeField[] | null;
  /** Compute the serving conductor of each node (the `conductor` field). */
  readonly withConductor: boolean;
  /**
   * Keep only nodes served by this conductor hostname. Applied after the page is read, as
   * Ironic does, so a page may hold fewer than `limit` nodes.
   */
  readonly conductor?: string;
}

/** Columns the caller's view of a node needs beyond the slice's base fields: the conductor mapping's inputs. */
const CONDUCTOR_FIELDS: readonly NodeField[] = ['driver', 'conductor_group'];

/**
 * A node list the caller is entitled to, checked and planned but not yet read
 * (see {@link NodeService.planList}). Readers of other forms of the same page (the baremetal
 * API's display documents) use `page` and `view` and keep the caller's limits.
 */
export interface NodeListPlan {
  /** The page to read: the filters (limited to the caller's project where policy says so), order, marker and size. */
  readonly page: Omit<NodeListQuery, 'fields'>;
  /** The caller's view of a node of this page: its redaction and, when asked for, its serving conductor. */
  view(node: NodeSlice): NodeView;
  /**
   * Read the page with `fields` (null: every field) plus what the views need, in page order,
   * already limited to the requested conductor.
   */
  read(fields: readonly NodeField[] | null): Promise<NodeView[]>;
  /** The views of nodes served by the requested conductor, in order (all of them without `conductor`). */
  keep<V extends NodeView>(views: readonly V[]): V[];
}

/** Console state (`GET …/states/console`). */
export interface ConsoleInfo {
  readonly console_enabled: boolean;
  /**
   * Connection details; null while disabled. esi's consoles are websockets served by esi itself
   * (`{"type": "websocket"}`; the API adds the `url`), never the BMC's address (docs/console.md).
   */
  readonly console_info: JsonObject | null;
  /** UUID of the node (for the API to build the URL). */
  readonly nodeUuid: string;
}

/** Ironic's `NoValidHost` for a node no live conductor serves (400 on the API). */
function noValidHost(node: { driver: string; conductor_group: string }): InvalidInputError {
  return new InvalidInputError(
    `No valid host was found. Reason: No conductor service registered which supports driver ${node.driver} for conductor group "${node.conductor_group}".`,
    'NoValidHost',
  );
}

/** Node operations; see the module documentation. */
export class NodeService {
  /** Shared lookup, policy and write helpers (also used by the port service and lease gateway). */
  readonly access: NodeAccess;
  /** Indicators (LEDs) and NMI (./indicators.ts). */
  readonly indicators: NodeIndicators;

  constructor(readonly deps: InventoryDeps) {
    this.access = new NodeAccess(deps);
    this.indicators = new NodeIndicators(this.access);
  }

  /**
   * Create a node (`baremetal:node:create`).
   * @param body the request body; see `planCreate` for the rules
   * @param initialState `enroll` from API 1.11, else `available`
   * @throws ForbiddenError; InvalidInputError; ConflictError for a duplicate uuid or name
   */
  async create(ctx: AuthContext, body: unknown, initialState: 'enroll' | 'available'): Promise<NodeView> {
    if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new InvalidInputError('The node must be a JSON object.');
    const b = body as JsonObject;
    const owner = typeof b.owner === 'string' ? b.owner : null;
    const lessee = typeof b.lessee === 'string' ? b.lessee : null;
    this.deps.policy.authorize('baremetal:node:create', nodeTarget({ owner, lessee }), ctx);
    const row = planCreate(b, this.deps.hardware, this.deps.secrets, { initialState, now: this.deps.clock.now() });
    if (row.chassis_uuid !== null) await this.requireChassis(row.chassis_uuid);
    await this.requireConductor(row);
    const node = await this.deps.nodes.insert(row, row.created_at);
    return this.access.viewWithConductor(ctx, node);
  }

  /**
   * A node's driver and conductor group must be served by a live conductor (Ironic 21.4
   * `get_topic_for` on node create and update: `NoValidHost`, turned into a 400).
   * @throws InvalidInputError naming the driver and group
   */
  private async requireConductor(node: { uuid: string; driver: string; conductor_group: string }): Promise<void> {
    if (conductorFor(node, await this.deps.conductors.alive()) === null) throw noValidHost(node);
  }

  /**
   * A node may name only an existing chassis (Ironic: ChassisNotFound, 400 on node writes).
   * @throws InvalidInputError
   */
  private async requireChassis(uuid: string): Promise<void> {
    if (!(await this.deps.resources.chassis.get(uuid)))
      throw new InvalidInputError(`Chassis ${uuid} could not be found.`, 'ChassisNotFound');
  }

  /** A node the caller may see (`baremetal:node:get`), by UUID or name. */
  async get(ctx: AuthContext, ident: string): Promise<NodeView> {
    return this.access.viewWithConductor(ctx, await this.access.visible(ctx, ident));
  }

  /** {@link get} read as a slice (`NodeAccess.visibleSliceView`): for readers that may hold a rendering of it. */
  async getSlice(ctx: AuthContext, ident: string): Promise<NodeView> {
    return this.access.visibleSliceView(ctx, ident);
  }

  /** A node for the states sub-resource (`baremetal:node:get_states`). */
  async getStates(ctx: AuthContext, ident: string): Promise<NodeView> {
    return this.access.view(ctx, await this.access.visible(ctx, ident, 'baremetal:node:get_states'));
  }

  /**
   * One page of the nodes the caller may see (Ironic 21.4 `check_list_policy`, `ironic/api/controllers/v1/utils.py`):
   * `baremetal:node:list_all` sees everything; otherwise a project-scoped caller needs
   * `baremetal:node:list` and is silently limited to nodes its project owns or leases, and asking
   * for another project with `owner` or `project` is refused.
   * @throws ForbiddenError; InvalidInputError for a bad sort key or provision state filter;
   *   NotFoundError for an unknown (or invisible) marker
   */
  async list(ctx: AuthContext, req: NodeListRequest): Promise<NodeView[]> {
    const plan = await this.planList(ctx, req);
    return plan.read(req.fields);
  }

  /**
   * Check a list request and plan its page (see {@link list} for the rules) without reading it.
   * @throws as {@link list}
   */
  async planList(ctx: AuthContext, req: NodeListRequest): Promise<NodeListPlan> {
    const filters: { -readonly [K in keyof NodeFilters]: NodeFilters[K] } = { ...req.filters };
    if (!this.deps.policy.check('baremetal:node:list_all', {}, ctx)) {
      const own = ctx.projectId;
      if (!own) throw new ForbiddenError('Access was denied to the following resource: baremetal:node:list_all');
      this.deps.policy.authorize('baremetal:node:list', {}, ctx);
      for (const key of ['owner', 'project'] as const) {
        if (filters[key] !== undefined && filters[key] !== own) {
          throw new ForbiddenError(`Access was denied: a project-scoped caller may only list nodes of its own project (${key}).`);
        }
      }
      filters.project = own;
    }
    if (filters.provisionState !== undefined && !isProvisionState(filters.provisionState)) {
      throw new InvalidInputError(`Provision state "${String(filters.provisionState)}" is not valid`);
    }
    if (!NODE_SORT_KEYS.has(req.sortKey)) throw new InvalidInputError(`The sort_key value ${req.sortKey} is an invalid field for sorting`);
    // Ironic resolves the chassis of a chassis filter (and of `/v1/chassis/{id}/nodes`): an unknown one is a 404.
    if (filters.chassisUuid !== undefined && !(await this.deps.resources.chassis.get(filters.chassisUuid)))
      throw new NotFoundError('chassis', filters.chassisUuid);
    let marker: Node | null = null;
    if (req.marker !== null) {
      marker = await this.deps.nodes.get(req.marker);
      if (marker === null || !this.access.canSee(ctx, marker)) throw new NotFoundError('node', req.marker);
    }
    const page = { filters, limit: req.limit, marker, sortKey: req.sortKey, sortDir: req.sortDir };
    const redaction = redactionMemo(this.deps.policy, ctx);
    const alive = req.withConductor ? await this.deps.conductors.alive() : null;
    const view = (node: NodeSlice): NodeView =>
      alive === null
        ? { node, redaction: redaction(node) }
        : {
            node,
            redaction: redaction(node),
            conductor: conductorFor({ uuid: node.uuid, driver: node.driver ?? '', conductor_group: node.conductor_group ?? '' }, alive),
          };
    const keep = <V extends NodeView>(views: readonly V[]): V[] =>
      req.conductor === undefined ? [...views] : views.filter((v) => v.conductor === req.conductor);
    const read = async (fields: readonly NodeField[] | null): Promise<NodeView[]> => {
      const columns = fields !== null && alive !== null ? [...new Set([...fields, ...CONDUCTOR_FIELDS])] : fields;
      return keep((await this.deps.nodes.list({ ...page, fields: columns })).map(view));
    };
    return { page, view, read, keep };
  }

  /**
   * Update a node with a JSON-PATCH (Ironic 21.4 `apply_jsonpatch`, `ironic/api/controllers/v1/utils.py`).
   * @param body the request body (validated here: see `parsePatch`)
   * @param resetInterfaces `?reset_interfaces` (only with a `/driver` change)
   */
  async update(ctx: AuthContext, ident: string, body: unknown, resetInterfaces?: boolean): Promise<NodeView> {
    const ops = parsePatch(body);
    checkNodePatchPaths(ops, resetInterfaces);
    const rules = nodePatchRules(ops);
    const node = await this.access.visible(ctx, ident, ...rules);
    for (const c of patchValues(ops, '/chassis_uuid')) {
      const uuid = typeof c === 'string' ? canonicalUuid(c) : null;
      if (uuid !== null) await this.requireChassis(uuid);
    }
    const imageOps = ops.filter((o) => rootOf(o.path) === 'instance_info');
    const newSource =
      imageOps.length > 0
        ? (applyPatch({ instance_info: node.instance_info }, imageOps).instance_info as JsonObject | null)?.image_source
        : undefined;
    if (newSource !== undefined && newSource !== node.instance_info.image_source) {
      await checkImageSource(this.deps.images, ctx, newSource, `instance_info.image_source of node ${node.uuid}`);
    }
    // A new driver or conductor group must be served (Ironic checks this on every PATCH; esi's
    // API writes without a conductor, so only a change that moves the node is checked).
    const alive = ops.some((o) => o.path === '/driver' || o.path === '/conductor_group') ? await this.deps.conductors.alive() : null;
    const written = await this.access.write(node, (n) => {
      this.access.authorize(ctx, n, rules);
      const mayUpdateOwnerProvisioned = this.deps.policy.check('baremetal:node:update_owner_provisioned', nodeTarget(n), ctx);
      const planned = planNodeUpdate(n, ops, {
        hardware: this.deps.hardware,
        secrets: this.deps.secrets,
        resetInterfaces,
        mayUpdateOwnerProvisioned,
      });
      const moved = { uuid: n.uuid, driver: planned?.driver ?? n.driver, conductor_group: planned?.conductor_group ?? n.conductor_group };
      if (alive !== null && conductorFor(moved, alive) === null) throw noValidHost(moved);
      return planned;
    });
    // A node that changes hands by PATCH loses the VIFs its owner did not attach, as at a
    // lease's end (the switch stops carrying them anyway: networking/binding.ts `vifEntitled`).
    if (written.owner !== node.owner || written.lessee !== node.lessee) {
      await this.deps.vifs?.detachForLeaseEnd(written);
      await removeLesseeVolumes(this.deps, written);
    }
    if (written.maintenance !== node.maintenance) {
      // A maintenance change by PATCH is history, as through the maintenance sub-resource.
      await this.deps.history?.record(written.uuid, {
        eventType: 'maintenance',
        severity: 'INFO',
        event: written.maintenance
          ? `Maintenance set${written.maintenance_reason ? `: ${written.maintenance_reason}` : '.'}`
          : `Maintenance cleared${node.fault ? ` (fault "${node.fault}" cleared)` : ''}.`,
        user: ctx.userId || null,
      });
    }
    return this.access.viewWithConductor(ctx, written);
  }

  /**
   * Delete a node and its ports (`baremetal:node:delete`). Allowed in enroll, manageable,
   * available and adopt failed, or in any state in maintenance; refused (409) while associated
   * with an instance outside maintenance; refused (403) while protected.
   */
  async delete(ctx: AuthContext, ident: string): Promise<void> {
    let node: Node | null = await this.access.visible(ctx, ident, 'baremetal:node:delete');
    for (let attempt = 0; attempt < 5 && node !== null; attempt++) {
      if (node.reservation !== null) throw nodeLocked(node);
      if (!node.maintenance && node.instance_uuid !== null) {
        throw new ConflictError(`Node ${node.uuid} is associated with instance ${node.instance_uuid}.`, 'NodeAssociated');
      }
      if (node.protected)
        throw new ForbiddenError(`Node ${node.uuid} is protected and cannot be undeployed, rebuilt or deleted`, 'NodeProtected');
      const vifs = await mgmt.vifsOfNode(this.access, node);
      if (vifs.length > 0) {
        throw new ConflictError(
          `Node ${node.uuid} has VIF(s) ${vifs.join(', ')} attached; detach them before deleting the node.`,
          'NodeHasVifs',
        );
      }
      if (!node.maintenance && !DELETE_ALLOWED_STATES.has(node.provision_state)) {
        throw new ConflictError(
          `Can not delete node "${node.uuid}" while it is in provision state "${node.provision_state}". Valid provision states to perform deletion are: "${[...DELETE_ALLOWED_STATES].join(', ')}", or set the node into maintenance mode`,
          'InvalidState',
        );
      }
      const r = await this.deps.nodes.delete(node.uuid, node.version);
      if (r.ok) {
        this.deps.conductor.notifyNode(node.uuid);
        return;
      }
      node = await this.deps.nodes.get(node.uuid);
    }
    if (node === null) throw new NotFoundError('node', ident);
    throw new ConflictError(`Node ${node.uuid} is being changed concurrently; please retry.`);
  }

  /** Set (`reason` optional) or clear maintenance. */
  async setMaintenance(ctx: AuthContext, ident: string, on: boolean, reason: string | null = null): Promise<void> {
    await setMaintenance(this.access, ctx, ident, on, reason);
  }

  /** Request a power change; see `requestPower`. */
  async setPowerState(ctx: AuthContext, ident: string, target: string, timeoutS: number | null = null): Promise<NodeView> {
    return this.access.view(ctx, await requestPower(this.access, ctx, ident, target, timeoutS));
  }

  /**
   * Request a provision verb; see `requestProvision`.
   * @throws InvalidStateError for a verb that does not exist
   */
  async setProvisionState(ctx: AuthContext, ident: string, verb: string, params: ProvisionParams = {}): Promise<NodeView> {
    if (!isProvisionVerb(verb)) throw new InvalidStateError(`The requested action "${verb}" could not be understood.`);
    return this.access.view(ctx, await requestProvision(this.access, ctx, ident, verb, params));
  }

  /** Console state (`baremetal:node:get_console`); see {@link ConsoleInfo}. */
  async getConsole(ctx: AuthContext, ident: string): Promise<ConsoleInfo> {
    const node = await this.access.visible(ctx, ident, 'baremetal:node:get_console');
    return {
      console_enabled: node.console_enabled,
      console_info: node.console_enabled ? { type: 'websocket' } : null,
      nodeUuid: node.uuid,
    };
  }

  /** Enable or disable the console; see `setConsole`. */
  async setConsole(ctx: AuthContext, ident: string, enabled: boolean): Promise<void> {
    await setConsole(this.access, ctx, ident, enabled);
  }

  /** The next boot device, from the BMC. */
  getBootDevice(ctx: AuthContext, ident: string): Promise<BootDeviceInfo> {
    return mgmt.getBootDevice(this.access, ctx, ident);
  }

  /** Set the next boot device on the BMC. */
  setBootDevice(ctx: AuthContext, ident: string, device: string, persistent: boolean): Promise<void> {
    return mgmt.setBootDevice(this.access, ctx, ident, device, persistent);
  }

  /** Boot devices the BMC supports. */
  supportedBootDevices(ctx: AuthContext, ident: string): Promise<readonly BootDevice[]> {
    return mgmt.supportedBootDevices(this.access, ctx, ident);
  }

  /** The node's traits. */
  listTraits(ctx: AuthContext, ident: string): Promise<readonly string[]> {
    return mgmt.listTraits(this.access, ctx, ident);
  }

  /** Replace every trait. */
  async setTraits(ctx: AuthContext, ident: string, traits: unknown): Promise<void> {
    await mgmt.changeTraits(this.access, ctx, ident, { set: traits });
  }

  /** Add one trait. */
  async addTrait(ctx: AuthContext, ident: string, trait: string): Promise<void> {
    await mgmt.changeTraits(this.access, ctx, ident, { add: trait });
  }

  /** Remove one trait, or every trait when `trait` is null. */
  async removeTrait(ctx: AuthContext, ident: string, trait: string | null): Promise<void> {
    await mgmt.changeTraits(this.access, ctx, ident, trait === null ? { clear: true } : { remove: trait });
  }

  /** Per-interface validation. */
  validate(ctx: AuthContext, ident: string): Promise<Record<string, mgmt.InterfaceValidation>> {
    return mgmt.validateNode(this.access, ctx, ident);
  }

  /** Attached VIFs. */
  listVifs(ctx: AuthContext, ident: string): Promise<Array<{ id: string }>> {
    return mgmt.listVifs(this.access, ctx, ident);
  }

  /**
   * The node as its driver needs it (secrets decrypted), for the conductor. No policy check:
   * callers are trusted process components, never API handlers.
   * @throws NotFoundError when there is no such node
   */
  async driverNode(uuid: string): Promise<DriverNode> {
    const node = await this.deps.nodes.get(uuid);
    if (node === null) throw new NotFoundError('node', uuid);
    return mgmt.driverNodeOf(this.access, node);
  }
}
