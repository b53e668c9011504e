/**
 * The routes a running esi server serves, read from its Fastify instance
 * (`printRoutes({ commonPrefix: false })`), so that a test covers every route registered now
 * and any added later without a list to maintain.
 */
import type { FastifyInstance } from 'fastify';

/** One path parameter of a route: its name(s) and the static segment just before it. */
export interface RouteParam {
  /** Parameter names (Fastify shares one tree node between routes: `:id|:project`). */
  readonly names: readonly string[];
  /** The static path segment before the parameter, e.g. `nodes` for `/v1/nodes/:ident`. */
  readonly after: string;
}

/** One method of one route. */
export interface RouteInfo {
  readonly method: string;
  /** Full path pattern, e.g. `/baremetal/v1/nodes/:ident/states/power`. */
  readonly pattern: string;
  readonly params: readonly RouteParam[];
}

const LINE = /^((?:│ {3}| {4})*)(?:├── |└── )(\S+)(?: \(([A-Z, ]+)\))?$/;

/**
 * Every method and path pattern the app serves, parsed from Fastify's route tree.
 * @param prefixes keep only patterns that equal one of these or start with it followed by `/` or `.`
 * @returns routes sorted by pattern, then method
 * @throws Error when a line of the tree cannot be parsed (the format changed)
 */
export function listRoutes(app: FastifyInstance, prefixes: readonly string[]): RouteInfo[] {
  const tree = app.printRoutes({ commonPrefix: false });
  const stack: string[] = [];
  const out: RouteInfo[] = [];
  for (const line of tree.split('\n')) {
    if (line.trim() === '') continue;
    const m = LINE.exec(line);
    if (!m) throw new Error(`cannot parse route tree line: ${JSON.stringify(line)}`);
    const depth = m[1]!.length / 4;
    stack.length = depth;
    stack.push(m[2]!);
    const pattern = normalise(stack.join(''));
    if (!m[3]) continue;
    if (!prefixes.some((p) => pattern === p || pattern.startsWith(`${p}/`) || pattern.startsWith(`${p}.`))) continue;
    for (const method of m[3].split(', ')) out.push({ method, pattern, params: paramsOf(pattern) });
  }
  return out.sort((a, b) => a.pattern.localeCompare(b.pattern) || a.method.localeCompare(b.method));
}

function normalise(path: string): string {
  const p = path.replace(/\/{2,}/g, '/');
  return p.length > 1 ? p.replace(/\/$/, '') : p;
}

function paramsOf(pattern: string): RouteParam[] {
  const segments = pattern.split('/');
  const out: RouteParam[] = [];
  segments.forEach((s, i) => {
    if (!s.startsWith(':') && s !== '*') return;
    const names = s === '*' ? ['*'] : s.split('|').map((n) => n.replace(/^:/, ''));
    out.push({ names, after: segments[i - 1] ?? '' });
  });
  return out;
}

/**
 * Build a concrete path from a pattern.
 * @param values one raw (already URL-encoded) string per parameter, in order
 */
export function fillPattern(route: RouteInfo, values: readonly string[]): string {
  let i = 0;
  return route.pattern
    .split('/')
    .map((s) => (s.startsWith(':') || s === '*' ? values[i++]! : s))
    .join('/');
}

/** A key for a route, `METHOD pattern`. */
export function routeKey(route: Pick<RouteInfo, 'method' | 'pattern'>): string {
  return `${route.method} ${route.pattern}`;
}
