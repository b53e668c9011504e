/**
 * The agent's small API requests (version discovery, lookup, heartbeat, inspection data) on
 * node:http / node:https rather than `fetch`: a `fetch` costs a fresh agent ~75 ms of CPU the
 * first time (it loads undici) and ~10 ms each time after, a node:http request ~2 ms — CPU
 * that a booted machine has to spare but that a lab of 50 agents on two cores has not, where
 * it stretches every heartbeat. Redirects are not followed (the baremetal API answers directly).
 */
import http from 'node:http';
import https from 'node:https';

/** The answer to {@link httpText}. */
export interface TextResponse {
  readonly status: number;
  /** The body as UTF-8 text (at most {@link MAX_BODY_BYTES}). */
  readonly text: string;
}

/** Largest body read, bytes; a longer one fails the request. */
export const MAX_BODY_BYTES = 16 * 1024 * 1024;

/** Options of {@link httpText}. */
export interface TextRequestOptions {
  readonly method?: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** A JSON (or other text) body. */
  readonly body?: string;
  /** Fails the request after this long, ms. */
  readonly timeoutMs: number;
  /** Aborts the request. */
  readonly signal?: AbortSignal;
}

/**
 * Send one request and read the whole answer.
 * @throws Error when the URL is not http(s), the connection fails, the time runs out, the
 *   signal aborts, or the body is too long
 */
export function httpText(url: string, options: TextRequestOptions): Promise<TextResponse> {
  const target = new URL(url);
  if (target.protocol !== 'http:' && target.protocol !== 'https:')
    return Promise.reject(new Error(`unsupported URL scheme ${target.protocol}`));
  const request = target.protocol === 'https:' ? https.request : http.request;
  const headers: Record<string, string> = { ...options.headers };
  if (options.body !== undefined) headers['content-length'] = String(Buffer.byteLength(options.body));
  return new Promise((resolve, reject) => {
    const req = request(
      target,
      { method: options.method ?? 'GET', headers, timeout: options.timeoutMs, ...(options.signal ? { signal: options.signal } : {}) },
      (res) => {
        const chunks: Buffer[] = [];
        let length = 0;
        res.on('data', (c: Buffer) => {
          length += c.length;
          if (length > MAX_BODY_BYTES) req.destroy(new Error(`the answer is longer than ${MAX_BODY_BYTES} bytes`));
          else chunks.push(c);
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${options.timeoutMs} ms`)));
    req.on('error', reject);
    req.end(options.body);
  });
}
