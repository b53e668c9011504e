/**
 * A raw HTTP client for robustness tests: the request path is sent exactly as given (no URL
 * normalisation of `..`, `%2e`, invalid percent-encodings), over a keep-alive connection.
 */
import http from 'node:http';

/** A raw response. */
export interface RawResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly text: string;
}

/** A keep-alive client for one base URL (`http://host:port`). Call `close()` when done. */
export class RawClient {
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  private readonly host: string;
  private readonly port: number;

  constructor(baseUrl: string) {
    const u = new URL(baseUrl);
    this.host = u.hostname;
    this.port = Number(u.port);
  }

  /**
   * Send one request.
   * @param path raw request target, sent as is (must be printable ASCII)
   * @param body raw body; a `Content-Type` must be in `headers` when one is wanted
   */
  send(method: string, path: string, headers: Record<string, string>, body?: string): Promise<RawResponse> {
    const payload = body === undefined ? undefined : Buffer.from(body, 'utf8');
    return new Promise((resolve, reject) => {
      const req = http.request(
        {
          host: this.host,
          port: this.port,
          method,
          path,
          agent: this.agent,
          headers: { ...headers, ...(payload ? { 'content-length': String(payload.length) } : {}) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      if (payload) req.write(payload);
      req.end();
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
