/**
 * The "parse" step of the identity API handlers: validated Keystone request bodies and query
 * strings turned into the inputs of the identity domain (`src/domain/identity/`).
 *
 * Only wire-format rules live here (which JSON field maps to which domain field, which
 * Keystone features esi does not offer); every business rule is in the domain.
 */
import type { Static } from '@sinclair/typebox';
import { ForbiddenError, InvalidInputError, UnauthorizedError } from '../../domain/errors.ts';
import { queryBoolValue } from '../common/query.ts';
import type { AssignmentQuery, PasswordCredentials, ProjectInput, ScopeRequest, UserInput } from '../../domain/identity/index.ts';
import type { ProjectFilter, UserFilter } from '../../domain/identity/ports.ts';
import { DEFAULT_DOMAIN_ID } from '../../domain/identity/model.ts';
import {
  AuthBody,
  PasswordChangeBody,
  ProjectCreateBody,
  ProjectUpdateBody,
  RoleCreateBody,
  UserCreateBody,
  UserUpdateBody,
} from './schemas.ts';
import { parseBody } from './validation.ts';

/** Keystone's generic `ValidationError` text (keystone/exception.py). */
function expecting(attribute: string, target: string): InvalidInputError {
  return new InvalidInputError(
    `Expecting to find ${attribute} in ${target}. The server could not comply with the request since it is either malformed or otherwise incorrect. The client is assumed to be in error.`,
    'ValidationError',
  );
}

/** Read-only attributes Keystone ignores when a client sends them back. */
const IGNORED = new Set(['id', 'links', 'password_expires_at']);

/** The attributes of `obj` that are not in `known`: Keystone's `extra`. */
function extraOf(obj: Record<string, unknown>, known: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) if (!known.includes(k) && !IGNORED.has(k)) out[k] = v;
  return out;
}

function rejectImmutable(options: { immutable?: boolean | null } | undefined, what: string): void {
  if (options?.immutable === true)
    throw new InvalidInputError(`Invalid input for field '${what}/options': esi does not support immutable resources.`, 'ValidationError');
}

const PROJECT_KNOWN = ['name', 'description', 'domain_id', 'parent_id', 'enabled', 'is_domain', 'tags', 'options'] as const;

/** `POST /v3/projects` body → {@link ProjectInput}. Tags are kept with the extra attributes. */
export function projectCreateInput(body: unknown): ProjectInput {
  const p = parseBody(ProjectCreateBody, body).project as Static<typeof ProjectCreateBody>['project'] & Record<string, unknown>;
  if (p.is_domain === true)
    throw new InvalidInputError(
      "Invalid input for field 'project/is_domain': esi does not support projects acting as domains.",
      'ValidationError',
    );
  rejectImmutable(p.options, 'project');
  const extra = extraOf(p, PROJECT_KNOWN);
  if (p.tags !== undefined) extra.tags = [...new Set(p.tags)];
  return {
    name: p.name,
    domainId: p.domain_id ?? null,
    parentId: p.parent_id ?? null,
    ...(p.description !== undefined && p.description !== null ? { description: p.description } : {}),
    ...(p.enabled !== undefined ? { enabled: p.enabled } : {}),
    extra,
  };
}

/**
 * `PATCH /v3/projects/{id}` body → partial project. As in Keystone, `domain_id` and `is_domain`
 * cannot change (400) and `parent_id` cannot change (403).
 */
export function projectUpdateInput(body: unknown): Partial<Omit<ProjectInput, 'domainId' | 'parentId'>> {
  const p = parseBody(ProjectUpdateBody, body).project as Partial<Static<typeof ProjectCreateBody>['project']> & Record<string, unknown>;
  if ('domain_id' in p) throw new InvalidInputError('Update of `domain_id` is not allowed.', 'ValidationError');
  if ('is_domain' in p) throw new InvalidInputError('Update of `is_domain` is not allowed.', 'ValidationError');
  if ('parent_id' in p) throw new ForbiddenError('Update of `parent_id` is not allowed.');
  rejectImmutable(p.options, 'project');
  const extra = extraOf(p, PROJECT_KNOWN);
  if (p.tags !== undefined) extra.tags = [...new Set(p.tags)];
  return {
    ...(p.name !== undefined ? { name: p.name } : {}),
    ...(p.description !== undefined ? { description: p.description ?? '' } : {}),
    ...(p.enabled !== undefined ? { enabled: p.enabled } : {}),
    ...(Object.keys(extra).length > 0 ? { extra } : {}),
  };
}

const USER_KNOWN = ['name', 'password', 'default_project_id', 'domain_id', 'enabled', 'options', 'description'] as const;

function userExtra(u: Record<string, unknown>): Record<string, unknown> {
  if ('federated' in u)
    throw new InvalidInputError("Invalid input for field 'user/federated': esi does not support federated users.", 'ValidationError');
  const extra = extraOf(u, USER_KNOWN);
  // Keystone keeps a user's description among the extra attributes.
  if (u.description !== undefined) extra.description = u.description;
  return extra;
}

/** `POST /v3/users` body → {@link UserInput}. */
export function userCreateInput(body: unknown): UserInput {
  const u = parseBody(UserCreateBody, body).user as Static<typeof UserCreateBody>['user'] & Record<string, unknown>;
  return {
    name: u.name,
    domainId: u.domain_id ?? null,
    password: u.password ?? null,
    defaultProjectId: u.default_project_id ?? null,
    ...(u.enabled !== undefined ? { enabled: u.enabled } : {}),
    extra: userExtra(u),
  };
}

/** `PATCH /v3/users/{id}` body → partial user. `domain_id` cannot change (Keystone: 400). */
export function userUpdateInput(body: unknown): Partial<Omit<UserInput, 'domainId'>> {
  const u = parseBody(UserUpdateBody, body).user as Partial<Static<typeof UserCreateBody>['user']> & Record<string, unknown>;
  if ('domain_id' in u) throw new InvalidInputError('Update of `domain_id` is not allowed.', 'ValidationError');
  if (u.password === null)
    throw new InvalidInputError(
      "Invalid input for field 'user/password': esi cannot remove a user's password; set a new one.",
      'ValidationError',
    );
  const extra = userExtra(u);
  return {
    ...(u.name !== undefined ? { name: u.name } : {}),
    ...(typeof u.password === 'string' ? { password: u.password } : {}),
    ...(u.default_project_id !== undefined ? { defaultProjectId: u.default_project_id } : {}),
    ...(u.enabled !== undefined ? { enabled: u.enabled } : {}),
    ...(Object.keys(extra).length > 0 ? { extra } : {}),
  };
}

/** `POST /v3/users/{id}/password` body → the original and the new password. */
export function passwordChangeInput(body: unknown): { originalPassword: string; password: string } {
  const u = parseBody(PasswordChangeBody, body).user;
  return { originalPassword: u.original_password, password: u.password };
}

/** `POST /v3/roles` body → role input. */
export function roleCreateInput(body: unknown): { name: string; description?: string } {
  const r = parseBody(RoleCreateBody, body).role;
  rejectImmutable(r.options, 'role');
  return { name: r.name, ...(typeof r.description === 'string' ? { description: r.description } : {}) };
}

/** A parsed `POST /v3/auth/tokens` request. */
export type AuthRequest =
  | { readonly method: 'password'; readonly credentials: PasswordCredentials; readonly scope: ScopeRequest }
  | { readonly method: 'token'; readonly token: string; readonly scope: ScopeRequest };

/**
 * `POST /v3/auth/tokens` body → an authentication request (Keystone "Authentication and token
 * management": password or token method; project, system or no scope).
 * @throws UnauthorizedError for a method esi does not offer (Keystone answers 401)
 * @throws InvalidInputError for a malformed body, several methods, or domain/trust scope
 */
export function authRequest(body: unknown): AuthRequest {
  const { identity, scope } = parseBody(AuthBody, body).auth;
  const methods = [...new Set(identity.methods)];
  if (methods.some((m) => m !== 'password' && m !== 'token'))
    throw new UnauthorizedError('Attempted to authenticate with an unsupported method.');
  if (methods.length > 1)
    throw new InvalidInputError('esi accepts one authentication method per request (password or token).', 'ValidationError');
  const parsedScope = scopeRequest(scope);
  if (methods[0] === 'password') {
    const user = identity.password?.user;
    if (!user) throw expecting('password', 'identity');
    return {
      method: 'password',
      credentials: {
        password: user.password,
        ...(user.id !== undefined ? { userId: user.id } : {}),
        ...(user.name !== undefined ? { userName: user.name } : {}),
        ...(user.domain?.id !== undefined ? { domainId: user.domain.id } : {}),
        ...(user.domain?.name !== undefined ? { domainName: user.domain.name } : {}),
      },
      scope: parsedScope,
    };
  }
  if (!identity.token) throw expecting('token', 'identity');
  return { method: 'token', token: identity.token.id, scope: parsedScope };
}

/**
 * The scope of an auth request: `"unscoped"` asks for an unscoped token; no scope (or an empty
 * scope object) leaves it to the domain's default scoping (the user's default project).
 */
function scopeRequest(scope: Static<typeof AuthBody>['auth']['scope']): ScopeRequest {
  if (scope === 'unscoped') return { kind: 'unscoped' };
  if (scope === undefined) return { kind: 'default' };
  if (scope.project) {
    const p = scope.project;
    return {
      kind: 'project',
      ...(p.id !== undefined ? { projectId: p.id } : {}),
      ...(p.name !== undefined ? { projectName: p.name } : {}),
      ...(p.domain?.id !== undefined ? { domainId: p.domain.id } : {}),
      ...(p.domain?.name !== undefined ? { domainName: p.domain.name } : {}),
    };
  }
  if (scope.system) {
    if (scope.system.all !== true)
      throw new InvalidInputError(
        'Invalid input for field \'auth/scope/system\': only {"all": true} is a valid system scope.',
        'ValidationError',
      );
    return { kind: 'system' };
  }
  if (scope.domain)
    throw new InvalidInputError('esi does not issue domain-scoped tokens; scope to a project or to the system.', 'ValidationError');
  if (scope['OS-TRUST:trust']) throw new InvalidInputError('esi does not support trusts.', 'ValidationError');
  return { kind: 'default' };
}

/** A query string as Fastify parses it. */
export type Query = Readonly<Record<string, string | string[] | undefined>>;

/** One query parameter; a repeated parameter is a 400. */
export function queryValue(query: Query, name: string): string | undefined {
  const v = query[name];
  if (Array.isArray(v)) throw new InvalidInputError(`Invalid input for query parameter '${name}': give it once.`, 'ValidationError');
  return v;
}

/**
 * A boolean query parameter: absent → undefined; `true`/`1`/`yes`/`on` or present without a
 * value (`?nocatalog`) → true; `false`/`0`/`no`/`off` → false; anything else → 400.
 */
export function queryBool(query: Query, name: string): boolean | undefined {
  const v = queryValue(query, name);
  if (v === undefined) return undefined;
  const b = queryBoolValue(v);
  if (b !== undefined) return b;
  throw new InvalidInputError(`Invalid input for query parameter '${name}': '${v.slice(0, 20)}' is not a boolean.`, 'ValidationError');
}

/** The query parameters `GET /v3/projects` reads: {@link projectFilter}'s and `is_domain`. */
export const PROJECT_LIST_QUERY = ['name', 'domain_id', 'parent_id', 'enabled', 'is_domain'] as const;

/**
 * `GET /v3/projects` filters. `parent_id` naming the domain selects its top-level projects,
 * since esi renders a top-level project's `parent_id` as its domain id (as Keystone does).
 */
export function projectFilter(query: Query): ProjectFilter {
  const name = queryValue(query, 'name');
  const domainId = queryValue(query, 'domain_id');
  const parentId = queryValue(query, 'parent_id');
  const enabled = queryBool(query, 'enabled');
  const topLevel = parentId === DEFAULT_DOMAIN_ID;
  return {
    ...(name !== undefined ? { name } : {}),
    ...(domainId !== undefined ? { domainId } : topLevel ? { domainId: DEFAULT_DOMAIN_ID } : {}),
    ...(parentId !== undefined ? { parentId: topLevel ? null : parentId } : {}),
    ...(enabled !== undefined ? { enabled } : {}),
  };
}

/** The query parameters {@link userFilter} reads. */
export const USER_LIST_QUERY = ['name', 'domain_id', 'enabled'] as const;

/** `GET /v3/users` filters. */
export function userFilter(query: Query): UserFilter {
  const name = queryValue(query, 'name');
  const domainId = queryValue(query, 'domain_id');
  const enabled = queryBool(query, 'enabled');
  return {
    ...(name !== undefined ? { name } : {}),
    ...(domainId !== undefined ? { domainId } : {}),
    ...(enabled !== undefined ? { enabled } : {}),
  };
}

/** The query parameter {@link nameFilter} reads. */
export const NAME_QUERY = ['name'] as const;

/** A `?name=` filter. */
export function nameFilter(query: Query): { name?: string } {
  const name = queryValue(query, 'name');
  return name !== undefined ? { name } : {};
}

/** Parsed `GET /v3/role_assignments` query. */
export interface AssignmentListQuery {
  readonly query: AssignmentQuery;
  readonly includeNames: boolean;
  /**
   * True when the query asks for assignments esi cannot hold (inherited ones): the answer is
   * then an empty list, as it would be in Keystone with none.
   */
  readonly matchesNothing: boolean;
}

/** The query parameters {@link assignmentListQuery} reads. */
export const ASSIGNMENT_LIST_QUERY = [
  'user.id',
  'group.id',
  'role.id',
  'scope.project.id',
  'scope.domain.id',
  'scope.system',
  'scope.OS-INHERIT:inherited_to',
  'effective',
  'include_names',
] as const;

/**
 * `GET /v3/role_assignments` query (Keystone "List role assignments"), with Keystone's checks of
 * filters that cannot be combined (keystone/api/role_assignments.py).
 */
export function assignmentListQuery(query: Query): AssignmentListQuery {
  const userId = queryValue(query, 'user.id');
  const groupId = queryValue(query, 'group.id');
  const roleId = queryValue(query, 'role.id');
  const projectId = queryValue(query, 'scope.project.id');
  const domainId = queryValue(query, 'scope.domain.id');
  const system = queryValue(query, 'scope.system');
  const effective = queryBool(query, 'effective') === true;
  const conflicts: Array<[boolean, string]> = [
    [projectId !== undefined && system !== undefined, 'Specify a project or the system as scope, not both.'],
    [domainId !== undefined && projectId !== undefined, 'Specify a domain or project, not both'],
    [domainId !== undefined && system !== undefined, 'Specify system or domain, not both'],
    [userId !== undefined && groupId !== undefined, 'Specify a user or group, not both'],
    [effective && groupId !== undefined, 'Combining effective and group filter will always result in an empty list.'],
  ];
  for (const [bad, message] of conflicts) if (bad) throw new InvalidInputError(message, 'ValidationError');
  const matchesNothing = queryValue(query, 'scope.OS-INHERIT:inherited_to') !== undefined;
  return {
    query: {
      ...(userId !== undefined ? { userId } : {}),
      ...(groupId !== undefined ? { groupId } : {}),
      ...(roleId !== undefined ? { roleId } : {}),
      ...(projectId !== undefined ? { projectId } : {}),
      ...(domainId !== undefined ? { domainId } : {}),
      ...(system !== undefined ? { system: true } : {}),
      ...(effective ? { effective: true } : {}),
    },
    includeNames: queryBool(query, 'include_names') ?? false,
    matchesNothing,
  };
}
