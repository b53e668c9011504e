/**
 * A server-sent event stream (the WHATWG HTML "Server-sent events" format, `text/event-stream`)
 * written to a raw Node response: events with an `id`, an `event` name and one line of JSON
 * `data`, comment lines as keep-alives. The reader is a browser's `fetch()` stream (it sends
 * `X-Auth-Token`, which `EventSource` cannot) or any SSE client.
 */
import type { ServerResponse } from 'node:http';

/** Bytes a slow reader may leave unread before its stream is ended (it reconnects and resumes). */
export const MAX_BUFFERED_BYTES = 1024 * 1024;

/** The response headers of an event stream. */
export function eventStreamHeaders(requestId: string): Record<string, string> {
  return {
    'content-type': 'text/event-stream; charset=utf-8',
    // No cache may store it, no proxy may transform or buffer it (nginx honours x-accel-buffering).
    'cache-control': 'no-cache, no-store, no-transform',
    'x-accel-buffering': 'no',
    // One stream per connection: when it ends (token expired, shutdown), the connection goes too,
    // instead of idling until the keep-alive timeout and holding up a server's close.
    connection: 'close',
    'x-content-type-options': 'nosniff',
    'openstack-request-id': requestId,
    'x-openstack-request-id': requestId,
  };
}

/** One open event stream. Writes after {@link EventStream.end} are ignored. */
export class EventStream {
  #ended = false;

  /** Starts the stream: status 200 and the {@link eventStreamHeaders}. */
  constructor(
    private readonly res: ServerResponse,
    requestId: string,
  ) {
    res.writeHead(200, eventStreamHeaders(requestId));
    res.flushHeaders();
  }

  /** True once ended (by us or because the reader went away). */
  get ended(): boolean {
    return this.#ended || this.res.destroyed || this.res.writableEnded;
  }

  /**
   * Send one event.
   * @param name the `event:` field
   * @param data serialised as one line of JSON
   * @param id the `id:` field (the reader's `Last-Event-ID` after it), omitted when undefined
   */
  event(name: string, data: unknown, id?: number): void {
    const head = id === undefined ? '' : `id: ${id}\n`;
    this.#write(`${head}event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  /** Send a comment line (ignored by readers; keeps proxies and the connection alive). */
  comment(text: string): void {
    this.#write(`: ${text.replace(/[\r\n]+/g, ' ')}\n\n`);
  }

  /** End the stream (idempotent). */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    if (!this.res.destroyed && !this.res.writableEnded) this.res.end();
  }

  #write(chunk: string): void {
    if (this.ended) return;
    // A reader this far behind gets its stream ended rather than unbounded memory.
    if (this.res.writableLength > MAX_BUFFERED_BYTES) {
      this.res.destroy();
      this.#ended = true;
      return;
    }
    this.res.write(chunk);
  }
}
