/**
 * HTTP client of the `redfish` driver: sends Redfish requests (DSP0266) to a node's BMC with
 * undici, authenticates, and turns every failure into a {@link HardwareError}.
 *
 * Authentication follows sushy 4.3 / Ironic 21.4 (`redfish_auth_type`):
 * - `basic`: HTTP Basic on every request;
 * - `session`: `POST` the credentials to the sessions collection (found at the service root's
 *   `Links.Sessions`, else `/redfish/v1/SessionService/Sessions`), then send `X-Auth-Token`;
 * - `auto` (default): a session; when the BMC cannot create one (an HTTP error or no token),
 *   HTTP Basic. A connection failure is not a reason to fall back.
 *
 * Sessions are cached per (BMC address, user name) and shared by every node behind that BMC.
 * The entry remembers a hash of the password and the auth type: a node with another password
 * never rides on a session created with the right one. On a 401 the session is dropped,
 * re-created once and the request retried. At most `maxSessions` sessions are kept (oldest
 * evicted and logged out).
 *
 * Every request has a deadline (`requestTimeoutMs`, default 10 s) covering connect, headers
 * and body. Messages and logs never contain passwords, tokens or URL credentials.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import { Agent, request, type Dispatcher } from 'undici';
import { HardwareError } from '../../../domain/hardware/interfaces.ts';
import type { RedfishDriverInfo } from './driver-info.ts';

/** A pino-compatible logger (only `debug` and `warn` are used). */
export interface DriverLogger {
  debug(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

/** Options of {@link RedfishClient}. */
export interface RedfishClientOptions {
  /** Deadline of one HTTP request to a BMC, milliseconds (default 10 000). */
  readonly requestTimeoutMs?: number;
  /** Most sessions kept at once (default 1000, as Ironic's session cache). */
  readonly maxSessions?: number;
  readonly logger?: DriverLogger;
}

/** Who a request is made for and why: used in error messages. */
export interface RequestContext {
  readonly nodeUuid: string;
  /** What is being done, e.g. `power on`, `get power state`. */
  readonly operation: string;
}

/** A successful (2xx) answer of the BMC. */
export interface RedfishResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The parsed JSON body, or null when there was none. */
  readonly json: Record<string, unknown> | null;
}

/** An HTTP method the driver uses. */
export type RedfishMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

interface SessionEntry {
  readonly passwordHash: string;
  readonly authType: RedfishDriverInfo['authType'];
  readonly verifyCa: RedfishDriverInfo['verifyCa'];
  /** `session`: send the token; `basic`: the BMC has no session service (auto fallback). */
  mode: 'session' | 'basic';
  token: string | null;
  location: string | null;
  pending: Promise<void> | null;
}

type Auth = { kind: 'none' } | { kind: 'basic' } | { kind: 'session'; token: string; entry: SessionEntry };

const MAX_BODY_BYTES = 4 * 1024 * 1024;
const DEFAULT_SESSIONS_PATH = '/redfish/v1/SessionService/Sessions';

/** Redfish HTTP client with session caching; one per driver instance. */
export class RedfishClient {
  readonly #timeoutMs: number;
  readonly #maxSessions: number;
  readonly #logger: DriverLogger | undefined;
  readonly #agents = new Map<string, Agent>();
  readonly #sessions = new Map<string, SessionEntry>();

  constructor(options: RedfishClientOptions = {}) {
    this.#timeoutMs = options.requestTimeoutMs ?? 10_000;
    this.#maxSessions = options.maxSessions ?? 1000;
    this.#logger = options.logger;
  }

  /**
   * Sends `method path` to the BMC of `info`, authenticated, and returns its 2xx answer.
   *
   * @param headers extra request headers (e.g. `If-Match`).
   * @throws HardwareError `refused` for a 4xx/5xx answer (after one session re-creation on a
   *   401), `unreachable` when there is no answer within the deadline or no connection,
   *   `invalid-response` for a 2xx body that is not JSON.
   */
  async send(
    info: RedfishDriverInfo,
    ctx: RequestContext,
    method: RedfishMethod,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<RedfishResponse> {
    let auth = await this.#authFor(info, ctx);
    let res = await this.#raw(info, ctx, method, path, body, { ...headers, ...authHeaders(info, auth) });
    if (res.status === 401 && auth.kind === 'session') {
      this.#logger?.debug({ bmc: info.address, node: ctx.nodeUuid }, 'redfish session rejected; creating a new one');
      if (auth.entry.token === auth.token) auth.entry.token = null;
      auth = await this.#authFor(info, ctx);
      res = await this.#raw(info, ctx, method, path, body, { ...headers, ...authHeaders(info, auth) });
    }
    if (res.status < 200 || res.status >= 300) throw refusedError(info, ctx, res.status, res.text);
    return { status: res.status, headers: res.headers, json: parseJson(info, ctx, res.text) };
  }

  /** Logs out of every cached session (best effort) and closes the connection pools. */
  async close(): Promise<void> {
    const entries = [...this.#sessions.entries()];
    this.#sessions.clear();
    await Promise.allSettled(entries.map(([key, e]) => this.#logout(key, e)));
    const agents = [...this.#agents.values()];
    this.#agents.clear();
    await Promise.allSettled(agents.map((a) => a.close()));
  }

  async #authFor(info: RedfishDriverInfo, ctx: RequestContext): Promise<Auth> {
    if (info.username === null) return { kind: 'none' };
    if (info.authType === 'basic') return { kind: 'basic' };
    const key = `${info.address}\0${info.username}`;
    const passwordHash = hashSecret(info.password ?? '');
    let entry = this.#sessions.get(key);
    if (
      entry !== undefined &&
      (entry.passwordHash !== passwordHash || entry.authType !== info.authType || entry.verifyCa !== info.verifyCa)
    ) {
      this.#sessions.delete(key);
      void this.#logout(key, entry);
      entry = undefined;
    }
    if (entry === undefined) {
      entry = {
        passwordHash,
        authType: info.authType,
        verifyCa: info.verifyCa,
        mode: 'session',
        token: null,
        location: null,
        pending: null,
      };
      this.#sessions.set(key, entry);
      this.#evict();
    }
    for (let attempt = 0; attempt < 3; attempt++) {
      if (entry.mode === 'basic') return { kind: 'basic' };
      if (entry.token !== null) return { kind: 'session', token: entry.token, entry };
      let pending = entry.pending;
      if (pending === null) {
        const e = entry;
        pending = e.pending = this.#login(info, ctx, e).finally(() => {
          e.pending = null;
        });
      }
      const outcome = await pending.then(
        () => null,
        (err: unknown) => (err instanceof Error ? err : new Error(String(err))),
      );
      if (outcome !== null) {
        if (info.authType === 'auto' && outcome instanceof HardwareError && outcome.reason === 'refused') {
          // The BMC answered but gave no session: use Basic for this request only.
          return { kind: 'basic' };
        }
        throw outcome;
      }
    }
    return entry.token !== null ? { kind: 'session', token: entry.token, entry } : { kind: 'basic' };
  }

  /** Creates a session for `entry`, or marks it `basic` when the BMC has no session service. */
  async #login(info: RedfishDriverInfo, ctx: RequestContext, entry: SessionEntry): Promise<void> {
    const sessionsPath = await this.#sessionsPath(info, ctx);
    const res = await this.#raw(info, ctx, 'POST', sessionsPath, { UserName: info.username, Password: info.password ?? '' }, {});
    const token = headerValue(res.headers['x-auth-token']);
    if (res.status >= 200 && res.status < 300 && token) {
      entry.token = token;
      entry.location = headerValue(res.headers.location) ?? null;
      this.#logger?.debug({ bmc: info.address, user: info.username }, 'redfish session created');
      return;
    }
    const unsupported = [404, 405, 501].includes(res.status) || (res.status >= 200 && res.status < 300);
    if (info.authType === 'auto' && unsupported) {
      entry.mode = 'basic';
      this.#logger?.warn({ bmc: info.address, status: res.status }, 'redfish BMC offers no sessions; using HTTP Basic auth');
      return;
    }
    if (info.authType === 'auto') {
      this.#logger?.warn({ bmc: info.address, status: res.status }, 'redfish session refused; trying HTTP Basic auth');
    }
    throw refusedError(info, ctx, res.status, res.text, ' when creating a session');
  }

  async #sessionsPath(info: RedfishDriverInfo, ctx: RequestContext): Promise<string> {
    const res = await this.#raw(info, ctx, 'GET', '/redfish/v1/', undefined, {});
    if (res.status !== 200) return DEFAULT_SESSIONS_PATH;
    try {
      const root = JSON.parse(res.text) as { Links?: { Sessions?: { '@odata.id'?: unknown } } };
      const p = root.Links?.Sessions?.['@odata.id'];
      return typeof p === 'string' && p.startsWith('/') ? p : DEFAULT_SESSIONS_PATH;
    } catch {
      return DEFAULT_SESSIONS_PATH;
    }
  }

  async #logout(key: string, entry: SessionEntry): Promise<void> {
    if (entry.token === null || entry.location === null) return;
    const address = key.split('\0')[0]!;
    try {
      const url = new URL(entry.location, address);
      if (url.origin !== address) return;
      const res = await request(url, {
        method: 'DELETE',
        headers: { 'x-auth-token': entry.token, 'odata-version': '4.0' },
        dispatcher: this.#agentFor(entry.verifyCa),
        signal: AbortSignal.timeout(Math.min(this.#timeoutMs, 2000)),
      });
      await res.body.dump();
    } catch {
      // Best effort: the BMC expires idle sessions on its own.
    }
  }

  #evict(): void {
    while (this.#sessions.size > this.#maxSessions) {
      const [key, entry] = this.#sessions.entries().next().value as [string, SessionEntry];
      this.#sessions.delete(key);
      void this.#logout(key, entry);
    }
  }

  #agentFor(verifyCa: boolean | string): Agent {
    const key = typeof verifyCa === 'string' ? `ca:${verifyCa}` : String(verifyCa);
    let agent = this.#agents.get(key);
    if (agent === undefined) {
      const connect: Record<string, unknown> = { timeout: this.#timeoutMs, rejectUnauthorized: verifyCa !== false };
      if (typeof verifyCa === 'string') connect.ca = fs.readFileSync(verifyCa);
      agent = new Agent({ connect, headersTimeout: this.#timeoutMs, bodyTimeout: this.#timeoutMs, keepAliveTimeout: 4000 });
      this.#agents.set(key, agent);
    }
    return agent;
  }

  /** One HTTP exchange; any status is returned, only transport failures throw. */
  async #raw(
    info: RedfishDriverInfo,
    ctx: RequestContext,
    method: RedfishMethod,
    path: string,
    body: unknown,
    headers: Record<string, string>,
  ): Promise<{ status: number; headers: Dispatcher.ResponseData['headers']; text: string }> {
    const url = new URL(path, info.address);
    if (url.origin !== info.address) {
      throw new HardwareError(
        `Redfish BMC at ${info.address} named a resource on another host for ${ctx.operation} of node ${ctx.nodeUuid}.`,
        {
          reason: 'invalid-response',
          nodeUuid: ctx.nodeUuid,
          operation: ctx.operation,
        },
      );
    }
    const reqHeaders: Record<string, string> = { accept: 'application/json', 'odata-version': '4.0', ...headers };
    if (body !== undefined) reqHeaders['content-type'] = 'application/json';
    try {
      const res = await request(url, {
        method,
        headers: reqHeaders,
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        dispatcher: this.#agentFor(info.verifyCa),
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
      return { status: res.statusCode, headers: res.headers, text: await readText(res.body) };
    } catch (err) {
      const timedOut = isTimeout(err);
      const cause = timedOut ? `no answer within ${this.#timeoutMs / 1000} s` : describe(err);
      throw new HardwareError(
        scrub(`Redfish BMC at ${info.address} is unreachable for ${ctx.operation} of node ${ctx.nodeUuid}: ${cause}`, info),
        {
          reason: 'unreachable',
          nodeUuid: ctx.nodeUuid,
          operation: ctx.operation,
        },
      );
    }
  }
}

function authHeaders(info: RedfishDriverInfo, auth: Auth): Record<string, string> {
  if (auth.kind === 'session') return { 'x-auth-token': auth.token };
  if (auth.kind === 'basic') {
    return { authorization: `Basic ${Buffer.from(`${info.username}:${info.password ?? ''}`, 'utf8').toString('base64')}` };
  }
  return {};
}

/** A `refused` HardwareError with the Redfish error message of `text`, if any; `stage` says when. */
function refusedError(info: RedfishDriverInfo, ctx: RequestContext, status: number, text: string, stage = ''): HardwareError {
  const detail = redfishErrorMessage(text);
  const msg = `Redfish BMC at ${info.address} refused ${ctx.operation} for node ${ctx.nodeUuid}: HTTP ${status}${stage}${detail ? ` (${detail})` : ''}`;
  return new HardwareError(scrub(msg, info), { reason: 'refused', nodeUuid: ctx.nodeUuid, operation: ctx.operation, httpStatus: status });
}

/** The most useful message of a Redfish error body (DSP0266 §"Error responses"), or ''. */
function redfishErrorMessage(text: string): string {
  try {
    const err = (JSON.parse(text) as { error?: Record<string, unknown> }).error;
    if (err === undefined) return '';
    const ext = err['@Message.ExtendedInfo'];
    const first = Array.isArray(ext) ? (ext[0] as Record<string, unknown> | undefined) : undefined;
    const m = typeof first?.Message === 'string' ? first.Message : typeof err.message === 'string' ? err.message : '';
    return m.length > 300 ? `${m.slice(0, 300)}…` : m;
  } catch {
    return '';
  }
}

function parseJson(info: RedfishDriverInfo, ctx: RequestContext, text: string): Record<string, unknown> | null {
  if (text.trim() === '') return null;
  try {
    const v: unknown = JSON.parse(text);
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    // fall through
  }
  throw new HardwareError(
    `Redfish BMC at ${info.address} sent a body that is not a JSON object for ${ctx.operation} of node ${ctx.nodeUuid}.`,
    {
      reason: 'invalid-response',
      nodeUuid: ctx.nodeUuid,
      operation: ctx.operation,
    },
  );
}

/** Removes the password (and its Basic encoding) from a message, defensively. */
function scrub(message: string, info: RedfishDriverInfo): string {
  let m = message;
  if (info.password) {
    m = m.split(info.password).join('******');
    const basic = Buffer.from(`${info.username}:${info.password}`, 'utf8').toString('base64');
    m = m.split(basic).join('******');
  }
  return m;
}

async function readText(body: Dispatcher.ResponseData['body']): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) {
      body.destroy();
      throw new Error(`response larger than ${MAX_BODY_BYTES} bytes`);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function isTimeout(err: unknown): boolean {
  const e = err as { name?: string; code?: string; cause?: unknown };
  if (e?.name === 'TimeoutError') return true;
  if (e?.code === 'UND_ERR_CONNECT_TIMEOUT' || e?.code === 'UND_ERR_HEADERS_TIMEOUT' || e?.code === 'UND_ERR_BODY_TIMEOUT') return true;
  return e?.cause !== undefined && e.cause !== err && isTimeout(e.cause);
}

function describe(err: unknown): string {
  const e = err as { message?: string; code?: string; cause?: { message?: string; code?: string } };
  const inner = e?.cause?.message ?? e?.message ?? String(err);
  return e?.cause?.code && !inner.includes(e.cause.code) ? `${inner} (${e.cause.code})` : inner;
}

function headerValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

function hashSecret(s: string): string {
  return crypto.createHash('sha256').update(s, 'utf8').digest('hex');
}
