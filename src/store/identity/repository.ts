/**
 * Kysely implementation of the identity repository port (`src/domain/identity/ports.ts`),
 * portable across SQLite and PostgreSQL: domains, projects, users, roles and user role
 * assignments here; groups (./groups.ts), application credentials (./app-credentials.ts) and
 * tokens (./tokens.ts) in their own stores, to which this class delegates.
 */
import type {
  ApplicationCredential,
  Domain,
  Group,
  GroupAssignment,
  Project,
  Role,
  RoleAssignment,
  TokenRecord,
  User,
} from '../../domain/identity/model.ts';
import type {
  AssignmentFilter,
  GroupAssignmentFilter,
  GroupFilter,
  IdentityRepository,
  ProjectFilter,
  TokenRevocationRef,
  UserFilter,
} from '../../domain/identity/ports.ts';
import { toBool, toJson, type Db } from '../database.ts';
import { KyselyAppCredentialStore } from './app-credentials.ts';
import { KyselyGroupStore } from './groups.ts';
import { toDomain, toProject, toRole, toUser, unique } from './rows.ts';
import { KyselyTokenStore } from './tokens.ts';

/** Keystone's message for a domain name that is taken (domains are projects acting as domains there). */
function domainConflict(name: string): string {
  return `Conflict occurred attempting to store project - it is not permitted to have two projects acting as domains with the same name: ${name}.`;
}

/** Identity storage over a Kysely handle. */
export class KyselyIdentityRepository implements IdentityRepository {
  private readonly groups: KyselyGroupStore;
  private readonly appCreds: KyselyAppCredentialStore;
  private readonly tokens: KyselyTokenStore;

  constructor(private readonly db: Db) {
    this.groups = new KyselyGroupStore(db);
    this.appCreds = new KyselyAppCredentialStore(db);
    this.tokens = new KyselyTokenStore(db);
  }

  async getDomain(id: string): Promise<Domain | null> {
    const row = await this.db.selectFrom('domains').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toDomain(row) : null;
  }

  async findDomains(filter: { readonly name?: string; readonly enabled?: boolean }): Promise<Domain[]> {
    let q = this.db.selectFrom('domains').selectAll();
    if (filter.name !== undefined) q = q.where('name', '=', filter.name);
    if (filter.enabled !== undefined) q = q.where('enabled', '=', toBool(filter.enabled));
    return (await q.orderBy('name').execute()).map(toDomain);
  }

  async createDomain(d: Domain, now: number): Promise<void> {
    await unique(domainConflict(d.name), () =>
      this.db
        .insertInto('domains')
        .values({ id: d.id, name: d.name, description: d.description, enabled: toBool(d.enabled), created_at: now })
        .execute(),
    );
  }

  async updateDomain(d: Domain): Promise<void> {
    await unique(domainConflict(d.name), () =>
      this.db
        .updateTable('domains')
        .set({ name: d.name, description: d.description, enabled: toBool(d.enabled) })
        .where('id', '=', d.id)
        .execute(),
    );
  }

  async deleteDomain(id: string): Promise<void> {
    await this.db.deleteFrom('domains').where('id', '=', id).execute();
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
    await this.appCreds.deleteFor({ projectId: id });
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
    await this.groups.removeUserEverywhere(id);
    await this.appCreds.deleteFor({ userId: id });
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

  async deleteAssignmentsFor(ref: {
    readonly userId?: string;
    readonly projectId?: string;
    readonly domainId?: string;
    readonly roleId?: string;
  }): Promise<void> {
    if (ref.userId !== undefined) await this.db.deleteFrom('role_assignments').where('actor_id', '=', ref.userId).execute();
    if (ref.roleId !== undefined) await this.db.deleteFrom('role_assignments').where('role_id', '=', ref.roleId).execute();
    if (ref.projectId !== undefined) {
      await this.db.deleteFrom('role_assignments').where('target_type', '=', 'project').where('target_id', '=', ref.projectId).execute();
    }
    if (ref.domainId !== undefined) {
      await this.db.deleteFrom('role_assignments').where('target_type', '=', 'domain').where('target_id', '=', ref.domainId).execute();
    }
    await this.groups.deleteGroupAssignmentsFor(ref);
  }

  getGroup(id: string): Promise<Group | null> {
    return this.groups.getGroup(id);
  }

  findGroups(filter: GroupFilter): Promise<Group[]> {
    return this.groups.findGroups(filter);
  }

  createGroup(group: Group, now: number): Promise<void> {
    return this.groups.createGroup(group, now);
  }

  updateGroup(group: Group, now: number): Promise<void> {
    return this.groups.updateGroup(group, now);
  }

  deleteGroup(id: string): Promise<void> {
    return this.groups.deleteGroup(id);
  }

  addMember(groupId: string, userId: string): Promise<void> {
    return this.groups.addMember(groupId, userId);
  }

  removeMember(groupId: string, userId: string): Promise<boolean> {
    return this.groups.removeMember(groupId, userId);
  }

  isMember(groupId: string, userId: string): Promise<boolean> {
    return this.groups.isMember(groupId, userId);
  }

  memberIds(groupId: string): Promise<string[]> {
    return this.groups.memberIds(groupId);
  }

  groupIdsOf(userId: string): Promise<string[]> {
    return this.groups.groupIdsOf(userId);
  }

  grantGroup(assignment: GroupAssignment): Promise<void> {
    return this.groups.grantGroup(assignment);
  }

  revokeGroup(assignment: GroupAssignment): Promise<boolean> {
    return this.groups.revokeGroup(assignment);
  }

  listGroupAssignments(filter: GroupAssignmentFilter): Promise<GroupAssignment[]> {
    return this.groups.listGroupAssignments(filter);
  }

  createApplicationCredential(credential: ApplicationCredential, secretHash: string, now: number): Promise<void> {
    return this.appCreds.create(credential, secretHash, now);
  }

  getApplicationCredential(id: string): Promise<ApplicationCredential | null> {
    return this.appCreds.get(id);
  }

  findApplicationCredentials(filter: {
    readonly userId: string;
    readonly name?: string;
    readonly projectId?: string;
  }): Promise<ApplicationCredential[]> {
    return this.appCreds.find(filter);
  }

  getApplicationCredentialSecretHash(id: string): Promise<string | null> {
    return this.appCreds.secretHash(id);
  }

  deleteApplicationCredential(id: string): Promise<boolean> {
    return this.appCreds.delete(id);
  }

  deleteApplicationCredentialsOn(userId: string, projectId: string): Promise<string[]> {
    return this.appCreds.deleteOn(userId, projectId);
  }

  insertToken(t: TokenRecord): Promise<void> {
    return this.tokens.insert(t);
  }

  getToken(id: string): Promise<TokenRecord | null> {
    return this.tokens.get(id);
  }

  revokeToken(id: string, now: number): Promise<void> {
    return this.tokens.revoke(id, now);
  }

  revokeTokensFor(ref: TokenRevocationRef, now: number): Promise<string[]> {
    return this.tokens.revokeFor(ref, now);
  }

  purgeExpiredTokens(now: number): Promise<number> {
    return this.tokens.purgeExpired(now);
  }
}
