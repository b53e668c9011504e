/**
 * `VolumeService`: volume connectors and volume targets (`/v1/volume/connectors`,
 * `/v1/volume/targets`, `/v1/nodes/{node}/volume/…`), the ground of boot from volume.
 *
 * Source: Ironic 21.4 (Debian 21.4.4) `VolumeConnectorsController` and
 * `VolumeTargetsController` (`ironic/api/controllers/v1/volume_{connector,target}.py`), the
 * conductor's `update_volume_*`/`destroy_volume_*` and
 * https://docs.openstack.org/api-ref/baremetal/#volume-volume:
 * - a connector has `node_uuid`, `type`, `connector_id` (all required) and `extra`; (`type`,
 *   `connector_id`) is unique (409 VolumeConnectorTypeAndIdAlreadyExists);
 * - a target has `node_uuid`, `volume_type`, `volume_id`, `boot_index` (an integer; all
 *   required), `properties` and `extra`; (node, `boot_index`) is unique (409
 *   VolumeTargetBootIndexAlreadyExists);
 * - create needs a node the caller may see (else 400 "Invalid input for field/attribute
 *   node_uuid"); PATCH may touch every field but `uuid`; a `node_uuid` in a patch must be a UUID;
 * - update and delete need the node powered off (`power off`), else 400 InvalidStateRequested;
 *   create does not (as Ironic);
 * - objects are named by UUID only and are visible exactly when their node is; rules
 *   `baremetal:volume:{get,create,update,delete,list,list_all}` are judged against the node
 *   (`bound-access.ts`);
 * - a target's `properties` are shown with secrets masked (`******`), and to callers failing
 *   `baremetal:volume:view_target_properties` (reads and PATCH answers) replaced by Ironic's
 *   redaction notice.
 *
 * esi additions: moving an object to another node checks that node as a create does (Ironic
 * checks neither its visibility nor the caller's rights on it), and both nodes must be powered
 * off.
 */
import type { AuthContext } from '../auth.ts';
import { ConflictError, InvalidInputError, NotFoundError } from '../errors.ts';
import { newUuid } from '../ids.ts';
import { boundNode, listPage, listProject, namedNode, poweredOn, writtenRow, type BoundListRequest } from './bound-access.ts';
import { isJsonObject, maskSecrets, type JsonObject } from './masking.ts';
import type { Node } from './model.ts';
import type { NodeAccess } from './node-access.ts';
import { applyPatch, parsePatch, patchValues, rootOf } from './patch.ts';
import { CONNECTOR_SORT_KEYS, TARGET_SORT_KEYS, type VolumeConnector, type VolumeTarget } from './resource-model.ts';
import type { NodeBoundFilters, VolumeRepository } from './resource-ports.ts';
import { canonicalUuid, requireUuid } from './validation.ts';

/** Ironic's notice in place of target properties the caller may not see. */
export const TARGET_PROPERTIES_REDACTED = {
  redacted_contents: '** Value redacted: Requires permission baremetal:volume:view_target_properties access. Permission denied. **',
} as const;

/** What differs between connectors and targets. */
interface VolumeKind<T> {
  /** Singular name in messages and error codes (`volume connector`, `volume target`). */
  readonly name: 'volume connector' | 'volume target';
  readonly body: 'connector' | 'target';
  readonly fields: readonly string[];
  readonly required: readonly string[];
  readonly sortKeys: ReadonlySet<string>;
  /** Validate a create body or a patched document (without `node_uuid`). */
  values(doc: Readonly<JsonObject>, what: string): Partial<T>;
  /** The uniqueness clash of an existing row, for a 409 before writing (the store also refuses). */
  clash(row: Partial<T> & { node_id: number }): string;
}

/**
 * The longest value of each string field, characters: Ironic 21.4's columns
 * (`volume_connectors.type` String(32), `connector_id` String(255), `volume_targets.volume_type`
 * String(64), `volume_id` String(36)); a longer value is refused rather than stored.
 */
const MAX_LENGTH: Readonly<Record<string, number>> = { type: 32, connector_id: 255, volume_type: 64, volume_id: 36 };

function str(doc: Readonly<JsonObject>, field: string, what: string): string {
  const v = doc[field];
  if (typeof v !== 'string') throw new InvalidInputError(`Invalid ${what}: ${field}: ${JSON.stringify(v ?? null)} is not a string.`);
  const max = MAX_LENGTH[field];
  if (max !== undefined && v.length > max) throw new InvalidInputError(`Invalid ${what}: ${field} is longer than ${max} characters.`);
  return v;
}

function obj(doc: Readonly<JsonObject>, field: string, what: string): JsonObject {
  const v = doc[field];
  if (v === undefined || v === null) return {};
  if (!isJsonObject(v)) throw new InvalidInputError(`Invalid ${what}: ${field} must be an object.`);
  return v;
}

const CONNECTOR: VolumeKind<VolumeConnector> = {
  name: 'volume connector',
  body: 'connector',
  fields: ['connector_id', 'extra', 'node_uuid', 'type'],
  required: ['connector_id', 'node_uuid', 'type'],
  sortKeys: CONNECTOR_SORT_KEYS,
  values: (d, w) => ({ type: str(d, 'type', w), connector_id: str(d, 'connector_id', w), extra: obj(d, 'extra', w) }),
  clash: (r) => `A volume connector with type ${String(r.type)} and connector ID ${String(r.connector_id)} already exists.`,
};

const TARGET: VolumeKind<VolumeTarget> = {
  name: 'volume target',
  body: 'target',
  fields: ['boot_index', 'extra', 'node_uuid', 'properties', 'volume_id', 'volume_type'],
  required: ['boot_index', 'node_uuid', 'volume_id', 'volume_type'],
  sortKeys: TARGET_SORT_KEYS,
  values: (d, w) => {
    if (typeof d.boot_index !== 'number' || !Number.isSafeInteger(d.boot_index))
      throw new InvalidInputError(`Invalid ${w}: boot_index: ${JSON.stringify(d.boot_index ?? null)} is not of type 'integer'.`);
    return {
      boot_index: d.boot_index,
      volume_id: str(d, 'volume_id', w),
      volume_type: str(d, 'volume_type', w),
      properties: obj(d, 'properties', w),
      extra: obj(d, 'extra', w),
    };
  },
  clash: (r) => `A volume target with boot index '${String(r.boot_index)}' for the same node already exists.`,
};

/** One kind of volume object, over its repository. */
class VolumeObjects<T extends { uuid: string; node_id: number; node_uuid: string }> {
  constructor(
    private readonly access: NodeAccess,
    private readonly repo: VolumeRepository<T, never, never>,
    private readonly kind: VolumeKind<T>,
  ) {}

  private notFound(ident: string): NotFoundError {
    return new NotFoundError(this.kind.name, ident);
  }

  /** An object the caller may see, with `rule` passed on its node. */
  async visible(ctx: AuthContext, ident: string, rule: string): Promise<{ row: T; node: Node }> {
    const uuid = canonicalUuid(ident);
    if (uuid === null) throw new InvalidInputError(`Expected UUID for ${this.kind.body}_uuid: ${ident}`, 'InvalidUUID');
    const row = await this.repo.get(uuid);
    return { row: row!, node: await boundNode(this.access, ctx, row, () => this.notFound(ident), rule) };
  }

  async list(ctx: AuthContext, req: BoundListRequest): Promise<T[]> {
    const filters: { -readonly [K in keyof NodeBoundFilters]: NodeBoundFilters[K] } = {};
    if (req.node !== undefined) filters.nodeId = (await this.access.visible(ctx, req.node)).id;
    const project = listProject(this.access, ctx, 'volume');
    if (project !== undefined) filters.project = project;
    return this.repo.list(
      await listPage(
        this.access,
        ctx,
        req,
        filters,
        this.kind.sortKeys,
        (u) => this.repo.get(u),
        (i) => this.notFound(i),
      ),
    );
  }

  async create(ctx: AuthContext, body: unknown): Promise<T> {
    const what = this.kind.body;
    if (!isJsonObject(body)) throw new InvalidInputError(`The ${this.kind.name} must be a JSON object.`);
    const unknown = Object.keys(body).filter((k) => k !== 'uuid' && !this.kind.fields.includes(k));
    if (unknown.length > 0) throw new InvalidInputError(`Invalid ${what}: unexpected field "${unknown[0]}".`);
    for (const k of this.kind.required)
      if (!Object.hasOwn(body, k)) throw new InvalidInputError(`Invalid ${what}: "${k}" is a required property.`);
    const node = await namedNode(this.access, ctx, body.node_uuid, 'baremetal:volume:create', (u) => invalidNode(u));
    const v = this.kind.values(body, what);
    const uuid = body.uuid === undefined || body.uuid === null ? newUuid() : requireUuid('uuid', body.uuid);
    if (await this.repo.get(uuid))
      throw new ConflictError(`A ${this.kind.name} with UUID ${uuid} already exists.`, `${pascal(this.kind.name)}AlreadyExists`);
    const r = await this.repo.insert(
      { uuid, node_id: node.id, ...v, written_by_project: writerOf(ctx, node) } as never,
      this.access.deps.clock.now(),
    );
    return writtenRow(r, node, () => new NotFoundError('node', node.uuid), `${this.kind.name} create`)!;
  }

  async update(ctx: AuthContext, ident: string, body: unknown): Promise<T> {
    const ops = parsePatch(body);
    const patchable = this.kind.fields;
    for (const op of ops) {
      if (!patchable.includes(rootOf(op.path)))
        throw new InvalidInputError(`Cannot patch ${op.path}. Only the following can be updated: ${patchable.join(', ')}`);
    }
    const { row, node } = await this.visible(ctx, ident, 'baremetal:volume:update');
    for (const value of patchValues(ops, '/node_uuid')) {
      if (typeof value !== 'string' || canonicalUuid(value) === null)
        throw new InvalidInputError(`Expected a UUID for node_uuid, but received ${String(value)}.`, 'InvalidUUID');
    }
    const doc: JsonObject = {};
    for (const f of patchable) doc[f] = (row as unknown as JsonObject)[f] ?? null;
    const patched = applyPatch(doc, ops);
    for (const k of this.kind.required)
      if (patched[k] === undefined || patched[k] === null)
        throw new InvalidInputError(`Invalid ${this.kind.body}: "${k}" is a required property.`);
    const v = this.kind.values(patched, this.kind.body) as Record<string, unknown>;
    const changes: Record<string, unknown> = {};
    for (const [k, val] of Object.entries(v)) {
      if (JSON.stringify(val) !== JSON.stringify((row as unknown as JsonObject)[k])) changes[k] = val;
    }
    let target = node;
    const newNode = canonicalUuid(String(patched.node_uuid))!;
    if (newNode !== row.node_uuid) {
      target = await namedNode(
        this.access,
        ctx,
        newNode,
        'baremetal:volume:create',
        (u) => new InvalidInputError(`Node ${u} could not be found.`, 'NodeNotFound'),
      );
      changes.node_id = target.id;
    }
    if (Object.keys(changes).length === 0) return row;
    changes.written_by_project = writerOf(ctx, target);
    const action = `${this.kind.name} update`;
    for (const n of target === node ? [node] : [node, target]) if (n.power_state !== 'power off') throw poweredOn(action, n);
    const r = await this.repo.update(row.uuid, changes as never, this.access.deps.clock.now(), { requirePowerOff: true });
    return writtenRow(r, target, () => this.notFound(ident), action)!;
  }

  async delete(ctx: AuthContext, ident: string): Promise<void> {
    const { row, node } = await this.visible(ctx, ident, 'baremetal:volume:delete');
    const action = `${this.kind.name} deletion`;
    if (node.power_state !== 'power off') throw poweredOn(action, node);
    writtenRow(await this.repo.delete(row.uuid, { requirePowerOff: true }), node, () => this.notFound(ident), action);
  }
}

/**
 * The writer recorded on a volume object: the node's lessee's project when the caller acts for
 * it (the object goes at the lease's end), else null (the owner or an operator: it stays).
 */
function writerOf(ctx: AuthContext, node: Pick<Node, 'owner' | 'lessee'>): string | null {
  return ctx.projectId !== null && ctx.projectId === node.lessee && node.lessee !== node.owner ? node.lessee : null;
}

/** Ironic's InvalidInput for a `node_uuid` that names no (visible) node. */
function invalidNode(uuid: string): InvalidInputError {
  return new InvalidInputError(`Invalid input for field/attribute node_uuid. Value: '${uuid}'.`, 'InvalidInput');
}

function pascal(s: string): string {
  return s.replace(/(^|\s)(\w)/g, (_m, _s: string, c: string) => c.toUpperCase());
}

/**
 * A change of hands (a lease's end, a sub-lease's start, an owner or lessee PATCH): remove the
 * node's volume connectors and targets that a lessee wrote (not the owner or an operator), so
 * the next holder never boots from or attaches the previous lessee's volumes. Runs whatever the
 * node's power state (the node is being taken away), and leaves a history entry naming them.
 * @param deps the inventory's storage and history
 * @param node the node as written (its current owner's objects stay)
 * @returns how many objects were removed
 */
export async function removeLesseeVolumes(
  deps: Pick<NodeAccess['deps'], 'resources' | 'history'>,
  node: Pick<Node, 'uuid' | 'owner'>,
): Promise<number> {
  const connectors = await deps.resources.volumeConnectors.deleteWrittenByOthers(node.uuid, node.owner);
  const targets = await deps.resources.volumeTargets.deleteWrittenByOthers(node.uuid, node.owner);
  const parts = [
    ...(connectors.length > 0 ? [`volume connector(s) ${connectors.join(', ')}`] : []),
    ...(targets.length > 0 ? [`volume target(s) ${targets.join(', ')}`] : []),
  ];
  if (parts.length > 0) {
    await deps.history?.record(node.uuid, {
      eventType: 'lease',
      severity: 'INFO',
      event: `Removed the previous lessee's ${parts.join(' and ')} at a change of hands.`,
      user: null,
    });
  }
  return connectors.length + targets.length;
}

/** Volume connector and target operations; see the module documentation. */
export class VolumeService {
  private readonly connectors: VolumeObjects<VolumeConnector>;
  private readonly targets: VolumeObjects<VolumeTarget>;

  constructor(private readonly access: NodeAccess) {
    const r = access.deps.resources;
    this.connectors = new VolumeObjects(access, r.volumeConnectors, CONNECTOR);
    this.targets = new VolumeObjects(access, r.volumeTargets, TARGET);
  }

  /**
   * Check `baremetal:volume:get` for the volume root documents (`/v1/volume`, and a node's
   * `/v1/nodes/{node}/volume`, whose node must be visible).
   * @throws ForbiddenError; NotFoundError for the node
   */
  async root(ctx: AuthContext, node?: string): Promise<void> {
    if (node !== undefined) await this.access.visible(ctx, node, 'baremetal:volume:get');
    else
      this.access.deps.policy.authorize(
        'baremetal:volume:get',
        {},
        ctx,
        'Access was denied to the following resource: baremetal:volume:get',
      );
  }

  /** One connector (`baremetal:volume:get`). */
  async getConnector(ctx: AuthContext, ident: string): Promise<VolumeConnector> {
    return (await this.connectors.visible(ctx, ident, 'baremetal:volume:get')).row;
  }

  /** A page of the connectors the caller may see (`list_all`, else `list` limited to the project's nodes). */
  listConnectors(ctx: AuthContext, req: BoundListRequest): Promise<VolumeConnector[]> {
    return this.connectors.list(ctx, req);
  }

  /** Create a connector (`baremetal:volume:create` on the node). */
  createConnector(ctx: AuthContext, body: unknown): Promise<VolumeConnector> {
    return this.connectors.create(ctx, body);
  }

  /** Update a connector with a JSON-PATCH (`baremetal:volume:update`; the node powered off). */
  updateConnector(ctx: AuthContext, ident: string, body: unknown): Promise<VolumeConnector> {
    return this.connectors.update(ctx, ident, body);
  }

  /** Delete a connector (`baremetal:volume:delete`; the node powered off). */
  deleteConnector(ctx: AuthContext, ident: string): Promise<void> {
    return this.connectors.delete(ctx, ident);
  }

  /** One target as the caller may see it (`baremetal:volume:get`). */
  async getTarget(ctx: AuthContext, ident: string): Promise<VolumeTarget> {
    return this.shown(ctx, (await this.targets.visible(ctx, ident, 'baremetal:volume:get')).row);
  }

  /** A page of targets, as the caller may see them. */
  async listTargets(ctx: AuthContext, req: BoundListRequest): Promise<VolumeTarget[]> {
    const mayView = this.mayViewProperties(ctx);
    return (await this.targets.list(ctx, req)).map((t) => this.shown(ctx, t, mayView));
  }

  /** Create a target (`baremetal:volume:create` on the node); the answer shows its properties masked. */
  async createTarget(ctx: AuthContext, body: unknown): Promise<VolumeTarget> {
    return this.shown(ctx, await this.targets.create(ctx, body), true);
  }

  /** Update a target with a JSON-PATCH (`baremetal:volume:update`; the node powered off). */
  async updateTarget(ctx: AuthContext, ident: string, body: unknown): Promise<VolumeTarget> {
    return this.shown(ctx, await this.targets.update(ctx, ident, body));
  }

  /** Delete a target (`baremetal:volume:delete`; the node powered off). */
  deleteTarget(ctx: AuthContext, ident: string): Promise<void> {
    return this.targets.delete(ctx, ident);
  }

  private mayViewProperties(ctx: AuthContext): boolean {
    return this.access.deps.policy.check('baremetal:volume:view_target_properties', {}, ctx);
  }

  /** A target with its properties masked, or redacted for a caller who may not view them. */
  private shown(ctx: AuthContext, t: VolumeTarget, mayView = this.mayViewProperties(ctx)): VolumeTarget {
    return { ...t, properties: mayView ? maskSecrets(t.properties) : { ...TARGET_PROPERTIES_REDACTED } };
  }
}
