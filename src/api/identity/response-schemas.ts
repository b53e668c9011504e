/**
 * Response schemas of the identity API (TypeBox), for the document (`/openapi/identity.json`):
 * projects, users, roles, domains, groups, role assignments and application credentials as
 * Keystone v3 shows them (Keystone API reference, https://docs.openstack.org/api-ref/identity/v3/;
 * ./render.ts writes them), each in its wrapper (`{"project": {...}}`), and their collections
 * with Keystone's collection `links`. Tokens, the catalogue and version discovery are in
 * ./auth-response-schemas.ts.
 *
 * The wire format is fixed, so objects are `additionalProperties: false` and their fields
 * required, except where Keystone keeps extra attributes a caller gave (projects, users,
 * groups: shown at the top level, as `email` in Keystone's examples), which are open
 * (test/api/ops/openapi-responses-identity.test.ts checks real answers against them, and
 * answers without extra attributes against the closed form too). No schema here has a
 * password field; an application credential's `secret` is only in its create answer.
 */
import { Type, type TObject, type TProperties, type TSchema } from '@sinclair/typebox';

const Str = Type.String();
const StrOrNull = Type.Union([Type.String(), Type.Null()]);
const strict = { additionalProperties: false } as const;
/** Keystone's time: ISO 8601 UTC with microseconds and `Z` (`2026-01-01T00:00:00.000000Z`). */
export const KeystoneTime = Type.String({ description: 'ISO 8601 UTC with microseconds, Z' });

/** The `links` of one resource: `{"self": <its URL>}`. */
export const SelfLink = Type.Object({ self: Str }, strict);

/** Keystone's collection `links`: `self` is the requested URL; esi does not paginate (`previous`, `next` null). */
export const CollectionLinks = Type.Object({ self: Str, previous: StrOrNull, next: StrOrNull }, strict);

/** Resource options (`options`): esi sets none, so always `{}` (Keystone may show e.g. `immutable`). */
export const NoOptions = Type.Object({}, { ...strict, description: 'resource options; esi sets none' });

/** Fields of an object that keeps extra attributes: open, with those extras at the top level. */
const withExtras = <T extends TProperties>(fields: T, description: string): TObject<T> =>
  Type.Object(fields, { additionalProperties: true, description: `${description}; extra attributes given at creation are shown too` });

/** A collection: `{"<key>": [item…], "links": {...}}`. */
const collection = (key: string, item: TSchema): TObject => Type.Object({ [key]: Type.Array(item), links: CollectionLinks }, strict);

/** A wrapper of one resource: `{"<key>": {...}}`. */
const wrapped = (key: string, item: TSchema): TObject => Type.Object({ [key]: item }, strict);

/**
 * A project (Keystone "Projects"; keystone/resource/core.py): a top-level project's
 * `parent_id` is its domain's id; no project acts as a domain (`is_domain` false).
 */
export const ProjectObject = withExtras(
  {
    id: Str,
    name: Str,
    domain_id: Str,
    description: Str,
    enabled: Type.Boolean(),
    parent_id: Str,
    is_domain: Type.Boolean(),
    tags: Type.Array(Str),
    options: NoOptions,
    links: SelfLink,
  },
  'a project',
);

/** `GET /v3/projects/{id}`, `POST /v3/projects`, `PATCH /v3/projects/{id}`. */
export const ProjectResponse = wrapped('project', ProjectObject);

/** `GET /v3/projects`, `GET /v3/users/{id}/projects`, `GET /v3/auth/projects`. */
export const ProjectCollection = collection('projects', ProjectObject);

/**
 * A user (Keystone "Users"; keystone/identity/core.py): never a password; `default_project_id`
 * only when set; `description` (and other extras such as `email`) when given.
 */
export const UserObject = withExtras(
  {
    id: Str,
    name: Str,
    domain_id: Str,
    enabled: Type.Boolean(),
    default_project_id: Type.Optional(Str),
    description: Type.Optional(StrOrNull),
    password_expires_at: Type.Null({ description: 'esi passwords do not expire' }),
    options: NoOptions,
    links: SelfLink,
  },
  'a user',
);

/** `GET /v3/users/{id}`, `POST /v3/users`, `PATCH /v3/users/{id}`. */
export const UserResponse = wrapped('user', UserObject);

/** `GET /v3/users`, `GET /v3/groups/{id}/users`. */
export const UserCollection = collection('users', UserObject);

/** A role (Keystone "Roles"): esi has global roles only (`domain_id` null). */
export const RoleObject = Type.Object(
  { id: Str, name: Str, domain_id: StrOrNull, description: Str, options: NoOptions, links: SelfLink },
  strict,
);

/** `GET /v3/roles/{id}`, `POST /v3/roles`. */
export const RoleResponse = wrapped('role', RoleObject);

/**
 * `GET /v3/roles`, and the roles of one grant target: `GET
 * /v3/projects/{p}/users/{u}/roles`, `/v3/system/users/{u}/roles`,
 * `/v3/projects/{p}/groups/{g}/roles`, `/v3/domains/{d}/groups/{g}/roles`.
 */
export const RoleCollection = collection('roles', RoleObject);

/** A domain (Keystone "Domains"). */
export const DomainObject = Type.Object(
  { id: Str, name: Str, description: Str, enabled: Type.Boolean(), tags: Type.Array(Str), options: NoOptions, links: SelfLink },
  strict,
);

/** `GET /v3/domains/{id}`, `POST /v3/domains`, `PATCH /v3/domains/{id}`. */
export const DomainResponse = wrapped('domain', DomainObject);

/** `GET /v3/domains`, `GET /v3/auth/domains`. */
export const DomainCollection = collection('domains', DomainObject);

const groupFields = { id: Str, name: Str, domain_id: Str, description: Str, links: SelfLink };

/** A group (Keystone "Groups"). */
export const GroupObject = withExtras(groupFields, 'a group');

/** `GET /v3/groups/{id}`, `POST /v3/groups`, `PATCH /v3/groups/{id}`. */
export const GroupResponse = wrapped('group', GroupObject);

/** `GET /v3/groups`. */
export const GroupCollection = collection('groups', GroupObject);

/**
 * `GET /v3/users/{id}/groups`: the user's groups, each with Keystone's `membership_expires_at`
 * (null: esi has no expiring, federated memberships).
 */
export const UserGroupCollection = collection(
  'groups',
  withExtras({ ...groupFields, membership_expires_at: Type.Null() }, "one of a user's groups"),
);

/** A domain by id and name, as assignments with `include_names` show it. */
const NamedDomain = Type.Object({ id: Str, name: Str }, strict);

/** An actor (user or group) of an assignment: its id, and with `include_names` its name and domain. */
const Actor = Type.Object({ id: Str, name: Type.Optional(Str), domain: Type.Optional(NamedDomain) }, strict);

/** The scope of an assignment: a project, a domain or the system. */
const AssignmentScope = Type.Union([
  Type.Object({ project: Type.Object({ id: Str, name: Type.Optional(Str), domain: Type.Optional(NamedDomain) }, strict) }, strict),
  Type.Object({ domain: Type.Object({ id: Str, name: Type.Optional(Str) }, strict) }, strict),
  Type.Object({ system: Type.Object({ all: Type.Literal(true) }, strict) }, strict),
]);

const assignmentRole = Type.Object({ id: Str, name: Type.Optional(Str) }, strict);

/**
 * One role assignment (Keystone "List role assignments", `_format_entity`): to a user or a
 * group; a user's assignment through a group (`effective`) links to the group's grant and its
 * membership (`links.membership`). Names only with `include_names`.
 */
export const RoleAssignmentObject = Type.Union([
  Type.Object(
    {
      role: assignmentRole,
      user: Actor,
      scope: AssignmentScope,
      links: Type.Object({ assignment: Str, membership: Type.Optional(Str) }, strict),
    },
    strict,
  ),
  Type.Object({ role: assignmentRole, group: Actor, scope: AssignmentScope, links: Type.Object({ assignment: Str }, strict) }, strict),
]);

/** `GET /v3/role_assignments`. */
export const RoleAssignmentCollection = Type.Object({ role_assignments: Type.Array(RoleAssignmentObject), links: CollectionLinks }, strict);

const appCredentialFields = {
  id: Str,
  name: Str,
  description: StrOrNull,
  user_id: Str,
  project_id: Str,
  system: Type.Null({ description: 'esi has no system-scoped application credentials' }),
  roles: Type.Array(Type.Object({ id: Str, name: Str, domain_id: StrOrNull }, strict)),
  expires_at: Type.Union([KeystoneTime, Type.Null()]),
  unrestricted: Type.Boolean(),
  access_rules: Type.Array(Type.Object({}), { maxItems: 0, description: 'access rules are not supported: always empty' }),
  links: SelfLink,
};

/**
 * An application credential (Keystone "Application Credentials") as shown and listed: without
 * its secret, which only the create answer holds.
 */
export const AppCredentialObject = Type.Object(appCredentialFields, strict);

/** `GET /v3/users/{id}/application_credentials/{credential}`. */
export const AppCredentialResponse = wrapped('application_credential', AppCredentialObject);

/** `GET /v3/users/{id}/application_credentials`. */
export const AppCredentialCollection = collection('application_credentials', AppCredentialObject);

/** `POST /v3/users/{id}/application_credentials` (201): the credential with its `secret`, shown this once. */
export const AppCredentialCreateResponse = wrapped(
  'application_credential',
  Type.Object({ ...appCredentialFields, secret: Type.String({ description: 'shown only in this answer' }) }, strict),
);
