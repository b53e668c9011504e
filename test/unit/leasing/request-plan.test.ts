/**
 * Lease request planning (src/domain/leasing/request-plan.ts): free offers, the max-flow
 * assignment of shared nodes to groups (checked against brute force), best-fit preference,
 * failure reports and the earliest window; and the webhook rules (signature, subscription
 * matching, back-off, URL checks) of src/domain/leasing/webhook-rules.ts.
 */
import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../../src/domain/errors.ts';
import { earliestWindow, isFree, planWindow, type PlanOffer } from '../../../src/domain/leasing/request-plan.ts';
import {
  checkEventTypes,
  checkWebhookSecret,
  checkWebhookUrl,
  retryDelay,
  signWebhook,
  subscribes,
  webhookPayload,
} from '../../../src/domain/leasing/webhook-rules.ts';

const w = (start: number, end: number) => ({ start, end });
function offer(node: string, groups: number[], busy: Array<[number, number]> = [], window = w(0, 1000)): PlanOffer {
  return { offerUuid: `o-${node}`, nodeUuid: node, window, busy: busy.map(([s, e]) => w(s, e)), groups };
}

describe('isFree', () => {
  it('needs the window inside the offer and clear of busy intervals (half-open)', () => {
    const o = offer(
      'a',
      [0],
      [
        [10, 20],
        [30, 40],
      ],
      w(0, 100),
    );
    expect(isFree(o, w(0, 10))).toBe(true);
    expect(isFree(o, w(20, 30))).toBe(true);
    expect(isFree(o, w(19, 21))).toBe(false);
    expect(isFree(o, w(5, 35))).toBe(false);
    expect(isFree(o, w(90, 101))).toBe(false);
    expect(
      isFree(
        offer(
          'b',
          [0],
          [
            [0, 50],
            [10, 20],
          ],
        ),
        w(30, 40),
      ),
    ).toBe(false); // overlapping busy list
  });
});

describe('planWindow', () => {
  it('fills every group with distinct nodes', () => {
    const r = planWindow([offer('a', [0]), offer('b', [0]), offer('c', [1])], [2, 1], w(0, 10));
    expect(r).toEqual({
      ok: true,
      assignments: [
        { group: 0, nodeUuid: 'a', offerUuid: 'o-a' },
        { group: 0, nodeUuid: 'b', offerUuid: 'o-b' },
        { group: 1, nodeUuid: 'c', offerUuid: 'o-c' },
      ],
    });
  });

  it('moves a shared node to the group that needs it (a greedy pick would fail)', () => {
    // 'x' fits both groups, 'y' only group 0. Greedy group 0 might take x and leave group 1 empty.
    const r = planWindow([offer('x', [0, 1]), offer('y', [0])], [1, 1], w(0, 10));
    expect(r.ok).toBe(true);
    if (r.ok)
      expect(r.assignments).toEqual([
        { group: 0, nodeUuid: 'y', offerUuid: 'o-y' },
        { group: 1, nodeUuid: 'x', offerUuid: 'o-x' },
      ]);
  });

  it('prefers the tightest fit: the node whose free time after the window is shortest', () => {
    const r = planWindow([offer('long', [0], [[500, 600]]), offer('tight', [0], [[12, 20]])], [1], w(0, 10));
    expect(r.ok && r.assignments[0]!.nodeUuid).toBe('tight');
  });

  it('reports the first group it cannot fill, with matching and free counts', () => {
    const r = planWindow([offer('a', [0], [[0, 50]]), offer('b', [0]), offer('c', [1])], [2, 1], w(0, 10));
    expect(r).toEqual({ ok: false, failedGroup: 0, matching: 2, free: 1 });
    expect(planWindow([offer('a', [0])], [1, 1], w(0, 10))).toEqual({ ok: false, failedGroup: 1, matching: 0, free: 0 });
  });

  it('finds an assignment exactly when one exists (brute force over random bipartite graphs)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.subarray([0, 1, 2], { minLength: 1 }), { minLength: 0, maxLength: 7 }),
        fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 3, maxLength: 3 }),
        (nodeGroups, counts) => {
          const offers = nodeGroups.map((g, i) => offer(`n${i}`, g));
          const r = planWindow(offers, counts, w(0, 10));
          const exists = bruteForce(nodeGroups, counts);
          expect(r.ok).toBe(exists);
          if (r.ok) {
            const nodes = r.assignments.map((a) => a.nodeUuid);
            expect(new Set(nodes).size).toBe(nodes.length);
            for (let g = 0; g < counts.length; g++) expect(r.assignments.filter((a) => a.group === g)).toHaveLength(counts[g]!);
            for (const a of r.assignments) expect(nodeGroups[Number(a.nodeUuid.slice(1))]).toContain(a.group);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

/** True when nodes can be given to groups (each node to one group it fits) meeting all counts. */
function bruteForce(nodeGroups: number[][], counts: number[]): boolean {
  const need = [...counts];
  const go = (i: number): boolean => {
    if (need.every((n) => n === 0)) return true;
    if (i === nodeGroups.length) return false;
    if (go(i + 1)) return true;
    for (const g of nodeGroups[i]!) {
      if (need[g]! > 0) {
        need[g]!--;
        const ok = go(i + 1);
        need[g]!++;
        if (ok) return true;
      }
    }
    return false;
  };
  return go(0);
}

describe('earliestWindow', () => {
  it('is the requested start when it fits', () => {
    expect(earliestWindow([offer('a', [0])], [1], 5, 10)).toEqual(w(5, 15));
  });

  it('is the first instant at which every group fits at once', () => {
    const offers = [offer('a', [0], [[0, 40]]), offer('b', [0], [[0, 60]]), offer('c', [1], [[0, 50]])];
    // group 0 needs two nodes: both free from 60; group 1 free from 50 → 60.
    expect(earliestWindow(offers, [2, 1], 0, 10)).toEqual(w(60, 70));
  });

  it('considers offers that start later, and is null when nothing ever fits', () => {
    expect(earliestWindow([offer('a', [0], [], w(100, 200))], [1], 0, 50)).toEqual(w(100, 150));
    expect(earliestWindow([offer('a', [0], [], w(100, 120))], [1], 0, 50)).toBeNull();
    expect(earliestWindow([offer('a', [0])], [2], 0, 10)).toBeNull();
  });
});

describe('webhook rules', () => {
  it('signs "<timestamp>.<body>" with HMAC-SHA256', () => {
    const expected = createHmac('sha256', 'a-very-secret-key').update('1700000000.{"a":1}').digest('hex');
    expect(signWebhook('a-very-secret-key', 1_700_000_000, '{"a":1}')).toBe(`sha256=${expected}`);
    expect(signWebhook('another-secret-key', 1_700_000_000, '{"a":1}')).not.toBe(`sha256=${expected}`);
  });

  it('subscriptions: empty = all; exact names; prefixes with *', () => {
    expect(subscribes([], 'esi_leap.offer.create')).toBe(true);
    expect(subscribes(['esi_leap.lease.create'], 'esi_leap.lease.create')).toBe(true);
    expect(subscribes(['esi_leap.lease.create'], 'esi_leap.lease.fulfill.end')).toBe(false);
    expect(subscribes(['esi_leap.offer.*'], 'esi_leap.offer.delete')).toBe(true);
    expect(checkEventTypes(['esi_leap.offer.*', 'esi_leap.lease.ending_soon'])).toHaveLength(2);
    expect(() => checkEventTypes(['esi_leap.lease.explode'])).toThrow(InvalidInputError);
    expect(() => checkEventTypes(['nova.*'])).toThrow(/Invalid event type nova\.\*/);
  });

  it('back-off doubles from the base and stops at one hour', () => {
    expect([1, 2, 3, 4].map((n) => retryDelay(n, 1000))).toEqual([1000, 2000, 4000, 8000]);
    expect(retryDelay(40, 1000)).toBe(3_600_000);
  });

  it('URLs: http(s) only, no user information; secrets 16–256 characters', () => {
    expect(checkWebhookUrl('https://hooks.example.com/esi')).toBe('https://hooks.example.com/esi');
    expect(() => checkWebhookUrl('ftp://x/')).toThrow(/scheme must be http or https/);
    expect(() => checkWebhookUrl('https://user:pw@example.com/')).toThrow(/user information/);
    expect(() => checkWebhookUrl('not a url')).toThrow(/not an absolute URL/);
    expect(() => checkWebhookSecret('short')).toThrow(/16 to 256/);
    expect(checkWebhookSecret('s'.repeat(16))).toHaveLength(16);
  });

  it('the payload is the event as GET /v1/events shows it, with the object', () => {
    const body = JSON.parse(
      webhookPayload(
        {
          event_type: 'esi_leap.lease.create',
          event_time: Date.UTC(2030, 0, 1),
          object_type: 'lease',
          object_uuid: 'L',
          resource_type: 'ironic_node',
          resource_uuid: 'N',
          lessee_id: 'l1',
          owner_id: 'o1',
          subject: { uuid: 'L', status: 'created' },
        },
        42,
      ),
    );
    expect(body).toEqual({
      event: {
        id: 42,
        event_type: 'esi_leap.lease.create',
        event_time: '2030-01-01T00:00:00',
        object_type: 'lease',
        object_uuid: 'L',
        resource_type: 'ironic_node',
        resource_uuid: 'N',
        lessee_id: 'l1',
        owner_id: 'o1',
      },
      object: { uuid: 'L', status: 'created' },
    });
  });
});
