/**
 * Comparison of one request's two answers, esi's and the real Ironic's: what the differential
 * tests call a difference.
 *
 * Compared (Ironic 21.4 is the reference; esi is wrong where they differ):
 * - the status code;
 * - the headers `X-OpenStack-Ironic-API-Version`, `-Minimum-Version`, `-Maximum-Version`, `Vary`
 *   (presence and value) and `Location` (value, normalised);
 * - the body, recursively: keys (missing in esi / extra in esi), value types (string, number,
 *   boolean, null, object, array), array lengths, and the values of a few keys whose value is the
 *   behaviour (states, `faultcode`, `rel`, … see {@link VALUE_KEYS}) plus those a step names;
 * - an Ironic error body `{"error_message": "<JSON>"}` is compared with its inner JSON decoded,
 *   so its `faultcode`, `faultstring` and `debuginfo` are compared like any other keys.
 *
 * When one side succeeds and the other fails, only the status (and `Location`) is compared.
 *
 * Values that must differ are normalised first: the API base URL (host, port and esi's
 * `/baremetal` prefix) becomes `<base>`, a UUID the run created becomes its placeholder name
 * (`{node}`), any other UUID `<uuid>`. Timestamps, names of hosts and messages are compared by
 * type only.
 */

/** One difference between the two answers to one request. */
export interface Difference {
  /** The step's id (`<sequence>: <METHOD> <path> @<version> (<note>)`). */
  readonly step: string;
  /** The resource it belongs to (`nodes`, `nodes/traits`, `ports`, …), for the summary. */
  readonly resource: string;
  /** What differs, e.g. `status`, `header x-openstack-ironic-api-version`, `body.links[].rel`. */
  readonly where: string;
  /** Ironic's side, in words. */
  readonly ironic: string;
  /** esi's side, in words. */
  readonly esi: string;
  /** The step's note (why it is in the table), when it has one. */
  readonly note?: string;
}

/** One side's answer to a request, as the runner read it. */
export interface Answer {
  readonly status: number;
  /** Header names lower-cased. */
  readonly headers: Readonly<Record<string, string>>;
  /** Parsed JSON, the raw text when not JSON, null when empty. */
  readonly body: unknown;
}

/** Rewrites a side's strings so that equal meanings compare equal (base URL, known UUIDs). */
export type Normaliser = (s: string) => string;

/** Headers compared by value (lower-case). */
export const VERSION_HEADERS = [
  'x-openstack-ironic-api-version',
  'x-openstack-ironic-api-minimum-version',
  'x-openstack-ironic-api-maximum-version',
  'vary',
] as const;

/**
 * Keys whose values are compared wherever they occur: they carry behaviour (a state, a fault
 * class, a link relation), not data that must differ between two services.
 */
export const VALUE_KEYS: ReadonlySet<string> = new Set([
  'faultcode',
  'href',
  'next',
  'debuginfo',
  'rel',
  'provision_state',
  'target_provision_state',
  'power_state',
  'target_power_state',
  'maintenance',
  'console_enabled',
  'protected',
  'retired',
  'driver',
  'resource_class',
  'address',
  'name',
  'traits',
  'vifs',
  'pxe_enabled',
  'is_smartnic',
  'physical_network',
  'state',
  'severity',
  'id',
  'status',
  'min_version',
  'version',
  'type',
  'base',
]);

/**
 * Objects compared by type only, not by their keys: each conductor's own bookkeeping
 * (`driver_internal_info`: Ironic's `last_power_state_change`, esi's `esi_requested_by`, …).
 */
export const OPAQUE_KEYS: ReadonlySet<string> = new Set(['driver_internal_info']);

/** The JSON type of a value, in words. */
export function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

/** The body with an Ironic `error_message` string decoded into its object (when it is JSON). */
export function decodeErrorBody(body: unknown): unknown {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return body;
  const msg = (body as Record<string, unknown>).error_message;
  if (typeof msg !== 'string') return body;
  try {
    return { ...body, error_message: JSON.parse(msg) as unknown };
  } catch {
    return body;
  }
}

/** Options of {@link diffBodies}. */
export interface DiffOptions {
  /** Paths (`links[].href`) whose values are compared too, beyond {@link VALUE_KEYS}. */
  readonly values?: readonly string[];
}

interface Found {
  readonly where: string;
  readonly ironic: string;
  readonly esi: string;
}

function show(v: unknown, norm: Normaliser): string {
  const s = typeof v === 'string' ? JSON.stringify(norm(v)) : JSON.stringify(v);
  return s.length > 120 ? `${s.slice(0, 117)}...` : s;
}

/**
 * The differences between two JSON values (Ironic's `a`, esi's `b`), each normalised by its own
 * side's normaliser. Element `i` of an array is compared with element `i`; paths name arrays
 * `key[]`, so the same difference in every element counts once.
 */
export function diffBodies(a: unknown, b: unknown, normA: Normaliser, normB: Normaliser, options: DiffOptions = {}): Found[] {
  const out = new Map<string, Found>();
  const values = new Set(options.values ?? []);
  const add = (f: Found): void => {
    const key = `${f.where}|${f.ironic}|${f.esi}`;
    if (!out.has(key)) out.set(key, f);
  };
  const walk = (x: unknown, y: unknown, path: string, key: string): void => {
    const tx = typeOf(x);
    const ty = typeOf(y);
    const where = path === '' ? 'body' : `body.${path}`;
    if (tx !== ty) {
      add({ where, ironic: `${tx} ${show(x, normA)}`, esi: `${ty} ${show(y, normB)}` });
      return;
    }
    if (tx === 'array') {
      const xa = x as unknown[];
      const ya = y as unknown[];
      if (xa.length !== ya.length) add({ where: `${where} length`, ironic: String(xa.length), esi: String(ya.length) });
      const primitive = [...xa, ...ya].every((e) => e === null || typeof e !== 'object');
      if (primitive && (VALUE_KEYS.has(key) || values.has(path))) {
        // a list of values compared as a whole (`traits`, `vifs`)
        const sx = xa.map((e) => show(e, normA)).join(',');
        const sy = ya.map((e) => show(e, normB)).join(',');
        if (sx !== sy) add({ where, ironic: `[${sx}]`, esi: `[${sy}]` });
        return;
      }
      for (let i = 0; i < Math.min(xa.length, ya.length); i++) walk(xa[i], ya[i], `${path}[]`, key);
      return;
    }
    if (tx === 'object' && OPAQUE_KEYS.has(key)) return;
    if (tx === 'object') {
      const xo = x as Record<string, unknown>;
      const yo = y as Record<string, unknown>;
      const sub = (k: string): string => (path === '' ? k : `${path}.${k}`);
      for (const k of Object.keys(xo)) {
        if (!Object.hasOwn(yo, k)) {
          add({ where: `body.${sub(k)}`, ironic: `present (${typeOf(xo[k])})`, esi: 'missing' });
        } else walk(xo[k], yo[k], sub(k), k);
      }
      for (const k of Object.keys(yo)) {
        if (!Object.hasOwn(xo, k)) add({ where: `body.${sub(k)}`, ironic: 'missing', esi: `present (${typeOf(yo[k])})` });
      }
      return;
    }
    if (VALUE_KEYS.has(key) || values.has(path)) {
      const sx = show(x, normA);
      const sy = show(y, normB);
      if (sx !== sy) add({ where, ironic: sx, esi: sy });
    }
  };
  walk(a, b, '', '');
  return [...out.values()];
}

/**
 * True for an error that Ironic raises outside its API layer (an unknown route, a method a
 * resource lacks, the version negotiation): webob's `{"code", "title", "description"}` inside
 * `error_message` instead of `{"faultcode", "faultstring", "debuginfo"}`.
 */
export function isWebobError(body: unknown): boolean {
  const inner = (decodeErrorBody(body) as { error_message?: unknown } | null)?.error_message;
  return inner !== null && typeof inner === 'object' && 'title' in inner && 'description' in inner && !('faultcode' in inner);
}

/**
 * Differences of status, compared headers and body of two answers. When Ironic's answer is a
 * webob error ({@link isWebobError}), the version headers it leaves out and, when esi answers in
 * the API format instead, the error format count as one difference, `error format`.
 */
export function diffAnswers(ironic: Answer, esi: Answer, normI: Normaliser, normE: Normaliser, options: DiffOptions = {}): Found[] {
  const found: Found[] = [];
  if (ironic.status !== esi.status) found.push({ where: 'status', ironic: String(ironic.status), esi: String(esi.status) });
  const webob = isWebobError(ironic.body) && esi.status >= 400;
  const esiWebob = isWebobError(esi.body);
  const absent: string[] = webob
    ? VERSION_HEADERS.filter((h) => ironic.headers[h] === undefined && esi.headers[h] !== undefined && h !== 'vary')
    : [];
  if (webob) {
    const headers = absent.length > 0 ? `, no ${absent.join(', ')}` : '';
    const esiFormat = esiWebob ? 'webob {code,title,description}' : 'API format {faultcode,faultstring,debuginfo}';
    if (!esiWebob || absent.length > 0)
      found.push({
        where: 'error format',
        ironic: `webob {code,title,description}${headers}`,
        esi: `${esiFormat}${absent.length > 0 ? ', version headers' : ''}`,
      });
  }
  for (const h of [...VERSION_HEADERS, 'location']) {
    const x = ironic.headers[h];
    const y = esi.headers[h];
    if (absent.includes(h)) continue;
    const sx = x === undefined ? '(absent)' : normI(x);
    const sy = y === undefined ? '(absent)' : normE(y);
    if (h === 'vary') {
      // compared as a set of header names, case-insensitively
      const set = (s: string): string => (s === '(absent)' ? s : [...new Set(s.toLowerCase().split(/\s*,\s*/))].sort().join(', '));
      if (set(sx) !== set(sy)) found.push({ where: `header ${h}`, ironic: sx, esi: sy });
    } else if (sx !== sy) found.push({ where: `header ${h}`, ironic: sx, esi: sy });
  }
  if (webob && !esiWebob) return found;
  // One side succeeded and the other failed: the bodies cannot have the same shape, the status says it all.
  if (ironic.status !== esi.status && ironic.status >= 400 !== esi.status >= 400) return found;
  found.push(...diffBodies(decodeErrorBody(ironic.body), decodeErrorBody(esi.body), normI, normE, options));
  return found;
}
