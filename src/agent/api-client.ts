/**
 * The agent's calls to the baremetal API, as ironic-python-agent's `ironic_api_client.py` and
 * `agent.py` make them (https://opendev.org/openstack/ironic-python-agent; the endpoints:
 * https://docs.openstack.org/api-ref/baremetal/#utility):
 *
 * - {@link chooseApiUrl}: of several API URLs (`ipa-api-url` may list several, comma-separated,
 *   as in IPA after 9.4), the first whose `GET <url>/` answers at all;
 * - {@link serverVersion}: the maximum microversion from `GET <api>/` (1.31 when that fails, as IPA);
 * - {@link lookup}: `GET <api>/v1/lookup?addresses=<MACs>[&node_uuid=…]`, retried with growing
 *   pauses (0.5 s doubling to 30 s) until a node is found. The one-time `agent_token` of the
 *   answer is used; when the API shows it as `******` (it was issued before: Ironic pre-generates
 *   it for virtual media boots and hands it over as the `ipa-agent-token` kernel parameter), the
 *   pre-shared token is used instead, as IPA does;
 * - {@link heartbeat}: `POST <api>/v1/heartbeat/<uuid>`;
 * - {@link advertiseAddress}: the local address the kernel routes to the API host from (IPA's
 *   `_get_route_source`, `ip route get <host>`), found by connecting a UDP socket, which sends
 *   nothing; link-local sources are skipped as IPA skips them.
 *
 * Every request carries `X-OpenStack-Request-ID` when a global request id was given (IPA's
 * `ipa-global-request-id`).
 */
import dgram from 'node:dgram';
import dns from 'node:dns/promises';
import type { AgentConsole } from './console.ts';
import { httpText } from './http-text.ts';

/** What every call needs. */
export interface ApiContext {
  /** The baremetal endpoint without `/v1`, no trailing slash. */
  readonly api: string;
  readonly out: AgentConsole;
  readonly signal: AbortSignal;
  /** Extra headers of every request (the global request id). */
  readonly headers: Readonly<Record<string, string>>;
  /** Print routine successes too (`ipa-debug`). */
  readonly debug: boolean;
}

/** A microversion pair. */
export type Version = readonly [number, number];

const ASSUMED_SERVER_VERSION: Version = [1, 31];

/** The smaller of two versions, formatted `1.62`. */
export function minVersion(a: Version, b: Version): string {
  const v = a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]) ? a : b;
  return `${v[0]}.${v[1]}`;
}

/** Sleep `ms`, ending early (without error) when `signal` aborts or the function handed to `onWake` is called. */
export function sleep(ms: number, signal: AbortSignal, onWake: (wake: () => void) => void = () => {}): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    onWake(done);
    function done(): void {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      onWake(() => {});
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/**
 * The first of `urls` whose `GET <url>/` answers (any HTTP status), trying them all in rounds
 * (2 s apart) for at most `rounds` rounds; the first URL when none answered. One URL is returned
 * as is. URLs lose their trailing slashes.
 */
export async function chooseApiUrl(
  urls: readonly string[],
  out: AgentConsole,
  signal: AbortSignal,
  headers: Readonly<Record<string, string>> = {},
  rounds = 15,
): Promise<string> {
  const clean = urls.map((u) => u.replace(/\/+$/, ''));
  if (clean.length <= 1) return clean[0] ?? '';
  for (let round = 0; round < rounds && !signal.aborted; round++) {
    for (const url of clean) {
      try {
        await httpText(`${url}/`, { headers: { ...headers, accept: 'application/json' }, timeoutMs: 5000, signal });
        out.line(`API ${url} answers; using it`);
        return url;
      } catch {
        // not reachable (yet)
      }
    }
    await sleep(2000, signal);
  }
  out.line(`none of the API URLs answers; using ${clean[0]}`);
  return clean[0]!;
}

/** The API's maximum microversion from `GET <api>/` (`default_version.version`), else 1.31. */
export async function serverVersion(ctx: ApiContext): Promise<Version> {
  try {
    const res = await httpText(`${ctx.api}/`, {
      headers: { ...ctx.headers, accept: 'application/json' },
      timeoutMs: 10_000,
      signal: ctx.signal,
    });
    const body = JSON.parse(res.text) as { default_version?: { version?: string } };
    const m = /^(\d+)\.(\d+)$/.exec(body.default_version?.version ?? '');
    if (m !== null) return [Number(m[1]), Number(m[2])];
  } catch {
    // IPA falls back to 1.31 as well
  }
  return ASSUMED_SERVER_VERSION;
}

/** A successful lookup. */
export interface Found {
  readonly node: Record<string, unknown>;
  readonly token: string;
  readonly heartbeatTimeoutS: number;
}

/**
 * Look the node up until found (see the module documentation); null when the agent stops first.
 * @param query `macs` and/or `nodeUuid`; `agentToken`: the pre-shared token, if any
 */
export async function lookup(
  ctx: ApiContext,
  query: { macs: readonly string[]; nodeUuid?: string; agentToken?: string },
  version: string,
): Promise<Found | null> {
  const q = new URLSearchParams();
  if (query.macs.length > 0) q.set('addresses', query.macs.join(','));
  if (query.nodeUuid !== undefined) q.set('node_uuid', query.nodeUuid);
  let pauseMs = 500;
  let lastStatus = '';
  while (!ctx.signal.aborted) {
    let status: string;
    try {
      const res = await httpText(`${ctx.api}/v1/lookup?${q}`, {
        headers: { ...ctx.headers, 'x-openstack-ironic-api-version': version, accept: 'application/json' },
        timeoutMs: 30_000,
        signal: ctx.signal,
      });
      if (res.status === 200) {
        const body = JSON.parse(res.text) as { node?: Record<string, unknown>; config?: Record<string, unknown> };
        const t = body.config?.agent_token;
        const issued = typeof t === 'string' && t !== '' && t !== '******' ? t : undefined;
        const token = issued ?? query.agentToken;
        if (body.node && typeof body.node.uuid === 'string' && token !== undefined && token !== '') {
          if (issued === undefined) ctx.out.line('lookup: the API shows the agent token as issued; using the pre-shared token');
          const hbt = Number(body.config?.heartbeat_timeout);
          return { node: body.node, token, heartbeatTimeoutS: hbt > 0 ? hbt : 300 };
        }
        status = 'HTTP 200 without a usable agent token';
      } else {
        status = `HTTP ${res.status}`;
      }
    } catch (err) {
      if (ctx.signal.aborted) return null;
      status = `unreachable (${causeOf(err)})`;
    }
    if (status !== lastStatus) ctx.out.line(`lookup: ${status}; retrying`);
    lastStatus = status;
    await sleep(pauseMs, ctx.signal);
    pauseMs = Math.min(30_000, pauseMs * 2);
  }
  return null;
}

/** One heartbeat; failures are logged, never thrown. */
export async function heartbeat(ctx: ApiContext, uuid: string, body: Record<string, unknown>, version: string): Promise<void> {
  try {
    const res = await httpText(`${ctx.api}/v1/heartbeat/${encodeURIComponent(uuid)}`, {
      method: 'POST',
      headers: {
        ...ctx.headers,
        'x-openstack-ironic-api-version': version,
        'content-type': 'application/json',
        accept: 'application/json',
      },
      body: JSON.stringify(body),
      timeoutMs: 30_000,
      signal: ctx.signal,
    });
    if (res.status !== 202) ctx.out.line(`heartbeat refused: HTTP ${res.status} ${faultOf(res.text)}`);
    else if (ctx.debug) ctx.out.line('heartbeat accepted');
  } catch (err) {
    if (!ctx.signal.aborted) ctx.out.line(`heartbeat failed: ${causeOf(err)}`);
  }
}

/**
 * The local address the kernel routes to the API's host from (see the module documentation).
 * @param attempts tries, `pauseMs` apart (IPA: `ipa-ip-lookup-attempts`)
 * @returns the address, or null when there is no route (or only a link-local one)
 */
export async function advertiseAddress(api: string, signal: AbortSignal, attempts = 6, pauseMs = 2000): Promise<string | null> {
  const url = new URL(api);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
  for (let i = 0; i < attempts && !signal.aborted; i++) {
    try {
      const { address, family } = await dns.lookup(host);
      const local = await routeSource(address, family === 6 ? 'udp6' : 'udp4', port);
      if (!/^(169\.254\.|fe80:)/i.test(local) && local !== '0.0.0.0' && local !== '::') return local;
    } catch {
      // no route or no name yet
    }
    await sleep(pauseMs, signal);
  }
  return null;
}

/** The source address of a UDP socket connected to `address:port` (no packet is sent). */
function routeSource(address: string, type: 'udp4' | 'udp6', port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = dgram.createSocket(type);
    sock.on('error', (err) => {
      sock.close();
      reject(err);
    });
    sock.connect(port, address, () => {
      const local = sock.address().address;
      sock.close();
      resolve(local);
    });
  });
}

/** The `faultstring` of an Ironic error body, shortened. */
function faultOf(text: string): string {
  try {
    const body = JSON.parse(text) as { error_message?: string };
    const inner = typeof body.error_message === 'string' ? (JSON.parse(body.error_message) as { faultstring?: string }) : null;
    return (inner?.faultstring ?? '').slice(0, 200);
  } catch {
    return text.slice(0, 200);
  }
}

/** The innermost message of a request error. */
export function causeOf(err: unknown): string {
  const e = err as Error & { cause?: Error };
  return e.cause?.message ?? e.message ?? String(err);
}
