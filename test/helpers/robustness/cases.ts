/**
 * The bad requests sent to one route as one persona: hostile path ids, hostile query strings,
 * malformed JSON, JSON of the wrong type, deeply nested JSON, huge strings, unknown attributes,
 * a wrong type for every known attribute, and a body over the size limit. Values come from
 * the fast-check generators of `./generators.ts` with seeds derived from the route.
 */
import fc from 'fast-check';
import {
  badIds,
  badQueries,
  deepArray,
  deepObject,
  hugeString,
  malformedJson,
  sample,
  seedOf,
  unknownKey,
  wrongType,
  type JsonKind,
} from './generators.ts';
import { fillPattern, type RouteInfo } from './routes.ts';
import type { BodySpec, Fixtures } from './specs.ts';

/** One bad request and what may answer it. */
export interface BadCase {
  readonly label: string;
  readonly method: string;
  /** Raw request target (path and query), sent as is. */
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
  /** `client`: only a 4xx is right; `client-or-success`: a 2xx is right too (valid by chance). */
  readonly expect: 'client' | 'client-or-success';
  /**
   * `router`: refused by Fastify's router before any API plugin runs (answered by the app-level
   * `frameworkErrors` of `src/server/app.ts`); `api`: reaches the API plugin.
   */
  readonly layer: 'router' | 'api';
}

/** What the case builder needs besides the route. */
export interface CaseContext {
  readonly fixtures: Fixtures;
  /** Headers every request of this API carries (e.g. the Ironic microversion). */
  readonly apiHeaders: Readonly<Record<string, string>>;
  /** The real, URL-encoded value of each path parameter of the route. */
  readonly realParams: readonly string[];
  /** The server's body limit, bytes. */
  readonly bodyLimit: number;
  /** True for the persona whose cases are sampled down (lessee, other, anonymous). */
  readonly reduced: boolean;
  /** True for the anonymous persona (adds a garbage-token case). */
  readonly anonymous: boolean;
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const HUGE = 90_000;
const JSON_HEADERS = { 'content-type': 'application/json' };

function clone<T>(v: T): T {
  return JSON.parse(JSON.stringify(v)) as T;
}

/** Set the value at a dotted path of a JSON value (the parent must exist). */
function setAt(root: unknown, path: string, value: unknown): unknown {
  const copy = clone(root) as Record<string, unknown>;
  const keys = path.split('.');
  let node: Record<string, unknown> = copy;
  for (const k of keys.slice(0, -1)) {
    if (node[k] === undefined || node[k] === null || typeof node[k] !== 'object') node[k] = {};
    node = node[k] as Record<string, unknown>;
  }
  node[keys[keys.length - 1]!] = value;
  return copy;
}

/** Add an attribute to the object at a dotted path (`''`: the top level), keeping it as JSON text. */
function withKey(root: unknown, path: string, key: string, value: unknown): string {
  const marker = '\u0001rb-unknown\u0001';
  const target =
    path === '' ? { ...(root as object), [marker]: value } : setAt(root, path, { ...(getAt(root, path) as object), [marker]: value });
  // `__proto__` must be written into the text: as an object key it would set the prototype.
  return JSON.stringify(target).replace(JSON.stringify(marker), JSON.stringify(key));
}

function getAt(root: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((n, k) => (n as Record<string, unknown> | undefined)?.[k], root);
}

/** Pick `n` items with a seed (all when `n` ≥ length). */
function pick<T>(items: readonly T[], n: number, seed: number): T[] {
  if (items.length <= n) return [...items];
  const order = sample(fc.shuffledSubarray([...items], { minLength: n, maxLength: n }), seed, 1)[0]!;
  return order;
}

/** True unless `s` is a microversion the baremetal API accepts (1.1 … 1.82, `latest`, blank). */
function notAVersion(s: string): boolean {
  const t = s.trim();
  if (t === '' || t.toLowerCase() === 'latest') return false;
  const m = /^(\d+)\.(\d+)$/.exec(t);
  return !(m && Number(m[1]) === 1 && Number(m[2]) >= 1 && Number(m[2]) <= 82);
}

const KIND_SAMPLES: Record<Exclude<JsonKind, 'integer'>, unknown> = {
  string: 'rb-text',
  number: 1.5,
  boolean: true,
  null: null,
  object: { rb: 1 },
  array: [1],
};

/** Build every bad case of one route for one persona. */
export function buildCases(route: RouteInfo, spec: BodySpec | undefined, persona: string, ctx: CaseContext): BadCase[] {
  const seed = seedOf(route.method, route.pattern, persona);
  const out: BadCase[] = [];
  const realPath = fillPattern(route, ctx.realParams);
  const valid = spec?.kind === 'json' && spec.valid ? spec.valid(ctx.fixtures) : undefined;
  const validText = valid === undefined ? undefined : JSON.stringify(valid);
  const add = (
    label: string,
    path: string,
    body: string | undefined,
    expect: BadCase['expect'] = 'client',
    headers: Record<string, string> = {},
    layer: BadCase['layer'] = 'api',
  ): void => {
    // The valid body is only ever sent with a bad path id; a "mutation" equal to it is a bug here.
    if (body !== undefined && body === validText && path === realPath)
      throw new Error(`case "${label}" of ${route.method} ${route.pattern} would send the valid body`);
    out.push({
      label,
      method: route.method,
      path,
      headers: { ...ctx.apiHeaders, ...(body !== undefined ? JSON_HEADERS : {}), ...headers },
      ...(body !== undefined ? { body } : {}),
      expect,
      layer,
    });
  };

  // Path identifiers.
  route.params.forEach((param, i) => {
    const ids = badIds(seed + i * 101);
    for (const id of ctx.reduced ? pick(ids, 4, seed + i) : ids) {
      const values = ctx.realParams.map((v, j) => (j === i ? id.raw : v));
      add(
        `path :${param.names[0]} ${id.label}`,
        fillPattern(route, values),
        route.method === 'DELETE' ? undefined : validText,
        'client',
        {},
        id.router ? 'router' : 'api',
      );
    }
  });

  // Query strings (reads only).
  if (route.method === 'GET') {
    const queries = badQueries(seed + 7);
    for (const q of ctx.reduced ? pick(queries, 2, seed + 8) : queries)
      add(`query ${q.label}`, `${realPath}?${q.query}`, undefined, 'client-or-success');
  }
  if (ctx.anonymous) {
    const [token] = sample(
      fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 60 }).filter((t) => t.trim() === t && t !== ''),
      seed + 9,
      1,
    );
    add('garbage X-Auth-Token', realPath, undefined, 'client-or-success', { 'x-auth-token': token! });
  }
  if (ctx.apiHeaders['x-openstack-ironic-api-version'] !== undefined) {
    const [v] = sample(
      fc
        .oneof(fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 10 }), fc.constantFrom('2.1', '1.999', '1.0', '0.9', '1.-1'))
        .filter(notAVersion),
      seed + 10,
      1,
    );
    add('bad microversion header', realPath, undefined, 'client', { 'x-openstack-ironic-api-version': v! });
  }

  if (!BODY_METHODS.has(route.method)) return out;

  // Bodies the JSON parser must refuse before any handler runs (safe on real ids, even DELETE).
  const [bad] = sample(malformedJson(validText ?? '{"rb": [1, {"x": "y"}]}'), seed + 11, 1);
  add('malformed JSON', realPath, bad);
  add('body over the size limit', realPath, JSON.stringify({ rb: 'x'.repeat(ctx.bodyLimit + 16) }));
  if (route.method === 'DELETE' || spec === undefined || spec.kind === 'none') return out;

  // JSON of the wrong type, deeply nested JSON.
  const topKinds: JsonKind[] = Array.isArray(valid) ? ['array'] : spec.kind === 'empty' ? [] : ['object'];
  if (spec.optional) topKinds.push('null');
  for (const kind of ['array', 'string', 'number', 'null', 'boolean', 'object'] as const) {
    if (topKinds.includes(kind) || (spec.kind === 'empty' && kind === 'null')) continue;
    const value =
      kind === 'array' && valid !== undefined && !Array.isArray(valid)
        ? [valid]
        : spec.kind === 'empty' && kind === 'object'
          ? { rb: 1 }
          : KIND_SAMPLES[kind];
    add(`top-level ${kind}`, realPath, JSON.stringify(value));
  }
  add('deeply nested object (5000)', realPath, deepObject(5000));
  add('deeply nested array (20000)', realPath, deepArray(20000));
  if (spec.kind !== 'json' || valid === undefined || !spec.fields) return out;

  const fields = Object.entries(spec.fields);
  const deepAt = (path: string): string => JSON.stringify(setAt(valid, path, { rb: 0 })).replace('{"rb":0}', deepObject(5000));
  const nonObject = fields.filter(([, kinds]) => !kinds.includes('object') && !kinds.includes('array'));
  for (const [path] of pick(nonObject, 1, seed + 12)) add(`deeply nested value in ${path}`, realPath, deepAt(path));
  // Where a deep value has the right type: in an object attribute, or as an extra attribute of
  // an object that keeps unknown attributes (Keystone's projects and users).
  const objectFields = fields.filter(([, kinds]) => kinds.includes('object')).map(([p]) => p);
  const isPlainObject = (v: unknown): boolean => typeof v === 'object' && v !== null && !Array.isArray(v);
  const levels = [...new Set(fields.map(([p]) => p.split('.').slice(0, -1).join('.')))].filter(
    (l) => l !== '' && !(spec.strict ?? []).includes(l) && isPlainObject(getAt(valid, l)),
  );
  for (const path of pick([...objectFields, ...levels.map((l) => `${l}.rb_extra`)], 1, seed + 18))
    add(`deeply nested value in ${path}`, realPath, deepAt(path));

  // Huge strings.
  const stringFields = fields.filter(([p, kinds]) => kinds.includes('string') && !spec.hugeOk?.includes(p));
  const huge = hugeString(HUGE, seed + 13);
  for (const [path] of ctx.reduced ? pick(stringFields, 1, seed + 14) : stringFields)
    add(`huge string in ${path}`, realPath, JSON.stringify(setAt(valid, path, huge)));

  // A NUL character inside a string attribute (no identifier or name may hold one; PostgreSQL
  // text cannot store it).
  for (const [path] of pick(stringFields, 1, seed + 19))
    add(`NUL character in ${path}`, realPath, JSON.stringify(setAt(valid, path, 'rb\u0000x')));

  // Unknown attributes where the wire format refuses them.
  for (const level of spec.strict ?? []) {
    const known = new Set([
      ...fields
        .map(([p]) => p)
        .filter((p) => (level === '' ? !p.includes('.') : p.startsWith(`${level}.`) && !p.slice(level.length + 1).includes('.')))
        .map((p) => p.split('.').pop()!),
      ...(spec.alsoKnown ?? []),
    ]);
    const [key] = sample(unknownKey(known), seed + 15 + level.length, 1);
    const [value] = sample(fc.jsonValue({ maxDepth: 1 }), seed + 16, 1);
    add(`unknown attribute ${JSON.stringify(key)} in ${level || 'body'}`, realPath, withKey(valid, level, key!, value));
  }

  // A wrong type for every known attribute (three sampled values each; one for the personas
  // sampled down, on three attributes).
  for (const [path, kinds] of ctx.reduced ? pick(fields, 3, seed + 17) : fields) {
    for (const value of sample(wrongType(kinds), seedOf(route.method, route.pattern, persona, path), ctx.reduced ? 1 : 3)) {
      add(`wrong type in ${path}: ${JSON.stringify(value)?.slice(0, 40)}`, realPath, JSON.stringify(setAt(valid, path, value)));
    }
  }
  return out;
}
