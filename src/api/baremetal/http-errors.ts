/**
 * Errors Ironic 21.4 raises as plain HTTP exceptions (webob's `HTTPNotFound`,
 * `HTTPMethodNotAllowed`, `HTTPNotAcceptable`, …) rather than as Ironic exceptions: its
 * `ParsableErrorMiddleware` wraps their body as
 * `{"error_message": "{\"code\": 404, \"title\": \"Not Found\", \"description\": \"…\"}"}`
 * instead of the usual `faultcode`/`faultstring`. Ironic answers this way when the requested
 * microversion is refused on a resource path, and when a resource is not available at the
 * requested version (`/v1/deploy_templates` before 1.55, `/v1/shards` before 1.82).
 * python-ironicclient reads either shape (`faultstring` or `description`).
 */

/** Reason phrases of the statuses these errors use. */
const TITLES: Readonly<Record<number, string>> = Object.freeze({
  400: 'Bad Request',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
});

/** An error answered in webob's shape (see the module documentation). */
export class WebobError extends Error {
  constructor(
    readonly status: 400 | 404 | 405 | 406,
    message: string,
  ) {
    super(message);
    this.name = 'WebobError';
  }
}

/** The double-encoded webob error body of a status and description. */
export function webobErrorBody(status: number, description: string): string {
  return JSON.stringify({ error_message: JSON.stringify({ code: status, title: TITLES[status] ?? 'Error', description }) });
}

/**
 * The gate of a resource that exists from `min` on (Ironic's controllers' `_route`): below it,
 * a GET is a 404 and any other method a 405, both in webob's shape.
 * @param what the resource's plural as Ironic words it (`deploy templates`, `shards`)
 * @throws WebobError below `min`
 */
export function resourceGate(version: number, min: number, method: string, what: string): void {
  if (version >= min) return;
  const message = `The API version does not allow ${what}`;
  throw new WebobError(method === 'GET' ? 404 : 405, message);
}
