/**
 * Row mappers of the identity tables (epoch-ms timestamps, 0/1 booleans and JSON text become
 * domain values) and the unique-violation → `ConflictError` wrapper the identity stores share.
 */
import type { Selectable } from 'kysely';
import { ConflictError } from '../../domain/errors.ts';
import type { Domain, Project, Role, User } from '../../domain/identity/model.ts';
import { fromJson, isUniqueViolation } from '../database.ts';
import type { DomainsTable, ProjectsTable, RolesTable, UsersTable } from './tables.ts';

/** Run a write; a unique-constraint violation becomes a `ConflictError` with `message` (HTTP 409). */
export async function unique<T>(message: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (isUniqueViolation(err)) throw new ConflictError(message, 'Conflict');
    throw err;
  }
}

/** A row as a domain value. */
export function toDomain(r: Selectable<DomainsTable>): Domain {
  return { id: r.id, name: r.name, description: r.description, enabled: r.enabled === 1 };
}

/** A row as a domain value. */
export function toProject(r: Selectable<ProjectsTable>): Project {
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

/** A row as a domain value. */
export function toUser(r: Selectable<UsersTable>): User {
  return {
    id: r.id,
    name: r.name,
    domain_id: r.domain_id,
    default_project_id: r.default_project_id,
    enabled: r.enabled === 1,
    extra: fromJson(r.extra, {}),
  };
}

/** A row as a domain value. */
export function toRole(r: Selectable<RolesTable>): Role {
  return { id: r.id, name: r.name, domain_id: r.domain_id, description: r.description };
}
