/**
 * Quota arithmetic (src/domain/leasing/quota-rules.ts) and owner policy rules
 * (src/domain/leasing/policy-rules.ts): usage of leases by status, peak concurrency, rolling
 * node-hours (checked against a brute-force scan with fast-check), and the policy checks with
 * their messages.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConflictError, ForbiddenError } from '../../../src/domain/errors.ts';
import { SEES_ALL, type Viewer } from '../../../src/domain/leasing/viewer.ts';
import type { Lease, LeaseStatus, Window } from '../../../src/domain/leasing/model.ts';
import {
  checkGap,
  checkPolicyTerms,
  formatDuration,
  policyFor,
  projectAllowed,
  type LeasePolicy,
} from '../../../src/domain/leasing/policy-rules.ts';
import {
  checkQuota,
  peakConcurrency,
  peakRollingUsage,
  usageAt,
  usageOf,
  type LeaseQuota,
} from '../../../src/domain/leasing/quota-rules.ts';

const H = 3_600_000;
const fmt = (ms: number) => `t${ms / H}`;

function lease(start: number, end: number, status: LeaseStatus = 'created', extra: Partial<Lease> = {}): Lease {
  return {
    uuid: `l-${start}-${end}-${status}`,
    name: null,
    project_id: 'p',
    owner_id: 'o',
    purpose: null,
    resource_type: 'ironic_node',
    resource_uuid: 'n',
    start_time: start * H,
    end_time: end * H,
    fulfill_time: null,
    expire_time: null,
    status,
    properties: {},
    offer_uuid: null,
    parent_lease_uuid: null,
    created_at: 0,
    updated_at: 0,
    ...extra,
  };
}
const win = (s: number, e: number): Window => ({ start: s * H, end: e * H });
const quota = (q: Partial<LeaseQuota>): LeaseQuota => ({
  project_id: 'p',
  max_nodes: null,
  max_node_hours: null,
  window_hours: 24,
  created_at: 0,
  updated_at: 0,
  ...q,
});

describe('usageOf', () => {
  it('live leases use their window; expired ones until removal; cancelled ones only after they started', () => {
    expect(usageOf(lease(0, 10, 'active'))).toEqual(win(0, 10));
    expect(usageOf(lease(0, 10, 'wait fulfill'))).toEqual(win(0, 10));
    expect(usageOf(lease(0, 10, 'expired', { fulfill_time: 0, expire_time: 10 * H + 5 }))).toEqual(win(0, 10));
    expect(usageOf(lease(0, 10, 'expired'))).toBeNull(); // never applied to its node
    expect(usageOf(lease(0, 10, 'deleted', { fulfill_time: 0, expire_time: 4 * H }))).toEqual(win(0, 4));
    expect(usageOf(lease(0, 10, 'deleted'))).toBeNull();
  });
});

describe('peak concurrency and rolling usage', () => {
  it('counts overlaps; back-to-back windows do not add up', () => {
    expect(peakConcurrency([win(0, 2), win(1, 3), win(2, 4)], win(0, 10))).toEqual({ count: 2, at: 1 * H });
    expect(peakConcurrency([win(0, 1), win(1, 2)], win(0, 10)).count).toBe(1);
    expect(peakConcurrency([win(0, 5)], win(6, 7)).count).toBe(0);
  });

  it('finds the worst rolling window: the sweep equals evaluating every breakpoint', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: -50, max: 100 }), fc.integer({ min: 1, max: 30 })), { maxLength: 12 }),
        fc.integer({ min: 1, max: 48 }),
        fc.integer({ min: 0, max: 60 }),
        (raw, len, from) => {
          const windows = raw.map(([s, d]) => win(s, s + d));
          const ends = win(from, from + 120);
          // Reference: f is piecewise linear, so its maximum over `ends` is at a breakpoint or an end.
          const f = (t: number) => windows.reduce((sum, w) => sum + Math.max(0, Math.min(w.end, t) - Math.max(w.start, t - len * H)), 0);
          const points = [ends.start, ends.end, ...windows.flatMap((w) => [w.start, w.end, w.start + len * H, w.end + len * H])].filter(
            (t) => t >= ends.start && t <= ends.end,
          );
          const reference = Math.max(...points.map(f));
          const got = peakRollingUsage(windows, len * H, ends);
          expect(got.usedMs).toBe(reference);
          expect(f(got.windowEnd)).toBe(got.usedMs);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('checkQuota', () => {
  it('max_nodes: refuses a lease that would make one more than the limit at some instant, naming it', () => {
    const existing = [lease(0, 10, 'active'), lease(5, 15)];
    expect(checkQuota(quota({ max_nodes: 3 }), existing, [win(8, 12)], fmt)).toBeNull();
    const excess = checkQuota(quota({ max_nodes: 2 }), existing, [win(8, 12)], fmt);
    expect(excess?.limit).toBe('max_nodes');
    expect(excess?.message).toBe('Quota exceeded for project p: these leases would hold 3 nodes at once at t8 (limit 2).');
    expect(checkQuota(quota({ max_nodes: 2 }), existing, [win(15, 20)], fmt)).toBeNull(); // after the others
  });

  it('max_nodes counts the new leases of one request together', () => {
    expect(checkQuota(quota({ max_nodes: 2 }), [], [win(0, 1), win(0, 1), win(0, 1)], fmt)?.message).toMatch(/3 nodes at once/);
    expect(checkQuota(quota({ max_nodes: 2 }), [], [win(0, 1), win(1, 2), win(2, 3)], fmt)).toBeNull();
  });

  it('max_node_hours: past use in the rolling window counts; old use does not', () => {
    const past = [lease(0, 20, 'expired', { fulfill_time: 0, expire_time: 20 * H })];
    // 20 h used in [0, 20); a new 10-h lease right after: every 24-h window ending in [24, 30]
    // holds 24 h (e.g. [0, 24): 20 + 4).
    expect(checkQuota(quota({ max_node_hours: 24 }), past, [win(20, 30)], fmt)).toBeNull();
    const excess = checkQuota(quota({ max_node_hours: 23 }), past, [win(20, 30)], fmt);
    expect(excess?.message).toBe(
      'Quota exceeded for project p: these leases would use 24 node-hours in the 24-hour window ending t24 (limit 23).',
    );
    expect(checkQuota(quota({ max_node_hours: 10 }), past, [win(50, 60)], fmt)).toBeNull();
  });

  it('a cancelled lease that never started uses nothing', () => {
    expect(checkQuota(quota({ max_nodes: 1 }), [lease(0, 10, 'deleted')], [win(0, 10)], fmt)).toBeNull();
  });

  it('usageAt reports nodes now, the future peak and the node-hours of the last window', () => {
    const u = usageAt([lease(0, 10, 'active'), lease(5, 8, 'active'), lease(20, 30), lease(20, 25)], 24, 6 * H, 30 * H);
    expect(u).toEqual({ nodes_now: 2, peak_nodes: 2, node_hours_in_window: 7 });
  });
});

describe('owner lease policies', () => {
  const policy = (p: Partial<LeasePolicy>): LeasePolicy => ({
    uuid: 'pol',
    project_id: 'o1',
    resource_uuid: null,
    max_lease_ms: null,
    min_gap_ms: null,
    allowed_projects: null,
    erase_devices: false,
    created_at: 0,
    updated_at: 0,
    ...p,
  });

  it('a node policy beats the owner-wide one; other owners do not count', () => {
    const all = policy({ uuid: 'all' });
    const node = policy({ uuid: 'n1', resource_uuid: 'node-1' });
    const other = policy({ uuid: 'x', project_id: 'o2', resource_uuid: 'node-2' });
    expect(policyFor([all, node, other], 'o1', 'node-1')?.uuid).toBe('n1');
    expect(policyFor([all, node, other], 'o1', 'node-2')?.uuid).toBe('all');
    expect(policyFor([other], 'o1', 'node-2')).toBeNull();
    expect(policyFor([all], null, 'node-1')).toBeNull();
  });

  it('allowed projects include their subtrees', () => {
    const p = policy({ allowed_projects: ['l1'] });
    expect(projectAllowed(p, ['l1'])).toBe(true);
    expect(projectAllowed(p, ['l1-child', 'l1'])).toBe(true);
    expect(projectAllowed(p, ['o2'])).toBe(false);
    expect(projectAllowed(policy({}), ['o2'])).toBe(true);
  });

  it('terms: a project not allowed or a lease too long is 403 naming the policy', () => {
    expect(() => checkPolicyTerms(policy({ allowed_projects: ['l1'] }), 'node-1', ['o2'], win(0, 1), SEES_ALL)).toThrow(ForbiddenError);
    expect(() => checkPolicyTerms(policy({ allowed_projects: ['l1'] }), 'node-1', ['o2'], win(0, 1), SEES_ALL)).toThrow(
      "The owner's lease policy pol does not allow project o2 to lease ironic_node node-1",
    );
    expect(() => checkPolicyTerms(policy({ max_lease_ms: 5 * 86_400_000 }), 'node-1', ['l1'], win(0, 121), SEES_ALL)).toThrow(
      'allows at most 5 days on ironic_node node-1',
    );
    expect(() => checkPolicyTerms(policy({ max_lease_ms: 5 * 86_400_000 }), 'node-1', ['l1'], win(0, 120), SEES_ALL)).not.toThrow();
  });

  it('terms and gap name the policy only to its owner, a neighbour only to who may see it', () => {
    const stranger: Viewer = {
      seesLease: () => false,
      seesOffer: () => false,
      seesPolicy: (p) => p.project_id === 'o2',
      seesQuota: () => false,
    };
    const p = policy({ allowed_projects: ['l1'], max_lease_ms: H, min_gap_ms: 2 * H });
    expect(() => checkPolicyTerms(p, 'node-1', ['o2'], win(0, 1), stranger)).toThrow(
      /^The owner's lease policy does not allow project o2 to lease ironic_node node-1\.$/,
    );
    expect(() => checkPolicyTerms(policy({ max_lease_ms: H }), 'node-1', ['l1'], win(0, 2), stranger)).toThrow(
      /\. The owner's lease policy allows at most 1 h on ironic_node node-1\.$/,
    );
    expect(() => checkGap(p, 'node-1', win(11, 12), [lease(0, 10)], stranger)).toThrow(
      "Time conflict for ironic_node node-1. The owner's lease policy requires 2 h between leases (to clean the node); it is taken from 1970-01-01T00:00:00 to 1970-01-01T10:00:00, so it is free from 1970-01-01T12:00:00.",
    );
  });

  it('gap: a lease closer than the gap to a neighbour is 409 with the first free instant', () => {
    const p = policy({ min_gap_ms: 2 * H });
    const before = lease(0, 10);
    expect(() => checkGap(p, 'node-1', win(11, 12), [before], SEES_ALL)).toThrow(ConflictError);
    expect(() => checkGap(p, 'node-1', win(11, 12), [before], SEES_ALL)).toThrow(
      "Time conflict for ironic_node node-1. The owner's lease policy pol requires 2 h between leases (to clean the node); Lease l-0-10-created holds it from 1970-01-01T00:00:00 to 1970-01-01T10:00:00, so it is free from 1970-01-01T12:00:00.",
    );
    expect(() => checkGap(p, 'node-1', win(12, 13), [before], SEES_ALL)).not.toThrow();
    expect(() => checkGap(p, 'node-1', win(-5, -1), [before], SEES_ALL)).toThrow(/so it is free until 1969-12-31T22:00:00\.$/);
    expect(() => checkGap(policy({}), 'node-1', win(10, 11), [before], SEES_ALL)).not.toThrow();
  });

  it('formats durations', () => {
    expect(formatDuration(86_400_000)).toBe('1 day');
    expect(formatDuration(36 * H)).toBe('36 h');
    expect(formatDuration(90 * 60_000)).toBe('1.50 h');
    expect(formatDuration(30 * 60_000)).toBe('30 min');
  });
});
