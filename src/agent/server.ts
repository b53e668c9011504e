/**
 * The agent's command API over node:http, ironic-python-agent's wire protocol
 * (`ironic_python_agent/api/app.py` in https://opendev.org/openstack/ironic-python-agent):
 *
 * - `GET /` → `{name, description, versions, default_version}`; `GET /v1/status` →
 *   `{started_at (epoch s), version}`;
 * - `POST /v1/commands/?wait=true|false&agent_token=<t>` body `{"name": "<ext>.<cmd>", "params": {...}}`
 *   → the command result (200); a missing or wrong token → 401;
 * - `GET /v1/commands/` → `{"commands": [results]}`; `GET /v1/commands/<id>?wait=true` → one result.
 *   Real Ironic polls these without a token, so a token is optional here, but a wrong one → 401.
 *
 * Errors are `{"faultcode": "Client"|"Server", "faultstring", "debuginfo": null}`. Tokens are
 * compared in constant time and never logged. A `wait=true` request returns after at most
 * `waitLimitMs` (the result may then still be RUNNING). Bodies are limited to 100 MiB (413).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { CommandRunner } from './commands.ts';
import { AgentCommandError } from './errors.ts';

/** The agent's version, reported in heartbeats and `/v1/status`. */
export const AGENT_VERSION = '9.4.1-esi';
const MAX_BODY = 100 * 1024 * 1024;

/** Options of {@link startCommandServer}. */
export interface CommandServerOptions {
  readonly host: string;
  /** 0 = ephemeral. */
  readonly port: number;
  readonly runner: CommandRunner;
  /** The token from the lookup, or null before it (then every command is refused). */
  readonly token: () => string | null;
  /** Longest `wait=true`, ms (default 50 000). */
  readonly waitLimitMs?: number;
}

/** Constant-time comparison of a presented token with the expected one. */
export function tokenMatches(presented: string, expected: string): boolean {
  const a = createHash('sha256').update(presented).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

class HttpFault extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Start the command API.
 * @returns the server and the port it listens on
 */
export async function startCommandServer(opts: CommandServerOptions): Promise<{ server: http.Server; port: number }> {
  const startedAt = Date.now() / 1000;
  const waitLimit = opts.waitLimitMs ?? 50_000;
  const server = http.createServer((req, res) => {
    handle(req).then(
      ({ status, body }) => send(res, status, body),
      (err: unknown) => {
        if (err instanceof HttpFault) return send(res, err.status, fault(err.status, err.message));
        if (err instanceof AgentCommandError) return send(res, err.code, fault(err.code, err.message));
        send(res, 500, fault(500, 'internal error of the agent'));
      },
    );
  });

  const checkToken = (url: URL, required: boolean) => {
    const presented = url.searchParams.get('agent_token');
    const expected = opts.token();
    if (presented === null) {
      if (required) throw new HttpFault(401, 'Unauthorized: agent_token is required');
      return;
    }
    if (expected === null || !tokenMatches(presented, expected)) throw new HttpFault(401, 'Unauthorized: agent_token does not match');
  };

  async function handle(req: http.IncomingMessage): Promise<{ status: number; body: unknown }> {
    const url = new URL(req.url ?? '/', 'http://agent');
    const p = url.pathname.replace(/\/+$/, '') || '/';
    const wait = ['true', '1', 'yes'].includes((url.searchParams.get('wait') ?? 'false').toLowerCase());
    if (req.method === 'GET' && p === '/') return { status: 200, body: root() };
    if (req.method === 'GET' && p === '/v1') return { status: 200, body: { id: 'v1', links: [{ rel: 'self', href: '/v1/' }] } };
    if (req.method === 'GET' && p === '/v1/status') return { status: 200, body: { started_at: startedAt, version: AGENT_VERSION } };
    if (p === '/v1/commands' && req.method === 'POST') {
      checkToken(url, true);
      const body = await readJson(req);
      const name = body.name;
      const params = body.params ?? {};
      if (typeof name !== 'string' || !/^[a-z_]+\.[a-z_]+$/.test(name))
        throw new HttpFault(400, 'Invalid command: "name" must be "<extension>.<command>"');
      if (params === null || typeof params !== 'object' || Array.isArray(params))
        throw new HttpFault(400, 'Invalid command: "params" must be an object');
      const result = opts.runner.start(name, params as Record<string, unknown>);
      if (wait) await opts.runner.wait(result.id, waitLimit);
      return { status: 200, body: result };
    }
    if (p === '/v1/commands' && req.method === 'GET') {
      checkToken(url, false);
      return { status: 200, body: { commands: opts.runner.list() } };
    }
    const m = /^\/v1\/commands\/([^/]+)$/.exec(p);
    if (m !== null && req.method === 'GET') {
      checkToken(url, false);
      const result = opts.runner.get(decodeURIComponent(m[1]!));
      if (result === undefined) throw new HttpFault(404, `Command ${m[1]} was not found`);
      if (wait) await opts.runner.wait(result.id, waitLimit);
      return { status: 200, body: result };
    }
    if (['/', '/v1', '/v1/status', '/v1/commands'].includes(p) || m !== null)
      throw new HttpFault(405, `Method ${req.method} is not allowed on ${p}`);
    throw new HttpFault(404, `No resource at ${p}`);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  const addr = server.address();
  return { server, port: typeof addr === 'object' && addr !== null ? addr.port : opts.port };
}

/** The root document (IPA's `GET /`). */
function root(): Record<string, unknown> {
  const v1 = { id: 'v1', links: [{ rel: 'self', href: '/v1/' }] };
  return {
    name: 'OpenStack Ironic Python Agent API',
    description: 'esi deploy agent, speaking the ironic-python-agent API',
    versions: [v1],
    default_version: v1,
  };
}

function fault(status: number, message: string): Record<string, unknown> {
  return { faultcode: status < 500 ? 'Client' : 'Server', faultstring: message, debuginfo: null };
}

function send(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  // After a 413 the body may be unread: the connection is not reused.
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...(status === 413 ? { connection: 'close' } : {}),
  });
  res.end(text);
}

/**
 * The request body as a JSON object (400 when it is not one; 413 when its `Content-Length`
 * announces more than 100 MiB, before anything is read; or when more than that arrived, the
 * bytes past the limit being dropped, not kept). The connection is closed after a 413.
 */
async function readJson(req: http.IncomingMessage): Promise<Record<string, unknown>> {
  const tooLarge = () => new HttpFault(413, `Request body larger than ${MAX_BODY} bytes`);
  const declared = Number(req.headers['content-length']);
  if (declared > MAX_BODY) throw tooLarge();
  const raw = await new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let n = 0;
    req.on('data', (c: Buffer) => {
      n += c.length;
      if (n <= MAX_BODY) chunks.push(c);
      else chunks.length = 0;
    });
    // Past the limit the rest is read and dropped, and the answer waits for the end of the
    // body: a client still sending would otherwise lose the 413 to a connection reset.
    req.once('end', () => (n > MAX_BODY ? reject(tooLarge()) : resolve(Buffer.concat(chunks))));
    req.once('error', reject);
  });
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new HttpFault(400, 'Invalid command: the body is not valid JSON');
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw new HttpFault(400, 'Invalid command: the body must be a JSON object');
  return body as Record<string, unknown>;
}
