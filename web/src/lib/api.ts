/**
 * The dashboard's HTTP client: every call goes to esi's own OpenStack-compatible APIs on the
 * same origin, with the signed-in user's Keystone token in `X-Auth-Token` (kept in memory by
 * ./session.tsx, never in localStorage). Errors come back in each service's wire format
 * (Keystone `{error: {message}}`, Ironic `{error_message: "<JSON fault>"}`, esi-leap WSME
 * `{faultstring}`, Neutron `{NeutronError: {message}}`, Glance `{message}`, Nova
 * `{<kind>: {message}}`); {@link ApiError} carries the message in words.
 */

/** A failed API call: HTTP status and the service's own message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** The token of the signed-in user (set by the session; memory only). */
let currentToken: string | null = null;
/** Called when an API answers 401: the session ends (token expired or revoked). */
let onUnauthorized: (() => void) | null = null;

/** Set the token used by {@link api} and the handler of 401 answers (./session.tsx). */
export function setApiToken(token: string | null, unauthorized: (() => void) | null): void {
  currentToken = token;
  onUnauthorized = unauthorized;
}

/** The current token (for the live channel and console tokens). */
export function token(): string | null {
  return currentToken;
}

/** The message of an error body in any of the services' formats, or null. */
export function errorMessage(body: unknown): string | null {
  if (body === null || typeof body !== 'object') return null;
  const b = body as Record<string, any>;
  if (typeof b.error_message === 'string') {
    try {
      const inner = JSON.parse(b.error_message) as { faultstring?: string };
      if (typeof inner.faultstring === 'string') return inner.faultstring;
    } catch {
      return b.error_message;
    }
  }
  if (typeof b.faultstring === 'string') return b.faultstring;
  if (b.error && typeof b.error.message === 'string') return b.error.message;
  if (b.NeutronError && typeof b.NeutronError.message === 'string') return b.NeutronError.message;
  if (typeof b.message === 'string') return b.message;
  for (const v of Object.values(b)) if (v && typeof v === 'object' && typeof v.message === 'string') return v.message;
  return null;
}

/** Options of one call. */
export interface CallOptions {
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
  /** Send no token (sign-in). */
  readonly anonymous?: boolean;
  readonly signal?: AbortSignal;
}

/** The answer of a call: parsed JSON body (or null) and headers. */
export interface Answer<T> {
  readonly status: number;
  readonly body: T;
  readonly headers: Headers;
}

/**
 * Call an esi API on this origin.
 * @param method HTTP method
 * @param path absolute path (`/baremetal/v1/nodes`)
 * @throws ApiError with the service's message on a non-2xx answer (401 also ends the session)
 */
export async function call<T = any>(method: string, path: string, opts: CallOptions = {}): Promise<Answer<T>> {
  const headers: Record<string, string> = { Accept: 'application/json', ...opts.headers };
  if (!opts.anonymous && currentToken) headers['X-Auth-Token'] = currentToken;
  if (path.startsWith('/baremetal/')) headers['X-OpenStack-Ironic-API-Version'] ??= 'latest';
  let body: BodyInit | undefined;
  if (opts.body instanceof Blob || opts.body instanceof ArrayBuffer) body = opts.body;
  else if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['Content-Type'] ??= 'application/json';
  }
  const res = await fetch(path, { method, headers, body, signal: opts.signal ?? null });
  const text = await res.text();
  let parsed: unknown = null;
  if (text !== '') {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
  }
  if (!res.ok) {
    if (res.status === 401 && !opts.anonymous) onUnauthorized?.();
    const message = errorMessage(parsed) ?? (typeof parsed === 'string' && parsed.length < 300 ? parsed : res.statusText);
    throw new ApiError(res.status, message || `HTTP ${res.status}`);
  }
  return { status: res.status, body: parsed as T, headers: res.headers };
}

/** GET a JSON body. */
export async function get<T = any>(path: string, signal?: AbortSignal): Promise<T> {
  return (await call<T>('GET', path, signal ? { signal } : {})).body;
}

/**
 * Every item of a paginated Ironic list: reads `path`, then each `next` link the answer gives
 * (Ironic pages at its maximum page size, 1,000 by default), until a page has none.
 * @param key the collection's key in the answer (`nodes`, `ports` …)
 */
export async function getAll<T>(path: string, key: string, signal?: AbortSignal): Promise<T[]> {
  const out: T[] = [];
  let next: string | null = path;
  while (next !== null) {
    const page: Record<string, unknown> = await get<Record<string, unknown>>(next, signal);
    out.push(...((page[key] as T[] | undefined) ?? []));
    const link = typeof page.next === 'string' ? new URL(page.next, location.origin) : null;
    next = link === null ? null : `${link.pathname}${link.search}`;
  }
  return out;
}
