/**
 * Quota arithmetic (pure): how much of the fleet a project holds, and whether new leases fit in
 * its quota. ESI's DevConf.US 2020 talk ("How I Learned to Share my Hardware (with ESI)", what is
 * missing): reservation limits "so one lessee can't lease all the nodes until the end of time";
 * esi-leap has none.
 *
 * A quota has two independent limits, each optional:
 * - `max_nodes`: nodes held **at the same time** — at no instant may the project's leases
 *   (one node each) number more;
 * - `max_node_hours` per `window_hours`: node-hours in **any** rolling window of that length — for
 *   every instant t, the node-time of the project's leases inside [t − W, t) stays within the
 *   limit. Past use counts: a lease that ended yesterday still fills the window that contains it.
 *
 * What a lease uses ({@link usageOf}): a live lease (not expired or deleted) its whole window;
 * an expired lease its window up to when it was removed; a cancelled lease the part it was
 * applied to the node (from its start until the cancel) — nothing if it never started.
 */
import type { Lease, Window } from './model.ts';
import { isLeaseFinal } from './status.ts';

/** A project's quota; null limits are unlimited. */
export interface LeaseQuota {
  readonly project_id: string;
  readonly max_nodes: number | null;
  readonly max_node_hours: number | null;
  /** Length of the rolling window of `max_node_hours`, hours. */
  readonly window_hours: number;
  readonly created_at: number;
  readonly updated_at: number;
}

/** Default rolling window of a node-hour limit: 30 days, in hours. */
export const DEFAULT_QUOTA_WINDOW_HOURS = 720;

const HOUR = 3_600_000;

/** The fields of a lease that decide its quota usage (what the quota check reads). */
export type LeaseUsage = Pick<Lease, 'status' | 'start_time' | 'end_time' | 'fulfill_time' | 'expire_time'>;

/** The interval a lease uses (or will use) for quota purposes, or null when it uses nothing. */
export function usageOf(lease: LeaseUsage): Window | null {
  if (!isLeaseFinal(lease.status)) return lease.start_time < lease.end_time ? { start: lease.start_time, end: lease.end_time } : null;
  if (lease.fulfill_time === null) return null;
  const end = Math.min(lease.end_time, lease.expire_time ?? lease.end_time);
  return lease.start_time < end ? { start: lease.start_time, end } : null;
}

/**
 * The highest number of the windows overlapping at one instant inside `within`, and the first
 * instant where it is reached (half-open windows: one ending as another starts do not overlap).
 * @returns `{ count: 0, at: within.start }` when none of them touches `within`
 */
export function peakConcurrency(windows: readonly Window[], within: Window): { count: number; at: number } {
  const points: Array<[number, number]> = [];
  for (const w of windows) {
    const s = Math.max(w.start, within.start);
    const e = Math.min(w.end, within.end);
    if (s < e) points.push([s, 1], [e, -1]);
  }
  // Ends before starts at the same instant: back-to-back windows do not overlap.
  points.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let count = 0;
  let best = { count: 0, at: within.start };
  for (const [t, d] of points) {
    count += d;
    if (count > best.count) best = { count, at: t };
  }
  return best;
}

/**
 * The highest node-time, ms, that the windows put inside any window [t − length, t) with t in
 * `ends` (the rolling windows that matter), and the t where it is reached.
 *
 * The sum f(t) is piecewise linear: its slope is the number of windows containing t minus the
 * number containing t − length, and changes only at t = start, end, start + length or
 * end + length of a window. One sweep over those breakpoints, sorted, finds the maximum:
 * O(n log n) for n windows.
 */
export function peakRollingUsage(windows: readonly Window[], length: number, ends: Window): { usedMs: number; windowEnd: number } {
  const t0 = ends.start;
  let f = 0;
  let slope = 0;
  const events: Array<[number, number]> = [];
  for (const w of windows) {
    f += Math.max(0, Math.min(w.end, t0) - Math.max(w.start, t0 - length));
    if (w.start <= t0 && t0 < w.end) slope++;
    if (w.start <= t0 - length && t0 - length < w.end) slope--;
    for (const [at, d] of [
      [w.start, 1],
      [w.end, -1],
      [w.start + length, -1],
      [w.end + length, 1],
    ] as const) {
      if (at > t0 && at <= ends.end) events.push([at, d]);
    }
  }
  events.sort((a, b) => a[0] - b[0]);
  let best = { usedMs: f, windowEnd: t0 };
  let t = t0;
  for (const [at, d] of events) {
    f += slope * (at - t);
    t = at;
    if (f > best.usedMs) best = { usedMs: f, windowEnd: at };
    slope += d;
  }
  f += slope * (ends.end - t);
  if (f > best.usedMs) best = { usedMs: f, windowEnd: ends.end };
  return best;
}

/** Why new leases do not fit in a quota. */
export interface QuotaExcess {
  readonly limit: 'max_nodes' | 'max_node_hours';
  /** Human-readable, names the limit, the figure reached and where. */
  readonly message: string;
}

/**
 * Check that adding `added` to the project's `existing` leases stays within `quota`.
 * @param existing the project's leases near the new windows (any status; see {@link usageOf})
 * @param added windows of the leases being created (or the added part of an extension)
 * @param format renders an instant for messages
 * @returns null when it fits, else the first limit exceeded
 */
export function checkQuota(
  quota: LeaseQuota,
  existing: readonly LeaseUsage[],
  added: readonly Window[],
  format: (ms: number) => string,
): QuotaExcess | null {
  if (added.length === 0) return null;
  const span: Window = { start: Math.min(...added.map((w) => w.start)), end: Math.max(...added.map((w) => w.end)) };
  const current = existing.map(usageOf).filter((w): w is Window => w !== null);
  const all = [...current, ...added];
  const project = quota.project_id;
  if (quota.max_nodes !== null) {
    // Only instants inside the new windows can get worse.
    let peak = { count: 0, at: span.start };
    for (const w of added) {
      const p = peakConcurrency(all, w);
      if (p.count > peak.count) peak = p;
    }
    if (peak.count > quota.max_nodes) {
      return {
        limit: 'max_nodes',
        message: `Quota exceeded for project ${project}: these leases would hold ${peak.count} nodes at once at ${format(peak.at)} (limit ${quota.max_nodes}).`,
      };
    }
  }
  if (quota.max_node_hours !== null) {
    const length = quota.window_hours * HOUR;
    // Rolling windows that contain part of a new lease end in (start, end + length].
    const peak = peakRollingUsage(all, length, { start: span.start, end: span.end + length });
    if (peak.usedMs > quota.max_node_hours * HOUR) {
      const hours = Math.ceil((peak.usedMs / HOUR) * 10) / 10;
      return {
        limit: 'max_node_hours',
        message: `Quota exceeded for project ${project}: these leases would use ${hours} node-hours in the ${quota.window_hours}-hour window ending ${format(peak.windowEnd)} (limit ${quota.max_node_hours}).`,
      };
    }
  }
  return null;
}

/** The window of existing leases a quota check must read around the new windows. */
export function quotaHorizon(quota: LeaseQuota, added: readonly Window[]): Window {
  const start = Math.min(...added.map((w) => w.start));
  const end = Math.max(...added.map((w) => w.end));
  const pad = quota.max_node_hours !== null ? quota.window_hours * HOUR : 0;
  return { start: start - pad, end: end + pad };
}

/** Current use of a project against its quota, for `GET /v1/quotas/{project}`. */
export interface QuotaUsage {
  /** Nodes held right now. */
  readonly nodes_now: number;
  /** Most nodes held at once from now on (future leases included). */
  readonly peak_nodes: number;
  /** Node-hours used in the window that ends now. */
  readonly node_hours_in_window: number;
}

/** Usage figures of a project's leases at `now`. */
export function usageAt(leases: readonly LeaseUsage[], windowHours: number, now: number, horizonEnd: number): QuotaUsage {
  const windows = leases.map(usageOf).filter((w): w is Window => w !== null);
  const nodesNow = windows.filter((w) => w.start <= now && now < w.end).length;
  const peakNodes = peakConcurrency(windows, { start: now, end: Math.max(now + 1, horizonEnd) }).count;
  const length = windowHours * HOUR;
  let used = 0;
  for (const w of windows) used += Math.max(0, Math.min(w.end, now) - Math.max(w.start, now - length));
  return { nodes_now: nodesNow, peak_nodes: peakNodes, node_hours_in_window: Math.round((used / HOUR) * 100) / 100 };
}
