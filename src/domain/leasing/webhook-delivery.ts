/**
 * Sending webhook deliveries: take due outbox rows, sign and POST them through a transport port,
 * record the outcome and schedule retries with exponential back-off (rules in
 * `./webhook-rules.ts`). Driven by the webhook worker (`src/conductor/webhook-worker.ts`), which
 * plugs in an HTTP transport (undici).
 *
 * Several processes may run it against one PostgreSQL database: each attempt first takes the row
 * with a conditional update (`claimDelivery`), so one worker sends it; a worker that dies after
 * taking a row leaves it due again when the take lapses (at-least-once delivery — receivers
 * de-duplicate on `X-ESI-Delivery`).
 *
 * What a delivery records as `last_error` is shown to the webhook's project, so it is one of a
 * few fixed sentences ({@link describeDeliveryError}) — never the transport's raw error, which
 * names addresses and ports (a tenant could map the operator's network with it). The raw error
 * goes to the server log.
 */
import type { Clock } from '../clock.ts';
import type { SecretBox } from '../secrets.ts';
import type { LeasingLog } from './lifecycle.ts';
import { retryDelay, signWebhook, type WebhookDelivery } from './webhook-rules.ts';
import type { DeliveryOutcome, WebhookRepository } from './webhooks.ts';

/** How a delivery leaves the process (an HTTP POST). */
export interface WebhookTransport {
  /**
   * POST `body` to `url`.
   * @returns the response status
   * @throws on connection errors and when no answer came within `timeoutMs`
   */
  post(url: string, headers: Readonly<Record<string, string>>, body: string, timeoutMs: number): Promise<number>;
}

/**
 * Thrown by a transport that refused to connect because the webhook's host resolved to an
 * address tenants' webhooks may not reach (`./webhook-targets.ts`).
 */
export class WebhookAddressRefused extends Error {
  readonly code = 'ESI_WEBHOOK_ADDRESS_REFUSED';
}

/** Error codes of the transport (Node's net/dns, undici), grouped by the sentence shown. */
const ERROR_TEXT: ReadonlyArray<readonly [RegExp, string]> = [
  [
    /^ESI_WEBHOOK_ADDRESS_REFUSED$/,
    "could not connect: the host resolves to an address webhooks may not reach (loopback, private, link-local or reserved, or this server's own)",
  ],
  [/^ECONNREFUSED$/, 'could not connect: the connection was refused'],
  [/^(ENOTFOUND|EAI_AGAIN|EAI_NONAME|EAI_FAIL|EAI_NODATA)$/, 'could not connect: the host name does not resolve'],
  [
    /^(ETIMEDOUT|UND_ERR_CONNECT_TIMEOUT|UND_ERR_HEADERS_TIMEOUT|UND_ERR_BODY_TIMEOUT|ABORT_ERR|ERR_ABORTED)$/,
    'no answer within the delivery timeout',
  ],
  [/^(ECONNRESET|EPIPE|UND_ERR_SOCKET|UND_ERR_CLOSED)$/, 'the connection was closed before an answer'],
  [/^(EHOSTUNREACH|ENETUNREACH|EHOSTDOWN|ENETDOWN)$/, 'could not connect: the host is unreachable'],
  [/CERT|TLS|SSL/, 'could not connect: the TLS handshake failed (certificate not trusted or not valid for the host)'],
];

/**
 * The sentence a failed attempt records for the webhook's project: the kind of failure, without
 * the transport's own words (addresses, ports, resolver answers).
 */
export function describeDeliveryError(err: unknown): string {
  const codes: string[] = [];
  for (let e: unknown = err, depth = 0; e !== null && typeof e === 'object' && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, name } = e as { code?: unknown; name?: unknown };
    if (typeof code === 'string') codes.push(code);
    if (name === 'TimeoutError' || name === 'AbortError') codes.push('ABORT_ERR');
  }
  for (const [pattern, text] of ERROR_TEXT) if (codes.some((c) => pattern.test(c))) return text;
  return 'could not connect';
}

/** Tuning of delivery. */
export interface DeliveryOptions {
  /** First retry delay, ms (doubles each attempt, capped at one hour). */
  readonly retryBaseMs: number;
  /** Attempts before a delivery is `failed`. */
  readonly maxAttempts: number;
  /** Time allowed for one POST, ms. */
  readonly timeoutMs: number;
  /** Most rows taken per pass. */
  readonly batch?: number;
  /** Requests in flight at once. */
  readonly concurrency?: number;
}

/** Longest `last_error` kept, characters. */
const ERROR_MAX = 300;

/** Sends due webhook deliveries. */
export class WebhookDeliverer {
  constructor(
    private readonly repo: WebhookRepository,
    private readonly transport: WebhookTransport,
    private readonly secrets: SecretBox,
    private readonly clock: Clock,
    private readonly log: LeasingLog,
    private readonly options: DeliveryOptions,
  ) {}

  /**
   * One pass: attempt every due delivery once (up to the batch size).
   * @returns how many were attempted
   */
  async runOnce(): Promise<number> {
    const due = await this.repo.dueDeliveries(this.clock.now(), this.options.batch ?? 100);
    let next = 0;
    let attempted = 0;
    const workers = Array.from({ length: Math.min(this.options.concurrency ?? 8, due.length) }, async () => {
      while (next < due.length) {
        const d = due[next++]!;
        if (await this.attempt(d)) attempted++;
      }
    });
    await Promise.all(workers);
    return attempted;
  }

  /**
   * Attempt one delivery: take it, POST it signed, record the outcome.
   * @returns false when another worker had taken it
   */
  async attempt(d: WebhookDelivery): Promise<boolean> {
    const now = this.clock.now();
    const takeMs = this.options.timeoutMs + 30_000;
    if (!(await this.repo.claimDelivery(d.id, d.next_attempt_at, now + takeMs))) return false;
    const attempts = d.attempts + 1;
    const target = await this.repo.target(d.webhook_uuid);
    if (target === null) return true; // the webhook was deleted with its deliveries
    if (!target.enabled) {
      await this.repo.recordAttempt(d.id, {
        status: 'failed',
        attempts: d.attempts,
        nextAttemptAt: now,
        lastAttemptAt: now,
        lastStatusCode: null,
        lastError: 'The webhook is disabled.',
        deliveredAt: null,
      });
      return true;
    }
    const timestamp = Math.floor(now / 1000);
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'esi-webhooks/1',
      'x-esi-event': d.event_type,
      'x-esi-delivery': String(d.id),
      'x-esi-timestamp': String(timestamp),
      'x-esi-signature': signWebhook(this.secrets.open(target.sealedSecret), timestamp, d.payload),
    };
    let status: number | null = null;
    let error: string | null = null;
    let raw: string | null = null;
    try {
      status = await this.transport.post(target.url, headers, d.payload, this.options.timeoutMs);
      if (status < 200 || status > 299) error = `HTTP ${status}`;
    } catch (err) {
      error = describeDeliveryError(err);
      raw = ((err as Error)?.message || String(err)).slice(0, ERROR_MAX);
    }
    const done = this.clock.now();
    const outcome: DeliveryOutcome =
      error === null
        ? {
            status: 'delivered',
            attempts,
            nextAttemptAt: done,
            lastAttemptAt: done,
            lastStatusCode: status,
            lastError: null,
            deliveredAt: done,
          }
        : {
            status: attempts >= this.options.maxAttempts ? 'failed' : 'pending',
            attempts,
            nextAttemptAt: done + retryDelay(attempts, this.options.retryBaseMs),
            lastAttemptAt: done,
            lastStatusCode: status,
            lastError: error,
            deliveredAt: null,
          };
    await this.repo.recordAttempt(d.id, outcome);
    if (error !== null)
      this.log.warn(
        { delivery: d.id, webhook: d.webhook_uuid, attempts, error, ...(raw !== null ? { cause: raw } : {}) },
        `webhook delivery ${outcome.status === 'failed' ? 'failed for good' : 'failed; will retry'}`,
      );
    return true;
  }
}
