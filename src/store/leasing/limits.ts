/**
 * Owner lease policies and project quotas in the leasing store: row mapping and the queries used
 * inside lease admission (on a transaction) and by their CRUD services (on the root handle).
 * Portable across SQLite and PostgreSQL.
 */
import type { Selectable } from 'kysely';
import type { LeasePolicy } from '../../domain/leasing/policy-rules.ts';
import type { LeaseQuota } from '../../domain/leasing/quota-rules.ts';
import type { PolicyQuery } from '../../domain/leasing/repository.ts';
import { fromJson, isUniqueViolation, toJson, type Db, type Tx } from '../database.ts';
import type { LeasePoliciesTable, LeaseQuotasTable } from './tables.ts';

/** `scope` of an all-nodes policy. */
const ALL_NODES = '*';

/** A policy row as a model value. */
export function toPolicy(r: Selectable<LeasePoliciesTable>): LeasePolicy {
  return {
    uuid: r.uuid,
    project_id: r.project_id,
    resource_uuid: r.scope === ALL_NODES ? null : r.scope,
    max_lease_ms: r.max_lease_ms === null ? null : Number(r.max_lease_ms),
    min_gap_ms: r.min_gap_ms === null ? null : Number(r.min_gap_ms),
    allowed_projects: r.allowed_projects === null ? null : fromJson<string[]>(r.allowed_projects, []),
    erase_devices: Number(r.erase_devices) === 1,
    created_at: Number(r.created_at),
    updated_at: Number(r.updated_at),
  };
}

function policyRow(p: LeasePolicy): Selectable<LeasePoliciesTable> {
  return {
    uuid: p.uuid,
    project_id: p.project_id,
    scope: p.resource_uuid ?? ALL_NODES,
    max_lease_ms: p.max_lease_ms,
    min_gap_ms: p.min_gap_ms,
    allowed_projects: p.allowed_projects === null ? null : toJson(p.allowed_projects),
    erase_devices: p.erase_devices ? 1 : 0,
    created_at: p.created_at,
    updated_at: p.updated_at,
  };
}

/** A quota row as a model value. */
export function toQuota(r: Selectable<LeaseQuotasTable>): LeaseQuota {
  return {
    project_id: r.project_id,
    max_nodes: r.max_nodes === null ? null : Number(r.max_nodes),
    max_node_hours: r.max_node_hours === null ? null : Number(r.max_node_hours),
    window_hours: Number(r.window_hours),
    created_at: Number(r.created_at),
    updated_at: Number(r.updated_at),
  };
}

/** Policies of these owner projects. */
export async function policiesOf(db: Db | Tx, ownerIds: readonly string[]): Promise<LeasePolicy[]> {
  if (ownerIds.length === 0) return [];
  const rows = await db
    .selectFrom('lease_policies')
    .selectAll()
    .where('project_id', 'in', [...ownerIds])
    .execute();
  return rows.map(toPolicy);
}

/** A project's quota, or null. */
export async function getQuota(db: Db | Tx, projectId: string): Promise<LeaseQuota | null> {
  const row = await db.selectFrom('lease_quotas').selectAll().where('project_id', '=', projectId).executeTakeFirst();
  return row ? toQuota(row) : null;
}

/** CRUD of policies and quotas on the root handle (the services' side of the port). */
export class LimitsStore {
  constructor(private readonly db: Db) {}

  async getPolicy(uuid: string): Promise<LeasePolicy | null> {
    const row = await this.db.selectFrom('lease_policies').selectAll().where('uuid', '=', uuid).executeTakeFirst();
    return row ? toPolicy(row) : null;
  }

  async listPolicies(q: PolicyQuery): Promise<LeasePolicy[]> {
    let s = this.db.selectFrom('lease_policies').selectAll();
    if (q.projectId !== undefined) s = s.where('project_id', '=', q.projectId);
    if (q.resourceUuid !== undefined) s = s.where('scope', '=', q.resourceUuid ?? ALL_NODES);
    return (await s.orderBy('created_at').orderBy('uuid').execute()).map(toPolicy);
  }

  async insertPolicy(p: LeasePolicy): Promise<boolean> {
    try {
      await this.db.insertInto('lease_policies').values(policyRow(p)).execute();
      return true;
    } catch (err) {
      if (isUniqueViolation(err)) return false;
      throw err;
    }
  }

  async updatePolicy(p: LeasePolicy): Promise<void> {
    const { uuid: _u, project_id: _p, scope: _s, created_at: _c, ...changes } = policyRow(p);
    await this.db.updateTable('lease_policies').set(changes).where('uuid', '=', p.uuid).execute();
  }

  async deletePolicy(uuid: string): Promise<boolean> {
    const r = await this.db.deleteFrom('lease_policies').where('uuid', '=', uuid).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  async listQuotas(): Promise<LeaseQuota[]> {
    return (await this.db.selectFrom('lease_quotas').selectAll().orderBy('project_id').execute()).map(toQuota);
  }

  async putQuota(q: LeaseQuota): Promise<void> {
    const row = {
      project_id: q.project_id,
      max_nodes: q.max_nodes,
      max_node_hours: q.max_node_hours,
      window_hours: q.window_hours,
      created_at: q.created_at,
      updated_at: q.updated_at,
    };
    await this.db
      .insertInto('lease_quotas')
      .values(row)
      .onConflict((oc) =>
        oc.column('project_id').doUpdateSet({
          max_nodes: q.max_nodes,
          max_node_hours: q.max_node_hours,
          window_hours: q.window_hours,
          updated_at: q.updated_at,
        }),
      )
      .execute();
  }

  async deleteQuota(projectId: string): Promise<boolean> {
    const r = await this.db.deleteFrom('lease_quotas').where('project_id', '=', projectId).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}
