/**
 * Owner lease policies (additive to esi-leap, `/v1/lease_policies`): an owner sets, for one of
 * its nodes or for all of them, the longest lease, the shortest gap between leases and the
 * projects that may lease (rules and semantics in `./policy-rules.ts`; enforced by
 * `./admission.ts` on claims and lease requests).
 *
 * Policy rules: `esi_leap:lease_policy:get_all` (list; non-admins see their project's
 * policies), `esi_leap:lease_policy:get` (admin or the owning project; others get 404),
 * `esi_leap:lease_policy:create` (admin or owner role), `esi_leap:lease_policy:update` and
 * `…:delete` (admin, or the owning project with the owner role). Only admins may act for
 * another project (`esi_leap:lease_policy:policy_admin`).
 */
import type { AuthContext } from '../auth.ts';
import type { Clock } from '../clock.ts';
import { ConflictError, InvalidInputError, NotFoundError } from '../errors.ts';
import { newUuid } from '../ids.ts';
import type { Policy } from '../policy/types.ts';
import type { LeasingAccess } from './access.ts';
import type { NodeGateway, ProjectDirectory } from './ports.ts';
import { policyFor, type LeasePolicy } from './policy-rules.ts';
import type { LeasingRepository } from './repository.ts';

/** A policy as the API shows it, with the owner's and the node's names. */
export interface LeasePolicyView extends LeasePolicy {
  readonly project: string | null;
  /** Node name, or null (all nodes, or a node without a name). */
  readonly resource: string | null;
}

/** `POST /v1/lease_policies`. Durations in seconds. */
export interface LeasePolicyCreateInput {
  /** Node UUID or name; omitted = all the owner's nodes. */
  readonly resourceUuid?: string;
  /** Owner project (admins only; default the caller's). */
  readonly projectId?: string;
  readonly maxLeaseSeconds?: number | null;
  readonly minGapSeconds?: number | null;
  /** Project ids or names; null or omitted = any project. */
  readonly allowedProjects?: readonly string[] | null;
  /** Full disk erase in automated cleaning (default false). */
  readonly eraseDevices?: boolean;
}

/** `PATCH /v1/lease_policies/{uuid}`: the fields given replace the current ones (null clears). */
export interface LeasePolicyUpdateInput {
  readonly maxLeaseSeconds?: number | null;
  readonly minGapSeconds?: number | null;
  readonly allowedProjects?: readonly string[] | null;
  readonly eraseDevices?: boolean;
}

/** `GET /v1/lease_policies` filters. */
export interface LeasePolicyListInput {
  readonly projectId?: string;
  readonly resourceUuid?: string;
}

/** Longest accepted maximum lease (ten years) and gap (thirty days), seconds. */
export const POLICY_MAX_LEASE_S = 10 * 365 * 86_400;
export const POLICY_MAX_GAP_S = 30 * 86_400;
/** Most allowed projects in one policy. */
export const POLICY_MAX_PROJECTS = 100;

function seconds(name: string, value: number | null | undefined, min: number, max: number): number | null {
  if (value === undefined || value === null) return null;
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new InvalidInputError(
      `Invalid input for field/attribute ${name}. Value: '${value}'. Expected whole seconds from ${min} to ${max}, or null.`,
      'InvalidLeasePolicy',
    );
  }
  return value * 1000;
}

function target(p: Pick<LeasePolicy, 'project_id'>): Record<string, unknown> {
  return { 'lease_policy.project_id': p.project_id };
}

/** The owner lease policy operations of the lease API. */
export class LeasePolicyService {
  constructor(
    private readonly repo: LeasingRepository,
    private readonly policy: Policy,
    private readonly access: LeasingAccess,
    private readonly nodes: NodeGateway,
    private readonly projects: ProjectDirectory,
    private readonly clock: Clock,
  ) {}

  /**
   * Policies the caller may see, filtered. Naming another project needs a policy admin.
   * @throws ForbiddenError, NotFoundError (unknown project, policy admins only)
   */
  async list(ctx: AuthContext, input: LeasePolicyListInput): Promise<LeasePolicyView[]> {
    this.policy.authorize('esi_leap:lease_policy:get_all', {}, ctx);
    const projectId = await this.projectFor(ctx, input.projectId);
    let resourceUuid: string | undefined;
    if (input.resourceUuid !== undefined) {
      const node = await this.nodes.find(input.resourceUuid);
      if (!node) return [];
      resourceUuid = node.uuid;
    }
    const found = await this.repo.listPolicies({
      ...(projectId !== undefined ? { projectId } : {}),
      ...(resourceUuid !== undefined ? { resourceUuid } : {}),
    });
    return this.views(found);
  }

  /** One policy the caller may see. @throws NotFoundError */
  async get(ctx: AuthContext, uuid: string): Promise<LeasePolicyView> {
    return (await this.views([await this.find(ctx, uuid, 'esi_leap:lease_policy:get')]))[0]!;
  }

  /**
   * Create a policy for one node of the owner, or for all of them.
   * @throws ForbiddenError (role; another project without admin; a node the project does not
   *   own), NotFoundError (node, projects), InvalidInputError, ConflictError (the owner already
   *   has a policy for that node, or an all-nodes policy)
   */
  async create(ctx: AuthContext, input: LeasePolicyCreateInput): Promise<LeasePolicyView> {
    this.policy.authorize('esi_leap:lease_policy:create', {}, ctx);
    const projectId = (await this.projectFor(ctx, input.projectId)) ?? this.access.projectOf(ctx);
    let resourceUuid: string | null = null;
    if (input.resourceUuid !== undefined) {
      const node = await this.access.visibleNode(ctx, input.resourceUuid);
      if (node.owner !== projectId) {
        throw new InvalidInputError(
          `Node ${node.uuid} is not owned by project ${projectId}: an owner's lease policy can only name the owner's nodes.`,
          'LeasePolicyNotOwner',
        );
      }
      resourceUuid = node.uuid;
    }
    const now = this.clock.now();
    const created: LeasePolicy = {
      uuid: newUuid(),
      project_id: projectId,
      resource_uuid: resourceUuid,
      max_lease_ms: seconds('max_lease_seconds', input.maxLeaseSeconds, 60, POLICY_MAX_LEASE_S),
      min_gap_ms: seconds('min_gap_seconds', input.minGapSeconds, 0, POLICY_MAX_GAP_S),
      allowed_projects: await this.resolveProjects(input.allowedProjects),
      erase_devices: input.eraseDevices ?? false,
      created_at: now,
      updated_at: now,
    };
    if (!(await this.repo.insertPolicy(created))) {
      const what = resourceUuid === null ? 'all its nodes' : `ironic_node ${resourceUuid}`;
      const [existing] = await this.repo.listPolicies({ projectId, resourceUuid });
      throw new ConflictError(
        `Project ${projectId} already has a lease policy for ${what}${existing ? `: ${existing.uuid}` : ''}. Update that one instead.`,
        'LeasePolicyExists',
      );
    }
    return (await this.views([created]))[0]!;
  }

  /**
   * Change a policy's limits.
   * @throws NotFoundError, ForbiddenError, InvalidInputError
   */
  async update(ctx: AuthContext, uuid: string, input: LeasePolicyUpdateInput): Promise<LeasePolicyView> {
    const found = await this.find(ctx, uuid, 'esi_leap:lease_policy:get');
    this.policy.authorize('esi_leap:lease_policy:update', target(found), ctx, `Access was denied to lease policy ${found.uuid}.`);
    const updated: LeasePolicy = {
      ...found,
      ...(input.maxLeaseSeconds !== undefined
        ? { max_lease_ms: seconds('max_lease_seconds', input.maxLeaseSeconds, 60, POLICY_MAX_LEASE_S) }
        : {}),
      ...(input.minGapSeconds !== undefined ? { min_gap_ms: seconds('min_gap_seconds', input.minGapSeconds, 0, POLICY_MAX_GAP_S) } : {}),
      ...(input.allowedProjects !== undefined ? { allowed_projects: await this.resolveProjects(input.allowedProjects) } : {}),
      ...(input.eraseDevices !== undefined ? { erase_devices: input.eraseDevices } : {}),
      updated_at: this.clock.now(),
    };
    await this.repo.updatePolicy(updated);
    return (await this.views([updated]))[0]!;
  }

  /** Delete a policy. @throws NotFoundError, ForbiddenError */
  async remove(ctx: AuthContext, uuid: string): Promise<void> {
    const found = await this.find(ctx, uuid, 'esi_leap:lease_policy:get');
    this.policy.authorize('esi_leap:lease_policy:delete', target(found), ctx, `Access was denied to lease policy ${found.uuid}.`);
    await this.repo.deletePolicy(found.uuid);
  }

  /**
   * True when the lease policy of node `nodeUuid` (owned by `owner`) asks for a full disk erase
   * in automated cleaning (for the conductor; no access check).
   */
  async eraseDevicesFor(owner: string | null, nodeUuid: string): Promise<boolean> {
    if (owner === null) return false;
    return policyFor(await this.repo.policiesOf([owner]), owner, nodeUuid)?.erase_devices ?? false;
  }

  private isAdmin(ctx: AuthContext): boolean {
    return this.policy.check('esi_leap:lease_policy:policy_admin', {}, ctx);
  }

  /**
   * The project a request acts for: policy admins name any project (404 for an unknown one;
   * undefined when none is named: all projects); others their own project only — naming any
   * other, existing or not, is the same 403, checked before any lookup.
   * @throws ForbiddenError, NotFoundError
   */
  private async projectFor(ctx: AuthContext, ident: string | undefined): Promise<string | undefined> {
    if (this.isAdmin(ctx)) return ident === undefined ? undefined : (await this.access.resolveProject(ident)).id;
    const mine = this.access.projectOf(ctx);
    if (ident !== undefined && !(await this.access.isOwnProject(ctx, ident)))
      this.policy.authorize('esi_leap:lease_policy:policy_admin', {}, ctx);
    return mine;
  }

  private async find(ctx: AuthContext, uuid: string, rule: string): Promise<LeasePolicy> {
    const found = await this.repo.getPolicy(uuid);
    if (!found || !this.policy.check(rule, target(found), ctx)) {
      throw new NotFoundError('lease policy', uuid, `Lease policy ${uuid} could not be found.`, 'LeasePolicyNotFound');
    }
    return found;
  }

  private async resolveProjects(idents: readonly string[] | null | undefined): Promise<string[] | null> {
    if (idents === undefined || idents === null) return null;
    if (idents.length > POLICY_MAX_PROJECTS)
      throw new InvalidInputError(
        `Invalid input for field/attribute allowed_projects: at most ${POLICY_MAX_PROJECTS} projects.`,
        'InvalidLeasePolicy',
      );
    const ids: string[] = [];
    for (const ident of idents) ids.push((await this.access.resolveProject(ident)).id);
    return [...new Set(ids)];
  }

  private async views(policies: readonly LeasePolicy[]): Promise<LeasePolicyView[]> {
    if (policies.length === 0) return [];
    const nodeUuids = [...new Set(policies.map((p) => p.resource_uuid).filter((u): u is string => u !== null))];
    const [nodes, names] = await Promise.all([this.nodes.findMany(nodeUuids), this.projects.namesOf(policies.map((p) => p.project_id))]);
    return policies.map((p) => ({
      ...p,
      project: names.get(p.project_id) ?? null,
      resource: p.resource_uuid === null ? null : (nodes.get(p.resource_uuid)?.name ?? null),
    }));
  }
}
