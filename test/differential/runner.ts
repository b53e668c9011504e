/**
 * The differential runner: sends each step of a request sequence to esi and to the real Ironic
 * (both at once), binds the objects each side created to placeholder names, and collects the
 * differences of each pair of answers (compare.ts).
 *
 * A sequence is a small declarative table (test/differential/table-*.ts):
 * - a request step: method, path with `{placeholders}` (bound to what each side created, e.g.
 *   `{node}` is the uuid of the node this sequence created on that side), an optional JSON body
 *   (placeholders in its strings are bound too) or a raw body, the microversion sent in
 *   `X-OpenStack-Ironic-API-Version` (null: no header), and `bind` to name values of the
 *   response (`{ node: 'uuid' }`); `{absent}` is a UUID that names nothing on either side;
 * - a wait step: poll `GET path` on both sides until a field has a value and no conductor holds
 *   the object (`reservation` null) — asynchronous state changes: power, provision; a side that
 *   does not get there within 30 s is a difference.
 */
import { ABSENT_UUID } from './dsl.ts';
import { diffAnswers, type Answer, type DiffOptions, type Difference, type Normaliser } from './compare.ts';

/** HTTP methods the table uses. */
export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** One request sent to both sides. */
export interface RequestStep extends DiffOptions {
  readonly method: Method;
  /** Path below the API base, starting `/v1` (or `/` for the root), with `{placeholders}`. */
  readonly path: string;
  /** Microversion (`1.82`, `latest`, `1.99`), or null to send no version header. */
  readonly version: string | null;
  /** A JSON body (strings may hold placeholders). */
  readonly body?: unknown;
  /** A body sent as-is with `Content-Type: application/json` (malformed JSON tests). */
  readonly raw?: string;
  /** Placeholders to bind from the response body: `{ name: 'field' }`. */
  readonly bind?: Readonly<Record<string, string>>;
  /** Why this step is here, when it is not obvious (e.g. the Ironic rule it checks). */
  readonly note?: string;
}

/** Poll both sides until `GET path` shows `field` = `value`. */
export interface WaitStep {
  readonly wait: string;
  readonly field: string;
  readonly value: string | null;
  readonly version: string;
}

/** A step of a sequence. */
export type Step = RequestStep | WaitStep;

/** A sequence of steps sharing placeholders; sequences run one after the other. */
export interface Sequence {
  readonly name: string;
  readonly steps: readonly Step[];
}

/** One server under test. */
export interface Side {
  readonly name: 'ironic' | 'esi';
  /** The API base (`http://127.0.0.1:6385`, `http://127.0.0.1:8585/baremetal`); paths append to it. */
  readonly base: string;
  /** Headers sent on every request (esi: the admin token). */
  readonly headers: Readonly<Record<string, string>>;
}

/** One request a run sent to both sides. */
export interface SentRequest {
  readonly method: Method;
  /** The path as the table writes it, without its query (`/v1/nodes/{node}/traits`). */
  readonly path: string;
  /** The microversion sent, `none` without the header. */
  readonly version: string;
  readonly resource: string;
}

/** What a run compared. */
export interface RunResult {
  readonly differences: Difference[];
  /** The request steps sent (to each side), in order. */
  readonly requests: readonly SentRequest[];
}

const UUID_RE = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const WAIT_MS = 30_000;

/** Placeholders with the same value on both sides. */
const CONSTANTS: ReadonlyMap<string, string> = new Map([['absent', ABSENT_UUID]]);

/** The id of a request step: `<sequence>: <METHOD> <path> @<version>`, then ` (<note>)` when it has one. */
export function stepId(sequence: string, s: RequestStep): string {
  return `${sequence}: ${s.method} ${s.path} @${s.version ?? 'none'}${s.note !== undefined ? ` (${s.note})` : ''}`;
}

/**
 * The resource a path belongs to: `/v1/nodes/{node}/traits/X` → `nodes/traits`,
 * `/v1/ports?x` → `ports`, `/` and `/v1` → `root`.
 */
export function resourceOf(path: string): string {
  const parts = path
    .split('?', 1)[0]!
    .split('/')
    .filter((p) => p !== '' && p !== 'v1');
  if (parts.length === 0) return 'root';
  const first = parts[0]!.replace(/\.json$/, '');
  if (first === 'nodes' && parts.length >= 3 && !['detail', 'validate'].includes(parts[1]!)) {
    const sub = parts[2] === 'states' && parts[3] !== undefined ? `states/${parts[3]}` : parts[2]!;
    return `nodes/${sub}`;
  }
  if (first === 'volume' && parts[1] !== undefined) return `volume/${parts[1]}`;
  return first;
}

/** Placeholders of one side: name → value (mostly UUIDs). */
type Bindings = Map<string, string>;

function bindString(s: string, b: Bindings): string {
  return s.replace(/\{([a-z_0-9]+)\}/g, (m, name: string) => b.get(name) ?? m);
}

function bindDeep(v: unknown, b: Bindings): unknown {
  if (typeof v === 'string') return bindString(v, b);
  if (Array.isArray(v)) return v.map((e) => bindDeep(e, b));
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, e]) => [k, bindDeep(e, b)]));
  return v;
}

/** The normaliser of one side: its base URL → `<base>`, its bound UUIDs → `{name}`, others → `<uuid>`. */
function normaliser(side: Side, b: Bindings): Normaliser {
  const reverse = new Map<string, string>();
  for (const [name, value] of b) if (new RegExp(`^${UUID_RE.source}$`, 'i').test(value)) reverse.set(value.toLowerCase(), `{${name}}`);
  return (s) =>
    s
      .split(side.base)
      .join('<base>')
      .replace(UUID_RE, (u) => reverse.get(u.toLowerCase()) ?? '<uuid>');
}

async function send(side: Side, b: Bindings, step: RequestStep): Promise<Answer> {
  const headers: Record<string, string> = { accept: 'application/json', ...side.headers };
  if (step.version !== null) headers['x-openstack-ironic-api-version'] = step.version;
  let payload: string | undefined;
  if (step.raw !== undefined) payload = step.raw;
  else if (step.body !== undefined) payload = JSON.stringify(bindDeep(step.body, b));
  if (payload !== undefined) headers['content-type'] = 'application/json';
  const url = side.base + bindString(step.path, b);
  const res = await fetch(url, { method: step.method, headers, ...(payload !== undefined ? { body: payload } : {}) });
  const text = await res.text();
  let body: unknown = null;
  if (text !== '') {
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
  }
  const h: Record<string, string> = {};
  res.headers.forEach((value, name) => (h[name.toLowerCase()] = value));
  return { status: res.status, headers: h, body };
}

async function waitSide(side: Side, b: Bindings, w: WaitStep): Promise<string | null> {
  const deadline = Date.now() + WAIT_MS;
  let last: unknown;
  for (;;) {
    const a = await send(side, b, { method: 'GET', path: w.wait, version: w.version });
    const body = a.body as Record<string, unknown> | null;
    last = a.status === 200 ? body?.[w.field] : `HTTP ${a.status}`;
    // A node has settled when no conductor holds it any more (Ironic releases its lock after saving the state).
    const settled = a.status === 200 && (body?.reservation === undefined || body.reservation === null);
    if (a.status === 200 && last === w.value && settled) return null;
    if (Date.now() > deadline) return `${w.field} still ${JSON.stringify(last)} after ${WAIT_MS / 1000} s`;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Run sequences against both sides, in order (each request to both at once).
 * @returns every difference, and the requests sent
 */
export async function runSequences(sequences: readonly Sequence[], ironic: Side, esi: Side): Promise<RunResult> {
  const differences: Difference[] = [];
  const requests: SentRequest[] = [];
  for (const seq of sequences) {
    const bi: Bindings = new Map(CONSTANTS);
    const be: Bindings = new Map(CONSTANTS);
    for (const step of seq.steps) {
      if ('wait' in step) {
        const [wi, we] = await Promise.all([waitSide(ironic, bi, step), waitSide(esi, be, step)]);
        if (wi !== null || we !== null) {
          const d = { step: `${seq.name}: wait ${step.wait} ${step.field}=${step.value}`, resource: resourceOf(step.wait), where: 'wait' };
          differences.push({ ...d, ironic: wi ?? 'reached', esi: we ?? 'reached' });
        }
        continue;
      }
      const id = stepId(seq.name, step);
      const resource = resourceOf(step.path);
      requests.push({ method: step.method, path: step.path.split('?', 1)[0]!, version: step.version ?? 'none', resource });
      const [ai, ae] = await Promise.all([send(ironic, bi, step), send(esi, be, step)]);
      for (const [name, field] of Object.entries(step.bind ?? {})) {
        const vi = (ai.body as Record<string, unknown> | null)?.[field];
        const ve = (ae.body as Record<string, unknown> | null)?.[field];
        if (typeof vi === 'string') bi.set(name, vi);
        if (typeof ve === 'string') be.set(name, ve);
      }
      for (const f of diffAnswers(ai, ae, normaliser(ironic, bi), normaliser(esi, be), step)) {
        differences.push({ step: id, resource, ...f, ...(step.note !== undefined ? { note: step.note } : {}) });
      }
    }
  }
  return { differences, requests };
}
