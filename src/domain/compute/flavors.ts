/**
 * `FlavorService`: flavors, their extra specs and access lists (Nova `flavors`,
 * `os-flavor-manage`, `os-extra_specs`, `os-flavor-access`).
 *
 * Visibility (Nova): public flavors are seen by everyone; a private flavor by the projects on
 * its access list and by admins (`compute:context_is_admin`); any other flavor is 404.
 *
 * Who may change flavors (esi's policy, `src/domain/policy/defaults-openstack.ts`): admins create public
 * and private flavors (Nova); besides, a project member may create **private** flavors for its
 * own project — the project becomes the flavor's `owner` and is put on its access list — and
 * then manage them (extra specs, description, access list, delete). Targets: `flavor.is_public`
 * (create) and `flavor.owner`. Seen but not allowed → 403; not seen → 404.
 */
import type { AuthContext } from '../auth.ts';
import type { Clock } from '../clock.ts';
import { ConflictError, InvalidInputError, NotFoundError } from '../errors.ts';
import type { Policy } from '../policy/types.ts';
import { flavorPlacement } from '../scheduling/flavor-request.ts';
import { checkDescription, parseExtraSpecs, parseFlavorBody, parseTenant } from './flavor-input.ts';
import type { Flavor } from './model.ts';
import type { ComputeRepository, ProjectLookup } from './ports.ts';

/** A flavor list request. */
export interface FlavorListRequest {
  /** Nova `is_public`: `true` (default), `false`, or `none` (all, for admins). */
  readonly isPublic?: string;
  readonly minRam?: string;
  readonly minDisk?: string;
  readonly sortKey?: string;
  readonly sortDir?: string;
  readonly limit: number;
  readonly marker?: string;
}

/** Nova's flavor sort keys → the model's field names. */
const SORT_KEYS: Readonly<Record<string, string>> = {
  flavorid: 'flavorid',
  id: 'flavorid',
  name: 'name',
  memory_mb: 'ram',
  ram: 'ram',
  vcpus: 'vcpus',
  root_gb: 'disk',
  disk: 'disk',
  ephemeral_gb: 'ephemeral',
  swap: 'swap',
  rxtx_factor: 'rxtx_factor',
  created_at: 'created_at',
  updated_at: 'updated_at',
};

/** The flat policy target of a flavor. */
export function flavorTarget(f: { is_public: boolean; owner: string | null }): Record<string, unknown> {
  return { 'flavor.is_public': f.is_public, 'flavor.owner': f.owner };
}

function nonNegative(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^[0-9]+$/.test(v)) throw new InvalidInputError(`Invalid ${name} filter [${v}]`);
  return Number(v);
}

/** Flavor operations; see the module documentation. */
export class FlavorService {
  constructor(
    private readonly repo: ComputeRepository,
    private readonly policy: Policy,
    private readonly projects: ProjectLookup,
    private readonly clock: Clock,
  ) {}

  /** True when the caller sees every flavor. */
  isAdmin(ctx: AuthContext): boolean {
    return this.policy.check('compute:context_is_admin', {}, ctx);
  }

  /** Whether the caller may see `f`. */
  async canSee(ctx: AuthContext, f: Flavor): Promise<boolean> {
    if (f.is_public || this.isAdmin(ctx)) return true;
    return ctx.projectId !== null && (f.owner === ctx.projectId || (await this.repo.hasFlavorAccess(f.id, ctx.projectId)));
  }

  /**
   * A flavor the caller may see, by id.
   * @throws NotFoundError
   */
  async get(ctx: AuthContext, flavorid: string): Promise<Flavor> {
    const f = await this.repo.getFlavor(flavorid);
    if (f === null || !(await this.canSee(ctx, f)))
      throw new NotFoundError('flavor', flavorid, `Flavor ${flavorid} could not be found.`, 'FlavorNotFound');
    return f;
  }

  /** One page of the flavors the caller sees (see {@link FlavorListRequest}). */
  async list(ctx: AuthContext, req: FlavorListRequest): Promise<Flavor[]> {
    const admin = this.isAdmin(ctx);
    const raw = (req.isPublic ?? 'true').toLowerCase();
    let isPublic: boolean | null;
    if (['true', 't', '1', 'yes', 'y', 'on'].includes(raw)) isPublic = true;
    else if (['false', 'f', '0', 'no', 'n', 'off'].includes(raw)) isPublic = false;
    else if (raw === 'none') isPublic = null;
    else throw new InvalidInputError(`Invalid is_public filter [${req.isPublic}]`);
    // Nova: `true` (the default) gives the public flavors and the private ones the caller's
    // project may use; `false` the private ones only; `none` both. Admins get every private
    // flavor with `false` and `none`.
    const own = ctx.projectId ?? '\u0000none';
    const project = isPublic === true || !admin ? own : null;
    const sortKey = SORT_KEYS[req.sortKey ?? 'flavorid'];
    if (sortKey === undefined) throw new InvalidInputError(`Invalid sort key: ${req.sortKey}`);
    const sortDir = req.sortDir ?? 'asc';
    if (sortDir !== 'asc' && sortDir !== 'desc') throw new InvalidInputError(`Invalid sort direction: ${sortDir}`);
    let marker: Flavor | null = null;
    if (req.marker !== undefined) {
      marker = await this.repo.getFlavor(req.marker);
      if (marker === null || !(await this.canSee(ctx, marker))) throw new InvalidInputError(`marker [${req.marker}] not found`);
    }
    return this.repo.listFlavors({
      project,
      isPublic: isPublic === true ? null : isPublic,
      ...(req.minRam !== undefined ? { minRam: nonNegative('minRam', req.minRam) } : {}),
      ...(req.minDisk !== undefined ? { minDisk: nonNegative('minDisk', req.minDisk) } : {}),
      sortKey,
      sortDir,
      limit: req.limit,
      marker,
    });
  }

  /**
   * Create a flavor (see the module documentation).
   * @param allowDescription the request's microversion has `description` (≥ 2.55)
   * @throws InvalidInputError; ForbiddenError; ConflictError (duplicate id or name)
   */
  async create(ctx: AuthContext, body: unknown, allowDescription: boolean): Promise<Flavor> {
    const b = parseFlavorBody(body, allowDescription);
    const admin = this.isAdmin(ctx);
    const owner = admin || b.is_public ? null : ctx.projectId;
    this.policy.authorize(
      'os_compute_api:os-flavor-manage:create',
      flavorTarget({ is_public: b.is_public, owner }),
      ctx,
      "Policy doesn't allow os_compute_api:os-flavor-manage:create to be performed.",
    );
    if ((await this.repo.getFlavor(b.flavorid)) !== null)
      throw new ConflictError(`Flavor with ID ${b.flavorid} already exists.`, 'FlavorIdExists');
    if ((await this.repo.getFlavorByName(b.name)) !== null)
      throw new ConflictError(`Flavor with name ${b.name} already exists.`, 'FlavorExists');
    return this.repo.insertFlavor({ ...b, disabled: false, owner, extra_specs: {} }, owner === null ? [] : [owner], this.clock.now());
  }

  /** A flavor the caller sees and may change under `rule`. */
  private async changeable(ctx: AuthContext, flavorid: string, rule: string): Promise<Flavor> {
    const f = await this.get(ctx, flavorid);
    this.policy.authorize(rule, flavorTarget(f), ctx, `Policy doesn't allow ${rule} to be performed.`);
    return f;
  }

  /** Set the description (Nova ≥ 2.55 `PUT /flavors/{id}`). */
  async update(ctx: AuthContext, flavorid: string, description: unknown): Promise<Flavor> {
    const f = await this.changeable(ctx, flavorid, 'os_compute_api:os-flavor-manage:update');
    return (await this.repo.updateFlavor(f.flavorid, { description: checkDescription(description) }, this.clock.now())) ?? f;
  }

  /** Delete a flavor (servers keep their copy of it). */
  async delete(ctx: AuthContext, flavorid: string): Promise<void> {
    const f = await this.changeable(ctx, flavorid, 'os_compute_api:os-flavor-manage:delete');
    if (!(await this.repo.deleteFlavor(f.flavorid)))
      throw new NotFoundError('flavor', flavorid, `Flavor ${flavorid} could not be found.`, 'FlavorNotFound');
  }

  /** The extra specs of a flavor the caller sees. */
  async extraSpecs(ctx: AuthContext, flavorid: string): Promise<Readonly<Record<string, string>>> {
    const f = await this.get(ctx, flavorid);
    this.policy.authorize('os_compute_api:os-flavor-extra-specs:index', flavorTarget(f), ctx);
    return f.extra_specs;
  }

  /** One extra spec. @throws NotFoundError when the flavor lacks it */
  async extraSpec(ctx: AuthContext, flavorid: string, key: string): Promise<string> {
    const f = await this.get(ctx, flavorid);
    this.policy.authorize('os_compute_api:os-flavor-extra-specs:show', flavorTarget(f), ctx);
    const v = Object.hasOwn(f.extra_specs, key) ? f.extra_specs[key] : undefined;
    if (v === undefined)
      throw new NotFoundError('extra spec', key, `Flavor ${flavorid} has no extra specs with key ${key}.`, 'FlavorExtraSpecsNotFound');
    return v;
  }

  /**
   * Add or replace extra specs (`POST …/os-extra_specs` with `{extra_specs}`, or `PUT
   * …/os-extra_specs/{key}` with `{key: value}` when `key` is given).
   * @returns the specs written
   */
  async setExtraSpecs(ctx: AuthContext, flavorid: string, body: unknown, key?: string): Promise<Record<string, string>> {
    const f = await this.changeable(
      ctx,
      flavorid,
      key === undefined ? 'os_compute_api:os-flavor-extra-specs:create' : 'os_compute_api:os-flavor-extra-specs:update',
    );
    const specs = parseExtraSpecs(body, key);
    const merged = { ...f.extra_specs, ...specs };
    await this.checkWhole(merged);
    await this.repo.updateFlavor(f.flavorid, { extra_specs: merged }, this.clock.now());
    return specs;
  }

  /** The whole set must still make one placement request (e.g. one resource class). */
  private async checkWhole(specs: Readonly<Record<string, string>>): Promise<void> {
    flavorPlacement({ vcpus: 0, ram: 0, disk: 0, extra_specs: specs });
  }

  /** Remove one extra spec. @throws NotFoundError when the flavor lacks it */
  async deleteExtraSpec(ctx: AuthContext, flavorid: string, key: string): Promise<void> {
    const f = await this.changeable(ctx, flavorid, 'os_compute_api:os-flavor-extra-specs:delete');
    if (!Object.hasOwn(f.extra_specs, key))
      throw new NotFoundError('extra spec', key, `Flavor ${flavorid} has no extra specs with key ${key}.`, 'FlavorExtraSpecsNotFound');
    const next = { ...f.extra_specs };
    delete next[key];
    await this.repo.updateFlavor(f.flavorid, { extra_specs: next }, this.clock.now());
  }

  /** The access list of a private flavor. @throws NotFoundError for a public flavor (Nova) */
  async access(ctx: AuthContext, flavorid: string): Promise<string[]> {
    const f = await this.changeable(ctx, flavorid, 'os_compute_api:os-flavor-access');
    if (f.is_public)
      throw new NotFoundError('flavor access', flavorid, 'Access list not available for public flavors.', 'FlavorAccessNotFound');
    return this.repo.flavorProjects(f.id);
  }

  /**
   * Add (`addTenantAccess`) or remove (`removeTenantAccess`) a project.
   * @returns the access list afterwards
   * @throws ConflictError for a public flavor or a project already there; NotFoundError for a
   *   project not there (remove); InvalidInputError for an unknown project (add)
   */
  async changeAccess(ctx: AuthContext, flavorid: string, add: boolean, action: unknown): Promise<string[]> {
    const project = parseTenant(action);
    const rule = add ? 'os_compute_api:os-flavor-access:add_tenant_access' : 'os_compute_api:os-flavor-access:remove_tenant_access';
    const f = await this.changeable(ctx, flavorid, rule);
    if (f.is_public) throw new ConflictError('Can not add access to a public flavor.', 'FlavorAccessPublic');
    if (add) {
      if (!(await this.projects.exists(project))) throw new InvalidInputError(`Project ID ${project} is not a valid project.`);
      if (!(await this.repo.addFlavorProject(f.id, project)))
        throw new ConflictError(
          `Flavor access already exists for flavor ${flavorid} and project ${project} combination.`,
          'FlavorAccessExists',
        );
    } else if (!(await this.repo.removeFlavorProject(f.id, project))) {
      throw new NotFoundError(
        'flavor access',
        project,
        `Flavor access not found for ${flavorid} / ${project} combination.`,
        'FlavorAccessNotFound',
      );
    }
    return this.repo.flavorProjects(f.id);
  }
}
