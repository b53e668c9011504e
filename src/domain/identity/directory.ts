/**
 * The identity directory: domains, projects (with hierarchy) and users, with Keystone's
 * validation rules and esi's policy checks (`identity:*` rules).
 *
 * Visibility: a caller that may not read a user gets `NotFoundError` (404), not Keystone's 403,
 * so that names and ids of other tenants are not confirmed. Projects follow Keystone instead:
 * `identity:get_project` is checked before the project is looked up, so a caller without it
 * gets 403 for every id, existing or not (which confirms nothing), and `identity:list_projects`
 * (admin by default) refuses a non-admin with 403 — the `openstack` CLI falls back to the id it
 * was given only on a 403 (openstackclient `identity.common._find_identity_resource`). A
 * non-admin's own projects come from {@link IdentityDirectory.listUserProjects}.
 */
import type { AuthContext } from '../auth.ts';
import type { Clock } from '../clock.ts';
import { ConflictError, ForbiddenError, InvalidInputError, NotFoundError, UnauthorizedError } from '../errors.ts';
import { newHexId as newId } from '../ids.ts';
import type { Policy } from '../policy/types.ts';
import { DEFAULT_DOMAIN_ID, type Domain, type Project, type User } from './model.ts';
import type { IdentityRepository, ProjectFilter, UserFilter } from './ports.ts';
import { hashPassword } from './passwords.ts';
import type { TokenService } from './tokens.ts';

/** Fields accepted when creating a project. */
export interface ProjectInput {
  readonly name: string;
  readonly domainId?: string | null;
  readonly parentId?: string | null;
  readonly description?: string;
  readonly enabled?: boolean;
  readonly extra?: Record<string, unknown>;
}

/** Fields accepted when creating a user. */
export interface UserInput {
  readonly name: string;
  readonly domainId?: string | null;
  readonly password?: string | null;
  readonly defaultProjectId?: string | null;
  readonly enabled?: boolean;
  readonly extra?: Record<string, unknown>;
}

const NAME_MAX = 64;

/** Domains, projects and users. */
export class IdentityDirectory {
  constructor(
    private readonly repo: IdentityRepository,
    private readonly policy: Policy,
    private readonly tokens: TokenService,
    private readonly clock: Clock,
  ) {}

  /** Show a domain by id. @throws NotFoundError */
  async getDomain(ctx: AuthContext, id: string): Promise<Domain> {
    const d = await this.repo.getDomain(id);
    if (!d || !this.policy.check('identity:get_domain', { 'target.domain.id': d.id }, ctx))
      throw new NotFoundError('domain', id, `Could not find domain: ${id}.`);
    return d;
  }

  /** List domains the caller may read, optionally by name. */
  async listDomains(ctx: AuthContext, filter: { name?: string }): Promise<Domain[]> {
    const all = await this.repo.findDomains(filter);
    return all.filter((d) => this.policy.check('identity:get_domain', { 'target.domain.id': d.id }, ctx));
  }

  /** Create a project. @throws ForbiddenError, InvalidInputError, ConflictError (duplicate name) */
  async createProject(ctx: AuthContext, input: ProjectInput): Promise<Project> {
    this.policy.authorize('identity:create_project', {}, ctx);
    const name = checkName(input.name, 'project');
    let domainId = input.domainId ?? null;
    let parentId = input.parentId ?? null;
    if (parentId !== null) {
      const parentDomain = await this.repo.getDomain(parentId);
      const parent = parentDomain ? null : await this.repo.getProject(parentId);
      if (parentDomain) {
        // Keystone accepts the domain id as parent_id of a top-level project.
        domainId ??= parentId;
        if (domainId !== parentId) throw new InvalidInputError('Cannot create project, the parent is in another domain.');
        parentId = null;
      } else if (!parent) {
        throw new InvalidInputError(`Could not find parent project: ${parentId}.`, 'ValidationError');
      } else {
        domainId ??= parent.domain_id;
        if (parent.domain_id !== domainId) throw new InvalidInputError('Cannot create project, the parent is in another domain.');
      }
    }
    domainId ??= DEFAULT_DOMAIN_ID;
    if (!(await this.repo.getDomain(domainId))) throw new InvalidInputError(`Could not find domain: ${domainId}.`, 'ValidationError');
    const project: Project = {
      id: newId(),
      name,
      domain_id: domainId,
      parent_id: parentId,
      description: input.description ?? '',
      enabled: input.enabled ?? true,
      extra: input.extra ?? {},
    };
    await this.repo.createProject(project, this.clock.now());
    return project;
  }

  /**
   * Show a project (`identity:get_project`: admins and the project's own members by default).
   * As Keystone, the rule is checked against the id asked for before the lookup, so a caller
   * without it is refused whether or not the project exists.
   * @throws ForbiddenError when the rule refuses (any id); NotFoundError when it allows and no
   *   such project exists
   */
  async getProject(ctx: AuthContext, id: string): Promise<Project> {
    const p = await this.repo.getProject(id);
    if (!this.canReadProject(ctx, { id, domain_id: p?.domain_id })) throw forbidden('identity:get_project');
    if (!p) throw new NotFoundError('project', id, `Could not find project: ${id}.`);
    return p;
  }

  /**
   * List the projects that match the filter, sorted by name (`identity:list_projects`, admin by
   * default; an operator rule that opens it still shows only what `identity:get_project` allows).
   * @throws ForbiddenError when the rule refuses, as Keystone's 403
   */
  async listProjects(ctx: AuthContext, filter: ProjectFilter): Promise<Project[]> {
    this.policy.authorize('identity:list_projects', {}, ctx, forbiddenMessage('identity:list_projects'));
    const all = await this.repo.findProjects(filter);
    return all.filter((p) => this.canReadProject(ctx, p));
  }

  /**
   * The enabled projects on which a user holds a role (Keystone `GET /v3/users/{id}/projects`
   * and `GET /v3/auth/projects`). @throws NotFoundError when the caller may not list them or
   *   the user does not exist
   */
  async listUserProjects(ctx: AuthContext, userId: string): Promise<Project[]> {
    if (!this.policy.check('identity:list_user_projects', { 'target.user.id': userId }, ctx) || !(await this.repo.getUser(userId))) {
      throw new NotFoundError('user', userId, `Could not find user: ${userId}.`);
    }
    const ids = await this.tokens.projectIdsWithRoles(userId); // direct and group grants
    // Disabled projects are left out: no token can be scoped to them (Keystone's
    // `GET /v3/auth/projects` lists only the projects a token can be scoped to).
    return this.repo.findProjects({ ids, enabled: true });
  }

  /**
   * The enabled domains on which the caller's user holds a role, directly or through a group
   * (Keystone `GET /v3/auth/domains`, "Get available domain scopes"; `identity:get_auth_domains`,
   * open by default). A role on a project of a domain is not a role on the domain. Sorted by name.
   * @throws ForbiddenError when an operator rule refuses
   */
  async listAuthDomains(ctx: AuthContext): Promise<Domain[]> {
    this.policy.authorize('identity:get_auth_domains', {}, ctx, forbiddenMessage('identity:get_auth_domains'));
    const ids = new Set((await this.repo.listAssignments({ userId: ctx.userId, targetType: 'domain' })).map((a) => a.target.id));
    const groupIds = await this.repo.groupIdsOf(ctx.userId);
    if (groupIds.length > 0) {
      for (const a of await this.repo.listGroupAssignments({ groupIds, targetType: 'domain' })) ids.add(a.target.id);
    }
    const domains = await Promise.all([...ids].map((id) => this.repo.getDomain(id)));
    return domains.filter((d): d is Domain => d !== null && d.enabled).sort((a, b) => a.name.localeCompare(b.name));
  }

  /**
   * Check one of Keystone's catalogue rules before the API shows the services and endpoints it
   * announces (`GET /v3/services`, `/v3/endpoints`): `identity:list_services`, `get_service`,
   * `list_endpoints`, `get_endpoint` (admin by default, as Keystone's). Checked before any
   * lookup, so a refused caller learns nothing about ids.
   * @throws ForbiddenError with Keystone's message
   */
  authorizeCatalogRead(ctx: AuthContext, action: 'list_services' | 'get_service' | 'list_endpoints' | 'get_endpoint'): void {
    const rule = `identity:${action}`;
    this.policy.authorize(rule, {}, ctx, forbiddenMessage(rule));
  }

  /** Update name, description, enabled or extra of a project. Disabling revokes its tokens. */
  async updateProject(ctx: AuthContext, id: string, patch: Partial<Omit<ProjectInput, 'domainId' | 'parentId'>>): Promise<Project> {
    const current = await this.getProject(ctx, id);
    this.policy.authorize('identity:update_project', { 'target.project.id': id }, ctx);
    const next: Project = {
      ...current,
      name: patch.name !== undefined ? checkName(patch.name, 'project') : current.name,
      description: patch.description ?? current.description,
      enabled: patch.enabled ?? current.enabled,
      extra: patch.extra !== undefined ? { ...current.extra, ...patch.extra } : current.extra,
    };
    await this.repo.updateProject(next, this.clock.now());
    if (current.enabled && !next.enabled) await this.tokens.revokeFor({ projectId: id });
    return next;
  }

  /** Delete a project without children; its role assignments and tokens go with it. */
  async deleteProject(ctx: AuthContext, id: string): Promise<void> {
    await this.getProject(ctx, id);
    this.policy.authorize('identity:delete_project', { 'target.project.id': id }, ctx);
    if ((await this.repo.findProjects({ parentId: id })).length > 0) {
      throw new ForbiddenError(`Cannot delete project ${id}: it has child projects.`);
    }
    await this.repo.deleteAssignmentsFor({ projectId: id });
    await this.tokens.revokeFor({ projectId: id });
    await this.repo.deleteProject(id);
  }

  /** Create a user (password hashed with scrypt). @throws ForbiddenError, InvalidInputError, ConflictError */
  async createUser(ctx: AuthContext, input: UserInput): Promise<User> {
    this.policy.authorize('identity:create_user', {}, ctx);
    const name = checkName(input.name, 'user', 255);
    const domainId = input.domainId ?? DEFAULT_DOMAIN_ID;
    if (!(await this.repo.getDomain(domainId))) throw new InvalidInputError(`Could not find domain: ${domainId}.`, 'ValidationError');
    if (input.defaultProjectId && !(await this.repo.getProject(input.defaultProjectId))) {
      throw new InvalidInputError(`Could not find project: ${input.defaultProjectId}.`, 'ValidationError');
    }
    const user: User = {
      id: newId(),
      name,
      domain_id: domainId,
      default_project_id: input.defaultProjectId ?? null,
      enabled: input.enabled ?? true,
      extra: input.extra ?? {},
    };
    const hash = input.password ? await hashPassword(checkPassword(input.password)) : null;
    await this.repo.createUser(user, hash, this.clock.now());
    return user;
  }

  /** Show a user the caller may read (admins, or the user itself). @throws NotFoundError */
  async getUser(ctx: AuthContext, id: string): Promise<User> {
    const u = await this.repo.getUser(id);
    if (!u || !this.policy.check('identity:get_user', { 'target.user.id': u.id }, ctx))
      throw new NotFoundError('user', id, `Could not find user: ${id}.`);
    return u;
  }

  /**
   * List users (`identity:list_users`, admin by default: Keystone answers a non-admin 403, not a
   * list of itself). @throws ForbiddenError
   */
  async listUsers(ctx: AuthContext, filter: UserFilter): Promise<User[]> {
    this.policy.authorize('identity:list_users', {}, ctx);
    const all = await this.repo.findUsers(filter);
    return all.filter((u) => this.policy.check('identity:get_user', { 'target.user.id': u.id }, ctx));
  }

  /** The users among `ids` the caller may read (`identity:get_user`); unknown ids are left out. */
  async readableUsers(ctx: AuthContext, ids: readonly string[]): Promise<User[]> {
    const readable = ids.filter((id) => this.policy.check('identity:get_user', { 'target.user.id': id }, ctx));
    if (readable.length === 0) return [];
    return this.repo.findUsers({ ids: readable });
  }

  /** Update a user; a new password or disabling revokes the user's tokens. */
  async updateUser(ctx: AuthContext, id: string, patch: Partial<Omit<UserInput, 'domainId'>>): Promise<User> {
    const current = await this.getUser(ctx, id);
    this.policy.authorize('identity:update_user', { 'target.user.id': id }, ctx);
    if (patch.defaultProjectId && !(await this.repo.getProject(patch.defaultProjectId))) {
      throw new InvalidInputError(`Could not find project: ${patch.defaultProjectId}.`, 'ValidationError');
    }
    const next: User = {
      ...current,
      name: patch.name !== undefined ? checkName(patch.name, 'user', 255) : current.name,
      default_project_id: patch.defaultProjectId !== undefined ? patch.defaultProjectId : current.default_project_id,
      enabled: patch.enabled ?? current.enabled,
      extra: patch.extra !== undefined ? { ...current.extra, ...patch.extra } : current.extra,
    };
    const hash = patch.password ? await hashPassword(checkPassword(patch.password)) : undefined;
    await this.repo.updateUser(next, hash, this.clock.now());
    if (hash !== undefined || (current.enabled && !next.enabled)) await this.tokens.revokeFor({ userId: id });
    return next;
  }

  /**
   * A user changes its own password by proving the current one (Keystone "Change password for
   * user", `POST /v3/users/{id}/password`: no token and no policy check — the original password
   * is the credential). The user's tokens are revoked, except the one the caller presented when
   * it is that user's own (Keystone revokes them all; esi keeps the session that made the change).
   * @param ctx the caller; only its token id is used
   * @throws UnauthorizedError for an unknown or disabled user, a user without a password or a
   *   wrong original password (one message for all, as Keystone's 401)
   * @throws InvalidInputError for an empty or too long new password
   */
  async changePassword(
    ctx: AuthContext,
    userId: string,
    change: { readonly originalPassword: string; readonly password: string },
  ): Promise<void> {
    const user = await this.repo.getUser(userId);
    if (!user || !user.enabled || !(await this.tokens.checkPassword(user.id, change.originalPassword))) {
      throw new UnauthorizedError('Error when changing user password: Invalid user / password');
    }
    if (change.password === '')
      throw new InvalidInputError("Invalid input for field 'user/password': the new password must not be empty.", 'ValidationError');
    const hash = await hashPassword(checkPassword(change.password));
    await this.repo.updateUser(user, hash, this.clock.now());
    const keep = ctx.userId === user.id && ctx.tokenId ? { exceptTokenId: ctx.tokenId } : {};
    await this.tokens.revokeFor({ userId: user.id, ...keep });
  }

  /** Delete a user with its role assignments and tokens. */
  async deleteUser(ctx: AuthContext, id: string): Promise<void> {
    await this.getUser(ctx, id);
    this.policy.authorize('identity:delete_user', { 'target.user.id': id }, ctx);
    await this.repo.deleteAssignmentsFor({ userId: id });
    await this.tokens.revokeFor({ userId: id });
    await this.repo.deleteUser(id);
  }

  /**
   * Resolve a project by id or, failing that, by unique name (no policy check: for other
   * domain services that accept project names, as esi-leap does).
   * @throws NotFoundError when nothing matches; ConflictError when a name matches several
   */
  async resolveProject(ident: string): Promise<Project> {
    const byId = await this.repo.getProject(ident);
    if (byId) return byId;
    const byName = await this.repo.findProjects({ name: ident });
    if (byName.length === 1) return byName[0]!;
    if (byName.length > 1) throw new ConflictError(`Multiple projects are named ${ident}; use the project id.`);
    throw new NotFoundError('project', ident, `No project named ${ident}.`);
  }

  /** Projects by id (no policy check), for enriching other resources with names. */
  async projectsByIds(ids: Iterable<string>): Promise<Map<string, Project>> {
    const unique = [...new Set(ids)];
    const projects = await this.repo.findProjects({ ids: unique });
    return new Map(projects.map((p) => [p.id, p]));
  }

  /**
   * Ids of a project's ancestors, nearest first (parent, grandparent, …), for subtree rules
   * such as esi-leap's offer `lessee_id` restriction.
   */
  async projectAncestors(projectId: string): Promise<string[]> {
    const out: string[] = [];
    let current = await this.repo.getProject(projectId);
    while (current?.parent_id && !out.includes(current.parent_id)) {
      out.push(current.parent_id);
      current = await this.repo.getProject(current.parent_id);
    }
    return out;
  }

  private canReadProject(ctx: AuthContext, p: { readonly id: string; readonly domain_id?: string | undefined }): boolean {
    return this.policy.check('identity:get_project', { 'target.project.id': p.id, 'target.project.domain_id': p.domain_id ?? null }, ctx);
  }
}

/** Keystone's text of a policy refusal (keystone.exception.ForbiddenAction). */
function forbiddenMessage(rule: string): string {
  return `You are not authorized to perform the requested action: ${rule}.`;
}

function forbidden(rule: string): ForbiddenError {
  return new ForbiddenError(forbiddenMessage(rule));
}

function checkName(name: unknown, what: string, max = NAME_MAX): string {
  if (typeof name !== 'string' || name.trim() === '')
    throw new InvalidInputError(`Invalid input for field 'name': a ${what} name is required.`, 'ValidationError');
  if (name.length > max)
    throw new InvalidInputError(`Invalid input for field 'name': '${name.slice(0, 20)}…' is too long (max ${max}).`, 'ValidationError');
  return name;
}

function checkPassword(password: string): string {
  if (password.length > 4096) throw new InvalidInputError("Invalid input for field 'password': too long (max 4096).", 'ValidationError');
  return password;
}
