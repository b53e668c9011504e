/**
 * The "parse" step of the group and domain routes (routes/groups.ts, routes/group-grants.ts,
 * routes/domains.ts): request-body schemas after Keystone's (keystone/identity/schema.py
 * `group_create`/`group_update`, keystone/resource/schema.py `domain_create`/`domain_update`) and
 * their translation into the inputs of `IdentityGroups` and `DomainAdmin`.
 *
 * Groups admit extra attributes (kept and shown back, Keystone's `extra`); domains do not (esi
 * stores none; Keystone would keep them), and esi refuses domain tags and the `immutable`
 * option with a clear 400.
 */
import { Type, type Static } from '@sinclair/typebox';
import { InvalidInputError } from '../../domain/errors.ts';
import type { DomainInput, DomainPatch, GroupInput, GroupPatch } from '../../domain/identity/index.ts';
import { queryBool, queryValue, type Query } from './inputs.ts';
import { IdString, LongName, Options } from './schemas.ts';
import { Nullable, parseBody } from './validation.ts';

/** A domain name: 1–64 characters, not only blanks (Keystone `_name_properties`). */
const DomainName = Type.String({ minLength: 1, maxLength: 64, pattern: '\\S' });
const Description = Nullable(Type.String({ maxLength: 65_535 }));

const groupFields = {
  name: LongName,
  description: Type.Optional(Description),
  domain_id: Type.Optional(IdString),
};

/** `POST /v3/groups`. */
export const GroupCreateBody = Type.Object(
  { group: Type.Object(groupFields, { additionalProperties: true }) },
  { additionalProperties: false },
);

/** `PATCH /v3/groups/{id}`: any group field, at least one. */
export const GroupUpdateBody = Type.Object(
  { group: Type.Partial(Type.Object(groupFields), { additionalProperties: true, minProperties: 1 }) },
  { additionalProperties: false },
);

const domainFields = {
  name: DomainName,
  description: Type.Optional(Description),
  enabled: Type.Optional(Type.Boolean()),
  options: Type.Optional(Options),
  tags: Type.Optional(Type.Array(Type.String({ maxLength: 255 }), { maxItems: 80 })),
};

/** `POST /v3/domains`. */
export const DomainCreateBody = Type.Object(
  { domain: Type.Object({ ...domainFields, explicit_domain_id: Type.Optional(IdString) }, { additionalProperties: false }) },
  { additionalProperties: false },
);

/** `PATCH /v3/domains/{id}`: any domain field, at least one. */
export const DomainUpdateBody = Type.Object(
  { domain: Type.Partial(Type.Object(domainFields), { additionalProperties: false, minProperties: 1 }) },
  { additionalProperties: false },
);

/** Read-only attributes Keystone ignores when a client sends them back. */
const IGNORED = new Set(['id', 'links']);
const GROUP_KNOWN = new Set(['name', 'description', 'domain_id']);

function groupExtra(g: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(g)) if (!GROUP_KNOWN.has(k) && !IGNORED.has(k)) out[k] = v;
  return out;
}

/** `POST /v3/groups` body → {@link GroupInput}. */
export function groupCreateInput(body: unknown): GroupInput {
  const g = parseBody(GroupCreateBody, body).group as Static<typeof GroupCreateBody>['group'] & Record<string, unknown>;
  return {
    name: g.name,
    ...(g.domain_id !== undefined ? { domainId: g.domain_id } : {}),
    ...(g.description !== undefined ? { description: g.description } : {}),
    extra: groupExtra(g),
  };
}

/** `PATCH /v3/groups/{id}` body → {@link GroupPatch} (a `domain_id` must be the group's own: checked by the domain). */
export function groupUpdateInput(body: unknown): GroupPatch {
  const g = parseBody(GroupUpdateBody, body).group as Partial<Static<typeof GroupCreateBody>['group']> & Record<string, unknown>;
  const extra = groupExtra(g);
  return {
    ...(g.name !== undefined ? { name: g.name } : {}),
    ...(g.description !== undefined ? { description: g.description } : {}),
    ...(g.domain_id !== undefined ? { domainId: g.domain_id } : {}),
    ...(Object.keys(extra).length > 0 ? { extra } : {}),
  };
}

function domainOptions(d: { options?: { immutable?: boolean | null }; tags?: string[] }): void {
  if (d.options?.immutable === true)
    throw new InvalidInputError("Invalid input for field 'domain/options': esi does not support immutable resources.", 'ValidationError');
  if (d.tags !== undefined && d.tags.length > 0)
    throw new InvalidInputError("Invalid input for field 'domain/tags': esi does not support domain tags.", 'ValidationError');
}

/** `POST /v3/domains` body → {@link DomainInput}. */
export function domainCreateInput(body: unknown): DomainInput {
  const d = parseBody(DomainCreateBody, body).domain;
  domainOptions(d);
  return {
    name: d.name,
    ...(d.description !== undefined ? { description: d.description } : {}),
    ...(d.enabled !== undefined ? { enabled: d.enabled } : {}),
    ...(d.explicit_domain_id !== undefined ? { explicitId: d.explicit_domain_id } : {}),
  };
}

/** `PATCH /v3/domains/{id}` body → {@link DomainPatch}. */
export function domainUpdateInput(body: unknown): DomainPatch {
  const d = parseBody(DomainUpdateBody, body).domain;
  domainOptions(d);
  return {
    ...(d.name !== undefined ? { name: d.name } : {}),
    ...(d.description !== undefined ? { description: d.description } : {}),
    ...(d.enabled !== undefined ? { enabled: d.enabled } : {}),
  };
}

/** The query parameters {@link groupFilter} reads. */
export const GROUP_LIST_QUERY = ['name', 'domain_id'] as const;

/** `GET /v3/groups` filters (`name`, `domain_id`). */
export function groupFilter(query: Query): { name?: string; domainId?: string } {
  const name = queryValue(query, 'name');
  const domainId = queryValue(query, 'domain_id');
  return { ...(name !== undefined ? { name } : {}), ...(domainId !== undefined ? { domainId } : {}) };
}

/** The query parameters {@link domainFilter} reads. */
export const DOMAIN_LIST_QUERY = ['name', 'enabled'] as const;

/** `GET /v3/domains` filters (`name`, `enabled`). */
export function domainFilter(query: Query): { name?: string; enabled?: boolean } {
  const name = queryValue(query, 'name');
  const enabled = queryBool(query, 'enabled');
  return { ...(name !== undefined ? { name } : {}), ...(enabled !== undefined ? { enabled } : {}) };
}
