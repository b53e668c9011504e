/**
 * Kysely implementation of the identity repository port (`src/domain/identity/ports.ts`),
 * portable across SQLite and PostgreSQL.
 */
import type { Selectable } from 'kysely';
import { ConflictError } from '../../domain/errors.ts';
import type { Domain, Project, Role, RoleAssignment, TokenRecord, User } from '../../domain/identity/model.ts';
import type { AssignmentFilter, IdentityRepository, ProjectFilter, UserFilter } from '../../domain/identity/ports.ts';
import { fromJson, isUniqueViolation, toBool, toJson, type Db } from '../database.ts';
import type { DomainsTable, ProjectsTable, RolesTable, TokensTable, UsersTable } from './tables.ts';

/** Identity storage over a Kysely handle. */
export class KyselyIdentityRepository implements IdentityRepository {
  constructor(private readonly db: Db) {}

  async getDomain(id: string): Promise<Domain | null> {
    const row = await this.db.selectFrom('domains').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toDomain(row) : null;
  }

  async findDomains(filter: { readonly name?: string }): Promise<Domain[]> {
    let q = this.db.selectFrom('domains').selectAll();
    if (filter.name !== undefined) q = q.where('name', '=', filter.name);
    return (await q.orderBy('name').execute()).map(toDomain);
  }

  async createDomain(d: Domain, now: number): Promise<void> {
    await unique(`Domain ${d.name} already exists.`, () =>
      this.db
        .insertInto('domains')
        .values({ id: d.id, name: d.name, description: d.description, enabled: toBool(d.enabled), created_at: now })
        .execute(),
    );
  }

  async getProject(id: string): Promise<Project | null> {
    const row = await this.db.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toProject(row) : null;
  }

  async findProjects(filter: ProjectFilter): Promise<Project[]> {
    let q = this.db.selectFrom('projects').selectAll();
    if (filter.name !== undefined) q = q.where('name', '=', filter.name);
    if (filter.domainId !== undefined) q = q.where('domain_id', '=', filter.domainId);
    if (filter.parentId === null) q = q.where('parent_id', 'is', null);
    else if (filter.parentId !== undefined) q = q.where('parent_id', '=', filter.parentId);
    if (filter.enabled !== undefined) q = q.where('enabled', '=', toBool(filter.enabled));
    if (filter.ids !== undefined) {
      if (filter.ids.length === 0) return [];
      q = q.where('id', 'in', [...filter.ids]);
    }
    return (await q.orderBy('name').execute()).map(toProject);
  }

  async createProject(p: Project, now: number): Promise<void> {
    await unique(
      `Conflict occurred attempting to store project - it is not permitted to have two projects with the same name in the same domain : ${p.name}.`,
      () =>
        this.db
          .insertInto('projects')
          .values({
            id: p.id,
            name: p.name,
            domain_id: p.domain_id,
            parent_id: p.parent_id,
            description: p.description,
            enabled: toBool(p.enabled),
            extra: toJson(p.extra),
            created_at: now,
            updated_at: now,
          })
          .execute(),
    );
  }

  async updateProject(p: Project, now: number): Promise<void> {
    await unique(
      `Conflict occurred attempting to store project - it is not permitted to have two projects with the same name in the same domain : ${p.name}.`,
      () =>
        this.db
          .updateTable('projects')
          .set({ name: p.name, description: p.description, enabled: toBool(p.enabled), extra: toJson(p.extra), updated_at: now })
          .where('id', '=', p.id)
          .execute(),
    );
  }

  async deleteProject(id: string): Promise<void> {
    await this.db.deleteFrom('projects').where('id', '=', id).execute();
  }

  async getUser(id: string): Promise<User | null> {
    const row = await this.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toUser(row) : null;
  }

  async findUsers(filter: UserFilter): Promise<User[]> {
    let q = this.db.selectFrom('users').selectAll();
    if (filter.ids !== undefined) q = q.where('id', 'in', filter.ids.length > 0 ? [...filter.ids] : ['']);
    if (filter.name !== undefined) q = q.where('name', '=', filter.name);
    if (filter.domainId !== undefined) q = q.where('domain_id', '=', filter.domainId);
    if (filter.enabled !== undefined) q = q.where('enabled', '=', toBool(filter.enabled));
    return (await q.orderBy('name').execute()).map(toUser);
  }

  async createUser(u: User, passwordHash: string | null, now: number): Promise<void> {
    await unique(
      `Conflict occurred attempting to store user - Duplicate entry found with name ${u.name} at domain ID ${u.domain_id}.`,
      () =>
        this.db
          .insertInto('users')
          .values({
            id: u.id,
            name: u.name,
            domain_id: u.domain_id,
            password_hash: passwordHash,
            default_project_id: u.default_project_id,
            enabled: toBool(u.enabled),
            extra: toJson(u.extra),
            created_at: now,
            updated_at: now,
          })
          .execute(),
    );
  }

  async updateUser(u: User, passwordHash: string | null | undefined, now: number): Promise<void> {
    await unique(
      `Conflict occurred attempting to store user - Duplicate entry found with name ${u.name} at domain ID ${u.domain_id}.`,
      () =>
        this.db
          .updateTable('users')
          .set({
            name: u.name,
            default_project_id: u.default_project_id,
            enabled: toBool(u.enabled),
            extra: toJson(u.extra),
            updated_at: now,
            ...(passwordHash !== undefined ? { password_hash: passwordHash } : {}),
          })
          .where('id', '=', u.id)
          .execute(),
    );
  }

  async deleteUser(id: string): Promise<void> {
    await this.db.deleteFrom('users').where('id', '=', id).execute();
  }

  async getPasswordHash(userId: string): Promise<string | null> {
    const row = await this.db.selectFrom('users').select('password_hash').where('id', '=', userId).executeTakeFirst();
    return row?.password_hash ?? null;
  }

  async getRole(id: string): Promise<Role | null> {
    const row = await this.db.selectFrom('roles').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toRole(row) : null;
  }

  async findRoles(filter: { readonly name?: string }): Promise<Role[]> {
    let q = this.db.selectFrom('roles').selectAll();
    if (filter.name !== undefined) q = q.where('name', '=', filter.name);
    return (await q.orderBy('name').execute()).map(toRole);
  }

  async createRole(r: Role, now: number): Promise<void> {
    await unique(`Conflict occurred attempting to store role - Duplicate entry found with name ${r.name}.`, () =>
      this.db
        .insertInto('roles')
        .values({ id: r.id, name: r.name, domain_id: r.domain_id, description: r.description, created_at: now })
        .execute(),
    );
  }

  async deleteRole(id: string): Promise<void> {
    await this.db
      .deleteFrom('implied_roles')
      .where((eb) => eb.or([eb('prior_role_id', '=', id), eb('implied_role_id', '=', id)]))
      .execute();
    await this.db.deleteFrom('roles').where('id', '=', id).execute();
  }

  async listImplications(): Promise<Array<readonly [string, string]>> {
    const rows = await this.db.selectFrom('implied_roles').selectAll().execute();
    return rows.map((r) => [r.prior_role_id, r.implied_role_id] as const);
  }

  async addImplication(prior: string, implied: string): Promise<void> {
    await this.db
      .insertInto('implied_roles')
      .values({ prior_role_id: prior, implied_role_id: implied })
      .onConflict((oc) => oc.doNothing())
      .execute();
  }

  async grant(a: RoleAssignment): Promise<void> {
    await this.db
      .insertInto('role_assignments')
      .values({ actor_id: a.user_id, target_type: a.target.type, target_id: a.target.id, role_id: a.role_id })
      .onConflict((oc) => oc.doNothing())
      .execute();
  }

  async revoke(a: RoleAssignment): Promise<boolean> {
    const res = await this.db
      .deleteFrom('role_assignments')
      .where('actor_id', '=', a.user_id)
      .where('target_type', '=', a.target.type)
      .where('target_id', '=', a.target.id)
      .where('role_id', '=', a.role_id)
      .executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }

  async listAssignments(filter: AssignmentFilter): Promise<RoleAssignment[]> {
    let q = this.db.selectFrom('role_assignments').selectAll();
    if (filter.userId !== undefined) q = q.where('actor_id', '=', filter.userId);
    if (filter.roleId !== undefined) q = q.where('role_id', '=', filter.roleId);
    if (filter.targetType !== undefined) q = q.where('target_type', '=', filter.targetType);
    if (filter.targetId !== undefined) q = q.where('target_id', '=', filter.targetId);
    const rows = await q.orderBy('actor_id').orderBy('target_type').orderBy('target_id').orderBy('role_id').execute();
    return rows.map((r) => ({
      user_id: r.actor_id,
      role_id: r.role_id,
      target: r.target_type === 'system' ? { type: 'system', id: 'all' } : { type: r.target_type, id: r.target_id },
    }));
  }

  async deleteAssignmentsFor(ref: { readonly userId?: string; readonly projectId?: string; readonly roleId?: string }): Promise<void> {
    if (ref.userId !== undefined) await this.db.deleteFrom('role_assignments').where('actor_id', '=', ref.userId).execute();
    if (ref.roleId !== undefined) await this.db.deleteFrom('role_assignments').where('role_id', '=', ref.roleId).execute();
    if (ref.projectId !== undefined) {
      await this.db.deleteFrom('role_assignments').where('target_type', '=', 'project').where('target_id', '=', ref.projectId).execute();
    }
  }

  async insertToken(t: TokenRecord): Promise<void> {
    await this.db
      .insertInto('tokens')
      .values({
        id: t.id,
        user_id: t.user_id,
        project_id: t.project_id,
        system_scope: t.system_scope,
        methods: toJson(t.methods),
        roles: toJson(t.roles),
        audit_id: t.audit_id,
        issued_at: t.issued_at,
        expires_at: t.expires_at,
        revoked_at: t.revoked_at,
      })
      .execute();
  }

  async getToken(id: string): Promise<TokenRecord | null> {
    const row = await this.db.selectFrom('tokens').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toToken(row) : null;
  }

  async revokeToken(id: string, now: number): Promise<void> {
    await this.db.updateTable('tokens').set({ revoked_at: now }).where('id', '=', id).where('revoked_at', 'is', null).execute();
  }

  async revokeTokensFor(
    ref: { readonly userId?: string; readonly projectId?: string; readonly system?: boolean; readonly exceptTokenId?: string },
    now: number,
  ): Promise<string[]> {
    let q = this.db.selectFrom('tokens').select('id').where('revoked_at', 'is', null).where('expires_at', '>', now);
    if (ref.exceptTokenId !== undefined) q = q.where('id', '!=', ref.exceptTokenId);
    if (ref.userId !== undefined) q = q.where('user_id', '=', ref.userId);
    if (ref.projectId !== undefined) q = q.where('project_id', '=', ref.projectId);
    if (ref.system) q = q.where('system_scope', '=', 'all');
    const ids = (await q.execute()).map((r) => r.id);
    if (ids.length > 0) await this.db.updateTable('tokens').set({ revoked_at: now }).where('id', 'in', ids).execute();
    return ids;
  }

  async purgeExpiredTokens(now: number): Promise<number> {
    const res = await this.db.deleteFrom('tokens').where('expires_at', '<', now).executeTakeFirst();
    return Number(res.numDeletedRows);
  }
}

async function unique<T>(message: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (isUniqueViolation(err)) throw new ConflictError(message, 'Conflict');
    throw err;
  }
}

function toDomain(r: Selectable<DomainsTable>): Domain {
  return { id: r.id, name: r.name, description: r.description, enabled: r.enabled === 1 };
}

function toProject(r: Selectable<ProjectsTable>): Project {
  return {
    id: r.id,
    name: r.name,
    domain_id: r.domain_id,
    parent_id: r.parent_id,
    description: r.description,
    enabled: r.enabled === 1,
    extra: fromJson(r.extra, {}),
  };
}

function toUser(r: Selectable<UsersTable>): User {
  return {
    id: r.id,
    name: r.name,
    domain_id: r.domain_id,
    default_project_id: r.default_project_id,
    enabled: r.enabled === 1,
    extra: fromJson(r.extra, {}),
  };
}

function toRole(r: Selectable<RolesTable>): Role {
  return { id: r.id, name: r.name, domain_id: r.domain_id, description: r.description };
}

function toToken(r: Selectable<TokensTable>): TokenRecord {
  return {
    id: r.id,
    user_id: r.user_id,
    project_id: r.project_id,
    system_scope: r.system_scope === 'all' ? 'all' : null,
    methods: fromJson(r.methods, []),
    roles: fromJson(r.roles, []),
    audit_id: r.audit_id,
    issued_at: r.issued_at,
    expires_at: r.expires_at,
    revoked_at: r.revoked_at,
  };
}
