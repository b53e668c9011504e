/**
 * The quota part of the networking area's storage port (./ports.ts): the per-project limits an
 * admin set through Neutron's quotas API (migration 0020) and the one identity read their checks
 * need. `NetworkReads` and `NetworkTx` extend these, so one repository (src/store/networking/)
 * implements them with the rest; the usage counts (`countRouters`, `countFloatingIps`) are in
 * ./ports-l3.ts and ./ports-fip.ts.
 */

/** The resources whose number per project esi limits (Neutron's quota resource names). */
export const QUOTA_RESOURCES = ['floatingip', 'router'] as const;

/** One resource esi limits per project. */
export type QuotaResource = (typeof QUOTA_RESOURCES)[number];

/** One limit an admin set: `limit` items of `resource` for `project_id`, -1 for no limit. */
export interface QuotaOverride {
  readonly project_id: string;
  readonly resource: QuotaResource;
  readonly limit: number;
}

/** Quota reads, on the root and inside a transaction. */
export interface QuotaReads {
  /** The limits set for one project (resources without one are absent). */
  quotaOverrides(projectId: string): Promise<Map<QuotaResource, number>>;
  /** Every limit set, ordered by project then resource (Neutron's `GET /v2.0/quotas`). */
  listQuotaOverrides(): Promise<QuotaOverride[]>;
  /** True when an identity project (Keystone `projects`) has this id. */
  projectExists(projectId: string): Promise<boolean>;
}

/** Quota writes, inside `NetworkRepository.locked`. */
export interface QuotaWrites {
  /** Set one resource's limit of a project (insert or replace). */
  setQuotaLimit(projectId: string, resource: QuotaResource, limit: number, now: number): Promise<void>;
  /** Forget every limit set for a project (back to the defaults). */
  deleteQuotaOverrides(projectId: string): Promise<void>;
}
