/**
 * The policy matrix as data: the row model of the files in `matrix/`, their loader and
 * validator, and the expansion of a row's compact expectations into one expected HTTP status per
 * persona.
 *
 * Shared by the test runner (`matrix.test.ts`) and the generator of `docs/policy.md`
 * (`doc.ts`), so that what is tested and what is documented are one table.
 *
 * File shape (`matrix/README.md`): `{service, title, reasons?, rows}`; row shape:
 * `{id, method, path, body?, raw_body?, headers?, reread?, fresh?, isolation?,
 *   expect: {default?, unauth?, <persona>?}, note, known_failure?}`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';

/** The twelve callers of the matrix, in column order. */
export const PERSONAS = ['admin', 'o1', 'o2', 'l1', 'l2', 'l3', 'x', 'anon', 'forged', 'revoked', 'expired', 'disabled'] as const;
/** One persona key. */
export type PersonaKey = (typeof PERSONAS)[number];
/** The callers without a usable token; `expect.unauth` (default 401) applies to them. */
export const UNAUTH: readonly PersonaKey[] = ['anon', 'forged', 'revoked', 'expired', 'disabled'];
/** The callers with a valid token; `expect.default` applies to those a row does not name. */
export const AUTHENTICATED: readonly PersonaKey[] = PERSONAS.filter((p) => !UNAUTH.includes(p));

/** What each persona is (for the legend of `docs/policy.md` and for failure messages). */
export const PERSONA_DESCRIPTIONS: Readonly<Record<PersonaKey, string>> = {
  admin: 'user `admin`, project `admin`, role `admin`',
  o1: 'owner: project `o1`, role `owner`; owns the nodes of the world and offers some',
  o2: 'a second owner: project `o2`, role `owner`; owns its own node',
  l1: 'lessee of project `l1` (role `lessee`) with an active lease on an `o1` node',
  l2: 'lessee of project `l2` (role `lessee`) without any lease',
  l3: 'lessee of project `l3` (role `lessee`) whose lease on an `o1` node has expired',
  x: 'a user with role `member` in project `x`, unrelated to everything',
  anon: 'no token',
  forged: 'a random string as token',
  revoked: 'a revoked token of the owner `o1`',
  expired: 'an expired token of the owner `o1`',
  disabled: 'a token of a project (role `owner`) that was disabled after the token was issued',
};

/** The services of esi, one table each in the generated document. */
export const SERVICES = ['identity', 'baremetal', 'lease', 'network', 'image', 'compute'] as const;
/** One service: selects the error body format a row's refusals must have. */
export type Service = (typeof SERVICES)[number];

/** An admin read whose JSON must not change when a write is refused. */
export interface Reread {
  readonly path: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/** One endpoint of the matrix, expanded. */
export interface MatrixRow {
  readonly id: string;
  readonly service: Service;
  /** The file it comes from (`baremetal-nodes`): its section in `docs/policy.md`. */
  readonly section: string;
  readonly method: string;
  /** URL path with `{placeholders}` (world objects, `{uniq}`, `{slot.start}`, `{fresh…}`). */
  readonly path: string;
  /** JSON body (placeholders substituted in its strings). */
  readonly body?: unknown;
  /** A raw text body sent as `application/octet-stream` (image uploads). */
  readonly raw_body?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly reread?: Reread;
  /** A factory (see `factories.ts`) that makes a fresh object per successful persona. */
  readonly fresh?: string;
  /** True: a 2xx answer must not contain any object the persona may not see (lists). */
  readonly isolation: boolean;
  /** Expected status for every persona. */
  readonly expect: Readonly<Record<PersonaKey, number>>;
  readonly note: string;
  /** Personas whose expectation is known not to hold yet, with the reason. */
  readonly knownFailures: Readonly<Partial<Record<PersonaKey, string>>>;
}

/** Where the matrix lives. */
export const MATRIX_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'matrix');
/** Its files (without `.yaml`), in document order. */
export const MATRIX_FILES = [
  'identity',
  'baremetal-nodes',
  'baremetal-resources',
  'baremetal-inventory',
  'baremetal-templates',
  'lease',
  'network-neutron',
  'network-esi',
  'image',
  'compute',
] as const;

/** One file of the matrix: a section of `docs/policy.md`. */
export interface MatrixSection {
  readonly name: string;
  readonly service: Service;
  readonly title: string;
  readonly rows: readonly MatrixRow[];
}

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE']);
const ROW_KEYS = new Set([
  'id',
  'method',
  'path',
  'body',
  'raw_body',
  'headers',
  'reread',
  'fresh',
  'isolation',
  'expect',
  'note',
  'known_failure',
]);
const FILE_KEYS = new Set(['service', 'title', 'reasons', 'rows']);

/** True for a method that does not change anything. */
export function isRead(method: string): boolean {
  return method === 'GET' || method === 'HEAD';
}

/** @throws Error naming the row and what is wrong with it */
function fail(id: string, message: string): never {
  throw new Error(`policy matrix row ${id}: ${message}`);
}

/** An HTTP status from the YAML. @throws Error when `v` is not one */
function status(id: string, key: string, v: unknown): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 100 || v > 599)
    fail(id, `expect.${key} must be an HTTP status, got ${JSON.stringify(v)}`);
  return v;
}

/**
 * Expand compact expectations: named personas win, then `unauth` (default 401) for the callers
 * without a valid token, then `default` for the other authenticated callers.
 * @throws Error when an authenticated persona has no expectation or a key is unknown
 */
export function expandExpect(id: string, raw: unknown): Record<PersonaKey, number> {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) fail(id, 'expect must be a mapping');
  const r = raw as Record<string, unknown>;
  for (const k of Object.keys(r))
    if (k !== 'default' && k !== 'unauth' && !(PERSONAS as readonly string[]).includes(k)) fail(id, `unknown persona ${k} in expect`);
  const out = {} as Record<PersonaKey, number>;
  for (const p of PERSONAS) {
    if (r[p] !== undefined) out[p] = status(id, p, r[p]);
    else if (UNAUTH.includes(p)) out[p] = r.unauth === undefined ? 401 : status(id, 'unauth', r.unauth);
    else if (r.default !== undefined) out[p] = status(id, 'default', r.default);
    else fail(id, `no expectation for ${p} (give it or a default)`);
  }
  return out;
}

/**
 * `known_failure` as persona → reason: a string applies to every persona.
 * @throws Error for an unknown persona or an empty reason
 */
function knownFailures(id: string, raw: unknown, expect: Record<PersonaKey, number>): Partial<Record<PersonaKey, string>> {
  if (raw === undefined) return {};
  if (typeof raw === 'string') return Object.fromEntries(PERSONAS.map((p) => [p, raw]));
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    fail(id, 'known_failure must be a reason or a mapping persona → reason');
  const out: Partial<Record<PersonaKey, string>> = {};
  for (const [k, v] of Object.entries(raw as Record<string, unknown>)) {
    if (!(PERSONAS as readonly string[]).includes(k)) fail(id, `unknown persona ${k} in known_failure`);
    if (typeof v !== 'string' || v === '') fail(id, `known_failure.${k} must be a reason`);
    if (expect[k as PersonaKey] === undefined) fail(id, `known_failure.${k} has no expectation`);
    out[k as PersonaKey] = v;
  }
  return out;
}

/**
 * `reread` of a row: a path or `{path, headers}`; `none` (or nothing, for reads) is undefined.
 * @throws Error for a write without `reread`, or a malformed one
 */
function reread(id: string, method: string, raw: unknown): Reread | undefined {
  if (raw === undefined && !isRead(method))
    fail(id, 'a write needs `reread` (an admin GET), or `reread: none` when nothing can be re-read');
  if (raw === undefined || raw === 'none') return undefined;
  if (typeof raw === 'string') return { path: raw };
  const r = raw as { path?: unknown; headers?: unknown };
  if (typeof r?.path !== 'string') fail(id, 'reread must be a path or {path, headers}');
  return { path: r.path, ...(r.headers ? { headers: r.headers as Record<string, string> } : {}) };
}

/**
 * Validate and expand one parsed YAML row of a file of `service`.
 * @throws Error naming the row for a missing or malformed field
 */
export function parseRow(raw: Record<string, unknown>, service: Service, section: string): MatrixRow {
  const id = typeof raw.id === 'string' && raw.id !== '' ? raw.id : fail(String(raw.id), 'id must be a non-empty string');
  for (const k of Object.keys(raw)) if (!ROW_KEYS.has(k)) fail(id, `unknown key ${k}`);
  if (!id.startsWith(`${service}.`)) fail(id, `the id must start with ${service}.`);
  const method = String(raw.method ?? '').toUpperCase();
  if (!METHODS.has(method)) fail(id, `unknown method ${String(raw.method)}`);
  if (typeof raw.path !== 'string' || !raw.path.startsWith('/')) fail(id, 'path must start with /');
  if (typeof raw.note !== 'string' || raw.note === '') fail(id, 'note is required');
  if (raw.fresh !== undefined && typeof raw.fresh !== 'string') fail(id, 'fresh must be a factory name');
  if (raw.raw_body !== undefined && typeof raw.raw_body !== 'string') fail(id, 'raw_body must be a string');
  const expect = expandExpect(id, raw.expect);
  return {
    id,
    service,
    section,
    method,
    path: raw.path,
    ...(raw.body !== undefined ? { body: raw.body } : {}),
    ...(raw.raw_body !== undefined ? { raw_body: raw.raw_body } : {}),
    ...(raw.headers !== undefined ? { headers: raw.headers as Record<string, string> } : {}),
    ...(reread(id, method, raw.reread) ? { reread: reread(id, method, raw.reread)! } : {}),
    ...(raw.fresh !== undefined ? { fresh: raw.fresh } : {}),
    isolation: raw.isolation === true,
    expect,
    note: raw.note,
    knownFailures: knownFailures(id, raw.known_failure, expect),
  };
}

/**
 * Load and validate one file of the matrix.
 * @throws Error for a malformed file or row
 */
export function loadSection(name: string, dir: string = MATRIX_DIR): MatrixSection {
  const file = path.join(dir, `${name}.yaml`);
  const doc = YAML.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown> | null;
  if (!doc || !Array.isArray(doc.rows)) throw new Error(`${file}: a top-level "rows" list is required`);
  for (const k of Object.keys(doc)) if (!FILE_KEYS.has(k)) throw new Error(`${file}: unknown key ${k}`);
  const service = doc.service as Service;
  if (!(SERVICES as readonly string[]).includes(service)) throw new Error(`${file}: unknown service ${String(doc.service)}`);
  if (typeof doc.title !== 'string' || doc.title === '') throw new Error(`${file}: a title is required`);
  return { name, service, title: doc.title, rows: doc.rows.map((r) => parseRow(r as Record<string, unknown>, service, name)) };
}

/**
 * Load and validate the whole matrix (every file of {@link MATRIX_FILES}).
 * @returns the sections in document order
 * @throws Error for a malformed file or row, or an id used twice
 */
export function loadSections(dir: string = MATRIX_DIR): MatrixSection[] {
  const sections = MATRIX_FILES.map((name) => loadSection(name, dir));
  const seen = new Set<string>();
  for (const r of sections.flatMap((s) => s.rows)) {
    if (seen.has(r.id)) throw new Error(`policy matrix: duplicate row id ${r.id}`);
    seen.add(r.id);
  }
  return sections;
}

/** Every row of the matrix, in document order. @throws Error as {@link loadSections} */
export function loadMatrix(dir: string = MATRIX_DIR): MatrixRow[] {
  return loadSections(dir).flatMap((s) => s.rows);
}
