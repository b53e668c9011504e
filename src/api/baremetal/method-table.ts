/**
 * The methods each baremetal path answers, so that a method a resource lacks is 405, as Ironic's
 * router (pecan) answers it — `POST /v1/conductors`, `DELETE /v1/conductors/{host}` — where
 * Fastify alone reports no route (404). Filled from the plugin's `onRoute` hook; asked by its
 * not-found handler.
 */

/** One route: its method and its URL pattern as a regular expression. */
interface RoutePattern {
  readonly method: string;
  readonly pattern: RegExp;
}

/**
 * A regular expression for a Fastify route URL: `:param` (optionally with a `(regex)`
 * constraint, treated as any one segment) matches one path segment, `*` the rest.
 */
function patternOf(url: string): RegExp {
  let out = '';
  for (let i = 0; i < url.length; i++) {
    const c = url[i]!;
    if (c === ':') {
      while (i + 1 < url.length && /[A-Za-z0-9_]/.test(url[i + 1]!)) i++;
      if (url[i + 1] === '(') {
        let depth = 0;
        do {
          i++;
          if (url[i] === '(') depth++;
          else if (url[i] === ')') depth--;
        } while (i + 1 < url.length && depth > 0);
      }
      out += '[^/]+';
    } else if (c === '*') out += '.*';
    else out += c.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${out}/?$`);
}

/** The routes of one plugin, by method and pattern. */
export class MethodTable {
  private readonly routes: RoutePattern[] = [];

  /** Record a route (`method` one or several, as Fastify's route options give it). */
  add(method: string | readonly string[], url: string): void {
    const pattern = patternOf(url);
    for (const m of typeof method === 'string' ? [method] : method) this.routes.push({ method: m.toUpperCase(), pattern });
  }

  /**
   * The methods some route answers at `path` (no query string), sorted; empty when no route
   * has this path, whatever the method.
   */
  allowed(path: string): string[] {
    const methods = new Set<string>();
    for (const r of this.routes) if (r.pattern.test(path)) methods.add(r.method);
    return [...methods].sort();
  }
}
