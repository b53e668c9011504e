/**
 * `GET /dashboard/v1/changes`: the dashboard's live channel (issue 20, item 6), a server-sent
 * event stream of the changes of nodes, leases and offers the caller may see
 * (src/domain/changes/visibility.ts), so that the dashboard shows them within a second without
 * polling the list APIs.
 *
 * Request: `X-Auth-Token` (as every API; the browser reads the stream with `fetch()`), and
 * optionally `Last-Event-ID: <seq>` to resume after the last event received.
 *
 * Events (`text/event-stream`):
 * - `event: ready`, `id: <seq>`, `data: {"seq"}` — the stream is live from `seq` (after the
 *   changes a resumed stream missed);
 * - `event: change`, `id: <seq>`, `data: {"kind": "node"|"lease"|"offer", "id": <uuid>, "op":
 *   "create"|"update"|"delete", "seq"}` — never a field value: the client reads the resource
 *   through its API, whose policy decides what it sees (a 404 after a `delete`, or once the
 *   resource left the caller);
 * - `event: reset`, `id: <seq>`, `data: {"seq"}` — instead of `ready` when `Last-Event-ID`
 *   names changes the log no longer holds (older than its 10-minute retention, another
 *   database, or an unreadable value): read everything again;
 * - `event: expired`, `data: {"reason": "expired"|"revoked", "message"}` — the token expired or
 *   was revoked (checked every second, by the server's clock); the stream ends;
 * - a comment line (`: keep-alive`) every 15 s.
 *
 * No token or a bad one: 401 in Keystone's format before the stream starts. The stream ends at
 * once when the server shuts down (the client reconnects with `Last-Event-ID`).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { UnauthorizedError } from '../../domain/errors.ts';
import type { Channel } from '../../domain/changes/channel.ts';
import { routeDoc } from '../common/route-doc.ts';
import type { DashboardApiDeps } from './deps.ts';
import { EventStream } from './sse.ts';

/** Default period of the keep-alive comment, ms. */
export const KEEP_ALIVE_MS = 15_000;
/** Default period of the token re-check, ms. */
export const RECHECK_MS = 1_000;

/** A `Last-Event-ID` no log holds: an unreadable header resumes from it, i.e. resets. */
const UNKNOWN_CURSOR = Number.MAX_SAFE_INTEGER;

/**
 * The cursor a `Last-Event-ID` header names: null without one (start from now), its number, or
 * {@link UNKNOWN_CURSOR} for a value that is no event id of ours.
 */
export function cursorOf(header: string | string[] | undefined): number | null {
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  if (value === undefined || value === '') return null;
  return /^\d{1,15}$/.test(value) ? Number(value) : UNKNOWN_CURSOR;
}

/**
 * Register the route.
 * @param open the closers of the streams open now; the plugin calls them when the server closes
 */
export function registerChangeRoutes(app: FastifyInstance, deps: DashboardApiDeps, open: Set<() => void>): void {
  app.get(
    '/changes',
    {
      config: {
        doc: routeDoc({
          summary:
            'Live changes of the nodes, leases and offers the caller may see, as server-sent events (ready, change, reset, expired); resumes after Last-Event-ID',
          answer: 'events',
          noQuery: true,
        }),
      },
    },
    (request, reply) => serveChanges(request, reply, deps, open),
  );
}

/** Answer one request with its stream, until the reader leaves, the token fails or the server closes. */
async function serveChanges(request: FastifyRequest, reply: FastifyReply, deps: DashboardApiDeps, open: Set<() => void>): Promise<void> {
  const header = request.headers['x-auth-token'];
  const secret = Array.isArray(header) ? header[0] : header;
  // The token hook let the request in, so it carried a valid token.
  if (!secret) throw new UnauthorizedError();
  const from = cursorOf(request.headers['last-event-id']);
  const viewer = await deps.changes.viewerOf(request.auth);

  reply.hijack();
  const stream = new EventStream(reply.raw, request.id);
  const channel: Channel = deps.changes.subscribe(viewer, from, {
    start: (seq, reset) => stream.event(reset ? 'reset' : 'ready', { seq }, seq),
    change: (event) => stream.event('change', { kind: event.kind, id: event.id, op: event.op, seq: event.seq }, event.seq),
  });

  const keepAlive = setInterval(() => stream.comment('keep-alive'), deps.streamTiming?.keepAliveMs ?? KEEP_ALIVE_MS);
  let checking = false;
  const recheck = setInterval(() => {
    if (checking) return;
    checking = true;
    deps.identity.tokens
      .validate(secret)
      .then(
        (info) => channel.update(info.context),
        (err: unknown) => {
          if (!(err instanceof UnauthorizedError)) {
            request.log.warn({ err }, 'live channel: token re-check failed; trying again');
            return;
          }
          const expiresAt = request.auth.expiresAt === null ? Infinity : Date.parse(request.auth.expiresAt);
          const reason = expiresAt <= deps.clock.now() ? 'expired' : 'revoked';
          stream.event('expired', { reason, message: `The token ${reason === 'expired' ? 'expired' : 'was revoked'}.` });
          finish();
        },
      )
      .finally(() => {
        checking = false;
      });
  }, deps.streamTiming?.recheckMs ?? RECHECK_MS);

  /** End the stream and release what it holds (idempotent). */
  function finish(): void {
    clearInterval(keepAlive);
    clearInterval(recheck);
    channel.close();
    open.delete(finish);
    stream.end();
  }
  open.add(finish);
  // The reader left, or the stream was destroyed (a reader too far behind).
  reply.raw.once('close', finish);
  // It left while its viewer was being read: `close` has been and gone.
  if (reply.raw.destroyed) finish();
}
