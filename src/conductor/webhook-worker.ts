/**
 * The webhook worker (a `BackgroundWorker` of conductor processes): every `pollMs` it sends the
 * due webhook deliveries (`WebhookDeliverer`) and, every `noticeIntervalMs`, records the
 * "ending soon" notices of leases (`LeaseNotices`). The HTTP transport is undici with a per-request
 * timeout; redirects are not followed (a webhook URL is where the body goes, nowhere else); a host
 * name is connected to only when every address it resolves to may be reached
 * (src/domain/leasing/webhook-targets.ts), checked in the connection's own lookup so that a name
 * re-pointed between the check and the connection cannot slip through.
 */
import dns from 'node:dns';
import type { LookupFunction } from 'node:net';
import { Agent, request } from 'undici';
import type { LeaseNotices } from '../domain/leasing/notices.ts';
import { WebhookAddressRefused, type WebhookDeliverer, type WebhookTransport } from '../domain/leasing/webhook-delivery.ts';
import type { LeasingLog } from '../domain/leasing/index.ts';
import type { BackgroundWorker } from './worker.ts';

/**
 * A DNS lookup for connections that fails with {@link WebhookAddressRefused} when any address
 * the name resolves to is refused (IP literals are not looked up: the URL check covers them).
 */
export function guardedLookup(refuse: (address: string) => boolean): LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 4);
      const list = addresses;
      if (list.length === 0 || list.some((a) => refuse(a.address))) {
        return callback(new WebhookAddressRefused(`webhook host ${hostname} resolves to a refused address`), '', 4);
      }
      if (options.all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, list);
      return callback(null, list[0]!.address, list[0]!.family);
    });
  };
}

/**
 * undici transport of webhook deliveries: one POST, body discarded, status returned.
 * @param refuse addresses a resolved host name may not connect to (none: any)
 */
export function undiciTransportWith(refuse?: (address: string) => boolean): WebhookTransport {
  const dispatcher = refuse ? new Agent({ connect: { lookup: guardedLookup(refuse) } }) : undefined;
  return {
    async post(url, headers, body, timeoutMs) {
      // undici's request() does not follow redirects unless a redirect interceptor is added.
      const res = await request(url, {
        method: 'POST',
        headers,
        body,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        ...(dispatcher ? { dispatcher } : {}),
      });
      await res.body.dump();
      return res.statusCode;
    },
  };
}

/** {@link undiciTransportWith} with no address restriction. */
export const undiciTransport: WebhookTransport = undiciTransportWith();

/** Options of the worker. */
export interface WebhookWorkerOptions {
  /** Interval between delivery passes, ms. */
  readonly pollMs: number;
  /** Interval between ending-soon scans, ms. */
  readonly noticeIntervalMs: number;
}

/** Sends webhook deliveries and records ending-soon notices on timers. */
export class WebhookWorker implements BackgroundWorker {
  readonly name = 'lease-webhooks';
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  private pass: Promise<void> | null = null;
  private lastNoticeScan = 0;

  constructor(
    private readonly deliverer: WebhookDeliverer,
    private readonly notices: LeaseNotices,
    private readonly log: LeasingLog,
    private readonly options: WebhookWorkerOptions,
  ) {}

  /** Start the timers (first pass at once). */
  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    this.schedule(0);
  }

  /** Stop the timers and wait for the pass in progress. */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.pass;
  }

  /** Run one pass now (deliveries, and the notice scan when due). Concurrent calls share it. */
  runOnce(): Promise<void> {
    this.pass ??= this.doPass().finally(() => {
      this.pass = null;
    });
    return this.pass;
  }

  private schedule(delay: number): void {
    if (!this.running) return;
    this.timer = setTimeout(() => {
      void this.runOnce().finally(() => this.schedule(this.options.pollMs));
    }, delay);
    this.timer.unref?.();
  }

  private async doPass(): Promise<void> {
    try {
      if (Date.now() - this.lastNoticeScan >= this.options.noticeIntervalMs) {
        this.lastNoticeScan = Date.now();
        const n = await this.notices.scan();
        if (n > 0) this.log.info({ notices: n }, 'lease notices: ending-soon events recorded');
      }
      // Drain: a full batch means more may be due.
      while ((await this.deliverer.runOnce()) >= 100 && this.running);
    } catch (err) {
      this.log.error({ err }, 'webhook worker: pass failed');
    }
  }
}
