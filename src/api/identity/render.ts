/**
 * Keystone v3 JSON renderings of identity objects (Keystone API reference, v3: "Projects",
 * "Users", "Roles", "Domains", "Role assignments", "Authentication and token management").
 *
 * Renderers are pure: they take domain values and the v3 root URL (`<public>/identity/v3`).
 * Passwords and password hashes are not part of any domain value given here and so can never
 * be rendered.
 */
import {
  DEFAULT_DOMAIN_ID,
  DEFAULT_DOMAIN_NAME,
  type Domain,
  type Project,
  type Role,
  type RoleAssignment,
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
 * The `{id, name}` of a domain by id. esi has exactly one domain — the bootstrap creates
 * `default` (`Default`) and no API creates others — so another id is shown with its id as name.
 */
export function domainRef(id: string): DomainRef {
  return { id, name: id === DEFAULT_DOMAIN_ID ? DEFAULT_DOMAIN_NAME : id };
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
}

/**
 * One role assignment: `{role, user, scope, links: {assignment}}`; with names, the role, user
 * (with domain) and project (with domain) names are added where known.
 */
export function renderAssignment(a: RoleAssignment, v3: string, names: AssignmentNames | null): Record<string, unknown> {
  const roleName = names?.roles.get(a.role_id);
  const user = names?.users.get(a.user_id);
  let scope: Record<string, unknown>;
  let link: string;
  if (a.target.type === 'project') {
    const p = names?.projects.get(a.target.id);
    scope = { project: { id: a.target.id, ...(p ? { name: p.name, domain: domainRef(p.domain_id) } : {}) } };
    link = `${v3}/projects/${a.target.id}/users/${a.user_id}/roles/${a.role_id}`;
  } else if (a.target.type === 'system') {
    scope = { system: { all: true } };
    link = `${v3}/system/users/${a.user_id}/roles/${a.role_id}`;
  } else {
    scope = { domain: { id: a.target.id, ...(names ? { name: domainRef(a.target.id).name } : {}) } };
    link = `${v3}/domains/${a.target.id}/users/${a.user_id}/roles/${a.role_id}`;
  }
  return {
    role: { id: a.role_id, ...(roleName !== undefined ? { name: roleName } : {}) },
    user: { id: a.user_id, ...(user ? { name: user.name, domain: domainRef(user.domain_id) } : {}) },
    scope,
    links: { assignment: link },
  };
}

/** What a token rendering needs: the stored token, its user and project. */
export interface TokenView {
  readonly record: TokenRecord;
  readonly user: User;
  readonly project: Project | null;
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
    user: { id: t.user.id, name: t.user.name, domain: domainRef(t.user.domain_id), password_expires_at: null },
    audit_ids: [r.audit_id],
    expires_at: keystoneTime(r.expires_at),
    issued_at: keystoneTime(r.issued_at),
  };
  const scoped = t.project !== null || r.system_scope !== null;
  if (t.project) {
    token.project = { id: t.project.id, name: t.project.name, domain: domainRef(t.project.domain_id) };
    token.is_domain = false;
  } else if (r.system_scope) {
    token.system = { all: true };
  }
  if (scoped) {
    token.roles = r.roles.map((role) => ({ id: role.id, name: role.name }));
    if (catalog) token.catalog = catalog;
  }
  return { token };
}
