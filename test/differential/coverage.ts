/**
 * What the differential tables cover: all their sequences in run order, and a check that every
 * route esi's baremetal API serves under `/v1` is exercised by at least one request of the
 * tables (with the same method), so that a new endpoint cannot go uncompared.
 *
 * esi's routes are read from Fastify's route tree (`printRoutes({ commonPrefix: false })`).
 * Routes that have no counterpart to compare with are listed in {@link NOT_COMPARABLE} with the
 * reason.
 */
import type { FastifyInstance } from 'fastify';
import type { Sequence } from './runner.ts';
import { NODE_STATE_SEQUENCES } from './table-node-actions.ts';
import { NODE_SEQUENCES } from './table-nodes.ts';
import { PENDING_SEQUENCES } from './table-pending.ts';
import { PORT_ALLOCATION_SEQUENCES } from './table-ports-allocations.ts';
import { ROOT_SEQUENCES } from './table-root.ts';

/** Every sequence, in run order. */
export const ALL_SEQUENCES: readonly Sequence[] = [
  ...ROOT_SEQUENCES,
  ...NODE_SEQUENCES,
  ...NODE_STATE_SEQUENCES,
  ...PORT_ALLOCATION_SEQUENCES,
  ...PENDING_SEQUENCES,
];

/** esi routes (below `/baremetal`) that the differential tables do not compare, and why. */
export const NOT_COMPARABLE: ReadonlyMap<string, string> = new Map([
  ['POST /v1/continue_inspection', 'Ironic added it in 1.84, after 21.4; esi serves it for its agent'],
  ['GET /v1/nodes/:ident/states/console/stream', "esi's console websocket, no Ironic counterpart"],
  ['POST /v1/nodes/:ident/capture', "esi's image capture, no Ironic counterpart"],
  ['GET /v1/nodes/:ident/capture', "esi's image capture, no Ironic counterpart"],
]);

/** A route of Fastify's tree: method and URL pattern (`/baremetal/v1/nodes/:ident`). */
export interface Route {
  readonly method: string;
  readonly url: string;
}

/**
 * The routes of a `printRoutes({ commonPrefix: false })` tree: each line is a path segment
 * below its parent's (4 characters of indentation per level), with its methods in parentheses.
 */
export function routesOfTree(tree: string): Route[] {
  const out: Route[] = [];
  const stack: string[] = [];
  for (const line of tree.split('\n')) {
    const m = /^((?:[│ ] {3})*)[├└]── (.*?)(?: \(([^)]*)\))?$/.exec(line);
    if (!m) continue;
    const depth = m[1]!.length / 4;
    stack.length = depth;
    stack.push(m[2]!);
    for (const method of m[3]?.split(', ') ?? []) out.push({ method, url: stack.join('') });
  }
  return out;
}

function routeRegex(url: string): RegExp {
  const body = url
    .split('/')
    .map((seg) => (seg.startsWith(':') ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${body}$`);
}

/** esi's `/v1…` routes (HEAD and `.json` variants aside), as `{ method, url }` with `url` below `/baremetal`. */
export function esiV1Routes(app: FastifyInstance): Route[] {
  return routesOfTree(app.printRoutes({ commonPrefix: false }))
    .filter((r) => r.url.startsWith('/baremetal/v1') && r.method !== 'HEAD' && !r.url.endsWith('.json'))
    .map((r) => ({ method: r.method, url: r.url.slice('/baremetal'.length) }));
}

/** A table path with its placeholders filled in (`{node}` → `x`), query dropped, to match route patterns. */
function concrete(path: string): string {
  return path.split('?', 1)[0]!.replace(/\{[a-z_0-9]+\}/g, 'x');
}

/**
 * The endpoint a request reaches: esi's route pattern for that method and path
 * (`GET /v1/nodes/:ident`), or, for a path esi does not route, the path as the table writes it.
 */
export function endpointNamer(routes: readonly Route[]): (method: string, path: string) => string {
  const compiled = routes.map((r) => ({ ...r, re: routeRegex(r.url) }));
  return (method, path) => {
    const c = concrete(path);
    // a static route wins over a parametric one, as in Fastify's router
    const hits = compiled.filter((r) => r.method === method && r.re.test(c));
    const best = hits.find((r) => !r.url.includes(':')) ?? hits[0];
    return `${method} ${best?.url ?? path.split('?', 1)[0]}`;
  };
}

/**
 * esi's `/v1` routes that no table request exercises with the same method, as `METHOD /v1/…`,
 * less {@link NOT_COMPARABLE}.
 */
export function esiRoutesNotCovered(routes: readonly Route[], sequences: readonly Sequence[] = ALL_SEQUENCES): string[] {
  const requests = sequences.flatMap((s) =>
    s.steps.flatMap((st) => ('method' in st ? [{ method: st.method, path: concrete(st.path) }] : [])),
  );
  const missing: string[] = [];
  for (const r of routes) {
    const name = `${r.method} ${r.url}`;
    if (NOT_COMPARABLE.has(name)) continue;
    const re = routeRegex(r.url);
    if (!requests.some((q) => q.method === r.method && re.test(q.path))) missing.push(name);
  }
  return [...new Set(missing)].sort();
}
