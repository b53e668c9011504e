/** Who is asking, as the leasing rules see it when they word a refusal. */
import type { Lease, Offer } from './model.ts';

/**
 * Who is asking, so that a refusal names only what the caller may see: a lease or offer of
 * another project is described by its window alone, and another project's quota figures and
 * lease policy are not quoted. Built by `LeasingAccess.viewer` from the caller's context and the
 * `esi_leap:*` rules.
 */
export interface Viewer {
  /** True when the caller may see this lease (`esi_leap:lease:get`: admins and its two parties). */
  seesLease(lease: Lease): boolean;
  /** True when the caller may see this offer (`LeasingAccess.canSeeOffer`). */
  seesOffer(offer: Offer): boolean;
  /** True when the caller may see an owner's lease policy (`esi_leap:lease_policy:get`). */
  seesPolicy(policy: { readonly project_id: string }): boolean;
  /** True when the caller may see a project's quota and usage (`esi_leap:quota:get`). */
  seesQuota(projectId: string): boolean;
}

/** A viewer that sees everything (unit tests, internal callers). */
export const SEES_ALL: Viewer = Object.freeze({
  seesLease: () => true,
  seesOffer: () => true,
  seesPolicy: () => true,
  seesQuota: () => true,
});
