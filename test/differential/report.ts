/**
 * The report of a differential run: each difference classified as accepted (the first entry of
 * accepted.ts that matches it) or unexpected, counted by resource, and the accepted entries that
 * matched nothing (stale: the difference is gone, the entry should go too).
 */
import { ACCEPTED, acceptedFor, type AcceptedDifference } from './accepted.ts';
import type { Difference } from './compare.ts';
import type { RunResult } from './runner.ts';

/** What {@link report} returns. */
export interface Report {
  /**
   * One line: requests compared, endpoint × microversion combinations, accepted and unexpected
   * differences, and by resource `name requests: accepted/unexpected`.
   */
  readonly summary: string;
  /** Distinct endpoint × microversion combinations compared. */
  readonly combinations: number;
  readonly unexpected: Difference[];
  /** Ids of accepted entries that matched no difference of this run. */
  readonly stale: string[];
}

/**
 * Classify and count the differences of a run against `entries` (default: accepted.ts).
 * @param endpointOf names the endpoint a request reaches (`GET /v1/nodes/:ident`), for counting
 *   endpoint × microversion combinations
 */
export function report(
  run: RunResult,
  endpointOf: (method: string, path: string) => string,
  entries: readonly AcceptedDifference[] = ACCEPTED,
): Report {
  const byResource = new Map<string, { requests: number; accepted: number; unexpected: number }>();
  for (const r of run.requests) {
    const counts = byResource.get(r.resource) ?? { requests: 0, accepted: 0, unexpected: 0 };
    counts.requests++;
    byResource.set(r.resource, counts);
  }
  const combinations = new Set(run.requests.map((r) => `${endpointOf(r.method, r.path)} @${r.version}`));
  const unexpected: Difference[] = [];
  const used = new Set<string>();
  for (const d of run.differences) {
    const entry = acceptedFor(d, entries);
    const counts = byResource.get(d.resource) ?? { requests: 0, accepted: 0, unexpected: 0 };
    if (entry) {
      counts.accepted++;
      used.add(entry.id);
    } else {
      counts.unexpected++;
      unexpected.push(d);
    }
    byResource.set(d.resource, counts);
  }
  const resources = [...byResource.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([r, c]) => `${r} ${c.requests}: ${c.accepted}/${c.unexpected}`)
    .join(', ');
  const summary =
    `differential esi vs Ironic 21.4: ${run.requests.length} requests compared, ${combinations.size} endpoint \u00d7 microversion ` +
    `combinations, ${run.differences.length - unexpected.length} accepted and ${unexpected.length} unexpected differences ` +
    `(by resource, requests: accepted/unexpected differences: ${resources || 'none'})`;
  const stale = entries.filter((e) => !used.has(e.id)).map((e) => e.id);
  return { summary, combinations: combinations.size, unexpected, stale };
}
