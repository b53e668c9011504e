/**
 * Lease traces for the `lease-replay` benchmark: a synthetic generator shaped like Chameleon
 * Cloud's published lease log, and a CSV reader/writer in the log's columns, so that a real trace
 * replays with the same command (`--trace file.csv`).
 *
 * Columns (one lease per row; times UTC `YYYY-MM-DD HH:MM:SS`, ISO-8601 also read):
 * `lease_id, project_id, created_at, deleted_at, start_on, end_on, node_cnt, reserve_conditions,
 * node_type` — `deleted_at` empty when the lease ran to its end; `reserve_conditions` a Blazar
 * `resource_properties` JSON list (or empty); `node_type` a host type (or empty).
 *
 * The generator's shape (targets from the issue; the rest are stated assumptions):
 * - ~44,000 leases over 5 years, Poisson arrivals (no daily or weekly cycle);
 * - 22 node types over 550 hosts, host counts ∝ 1/k^1.3 (largest type ≈ 205 hosts); a request's
 *   type is drawn ∝ host count;
 * - lease length: p50 1 h, p90 144 h, p99 432 h, at most 504 h (21 days) — log-linear between
 *   the quantiles (p0 = 15 min);
 * - 5 % advance reservations, lead time p50 27 h (p0 1 h, p90 168 h, max 720 h); the rest start
 *   at creation;
 * - node count: p50 1, p90 2, p99 18, max 182 (60 % one node, 30 % two, 9.2 % 3–18, 0.8 % 19–182,
 *   log-uniform within a band, one request of exactly 182); a request larger than its type's
 *   host count goes to the largest type;
 * - 95 % deleted before their end, at a uniform point of their window; the rest run to the end;
 * - 300 projects, request share ∝ 1/k;
 * - `reserve_conditions` = `["==", "$node_type", <type>]` (as Chameleon's Blazar requests carry).
 */
import fs from 'node:fs';
import { rng } from './lib/random.ts';

/** One lease of a trace. */
export interface TraceRow {
  readonly leaseId: string;
  readonly projectId: string;
  readonly createdAt: number;
  /** When the lease was deleted, or null when it ran to its end. */
  readonly deletedAt: number | null;
  readonly startOn: number;
  readonly endOn: number;
  readonly nodeCount: number;
  /** Blazar `resource_properties` JSON text, or ''. */
  readonly reserveConditions: string;
  /** Host type, or ''. */
  readonly nodeType: string;
}

/** The hosts a trace runs on: count per node type. */
export type HostInventory = ReadonlyMap<string, number>;

/** A generated trace and the hosts it was generated for. */
export interface Trace {
  readonly rows: TraceRow[];
  readonly hosts: HostInventory;
}

const H = 3_600_000;
const COLUMNS = [
  'lease_id',
  'project_id',
  'created_at',
  'deleted_at',
  'start_on',
  'end_on',
  'node_cnt',
  'reserve_conditions',
  'node_type',
] as const;
const NODE_TYPES = [
  'compute_haswell',
  'compute_skylake',
  'compute_cascadelake',
  'compute_cascadelake_r',
  'gpu_rtx_6000',
  'compute_icelake',
  'storage',
  'gpu_p100',
  'compute_zen3',
  'gpu_v100',
  'compute_haswell_ib',
  'storage_nvme',
  'gpu_a100_pcie',
  'compute_skylake_ib',
  'gpu_k80',
  'gpu_m40',
  'fpga',
  'arm64',
  'lowpower_xeon',
  'storage_hierarchy',
  'gpu_mi100',
  'atom',
];

/** Sample a quantile function given as knots `[p, value]` (p ascending from 0 to 1), log-linear between knots. */
export function fromQuantiles(knots: ReadonlyArray<readonly [number, number]>, u: number): number {
  for (let i = 1; i < knots.length; i++) {
    const [p0, v0] = knots[i - 1]!;
    const [p1, v1] = knots[i]!;
    if (u <= p1) return Math.exp(Math.log(v0) + ((u - p0) / (p1 - p0)) * (Math.log(v1) - Math.log(v0)));
  }
  return knots[knots.length - 1]![1];
}

/** Host counts per type: ∝ 1/k^s, summing to `hosts`, each at least 2. */
export function hostInventory(hosts: number, types = NODE_TYPES.length, s = 1.3): Map<string, number> {
  const weights = Array.from({ length: types }, (_, k) => 1 / (k + 1) ** s);
  const total = weights.reduce((a, b) => a + b, 0);
  const counts = weights.map((w) => Math.max(2, Math.floor((w / total) * hosts)));
  let diff = hosts - counts.reduce((a, b) => a + b, 0);
  for (let k = 0; diff !== 0; k = (k + 1) % types) {
    if (diff > 0) {
      counts[k]!++;
      diff--;
    } else if (counts[k]! > 2) {
      counts[k]!--;
      diff++;
    }
  }
  return new Map(counts.map((c, k) => [NODE_TYPES[k] ?? `type_${k}`, c]));
}

/**
 * Generate a synthetic trace (see the module documentation for its shape).
 * @param o.leases expected number of leases (default 44,000)
 * @param o.years span of the trace (default 5)
 * @param o.hosts number of hosts (default 550)
 * @param o.start first instant, epoch ms (default 2030-01-01)
 */
export function generateTrace(o: { leases?: number; years?: number; hosts?: number; seed?: number; start?: number } = {}): Trace {
  const leases = o.leases ?? 44_000;
  const span = (o.years ?? 5) * 365 * 24 * H;
  const start = o.start ?? Date.UTC(2030, 0, 1);
  const random = rng(o.seed ?? 2026);
  const hosts = hostInventory(o.hosts ?? 550);
  const types = [...hosts.entries()];
  const totalHosts = types.reduce((a, [, c]) => a + c, 0);
  const largest = types[0]![0];
  const pickType = (): string => {
    let u = random() * totalHosts;
    for (const [t, c] of types) if ((u -= c) < 0) return t;
    return largest;
  };
  const projectWeights = Array.from({ length: 300 }, (_, k) => 1 / (k + 1));
  const projectTotal = projectWeights.reduce((a, b) => a + b, 0);
  const pickProject = (): string => {
    let u = random() * projectTotal;
    for (let k = 0; k < projectWeights.length; k++) if ((u -= projectWeights[k]!) < 0) return `p${k + 1}`;
    return 'p1';
  };
  const rows: TraceRow[] = [];
  const meanGap = span / leases;
  let t = start;
  let forcedMax = false;
  for (let i = 0; ; i++) {
    t += -Math.log(1 - random()) * meanGap;
    if (t >= start + span) break;
    const createdAt = Math.round(t / 1000) * 1000;
    const length =
      Math.round(
        (fromQuantiles(
          [
            [0, 0.25],
            [0.5, 1],
            [0.9, 144],
            [0.99, 432],
            [1, 504],
          ],
          random(),
        ) *
          H) /
          60_000,
      ) * 60_000;
    const advance = random() < 0.05;
    const lead = advance
      ? Math.round(
          (fromQuantiles(
            [
              [0, 1],
              [0.5, 27],
              [0.9, 168],
              [1, 720],
            ],
            random(),
          ) *
            H) /
            60_000,
        ) * 60_000
      : 0;
    const u = random();
    let count =
      u < 0.6
        ? 1
        : u < 0.9
          ? 2
          : u < 0.992
            ? Math.round(
                fromQuantiles(
                  [
                    [0, 3],
                    [1, 18],
                  ],
                  random(),
                ),
              )
            : Math.round(
                fromQuantiles(
                  [
                    [0, 19],
                    [1, 182],
                  ],
                  random(),
                ),
              );
    if (!forcedMax && i > leases / 2) {
      count = 182;
      forcedMax = true;
    }
    let type = pickType();
    if (count > hosts.get(type)!) type = largest;
    count = Math.min(count, hosts.get(type)!);
    const startOn = createdAt + lead;
    const endOn = startOn + length;
    const deleted = random() < 0.95;
    rows.push({
      leaseId: `lease-${i + 1}`,
      projectId: pickProject(),
      createdAt,
      deletedAt: deleted ? Math.round((startOn + (0.05 + 0.9 * random()) * length) / 1000) * 1000 : null,
      startOn,
      endOn,
      nodeCount: count,
      reserveConditions: JSON.stringify(['==', '$node_type', type]),
      nodeType: type,
    });
  }
  return { rows, hosts };
}

function fmt(ms: number | null): string {
  return ms === null ? '' : new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
}

function csvCell(v: string): string {
  return /[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
}

/** Write a trace as CSV with the log's columns. */
export function writeTraceCsv(file: string, rows: readonly TraceRow[]): void {
  const lines = [COLUMNS.join(',')];
  for (const r of rows) {
    lines.push(
      [
        r.leaseId,
        r.projectId,
        fmt(r.createdAt),
        fmt(r.deletedAt),
        fmt(r.startOn),
        fmt(r.endOn),
        String(r.nodeCount),
        r.reserveConditions,
        r.nodeType,
      ]
        .map(csvCell)
        .join(','),
    );
  }
  fs.writeFileSync(file, `${lines.join('\n')}\n`);
}

/** Split one CSV line (RFC 4180 quoting). */
function splitCsv(line: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') {
        cur += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cur += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      out.push(cur);
      cur = '';
    } else cur += c;
  }
  out.push(cur);
  return out;
}

function parseTime(text: string, row: number, column: string): number | null {
  const v = text.trim();
  if (v === '' || v.toLowerCase() === 'null' || v.toLowerCase() === 'none') return null;
  const ms = Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(v) ? v.replace(' ', 'T') : `${v.replace(' ', 'T')}Z`);
  if (Number.isNaN(ms)) throw new Error(`trace row ${row}: ${column} "${v}" is not a time`);
  return ms;
}

/**
 * Read a trace CSV with a header naming (at least) the log's columns, in any order.
 * @throws Error naming the row and column of a bad value, or a missing column
 */
export function readTraceCsv(file: string): TraceRow[] {
  const lines = fs
    .readFileSync(file, 'utf8')
    .split(/\r?\n/)
    .filter((l) => l.trim() !== '');
  const header = splitCsv(lines[0] ?? '').map((h) => h.trim().toLowerCase());
  const col = (name: string): number => {
    const i = header.indexOf(name);
    if (i < 0) throw new Error(`trace ${file}: no column ${name} (have ${header.join(', ')})`);
    return i;
  };
  const idx = Object.fromEntries(COLUMNS.map((c) => [c, col(c)])) as Record<(typeof COLUMNS)[number], number>;
  const rows: TraceRow[] = [];
  for (let n = 1; n < lines.length; n++) {
    const cells = splitCsv(lines[n]!);
    const get = (c: (typeof COLUMNS)[number]) => cells[idx[c]] ?? '';
    const createdAt = parseTime(get('created_at'), n, 'created_at');
    const startOn = parseTime(get('start_on'), n, 'start_on');
    const endOn = parseTime(get('end_on'), n, 'end_on');
    if (createdAt === null || startOn === null || endOn === null)
      throw new Error(`trace row ${n}: created_at, start_on and end_on are required`);
    const nodeCount = Number(get('node_cnt'));
    if (!Number.isInteger(nodeCount) || nodeCount < 1)
      throw new Error(`trace row ${n}: node_cnt "${get('node_cnt')}" is not a positive integer`);
    rows.push({
      leaseId: get('lease_id'),
      projectId: get('project_id'),
      createdAt,
      deletedAt: parseTime(get('deleted_at'), n, 'deleted_at'),
      startOn,
      endOn,
      nodeCount,
      reserveConditions: get('reserve_conditions').trim(),
      nodeType: get('node_type').trim(),
    });
  }
  return rows.sort((a, b) => a.createdAt - b.createdAt);
}

/**
 * Hosts for a real trace (which does not list them): every node type seen gets hosts in proportion
 * to its share of the node-hours asked for, at least its largest request; rows without a type
 * count toward the largest type.
 */
export function inventoryFor(rows: readonly TraceRow[], hosts: number): Map<string, number> {
  const demand = new Map<string, number>();
  const biggest = new Map<string, number>();
  for (const r of rows) {
    const t = r.nodeType || 'default';
    demand.set(t, (demand.get(t) ?? 0) + r.nodeCount * (r.endOn - r.startOn));
    biggest.set(t, Math.max(biggest.get(t) ?? 0, r.nodeCount));
  }
  const total = [...demand.values()].reduce((a, b) => a + b, 0) || 1;
  return new Map([...demand.entries()].map(([t, d]) => [t, Math.max(biggest.get(t)!, Math.round((d / total) * hosts))]));
}

/** Quantiles of a list of numbers (nearest rank), for the report. */
export function quantiles(values: readonly number[], ps: readonly number[]): number[] {
  const s = [...values].sort((a, b) => a - b);
  return ps.map((p) => s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))]!);
}
