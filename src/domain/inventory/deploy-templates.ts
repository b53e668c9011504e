/**
 * Deploy templates (Ironic 21.4 `ironic/api/controllers/v1/deploy_template.py`, API ≥ 1.55): a
 * named list of deploy steps that a deployment runs when the instance's traits name the
 * template (src/domain/inventory/deploy-steps.ts does the matching and ordering).
 *
 * A template has a `uuid`, a `name` that is a valid trait (`CUSTOM_[A-Z0-9_]+` or a standard
 * trait, 1–255 characters, unique), `steps` (at least one; each `{interface, step, args,
 * priority}` with `interface` one of power, management, deploy, bios, raid, a non-empty `step`,
 * an object `args` and an integer `priority` ≥ 0 — a string of digits is accepted and stored as
 * the integer; no `interface.step` twice) and `extra` (an object). `description` is accepted on
 * create (a string of ≤ 255 characters or null) and, as in Ironic 21.4, neither stored nor shown.
 *
 * Rules: reads need `baremetal:deploy_template:get`, writes `:create`, `:update`, `:delete`
 * (system-level resources: a caller refused is 403). A template is named by UUID or by name; a
 * value that is neither is 400. A duplicate name or UUID is 409. PATCH may change `name`,
 * `steps`, `extra` (and `description`, which does not exist here, so adding it is refused as
 * Ironic refuses it); the result is validated as a created template is, and a PATCH that changes
 * nothing writes nothing (`updated_at` stays).
 */
import type { AuthContext } from '../auth.ts';
import type { Clock } from '../clock.ts';
import { ConflictError, InvalidInputError, NotFoundError } from '../errors.ts';
import { isUuidLike, newUuid } from '../ids.ts';
import type { Policy } from '../policy/types.ts';
import { parseDeployStep, stepId, type DeployStep } from './deploy-steps.ts';
import { isJsonObject, type JsonObject } from './masking.ts';
import { applyPatch, parsePatch, rootOf } from './patch.ts';
import { canonicalUuid, checkTrait, isValidLogicalName } from './validation.ts';

/** A stored deploy template. */
export interface DeployTemplate {
  /** Internal id: creation order, the default sort key. */
  readonly id: number;
  /** Row version, incremented by every write. */
  readonly version: number;
  readonly uuid: string;
  readonly name: string;
  readonly steps: readonly DeployStep[];
  readonly extra: JsonObject;
  /** Epoch ms. */
  readonly created_at: number;
  readonly updated_at: number | null;
}

/** What a new template is stored with. */
export interface NewDeployTemplate {
  readonly uuid: string;
  readonly name: string;
  readonly steps: readonly DeployStep[];
  readonly extra: JsonObject;
}

/** The changeable fields of a template. */
export type DeployTemplateChanges = Pick<NewDeployTemplate, 'name' | 'steps' | 'extra'>;

/** Sort keys of template lists (Ironic refuses `extra` and `steps`). */
export const DEPLOY_TEMPLATE_SORT_KEYS: readonly string[] = Object.freeze(['id', 'uuid', 'name', 'created_at', 'updated_at']);

/** One page of a template list. */
export interface DeployTemplateListQuery {
  readonly limit: number;
  /** Continue after this template (by the sort key, then by id). */
  readonly marker: DeployTemplate | null;
  /** One of {@link DEPLOY_TEMPLATE_SORT_KEYS}. */
  readonly sortKey: string;
  readonly sortDir: 'asc' | 'desc';
}

/** Outcome of a write: the template, or why nothing was written. */
export type DeployTemplateWrite =
  | { readonly ok: true; readonly template: DeployTemplate }
  | { readonly ok: false; readonly reason: 'missing' | 'stale' | 'duplicate-name' | 'duplicate-uuid' };

/** Storage of deploy templates (src/store/inventory/deploy-template-repository.ts). */
export interface DeployTemplateRepository {
  /** One page, sorted by the query's key then by id. */
  list(query: DeployTemplateListQuery): Promise<DeployTemplate[]>;
  /** A template by canonical UUID, or null. */
  get(uuid: string): Promise<DeployTemplate | null>;
  /** A template by name, or null. */
  getByName(name: string): Promise<DeployTemplate | null>;
  /** Templates with one of these names, in creation order. */
  listByNames(names: readonly string[]): Promise<DeployTemplate[]>;
  /** Store a new template (`duplicate-name` / `duplicate-uuid` when either is taken). */
  insert(template: NewDeployTemplate, now: number): Promise<DeployTemplateWrite>;
  /** Write `changes` if the row still has `expectedVersion`. */
  update(uuid: string, expectedVersion: number, changes: DeployTemplateChanges, now: number): Promise<DeployTemplateWrite>;
  /** @returns false when there was no such template */
  delete(uuid: string): Promise<boolean>;
}

/** The deploy templates of a deployment, as the deploy flows and provision requests read them. */
export interface DeployTemplateLookup {
  /** Templates named by these traits, in creation order (no policy: the caller has the node). */
  matching(names: readonly string[]): Promise<DeployTemplate[]>;
}

const TOP_KEYS = ['description', 'extra', 'name', 'steps', 'uuid'];
/** Root fields PATCH may touch (Ironic `PATCH_ALLOWED_FIELDS`). */
const PATCH_ALLOWED = ['extra', 'name', 'steps', 'description'];

/** A template name: a valid trait. @throws InvalidInputError */
function checkName(name: unknown): string {
  try {
    return checkTrait(name);
  } catch {
    throw new InvalidInputError(
      `Invalid name ${JSON.stringify(name)}: a deploy template name must be a valid trait, CUSTOM_[A-Z0-9_]+ or a standard trait, at most 255 characters.`,
    );
  }
}

/** Steps of a template: a non-empty list, each step valid, no `interface.step` twice. @throws InvalidInputError */
function checkSteps(raw: unknown): DeployStep[] {
  if (!Array.isArray(raw)) throw new InvalidInputError('Invalid steps: a list of deploy steps is required.');
  if (raw.length === 0) throw new InvalidInputError('Invalid steps: [] is too short; a deploy template needs at least one step.');
  const steps = raw.map((s, i) => parseDeployStep(s, `steps[${i}]`));
  const counts = new Map<string, number>();
  for (const s of steps) counts.set(stepId(s), (counts.get(stepId(s)) ?? 0) + 1);
  const dups = [...counts]
    .filter(([, n]) => n > 1)
    .map(([id]) => `interface: ${id.split('.')[0]}, step: ${id.split('.').slice(1).join('.')}`);
  if (dups.length > 0) {
    throw new InvalidInputError(
      `Deploy template invalid: Duplicate deploy steps. A deploy template cannot have multiple deploy steps with the same interface and step. Duplicates: ${dups.join('; ')}.`,
      'InvalidDeployTemplate',
    );
  }
  return steps;
}

/** `extra`: an object (null → {}). @throws InvalidInputError */
function checkExtra(raw: unknown): JsonObject {
  if (raw === undefined || raw === null) return {};
  if (!isJsonObject(raw)) throw new InvalidInputError('Invalid extra: an object is required.');
  return raw;
}

/**
 * Validate a create body (Ironic `TEMPLATE_SCHEMA` + duplicate steps + UUID).
 * @returns the template to store (a new UUID unless one was given)
 * @throws InvalidInputError naming the first problem
 */
export function parseDeployTemplate(body: unknown): NewDeployTemplate {
  if (!isJsonObject(body)) throw new InvalidInputError('Invalid deploy template: the body must be a JSON object.');
  const unknown = Object.keys(body).filter((k) => !TOP_KEYS.includes(k));
  if (unknown.length > 0) {
    throw new InvalidInputError(`Invalid deploy template: Additional properties are not allowed ('${unknown[0]}' was unexpected)`);
  }
  for (const k of ['steps', 'name'])
    if (!Object.hasOwn(body, k)) throw new InvalidInputError(`Invalid deploy template: '${k}' is a required property`);
  const d = body.description;
  if (d !== undefined && d !== null && (typeof d !== 'string' || d.length > 255)) {
    throw new InvalidInputError('Invalid description: a string of at most 255 characters (or null) is required.');
  }
  let uuid = newUuid();
  if (body.uuid !== undefined && body.uuid !== null) {
    const c = typeof body.uuid === 'string' ? canonicalUuid(body.uuid) : null;
    if (c === null) throw new InvalidInputError(`Expected UUID for uuid: ${String(body.uuid)}`, 'InvalidUUID');
    uuid = c;
  }
  return { uuid, name: checkName(body.name), steps: checkSteps(body.steps), extra: checkExtra(body.extra) };
}

/** The template as a PATCH document (the fields Ironic's `as_dict` has). */
function patchDocument(t: DeployTemplate): JsonObject {
  return {
    uuid: t.uuid,
    name: t.name,
    steps: t.steps.map((s) => ({ ...s })),
    extra: t.extra,
    created_at: t.created_at,
    updated_at: t.updated_at,
  };
}

/**
 * The changes a PATCH makes (Ironic: allowed roots, JSON-PATCH, then the create schema on the result).
 * An empty patch changes nothing.
 * @throws InvalidInputError (`PatchError` for the operations themselves)
 */
export function patchDeployTemplate(t: DeployTemplate, body: unknown): DeployTemplateChanges {
  if (Array.isArray(body) && body.length === 0) return { name: t.name, steps: t.steps, extra: t.extra };
  const ops = parsePatch(body);
  for (const op of ops) {
    if (!PATCH_ALLOWED.includes(rootOf(op.path))) {
      throw new InvalidInputError(`Cannot patch ${op.path}. Only the following can be updated: ${PATCH_ALLOWED.join(', ')}`, 'PatchError');
    }
  }
  const doc = applyPatch(patchDocument(t), ops);
  for (const k of ['name', 'steps'])
    if (!Object.hasOwn(doc, k)) throw new InvalidInputError(`Invalid patch: '${k}' is a required property`);
  return { name: checkName(doc.name), steps: checkSteps(doc.steps), extra: checkExtra(doc.extra) };
}

/** How many times a PATCH is recomputed after a concurrent change before giving up. */
const WRITE_ATTEMPTS = 3;

/** Deploy templates: see the module documentation. */
export class DeployTemplateService implements DeployTemplateLookup {
  constructor(
    private readonly repo: DeployTemplateRepository,
    private readonly policy: Policy,
    private readonly clock: Clock,
  ) {}

  /**
   * One page of templates.
   * @param marker UUID of the last template of the previous page
   * @throws ForbiddenError; NotFoundError for a marker that names no template
   */
  async list(
    ctx: AuthContext,
    q: { limit: number; marker: string | null; sortKey: string; sortDir: 'asc' | 'desc' },
  ): Promise<DeployTemplate[]> {
    this.policy.authorize('baremetal:deploy_template:get', {}, ctx);
    if (!DEPLOY_TEMPLATE_SORT_KEYS.includes(q.sortKey)) {
      const shown = ['extra', 'steps'].includes(q.sortKey) ? q.sortKey : `"${q.sortKey}"`;
      throw new InvalidInputError(`The sort_key value ${shown} is an invalid field for sorting`, 'InvalidParameterValue');
    }
    let marker: DeployTemplate | null = null;
    if (q.marker !== null) {
      marker = isUuidLike(q.marker) ? await this.repo.get(canonicalUuid(q.marker)!) : null;
      if (marker === null) throw notFound(q.marker);
    }
    return this.repo.list({ limit: q.limit, marker, sortKey: q.sortKey, sortDir: q.sortDir });
  }

  /** One template by UUID or name. @throws InvalidInputError, ForbiddenError, NotFoundError */
  async get(ctx: AuthContext, ident: string): Promise<DeployTemplate> {
    this.policy.authorize('baremetal:deploy_template:get', {}, ctx);
    return this.find(ident);
  }

  /**
   * Create a template from a request body (see {@link parseDeployTemplate}).
   * @throws ForbiddenError; InvalidInputError; ConflictError for a duplicate name or UUID
   */
  async create(ctx: AuthContext, body: unknown): Promise<DeployTemplate> {
    this.policy.authorize('baremetal:deploy_template:create', {}, ctx);
    const t = parseDeployTemplate(body);
    return written(await this.repo.insert(t, this.clock.now()), t.uuid, t.name);
  }

  /**
   * Apply a JSON-PATCH (see {@link patchDeployTemplate}).
   * @throws ForbiddenError; InvalidInputError; NotFoundError; ConflictError for a name in use
   *   or a template changed concurrently too often
   */
  async update(ctx: AuthContext, ident: string, body: unknown): Promise<DeployTemplate> {
    this.policy.authorize('baremetal:deploy_template:update', {}, ctx);
    let t = await this.find(ident);
    for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
      const changes = patchDeployTemplate(t, body);
      if (JSON.stringify(changes) === JSON.stringify({ name: t.name, steps: t.steps, extra: t.extra })) return t;
      const r = await this.repo.update(t.uuid, t.version, changes, this.clock.now());
      if (r.ok || r.reason !== 'stale') return written(r, t.uuid, changes.name);
      const again = await this.repo.get(t.uuid);
      if (again === null) throw notFound(ident);
      t = again;
    }
    throw new ConflictError(`Deploy template ${t.uuid} was changed by another request; please retry.`);
  }

  /** Delete a template. @throws ForbiddenError, InvalidInputError, NotFoundError */
  async delete(ctx: AuthContext, ident: string): Promise<void> {
    this.policy.authorize('baremetal:deploy_template:delete', {}, ctx);
    const t = await this.find(ident);
    if (!(await this.repo.delete(t.uuid))) throw notFound(ident);
  }

  /** See {@link DeployTemplateLookup.matching}. */
  async matching(names: readonly string[]): Promise<DeployTemplate[]> {
    return names.length === 0 ? [] : this.repo.listByNames([...new Set(names)]);
  }

  /** A template by UUID or name, without policy. */
  private async find(ident: string): Promise<DeployTemplate> {
    let t: DeployTemplate | null;
    if (isUuidLike(ident)) t = await this.repo.get(canonicalUuid(ident)!);
    else if (isValidLogicalName(ident)) t = await this.repo.getByName(ident);
    else throw new InvalidInputError(`Expected UUID or name for template_ident: ${ident}`, 'InvalidUuidOrName');
    if (t === null) throw notFound(ident);
    return t;
  }
}

function notFound(ident: string): NotFoundError {
  return new NotFoundError('deploy template', ident, `Deploy template ${ident} could not be found.`, 'DeployTemplateNotFound');
}

/** The template of a write, or the error its failure stands for. */
function written(r: DeployTemplateWrite, uuid: string, name: string): DeployTemplate {
  if (r.ok) return r.template;
  if (r.reason === 'duplicate-name')
    throw new ConflictError(`A deploy template with name ${name} already exists.`, 'DeployTemplateDuplicateName');
  if (r.reason === 'duplicate-uuid')
    throw new ConflictError(`A deploy template with UUID ${uuid} already exists.`, 'DeployTemplateAlreadyExists');
  if (r.reason === 'missing') throw notFound(uuid);
  throw new ConflictError(`Deploy template ${uuid} was changed by another request; please retry.`);
}
