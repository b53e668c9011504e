/**
 * Domain management (Keystone v3 "Domains": create, update, delete; show and list are
 * `IdentityDirectory.getDomain`/`listDomains` in ./directory.ts). Projects, users and groups may
 * live in any domain; a user of a disabled domain, or a token scoped to a project of one, gets
 * no token (./tokens.ts).
 *
 * Rules, after Keystone (keystone/resource/core.py):
 * - `identity:create_domain`, `identity:update_domain`, `identity:delete_domain` (admin); a domain
 *   the caller may not read (`identity:get_domain`) is 404 first.
 * - Disabling a domain revokes the tokens of its users and of its projects at once.
 * - Only a disabled domain can be deleted (403 "Cannot delete a domain that is enabled, please
 *   disable it first."); deleting it deletes its projects (children first), users and groups
 *   with their role assignments, and the role assignments on the domain, as Keystone's
 *   `_delete_domain_contents` and its domain-deleted callbacks do.
 * - The `default` domain is immutable (403, Keystone's `ResourceUpdateForbidden` /
 *   `ResourceDeleteForbidden` wording): esi's bootstrap admin, the `admin-openrc` file
 *   (`OS_USER_DOMAIN_NAME=Default`) and token rendering rely on it. Keystone lets an operator
 *   disable, rename or delete it unless it is marked immutable; esi always treats it so.
 */
import type { AuthContext } from '../auth.ts';
import type { Clock } from '../clock.ts';
import { ConflictError, ForbiddenError, InvalidInputError } from '../errors.ts';
import { newHexId as newId } from '../ids.ts';
import type { Policy } from '../policy/types.ts';
import type { IdentityDirectory } from './directory.ts';
import { DEFAULT_DOMAIN_ID, type Domain, type Project } from './model.ts';
import type { IdentityRepository } from './ports.ts';
import type { TokenService } from './tokens.ts';

/** Fields accepted when creating a domain. */
export interface DomainInput {
  readonly name: string;
  readonly description?: string | null;
  readonly enabled?: boolean;
  /** Keystone's `explicit_domain_id`: a 32-hex-digit id chosen by the caller. */
  readonly explicitId?: string;
}

/** Fields an update may change. */
export type DomainPatch = Partial<Omit<DomainInput, 'explicitId'>>;

function refused(rule: string): string {
  return `You are not authorized to perform the requested action: ${rule}.`;
}

/** Create, update and delete domains. */
export class DomainAdmin {
  constructor(
    private readonly repo: IdentityRepository,
    private readonly policy: Policy,
    private readonly tokens: TokenService,
    private readonly directory: IdentityDirectory,
    private readonly clock: Clock,
  ) {}

  /**
   * Create a domain (`identity:create_domain`).
   * @throws ForbiddenError; InvalidInputError for a blank or too long name or a malformed
   *   explicit id; ConflictError for a taken name or id
   */
  async createDomain(ctx: AuthContext, input: DomainInput): Promise<Domain> {
    this.policy.authorize('identity:create_domain', {}, ctx, refused('identity:create_domain'));
    if (input.explicitId !== undefined && !/^[0-9a-f]{32}$/.test(input.explicitId)) {
      throw new InvalidInputError('Domain ID does not conform to required UUID format.', 'ValidationError');
    }
    const id = input.explicitId ?? newId();
    if (await this.repo.getDomain(id)) throw new ConflictError(`Conflict occurred attempting to store domain - Duplicate ID, ${id}.`);
    const domain: Domain = { id, name: checkName(input.name), description: input.description ?? '', enabled: input.enabled ?? true };
    await this.repo.createDomain(domain, this.clock.now());
    return domain;
  }

  /**
   * Rename, describe, enable or disable a domain (`identity:update_domain`); disabling revokes
   * the tokens of its users and projects.
   * @throws NotFoundError (not visible), ForbiddenError (rule, or the default domain),
   *   InvalidInputError, ConflictError (name taken)
   */
  async updateDomain(ctx: AuthContext, id: string, patch: DomainPatch): Promise<Domain> {
    const current = await this.directory.getDomain(ctx, id);
    this.policy.authorize('identity:update_domain', { 'target.domain.id': id }, ctx, refused('identity:update_domain'));
    if (id === DEFAULT_DOMAIN_ID) throw immutable('update', id);
    const next: Domain = {
      ...current,
      name: patch.name !== undefined ? checkName(patch.name) : current.name,
      description: patch.description !== undefined ? (patch.description ?? '') : current.description,
      enabled: patch.enabled ?? current.enabled,
    };
    await this.repo.updateDomain(next);
    if (current.enabled && !next.enabled) await this.tokens.revokeFor({ domainId: id });
    return next;
  }

  /**
   * Delete a disabled domain and everything in it (see the module documentation).
   * @throws NotFoundError (not visible), ForbiddenError (rule, the default domain, or enabled)
   */
  async deleteDomain(ctx: AuthContext, id: string): Promise<void> {
    const domain = await this.directory.getDomain(ctx, id);
    this.policy.authorize('identity:delete_domain', { 'target.domain.id': id }, ctx, refused('identity:delete_domain'));
    if (id === DEFAULT_DOMAIN_ID) throw immutable('delete', id);
    if (domain.enabled) throw new ForbiddenError('Cannot delete a domain that is enabled, please disable it first.');
    for (const p of childrenFirst(await this.repo.findProjects({ domainId: id }))) {
      await this.repo.deleteAssignmentsFor({ projectId: p.id });
      await this.tokens.revokeFor({ projectId: p.id });
      await this.repo.deleteProject(p.id);
    }
    for (const u of await this.repo.findUsers({ domainId: id })) {
      await this.repo.deleteAssignmentsFor({ userId: u.id });
      await this.tokens.revokeFor({ userId: u.id });
      await this.repo.deleteUser(u.id);
    }
    for (const g of await this.repo.findGroups({ domainId: id })) await this.repo.deleteGroup(g.id);
    await this.repo.deleteAssignmentsFor({ domainId: id });
    await this.tokens.revokeFor({ domainId: id });
    await this.repo.deleteDomain(id);
  }

  /** Domain names by id (no policy check), for showing names of objects the caller may see. */
  async namesByIds(ids: Iterable<string>): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for (const id of new Set(ids)) {
      const d = await this.repo.getDomain(id);
      if (d) out.set(id, d.name);
    }
    return out;
  }
}

function immutable(action: 'update' | 'delete', id: string): ForbiddenError {
  return new ForbiddenError(
    `Unable to ${action} immutable domain resource: \`${id}\`. esi keeps its default domain immutable.`,
    action === 'update' ? 'ResourceUpdateForbidden' : 'ResourceDeleteForbidden',
  );
}

/** A domain name: 1–64 characters, not only blanks (Keystone's domain `name` schema). */
function checkName(name: string): string {
  if (name.trim() === '' || name.length > 64) {
    throw new InvalidInputError(
      "Invalid input for field 'domain/name': a domain name of 1 to 64 characters is required.",
      'ValidationError',
    );
  }
  return name;
}

/** Projects ordered so that every child comes before its parent. */
function childrenFirst(projects: readonly Project[]): Project[] {
  const byId = new Map(projects.map((p) => [p.id, p]));
  const depth = (p: Project): number => {
    let d = 0;
    const seen = new Set<string>();
    for (let cur = p; cur.parent_id && byId.has(cur.parent_id) && !seen.has(cur.parent_id); cur = byId.get(cur.parent_id)!) {
      seen.add(cur.parent_id);
      d++;
    }
    return d;
  };
  return [...projects].sort((a, b) => depth(b) - depth(a));
}
