/**
 * The benchmark HTTP client: one undici `Client` (a single keep-alive connection) per server,
 * so that every timed request pays for request, server work, transfer and body read, but not
 * for TCP set-up. Both esi and the real Ironic are called through this same code.
 */
import net from 'node:net';
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

  /**
   * GET as {@link get}, but on a new TCP connection opened for this request, sending
   * `Connection: close` and reading to the server's end of stream (as a CLI call makes: connect,
   * request, whole body). A plain socket rather than an HTTP client object: creating an undici
   * `Client` per request costs ~0.45 ms of this process's time on the development machine
   * (0.66 ms against 0.20 ms to a trivial Node server), which the in-process esi would pay and
   * the real Ironic would not notice.
   * @throws UnexpectedStatus when the status differs from `expect`; Error on a malformed answer
   *   or a connection error
   */
  getFresh(pathOrUrl: string, expect = 200): Promise<HttpResult> {
    const target = this.resolve(pathOrUrl);
    const url = new URL(this.origin);
    const head = [`GET ${target} HTTP/1.1`, `host: ${url.host}`, 'connection: close', 'accept: application/json'];
    for (const [k, v] of Object.entries(this.headers)) head.push(`${k}: ${v}`);
    const request = `${head.join('\r\n')}\r\n\r\n`;
    return new Promise((resolve, reject) => {
      const socket = net.connect(Number(url.port), url.hostname);
      const chunks: Buffer[] = [];
      socket.setNoDelay(true);
      socket.on('connect', () => socket.write(request));
      socket.on('data', (d: Buffer) => chunks.push(d));
      socket.on('error', reject);
      socket.on('end', () => {
        try {
          const { status, body } = parseResponse(Buffer.concat(chunks));
          if (status !== expect) throw new UnexpectedStatus(this.origin + target, status, body.toString('utf8'));
          resolve({ status, bytes: body.length, body });
        } catch (e) {
          reject(e instanceof Error ? e : new Error(String(e)));
        }
      });
    });
  }

  /**
   * Send one request with these credentials and a JSON body (set-up calls, not timed).
   * @returns status and parsed body (null when empty), as {@link sendJson}
   */
  send(method: string, pathOrUrl: string, body?: unknown): Promise<{ status: number; body: any }> {
    return sendJson(method, this.origin + this.resolve(pathOrUrl), this.headers, body);
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

/**
 * Split a whole HTTP/1.1 response read to the end of the connection into status and body,
 * decoding `Transfer-Encoding: chunked`; a `Content-Length` must match the body.
 * @throws Error on a response without a status line or header end, or with a short body
 */
export function parseResponse(raw: Buffer): { status: number; body: Buffer } {
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0) throw new Error(`HTTP response without a header end (${raw.length} bytes)`);
  const lines = raw.subarray(0, end).toString('latin1').split('\r\n');
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '');
  if (!status) throw new Error(`HTTP response without a status line: ${lines[0]}`);
  const headers = new Map(lines.slice(1).map((l) => [l.slice(0, l.indexOf(':')).trim().toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
  let body = raw.subarray(end + 4);
  if (/chunked/i.test(headers.get('transfer-encoding') ?? '')) {
    const parts: Buffer[] = [];
    let at = 0;
    for (;;) {
      const eol = body.indexOf('\r\n', at);
      const size = parseInt(body.subarray(at, eol).toString('latin1'), 16);
      if (eol < 0 || Number.isNaN(size)) throw new Error('HTTP response with a malformed chunk');
      if (size === 0) break;
      parts.push(body.subarray(eol + 2, eol + 2 + size));
      at = eol + 2 + size + 2;
    }
    body = Buffer.concat(parts);
  } else if (headers.has('content-length') && Number(headers.get('content-length')) !== body.length) {
    throw new Error(`HTTP response body of ${body.length} bytes, content-length ${headers.get('content-length')}`);
  }
  return { status: Number(status[1]), body };
}
