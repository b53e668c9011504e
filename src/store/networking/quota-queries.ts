/**
 * The quota reads and writes of the networking repository (migration 0020,
 * src/domain/networking/ports-quota.ts): the per-project limits an admin set, and whether an
 * identity project exists. Added to the floating IP queries (`./fip-queries.ts`) by inheritance,
 * so that one handle (root or transaction) serves every networking read and write.
 */
import type { QuotaOverride, QuotaResource } from '../../domain/networking/ports-quota.ts';
import { QUOTA_RESOURCES } from '../../domain/networking/ports-quota.ts';
import type { Db, Tx } from '../database.ts';
import { FipQueries } from './fip-queries.ts';

const KNOWN = new Set<string>(QUOTA_RESOURCES);

/** A stored resource name esi still limits (rows of other resources are ignored). */
function isQuotaResource(r: string): r is QuotaResource {
  return KNOWN.has(r);
}

/** Quota limits and the project check, over one handle. */
export class QuotaQueries extends FipQueries {
  constructor(db: Db | Tx) {
    super(db);
  }

  async quotaOverrides(projectId: string): Promise<Map<QuotaResource, number>> {
    const rows = await this.db
      .selectFrom('network_quotas')
      .select(['resource', 'hard_limit'])
      .where('project_id', '=', projectId)
      .orderBy('resource')
      .execute();
    const out = new Map<QuotaResource, number>();
    for (const r of rows) if (isQuotaResource(r.resource)) out.set(r.resource, Number(r.hard_limit));
    return out;
  }

  async listQuotaOverrides(): Promise<QuotaOverride[]> {
    const rows = await this.db
      .selectFrom('network_quotas')
      .select(['project_id', 'resource', 'hard_limit'])
      .orderBy('project_id')
      .orderBy('resource')
      .execute();
    return rows.flatMap((r) =>
      isQuotaResource(r.resource) ? [{ project_id: r.project_id, resource: r.resource, limit: Number(r.hard_limit) }] : [],
    );
  }

  async projectExists(projectId: string): Promise<boolean> {
    const row = await this.db.selectFrom('projects').select('id').where('id', '=', projectId).executeTakeFirst();
    return row !== undefined;
  }

  async setQuotaLimit(projectId: string, resource: QuotaResource, limit: number, now: number): Promise<void> {
    await this.db
      .insertInto('network_quotas')
      .values({ project_id: projectId, resource, hard_limit: limit, created_at: now, updated_at: now })
      .onConflict((oc) => oc.columns(['project_id', 'resource']).doUpdateSet({ hard_limit: limit, updated_at: now }))
      .execute();
  }

  async deleteQuotaOverrides(projectId: string): Promise<void> {
    await this.db.deleteFrom('network_quotas').where('project_id', '=', projectId).execute();
  }
}
