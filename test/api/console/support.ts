/**
 * Helpers of the console API tests: a websocket client (undici's, as esi's own CLI uses) that
 * collects what the server sends and how it closes, and a lab environment with one redfish node
 * whose console interface is `redfish-serial`.
 */
import { WebSocket } from 'undici';
import { expect } from 'vitest';
import { call, type Persona } from '../../helpers/harness.ts';
import { bm, enrollRedfish, type ConductorEnv } from '../conductor/support.ts';
import { waitFor } from '../../helpers/wait-for.ts';

/** A connected (or refused) test websocket. */
export interface TestSocket {
  /** Everything received so far, decoded as UTF-8. */
  text(): string;
  /** Resolves once `re` matches the received text; fails after `timeoutMs`. */
  waitFor(re: RegExp, timeoutMs?: number): Promise<void>;
  send(data: string): void;
  /** Resolves with the close code and reason. */
  readonly closed: Promise<{ code: number; reason: string }>;
  /** True once the socket opened. */
  opened(): boolean;
  close(): void;
}

/**
 * Open a websocket to `url` (`ws://…`). Never rejects: a refused handshake shows as a close
 * (1006) without `opened()`.
 */
export function connect(url: string, headers: Record<string, string> = {}): TestSocket {
  const ws = new WebSocket(url, { headers });
  ws.binaryType = 'arraybuffer';
  const chunks: Buffer[] = [];
  let open = false;
  ws.addEventListener('open', () => {
    open = true;
  });
  ws.addEventListener('message', (e) => {
    const d: unknown = e.data;
    chunks.push(typeof d === 'string' ? Buffer.from(d) : Buffer.from(d as ArrayBuffer));
  });
  ws.addEventListener('error', () => undefined);
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.addEventListener('close', (e) => resolve({ code: e.code, reason: e.reason })),
  );
  const text = (): string => Buffer.concat(chunks).toString('utf8');
  return {
    text,
    async waitFor(re, timeoutMs = 10_000) {
      await waitFor(text, (t) => re.test(t), {
        timeoutMs,
        intervalMs: 20,
        what: `websocket text matching ${re}`,
        show: (t) => t.slice(-600),
      });
    },
    send(data) {
      ws.send(Buffer.from(data));
    },
    closed,
    opened: () => open,
    close: () => ws.close(),
  };
}

/** Resolves with the close of `s`, failing the test after `timeoutMs`. */
export async function closedWithin(s: TestSocket, timeoutMs = 8000): Promise<{ code: number; reason: string }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the websocket stayed open for ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([s.closed, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Enrol lab system `system` as a redfish node with the `redfish-serial` console (owner o1; lessee l1 unless `lessee` is null). */
export async function consoleNode(env: ConductorEnv, system: string, lessee: string | null = env.p.lessee.projectId): Promise<any> {
  return enrollRedfish(env, system, { console_interface: 'redfish-serial', lessee });
}

/** Enable (or disable) the node's console as `who`; expects 202. */
export async function setConsole(env: ConductorEnv, uuid: string, enabled: boolean, who?: Persona): Promise<void> {
  const r = await bm(env.ts, who ?? env.p.admin, 'PUT', `/v1/nodes/${uuid}/states/console`, { enabled });
  expect(r.status, r.text).toBe(202);
}

/** Create a console token as `who`; returns the token document. */
export async function consoleToken(
  env: ConductorEnv,
  who: Persona,
  node: string,
  ttl?: number,
): Promise<{ node_uuid: string; token: string; access_url: string }> {
  const r = await call(env.ts, who, 'POST', '/lease/v1/console_auth_tokens', {
    node_uuid_or_name: node,
    ...(ttl !== undefined ? { token_ttl: ttl } : {}),
  });
  expect(r.status, r.text).toBe(201);
  return r.body;
}
