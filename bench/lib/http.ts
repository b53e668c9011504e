/**
 * The benchmark HTTP client: one undici `Client` (a single keep-alive connection) per server,
 * so that every timed request pays for request, server work, transfer and body read, but not
 * for TCP set-up. Both esi and the real Ironic are called through this same code.
 */
import { Client } from 'undici';

/** A response read to its end. */
export interface HttpResult {
  readonly status: number;
  /** Body size, bytes. */
  readonly bytes: number;
  readonly body: Buffer;
}

/** Error of a request whose status was not the expected one. */
export class UnexpectedStatus extends Error {
  constructor(
    readonly url: string,
    readonly status: number,
    body: string,
  ) {
    super(`GET ${url} answered ${status}: ${body.slice(0, 300)}`);
  }
}

/** A keep-alive client bound to one origin with fixed request headers. */
export class HttpClient {
  private readonly client: Client;
  private readonly origin: string;

  /**
   * @param baseUrl origin plus optional path prefix, e.g. `http://127.0.0.1:8585/baremetal`
   * @param headers sent on every request (auth token, microversion)
   */
  constructor(
    readonly baseUrl: string,
    private readonly headers: Record<string, string>,
  ) {
    this.origin = new URL(baseUrl).origin;
    this.client = new Client(this.origin, { keepAliveTimeout: 120_000, keepAliveMaxTimeout: 600_000, pipelining: 1 });
  }

  /**
   * GET a path below the base URL (`/v1/nodes`) or an absolute URL of the same origin (a
   * `next` link), and read the whole body.
   * @throws UnexpectedStatus when the status differs from `expect` (default 200)
   * @throws Error for an absolute URL of another origin
   */
  async get(pathOrUrl: string, expect = 200): Promise<HttpResult> {
    const target = this.resolve(pathOrUrl);
    const res = await this.client.request({ method: 'GET', path: target, headers: this.headers });
    const body = Buffer.from(await res.body.arrayBuffer());
    if (res.statusCode !== expect) throw new UnexpectedStatus(this.origin + target, res.statusCode, body.toString('utf8'));
    return { status: res.statusCode, bytes: body.length, body };
  }

  /** GET and parse JSON. @throws as {@link get}, and SyntaxError for a body that is not JSON */
  async getJson<T = unknown>(pathOrUrl: string): Promise<T> {
    return JSON.parse((await this.get(pathOrUrl)).body.toString('utf8')) as T;
  }

  /** Close the connection. */
  async close(): Promise<void> {
    await this.client.close();
  }

  private resolve(pathOrUrl: string): string {
    if (/^https?:\/\//.test(pathOrUrl)) {
      const u = new URL(pathOrUrl);
      if (u.origin !== this.origin) throw new Error(`link ${pathOrUrl} leaves ${this.origin}`);
      return u.pathname + u.search;
    }
    return new URL(this.baseUrl).pathname.replace(/\/$/, '') + pathOrUrl;
  }
}

/**
 * Send one JSON request (set-up calls such as seeding, not timed).
 * @returns status and parsed body (null when empty)
 */
export async function sendJson(
  method: string,
  url: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<{ status: number; body: any }> {
  const res = await fetch(url, {
    method,
    headers: { accept: 'application/json', ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  let parsed: unknown = null;
  if (text !== '') {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
  }
  return { status: res.status, body: parsed };
}
