/**
 * Kysely storage of Keystone application credentials (migration 0021), portable across SQLite
 * and PostgreSQL. Used by `KyselyIdentityRepository` (./repository.ts). The secret's scrypt hash
 * is written here and read back only by {@link KyselyAppCredentialStore.secretHash}; it is never
 * part of an `ApplicationCredential` value.
 */
import type { Selectable } from 'kysely';
import { ConflictError } from '../../domain/errors.ts';
import type { ApplicationCredential } from '../../domain/identity/model.ts';
import { fromJson, isUniqueViolation, toBool, toJson, type Db } from '../database.ts';
import type { ApplicationCredentialsTable } from './tables.ts';

/** Application credentials over a Kysely handle. */
export class KyselyAppCredentialStore {
  constructor(private readonly db: Db) {}

  /** Insert a credential. @throws ConflictError when the user already has one of that name */
  async create(c: ApplicationCredential, secretHash: string, now: number): Promise<void> {
    try {
      await this.db
        .insertInto('application_credentials')
        .values({
          id: c.id,
          name: c.name,
          description: c.description,
          user_id: c.user_id,
          project_id: c.project_id,
          secret_hash: secretHash,
          role_ids: toJson(c.role_ids),
          expires_at: c.expires_at,
          unrestricted: toBool(c.unrestricted),
          created_at: now,
        })
        .execute();
    } catch (err) {
      if (isUniqueViolation(err)) {
        throw new ConflictError(
          `Conflict occurred attempting to store application_credential - Duplicate entry found with name ${c.name}.`,
          'Conflict',
        );
      }
      throw err;
    }
  }

  /** One credential, or null. */
  async get(id: string): Promise<ApplicationCredential | null> {
    const row = await this.db.selectFrom('application_credentials').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toCredential(row) : null;
  }

  /** A user's credentials, optionally by name and project, sorted by name. */
  async find(filter: { readonly userId: string; readonly name?: string; readonly projectId?: string }): Promise<ApplicationCredential[]> {
    let q = this.db.selectFrom('application_credentials').selectAll().where('user_id', '=', filter.userId);
    if (filter.name !== undefined) q = q.where('name', '=', filter.name);
    if (filter.projectId !== undefined) q = q.where('project_id', '=', filter.projectId);
    return (await q.orderBy('name').execute()).map(toCredential);
  }

  /** The stored hash of a credential's secret, or null. */
  async secretHash(id: string): Promise<string | null> {
    const row = await this.db.selectFrom('application_credentials').select('secret_hash').where('id', '=', id).executeTakeFirst();
    return row?.secret_hash ?? null;
  }

  /** Delete one credential. @returns false when there was none */
  async delete(id: string): Promise<boolean> {
    const res = await this.db.deleteFrom('application_credentials').where('id', '=', id).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }

  /** Delete the credentials a user holds on a project. @returns their ids */
  async deleteOn(userId: string, projectId: string): Promise<string[]> {
    const ids = (
      await this.db
        .selectFrom('application_credentials')
        .select('id')
        .where('user_id', '=', userId)
        .where('project_id', '=', projectId)
        .execute()
    ).map((r) => r.id);
    if (ids.length > 0) await this.db.deleteFrom('application_credentials').where('id', 'in', ids).execute();
    return ids;
  }

  /** Delete every credential of a user, or on a project (their owner or project is being deleted). */
  async deleteFor(ref: { readonly userId?: string; readonly projectId?: string }): Promise<void> {
    if (ref.userId !== undefined) await this.db.deleteFrom('application_credentials').where('user_id', '=', ref.userId).execute();
    if (ref.projectId !== undefined) await this.db.deleteFrom('application_credentials').where('project_id', '=', ref.projectId).execute();
  }
}

function toCredential(r: Selectable<ApplicationCredentialsTable>): ApplicationCredential {
  return {
    id: r.id,
    name: r.name,
    description: r.description,
    user_id: r.user_id,
    project_id: r.project_id,
    role_ids: fromJson<string[]>(r.role_ids, []),
    expires_at: r.expires_at,
    unrestricted: r.unrestricted === 1,
  };
}
