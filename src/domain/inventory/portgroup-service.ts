/**
 * `PortgroupService`: portgroups (`/v1/portgroups`, `/v1/nodes/{node}/portgroups`), bonds of a
 * node's ports.
 *
 * Source: Ironic 21.4 `PortgroupsController` (`ironic/api/controllers/v1/portgroup.py`), the
 * conductor's `update_portgroup`/`destroy_portgroup`, the network interfaces'
 * `portgroup_changed` (`ironic/drivers/modules/network/common.py`) and
 * https://docs.openstack.org/api-ref/baremetal/#portgroups-portgroups:
 * - create needs `node_uuid` (a node the caller may see, else 400 NodeNotFound); `name` a
 *   logical name (unique, 409), `address` a MAC (unique, 409), `mode` (default `active-backup`),
 *   `properties`, `extra`, `standalone_ports_supported` (oslo boolean, default true);
 * - PATCH may touch `address`, `extra`, `mode`, `name`, `node_uuid`, `properties`,
 *   `standalone_ports_supported`; `mode` cannot be removed; 409 while the node is inspecting;
 *   moving to another node needs the nodes in enroll, inspecting, inspect wait or manageable (or
 *   maintenance) and a portgroup without ports (400 PortgroupNotEmpty); setting
 *   `standalone_ports_supported` false is refused (409) while a member port has PXE enabled or a
 *   VIF;
 * - a portgroup with ports cannot be deleted (400 PortgroupNotEmpty);
 * - a portgroup is identified by UUID or name; it is visible exactly when its node is, and
 *   `baremetal:portgroup:*` rules are judged against that node (`bound-access.ts`).
 *
 * esi additions: a move checks the new node as a create does (Ironic checks neither its
 * visibility nor the caller's rights on it), both nodes' states are checked, and a change of
 * the bond's wiring (`address`, `mode`, `node_uuid`, `properties`,
 * `standalone_ports_supported`) also needs `baremetal:portgroup:update:<field>` (owner and admin
 * by default, as for ports' wiring, issue 14). A name that looks like a UUID is refused (it
 * could never be looked up).
 */
import type { AuthContext } from '../auth.ts';
import { ConflictError, InvalidInputError, NotFoundError } from '../errors.ts';
import { isUuidLike, newUuid } from '../ids.ts';
import { boundNode, listPage, listProject, namedNode, writtenRow, type BoundListRequest } from './bound-access.ts';
import { isJsonObject, type JsonObject } from './masking.ts';
import type { Node } from './model.ts';
import type { NodeAccess } from './node-access.ts';
import { applyPatch, parsePatch, patchValues, rootOf } from './patch.ts';
import { PORTGROUP_SORT_KEYS, type Portgroup } from './resource-model.ts';
import type { PortgroupFilters } from './resource-ports.ts';
import { canonicalUuid, isValidLogicalName, normalizeMac, parseBoolLike, requireUuid } from './validation.ts';

/** Ironic's `[DEFAULT] default_portgroup_mode`. */
export const DEFAULT_PORTGROUP_MODE = 'active-backup';
const CREATE_KEYS = new Set(['address', 'extra', 'mode', 'name', 'node_uuid', 'properties', 'standalone_ports_supported', 'uuid']);
const PATCHABLE = ['address', 'extra', 'mode', 'name', 'node_uuid', 'properties', 'standalone_ports_supported'];
const GUARDED = new Set(['address', 'mode', 'node_id', 'properties', 'standalone_ports_supported']);
const MOVE_STATES = ['enroll', 'inspecting', 'inspect wait', 'manageable'];

/** A portgroup list request. */
export interface PortgroupListRequest extends BoundListRequest {
  /** A MAC address (normalised here). */
  readonly address?: string;
}

/** Validated portgroup values from a create body or a patched document. */
interface PortgroupValues {
  address: string | null;
  extra: JsonObject;
  mode: string | null;
  name: string | null;
  properties: JsonObject;
  standalone_ports_supported: boolean;
}

function object(field: string, v: unknown): JsonObject {
  if (v === undefined || v === null) return {};
  if (!isJsonObject(v)) throw new InvalidInputError(`Invalid portgroup: ${field} must be an object.`);
  return v;
}

/** The longest string value, characters (Ironic 21.4's `portgroups` columns are String(255)). */
const MAX_LENGTH = 255;

function stringOrNull(field: string, v: unknown): string | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string') throw new InvalidInputError(`Invalid portgroup: ${field}: ${JSON.stringify(v)} is not a string.`);
  if (v.length > MAX_LENGTH) throw new InvalidInputError(`Invalid portgroup: ${field} is longer than ${MAX_LENGTH} characters.`);
  return v;
}

/** True for an acceptable portgroup name (Ironic: a logical name; esi: not UUID-shaped either). */
function validName(name: string): boolean {
  return isValidLogicalName(name) && !isUuidLike(name);
}

function values(doc: Readonly<JsonObject>, creating: boolean): PortgroupValues {
  const address = stringOrNull('address', doc.address);
  const standalone = doc.standalone_ports_supported ?? true;
  const sps = parseBoolLike(standalone);
  if (sps === undefined) {
    throw new InvalidInputError(
      `Invalid standalone_ports_supported: Unrecognized value ${JSON.stringify(standalone)}, acceptable values are: '0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'`,
    );
  }
  const mode = stringOrNull('mode', doc.mode);
  return {
    address: address === null ? null : normalizeMac(address),
    extra: object('extra', doc.extra),
    mode: creating && !mode ? DEFAULT_PORTGROUP_MODE : mode,
    name: stringOrNull('name', doc.name),
    properties: object('properties', doc.properties),
    standalone_ports_supported: sps,
  };
}

/** Portgroup operations; see the module documentation. */
export class PortgroupService {
  constructor(private readonly access: NodeAccess) {}

  private get repo() {
    return this.access.deps.resources.portgroups;
  }

  /**
   * A portgroup by UUID or name, without any policy check. A trailing `.json` is stripped
   * first and kept only if the stripped identifier finds nothing (Ironic's suffix rule).
   * @throws InvalidInputError for an identifier that is neither; NotFoundError
   */
  async find(ident: string): Promise<Portgroup> {
    if (ident.endsWith('.json') && ident.length > 5) {
      const stripped = await this.lookup(ident.slice(0, -5), false);
      if (stripped) return stripped;
    }
    const pg = await this.lookup(ident, true);
    if (!pg) throw new NotFoundError('portgroup', ident);
    return pg;
  }

  private async lookup(ident: string, strict: boolean): Promise<Portgroup | null> {
    const uuid = canonicalUuid(ident);
    if (uuid !== null) return this.repo.get(uuid);
    if (!isValidLogicalName(ident)) {
      if (!strict) return null;
      throw new InvalidInputError(`Expected UUID or name for portgroup: ${ident}`, 'InvalidUuidOrName');
    }
    return this.repo.getByName(ident);
  }

  /** A portgroup the caller may see with `rule` passed on its node. @throws NotFoundError; ForbiddenError */
  async visible(ctx: AuthContext, ident: string, rule: string): Promise<{ portgroup: Portgroup; node: Node }> {
    const portgroup = await this.find(ident);
    const node = await boundNode(this.access, ctx, portgroup, () => new NotFoundError('portgroup', ident), rule);
    return { portgroup, node };
  }

  /** One portgroup (`baremetal:portgroup:get`). */
  async get(ctx: AuthContext, ident: string): Promise<Portgroup> {
    return (await this.visible(ctx, ident, 'baremetal:portgroup:get')).portgroup;
  }

  /**
   * One page of the portgroups the caller may see (`list_all`, else `list` limited to the
   * project's nodes). With `node`, that node must be visible (404 otherwise).
   */
  async list(ctx: AuthContext, req: PortgroupListRequest): Promise<Portgroup[]> {
    const filters: { -readonly [K in keyof PortgroupFilters]: PortgroupFilters[K] } = {};
    if (req.node !== undefined) filters.nodeId = (await this.access.visible(ctx, req.node)).id;
    const project = listProject(this.access, ctx, 'portgroup');
    if (project !== undefined) filters.project = project;
    if (req.address !== undefined) filters.address = normalizeMac(req.address);
    const page = await listPage(
      this.access,
      ctx,
      req,
      filters,
      PORTGROUP_SORT_KEYS,
      (u) => this.repo.get(u),
      (i) => new NotFoundError('portgroup', i),
    );
    return this.repo.list(page);
  }

  /**
   * Create a portgroup (`baremetal:portgroup:create`, judged on the node).
   * @throws InvalidInputError; ConflictError (duplicate uuid, name or address); ForbiddenError; LockedError
   */
  async create(ctx: AuthContext, body: unknown): Promise<Portgroup> {
    if (!isJsonObject(body)) throw new InvalidInputError('The portgroup must be a JSON object.');
    const unknown = Object.keys(body).filter((k) => !CREATE_KEYS.has(k));
    if (unknown.length > 0) throw new InvalidInputError(`Invalid portgroup: unexpected field "${unknown[0]}".`);
    if (!Object.hasOwn(body, 'node_uuid')) throw new InvalidInputError(`Invalid portgroup: "node_uuid" is a required property.`);
    const node = await namedNode(
      this.access,
      ctx,
      body.node_uuid,
      'baremetal:portgroup:create',
      (u) => new InvalidInputError(`Node ${u} could not be found.`, 'NodeNotFound'),
    );
    const v = values(body, true);
    if (v.name && !validName(v.name)) throw new InvalidInputError(`Cannot create portgroup with invalid name '${v.name}'`);
    const uuid = body.uuid === undefined || body.uuid === null ? newUuid() : requireUuid('uuid', body.uuid);
    if (await this.repo.get(uuid)) throw new ConflictError(`A portgroup with UUID ${uuid} already exists.`, 'PortgroupAlreadyExists');
    const r = await this.repo.insert({ uuid, node_id: node.id, internal_info: {}, ...v }, this.access.deps.clock.now());
    return writtenRow(r, node, () => new NotFoundError('node', node.uuid), `portgroup ${uuid}`)!;
  }

  /**
   * Update a portgroup with a JSON-PATCH (`baremetal:portgroup:update`; a move also needs
   * `baremetal:portgroup:create` on the new node).
   */
  async update(ctx: AuthContext, ident: string, body: unknown): Promise<Portgroup> {
    const ops = parsePatch(body);
    for (const op of ops) {
      if (!PATCHABLE.includes(rootOf(op.path)))
        throw new InvalidInputError(`Cannot patch ${op.path}. Only the following can be updated: ${PATCHABLE.join(', ')}`);
    }
    const { portgroup: pg, node } = await this.visible(ctx, ident, 'baremetal:portgroup:update');
    for (const name of patchValues(ops, '/name')) {
      if (name && (typeof name !== 'string' || !validName(name)))
        throw new InvalidInputError(`Portgroup ${ident}: Cannot change name to invalid name '${String(name)}'`);
    }
    const patched = applyPatch(
      {
        address: pg.address,
        extra: pg.extra,
        mode: pg.mode,
        name: pg.name,
        node_uuid: pg.node_uuid,
        properties: pg.properties,
        standalone_ports_supported: pg.standalone_ports_supported,
      },
      ops,
    );
    if (!Object.hasOwn(patched, 'mode')) throw new InvalidInputError("'mode' is a mandatory attribute and can not be removed");
    const v = values(patched, false);
    const changes: Record<string, unknown> = {};
    for (const [k, val] of Object.entries(v)) {
      if (JSON.stringify(val) !== JSON.stringify((pg as unknown as JsonObject)[k])) changes[k] = val;
    }
    const nodeUuid = typeof patched.node_uuid === 'string' ? canonicalUuid(patched.node_uuid) : null;
    if (nodeUuid === null) throw new InvalidInputError(`Expected UUID for node_uuid: ${String(patched.node_uuid)}`, 'InvalidUUID');
    let target = node;
    if (nodeUuid !== pg.node_uuid) {
      target = await namedNode(
        this.access,
        ctx,
        nodeUuid,
        'baremetal:portgroup:create',
        (u) => new InvalidInputError(`Node ${u} could not be found.`, 'NodeNotFound'),
      );
      changes.node_id = target.id;
    }
    if (Object.keys(changes).length === 0) return pg;
    const guarded = Object.keys(changes).filter((k) => GUARDED.has(k));
    this.access.authorize(
      ctx,
      node,
      guarded.map((k) => `baremetal:portgroup:update:${k === 'node_id' ? 'node_uuid' : k}`),
    );
    await this.checkChange(pg, node, target, changes);
    const r = await this.repo.update(pg.uuid, changes, this.access.deps.clock.now());
    return writtenRow(r, node, () => new NotFoundError('portgroup', ident), `portgroup ${pg.uuid}`)!;
  }

  /** Ironic's state and membership rules of a portgroup change (see the module documentation). */
  private async checkChange(pg: Portgroup, node: Node, target: Node, changes: Record<string, unknown>): Promise<void> {
    for (const n of target === node ? [node] : [node, target]) {
      if (n.provision_state === 'inspecting')
        throw new ConflictError(`Cannot update portgroup "${pg.uuid}" on node "${n.uuid}" while it is in state "inspecting".`);
    }
    const moving = Object.hasOwn(changes, 'node_id');
    const members =
      moving || changes.standalone_ports_supported === false
        ? await this.access.deps.ports.list({
            filters: { portgroupUuid: pg.uuid },
            limit: 10_000,
            marker: null,
            sortKey: 'id',
            sortDir: 'asc',
          })
        : [];
    if (moving) {
      for (const n of [node, target]) {
        if (!MOVE_STATES.includes(n.provision_state) && !n.maintenance) {
          throw new ConflictError(
            `Portgroup ${pg.uuid} can not be associated to node ${target.uuid} unless the node is in a ${MOVE_STATES.join(', ')} state or in maintenance mode.`,
            'InvalidState',
          );
        }
      }
      if (members.length > 0) {
        throw new InvalidInputError(
          `Portgroup ${pg.uuid} can not be associated with node ${target.uuid} because there are ports associated with this portgroup.`,
          'PortgroupNotEmpty',
        );
      }
    }
    for (const p of changes.standalone_ports_supported === false ? members : []) {
      const vif = p.internal_info.tenant_vif_port_id;
      const reason = [
        ...(p.pxe_enabled ? ["'pxe_enabled' is set to True"] : []),
        ...(typeof vif === 'string' && vif !== '' ? [`VIF ${vif} is attached to this port`] : []),
      ];
      if (reason.length > 0) {
        throw new ConflictError(
          `standalone_ports_supported can not be set to False, because the port group ${pg.uuid} contains port with ${reason.join(', ')}`,
        );
      }
    }
  }

  /** Delete a portgroup (`baremetal:portgroup:delete`). @throws InvalidInputError (PortgroupNotEmpty) while ports name it */
  async delete(ctx: AuthContext, ident: string): Promise<void> {
    const { portgroup, node } = await this.visible(ctx, ident, 'baremetal:portgroup:delete');
    writtenRow(await this.repo.delete(portgroup.uuid), node, () => new NotFoundError('portgroup', ident), `portgroup ${portgroup.uuid}`);
  }
}
