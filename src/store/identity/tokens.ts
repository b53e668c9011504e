/**
 * Kysely storage of issued Keystone tokens (`tokens`: the SHA-256 of each secret, never the
 * secret), portable across SQLite and PostgreSQL. Used by `KyselyIdentityRepository`
 * (./repository.ts).
 */
import type { Selectable } from 'kysely';
import type { TokenRecord } from '../../domain/identity/model.ts';
import type { TokenRevocationRef } from '../../domain/identity/ports.ts';
import { fromJson, toJson, type Db } from '../database.ts';
import type { TokensTable } from './tables.ts';

/** Tokens over a Kysely handle. */
export class KyselyTokenStore {
  constructor(private readonly db: Db) {}

  /** Insert a token record. */
  async insert(t: TokenRecord): Promise<void> {
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
        app_cred_id: t.app_cred_id ?? null,
        issued_at: t.issued_at,
        expires_at: t.expires_at,
        revoked_at: t.revoked_at,
      })
      .execute();
  }

  /** One token record by id (the secret's hash), or null. */
  async get(id: string): Promise<TokenRecord | null> {
    const row = await this.db.selectFrom('tokens').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toToken(row) : null;
  }

  /** Mark one token revoked (idempotent). */
  async revoke(id: string, now: number): Promise<void> {
    await this.db.updateTable('tokens').set({ revoked_at: now }).where('id', '=', id).where('revoked_at', 'is', null).execute();
  }

  /** Revoke the live tokens the reference selects. @returns their ids */
  async revokeFor(ref: TokenRevocationRef, now: number): Promise<string[]> {
    let q = this.db.selectFrom('tokens').select('id').where('revoked_at', 'is', null).where('expires_at', '>', now);
    if (ref.exceptTokenId !== undefined) q = q.where('id', '!=', ref.exceptTokenId);
    if (ref.userId !== undefined) q = q.where('user_id', '=', ref.userId);
    if (ref.projectId !== undefined) q = q.where('project_id', '=', ref.projectId);
    if (ref.system) q = q.where('system_scope', '=', 'all');
    if (ref.appCredId !== undefined) q = q.where('app_cred_id', '=', ref.appCredId);
    if (ref.domainId !== undefined) {
      const domainId = ref.domainId;
      q = q.where((eb) =>
        eb.or([
          eb('user_id', 'in', eb.selectFrom('users').select('id').where('domain_id', '=', domainId)),
          eb('project_id', 'in', eb.selectFrom('projects').select('id').where('domain_id', '=', domainId)),
        ]),
      );
    }
    const ids = (await q.execute()).map((r) => r.id);
    if (ids.length > 0) await this.db.updateTable('tokens').set({ revoked_at: now }).where('id', 'in', ids).execute();
    return ids;
  }

  /** Delete tokens that expired before `now`. @returns how many */
  async purgeExpired(now: number): Promise<number> {
    const res = await this.db.deleteFrom('tokens').where('expires_at', '<', now).executeTakeFirst();
    return Number(res.numDeletedRows);
  }
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
    app_cred_id: r.app_cred_id,
    issued_at: r.issued_at,
    expires_at: r.expires_at,
    revoked_at: r.revoked_at,
  };
}
