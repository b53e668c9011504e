/**
 * A server-sent events reader for the live channel's tests, as the dashboard reads the stream:
 * `fetch()` with `X-Auth-Token` (and `Last-Event-ID` to resume), the body parsed into events as
 * it arrives. Waits go through `waitFor` (test/helpers/wait-for.ts).
 */
import { Agent, fetch } from 'undici';
import type { TestServer } from '../../helpers/harness.ts';
import { waitFor } from '../../helpers/wait-for.ts';

/** One event of the stream (`data` parsed as JSON). */
export interface SseEvent {
  readonly id: string | undefined;
  readonly event: string;
  readonly data: any;
}

/** An open stream: the events received so far, and whether it has ended. */
export class SseStream {
  readonly events: SseEvent[] = [];
  /** Comment lines received (keep-alives), without the leading colon. */
  readonly comments: string[] = [];
  ended = false;
  readonly #abort: AbortController;

  constructor(
    readonly status: number,
    readonly headers: Headers,
    body: ReadableStream<Uint8Array>,
    abort: AbortController,
  ) {
    this.#abort = abort;
    void this.#read(body);
  }

  /** Wait for an event that `match` accepts (among those received, from the start). */
  next(match: (e: SseEvent) => boolean, what: string, timeoutMs = 10_000): Promise<SseEvent> {
    return waitFor(
      () => this.events.find(match),
      (e) => e !== undefined,
      { what, timeoutMs, intervalMs: 20, show: () => this.events },
    ) as Promise<SseEvent>;
  }

  /** Wait until the server ends the stream. */
  async untilEnded(what: string, timeoutMs = 10_000): Promise<void> {
    await waitFor(
      () => this.ended,
      (e) => e,
      { what, timeoutMs, intervalMs: 20 },
    );
  }

  /** The `change` events of one resource. */
  changesOf(id: string): SseEvent[] {
    return this.events.filter((e) => e.event === 'change' && e.data.id === id);
  }

  /** Close the connection (the reader leaves). */
  close(): void {
    this.#abort.abort();
  }

  async #read(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          this.#parse(buffer.slice(0, cut));
          buffer = buffer.slice(cut + 2);
        }
      }
    } catch {
      // Aborted by close(), or the connection dropped.
    }
    this.ended = true;
  }

  #parse(block: string): void {
    let id: string | undefined;
    let event = 'message';
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) {
        this.comments.push(line.slice(1).trim());
        continue;
      }
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'id') id = value;
      else if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
    }
    if (data.length === 0 && id === undefined) return;
    this.events.push({ id, event, data: data.length > 0 ? JSON.parse(data.join('\n')) : null });
  }
}

/**
 * The connections of the streams: their own pool, which a test file destroys before its server
 * closes ({@link closeStreams}), so that no stream connection outlives the test.
 */
let agent = new Agent();

/** Destroy every stream connection (call in `afterAll`, before closing the server). */
export async function closeStreams(): Promise<void> {
  const old = agent;
  agent = new Agent();
  await old.destroy();
}

/** The answer of a refused request (not a stream). */
export interface Refusal {
  readonly status: number;
  readonly headers: Headers;
  readonly body: any;
}

/**
 * Open `GET /dashboard/v1/changes` with a token (none: anonymous).
 * @returns the stream on 200, else the refusal with its parsed body
 */
export async function openChanges(ts: TestServer, token: string | null, lastEventId?: string): Promise<SseStream | Refusal> {
  const abort = new AbortController();
  const headers: Record<string, string> = { accept: 'text/event-stream' };
  if (token) headers['x-auth-token'] = token;
  if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
  const res = await fetch(`${ts.url}/dashboard/v1/changes`, { headers, signal: abort.signal, dispatcher: agent });
  if (res.status !== 200 || res.body === null) {
    const text = await res.text();
    return { status: res.status, headers: res.headers as unknown as Headers, body: text === '' ? null : JSON.parse(text) };
  }
  return new SseStream(res.status, res.headers, res.body as ReadableStream<Uint8Array>, abort);
}

/** {@link openChanges} that must succeed and reach its first event (`ready` or `reset`). */
export async function openLive(ts: TestServer, token: string | null, lastEventId?: string): Promise<SseStream> {
  const s = await openChanges(ts, token, lastEventId);
  if (!(s instanceof SseStream)) throw new Error(`stream refused: ${s.status} ${JSON.stringify(s.body)}`);
  await s.next((e) => e.event === 'ready' || e.event === 'reset', 'the stream to start');
  return s;
}
