/**
 * Keystone v3 JSON renderings of identity objects (Keystone API reference, v3: "Projects",
 * "Users", "Groups", "Roles", "Domains", "Role assignments", "Application Credentials",
 * "Authentication and token management").
 *
 * Renderers are pure: they take domain values and the v3 root URL (`<public>/identity/v3`).
 * Passwords, password hashes and application credential secret hashes are not part of any domain
 * value given here and so can never be rendered; an application credential's secret is shown
 * only by the create answer, which passes it explicitly.
 */
import {
  DEFAULT_DOMAIN_ID,
  DEFAULT_DOMAIN_NAME,
  type ApplicationCredential,
  type Domain,
  type Group,
  type ListedAssignment,
  type Project,
  type Role,
  type TokenRecord,
  type User,
} from '../../domain/identity/model.ts';
import type { CatalogEntry } from './catalog.ts';
import { keystoneTime } from './links.ts';

/** A domain reference as tokens and named assignments show it. */
export interface DomainRef {
  readonly id: string;
  readonly name: string;
}

/**
 * The `{id, name}` of a domain by id: `default` is `Default` (immutable); another domain's
 * name comes from `names` (its id when unknown there).
 */
export function domainRef(id: string, names?: ReadonlyMap<string, string>): DomainRef {
  return { id, name: id === DEFAULT_DOMAIN_ID ? DEFAULT_DOMAIN_NAME : (names?.get(id) ?? id) };
}

/**
 * A project. `parent_id` of a top-level project is its domain id, as Keystone shows it;
 * `tags` and other extra attributes (e.g. `email`) are shown at the top level.
 */
export function renderProject(p: Project, v3: string): Record<string, unknown> {
  const { tags, ...extra } = p.extra as Record<string, unknown>;
  return {
    ...extra,
    id: p.id,
    name: p.name,
    domain_id: p.domain_id,
    description: p.description,
    enabled: p.enabled,
    parent_id: p.parent_id ?? p.domain_id,
    is_domain: false,
    tags: Array.isArray(tags) ? tags : [],
    options: {},
    links: { self: `${v3}/projects/${p.id}` },
  };
}

/** A user. There is no password field: the domain never hands one out. */
export function renderUser(u: User, v3: string): Record<string, unknown> {
  return {
    ...u.extra,
    id: u.id,
    name: u.name,
    domain_id: u.domain_id,
    enabled: u.enabled,
    ...(u.default_project_id !== null ? { default_project_id: u.default_project_id } : {}),
    password_expires_at: null,
    options: {},
    links: { self: `${v3}/users/${u.id}` },
  };
}

/** A role. */
export function renderRole(r: Role, v3: string): Record<string, unknown> {
  return {
    id: r.id,
    name: r.name,
    domain_id: r.domain_id,
    description: r.description,
    options: {},
    links: { self: `${v3}/roles/${r.id}` },
  };
}

/** A domain. */
export function renderDomain(d: Domain, v3: string): Record<string, unknown> {
  return {
    id: d.id,
    name: d.name,
    description: d.description,
    enabled: d.enabled,
    tags: [],
    options: {},
    links: { self: `${v3}/domains/${d.id}` },
  };
}

/** Names to show in role assignments when `include_names` is asked for. */
export interface AssignmentNames {
  readonly roles: ReadonlyMap<string, string>;
  readonly users: ReadonlyMap<string, User>;
  readonly projects: ReadonlyMap<string, Project>;
  /** Groups named in the assignments (absent: none shown). */
  readonly groups?: ReadonlyMap<string, Group>;
  /** Names of the domains of the users, groups, projects and domain scopes shown. */
  readonly domains?: ReadonlyMap<string, string>;
}

/**
 * One role assignment as Keystone's `_format_entity` writes it: `{role, user | group, scope,
 * links: {assignment}}`; a user's assignment through a group (effective) links to the group's
 * grant and adds `links.membership`. With names, the role, actor (with domain) and project or
 * domain names are added where known.
 */
export function renderAssignment(a: ListedAssignment, v3: string, names: AssignmentNames | null): Record<string, unknown> {
  const roleName = names?.roles.get(a.role_id);
  const domains = names?.domains;
  let scope: Record<string, unknown>;
  let base: string;
  if (a.target.type === 'project') {
    const p = names?.projects.get(a.target.id);
    scope = { project: { id: a.target.id, ...(p ? { name: p.name, domain: domainRef(p.domain_id, domains) } : {}) } };
    base = `${v3}/projects/${a.target.id}`;
  } else if (a.target.type === 'system') {
    scope = { system: { all: true } };
    base = `${v3}/system`;
  } else {
    scope = { domain: { id: a.target.id, ...(names ? { name: domainRef(a.target.id, domains).name } : {}) } };
    base = `${v3}/domains/${a.target.id}`;
  }
  const links: Record<string, string> = {};
  const out: Record<string, unknown> = { role: { id: a.role_id, ...(roleName !== undefined ? { name: roleName } : {}) } };
  if ('group_id' in a) {
    const g = names?.groups?.get(a.group_id);
    out.group = { id: a.group_id, ...(g ? { name: g.name, domain: domainRef(g.domain_id, domains) } : {}) };
    links.assignment = `${base}/groups/${a.group_id}/roles/${a.role_id}`;
  } else {
    const user = names?.users.get(a.user_id);
    out.user = { id: a.user_id, ...(user ? { name: user.name, domain: domainRef(user.domain_id, domains) } : {}) };
    if (a.via_group !== undefined) {
      links.assignment = `${base}/groups/${a.via_group}/roles/${a.role_id}`;
      links.membership = `${v3}/groups/${a.via_group}/users/${a.user_id}`;
    } else {
      links.assignment = `${base}/users/${a.user_id}/roles/${a.role_id}`;
    }
  }
  return { ...out, scope, links };
}

/** A group (Keystone v3 "Groups"); extra attributes are shown at the top level. */
export function renderGroup(g: Group, v3: string): Record<string, unknown> {
  return {
    ...g.extra,
    id: g.id,
    name: g.name,
    domain_id: g.domain_id,
    description: g.description,
    links: { self: `${v3}/groups/${g.id}` },
  };
}

/**
 * An application credential (Keystone v3 "Application Credentials"). The secret is added only
 * by the create answer (`secret`); `roles` lists the delegated roles that still exist.
 */
export function renderAppCredential(
  c: ApplicationCredential,
  v3: string,
  roles: ReadonlyMap<string, Role>,
  secret?: string,
): Record<string, unknown> {
  return {
    id: c.id,
    name: c.name,
    description: c.description,
    user_id: c.user_id,
    project_id: c.project_id,
    system: null,
    roles: c.role_ids.flatMap((id) => {
      const r = roles.get(id);
      return r ? [{ id: r.id, name: r.name, domain_id: r.domain_id }] : [];
    }),
    expires_at: c.expires_at === null ? null : keystoneTime(c.expires_at),
    unrestricted: c.unrestricted,
    access_rules: [],
    ...(secret !== undefined ? { secret } : {}),
    links: { self: `${v3}/users/${c.user_id}/application_credentials/${c.id}` },
  };
}

/** What a token rendering needs: the stored token, its user and project. */
export interface TokenView {
  readonly record: TokenRecord;
  readonly user: User;
  readonly project: Project | null;
  /** The application credential it was issued with (Keystone adds `application_credential`). */
  readonly appCredential?: ApplicationCredential | null;
  /** Names of the user's and the project's domains, by id. */
  readonly domainNames?: ReadonlyMap<string, string>;
}

/**
 * A token body (`{"token": {...}}`) as Keystone returns it from `POST` and `GET
 * /v3/auth/tokens`. Scoped tokens carry `roles` and, unless `catalog` is null (`?nocatalog`),
 * the `catalog`; unscoped tokens carry neither, as in Keystone.
 */
export function renderToken(t: TokenView, catalog: readonly CatalogEntry[] | null): { token: Record<string, unknown> } {
  const r = t.record;
  const token: Record<string, unknown> = {
    methods: [...r.methods],
    user: { id: t.user.id, name: t.user.name, domain: domainRef(t.user.domain_id, t.domainNames), password_expires_at: null },
    audit_ids: [r.audit_id],
    expires_at: keystoneTime(r.expires_at),
    issued_at: keystoneTime(r.issued_at),
  };
  const scoped = t.project !== null || r.system_scope !== null;
  if (t.project) {
    token.project = { id: t.project.id, name: t.project.name, domain: domainRef(t.project.domain_id, t.domainNames) };
    token.is_domain = false;
  } else if (r.system_scope) {
    token.system = { all: true };
  }
  if (scoped) {
    token.roles = r.roles.map((role) => ({ id: role.id, name: role.name }));
    if (catalog) token.catalog = catalog;
  }
  if (t.appCredential) {
    token.application_credential = { id: t.appCredential.id, name: t.appCredential.name, restricted: !t.appCredential.unrestricted };
  }
  return { token };
}
