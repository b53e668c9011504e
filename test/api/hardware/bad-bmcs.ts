/**
 * Misbehaving BMCs on loopback for the hardware tests: a TCP server that accepts connections
 * and never answers (a hung BMC), and HTTP servers that answer every request with one fixed,
 * broken reply (invalid JSON, an HTML page, JSON of the wrong shape, an HTML error page).
 */
import http from 'node:http';
import net from 'node:net';

/** A running loopback server. */
export interface BadBmc {
  readonly url: string;
  /** Requests (HTTP) or connections (silent) received so far. */
  readonly hits: () => number;
  close(): Promise<void>;
}

/** Listen on a loopback port; `close` also runs `before` (ending open sockets, say). */
async function listening(
  server: net.Server,
  hits: () => number,
  before: () => void,
  after: () => Promise<void> = async () => {},
): Promise<BadBmc> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    hits,
    close: () =>
      new Promise<void>((r) => {
        before();
        server.close(() => void after().then(r));
      }),
  };
}

/** A BMC that accepts TCP connections and stays silent forever. */
export async function silentBmc(): Promise<BadBmc> {
  const sockets = new Set<net.Socket>();
  let hits = 0;
  const server = net.createServer((s) => {
    hits++;
    sockets.add(s);
    s.on('error', () => {});
    s.on('close', () => sockets.delete(s));
  });
  return listening(
    server,
    () => hits,
    () => {
      for (const s of sockets) s.destroy();
    },
  );
}

/**
 * An HTTP BMC on loopback whose every request, once its body is read, gets `reply`'s status,
 * content type and body.
 */
async function httpBmc(reply: (req: http.IncomingMessage) => { status: number; contentType: string; body: string }): Promise<BadBmc> {
  let hits = 0;
  const server = http.createServer((req, res) => {
    hits++;
    req.resume();
    req.on('end', () => {
      const r = reply(req);
      res.writeHead(r.status, { 'content-type': r.contentType });
      res.end(r.body);
    });
  });
  return listening(
    server,
    () => hits,
    () => server.closeAllConnections(),
  );
}

/** A BMC answering every request with `status`, `contentType` and `body`. */
export function fixedReplyBmc(status: number, contentType: string, body: string): Promise<BadBmc> {
  return httpBmc(() => ({ status, contentType, body }));
}

/**
 * A Redfish BMC whose one system reads `PowerState: On` and refuses every change: `GET`s answer
 * the system, every `POST` (sessions, resets) answers HTTP 500.
 */
export function stuckOnBmc(): Promise<BadBmc> {
  const system = JSON.stringify({
    '@odata.id': '/redfish/v1/Systems/x',
    Id: 'x',
    PowerState: 'On',
    Actions: { '#ComputerSystem.Reset': { target: '/redfish/v1/Systems/x/Actions/ComputerSystem.Reset' } },
  });
  const refusal = JSON.stringify({ error: { message: 'reset refused by the stuck BMC' } });
  return httpBmc((req) =>
    req.method === 'GET'
      ? { status: 200, contentType: 'application/json', body: system }
      : { status: 500, contentType: 'application/json', body: refusal },
  );
}

/**
 * {@link stuckOnBmc} whose `GET`s wait until `release()` is called (later ones answer at once):
 * a power read that is in flight while the test changes the node.
 */
export async function gatedOnBmc(): Promise<BadBmc & { release(): void }> {
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  const inner = await stuckOnBmc();
  let hits = 0;
  const server = http.createServer((req, res) => {
    hits++;
    const forward = (): void => {
      const up = http.request(`${inner.url}${req.url ?? '/'}`, { method: req.method, headers: req.headers }, (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      });
      up.on('error', () => res.destroy());
      req.pipe(up);
    };
    if (req.method === 'GET') void gate.then(forward);
    else forward();
  });
  const bmc = await listening(
    server,
    () => hits,
    () => {
      open();
      server.closeAllConnections();
    },
    () => inner.close(),
  );
  return { ...bmc, release: () => open() };
}
