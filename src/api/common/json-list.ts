/**
 * Long JSON lists written as they are read: `{"<key>":[item,item,…]}` from batches of items, so
 * that an answer of a million items never exists whole in memory (esi-leap's lease list has no
 * paging). The bytes are those of `JSON.stringify({ [key]: items })`, which Fastify sends for a
 * returned object; an answer that fits in one batch is sent exactly that way (with its
 * `content-length`), a longer one chunked.
 */
import { Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { FastifyReply } from 'fastify';

/**
 * Characters written at a time (about 16 KB, the stream's high-water mark): well under V8's
 * large-object threshold, so that each piece is collected young once written.
 */
const CHUNK_CHARS = 16_384;

/** The content type Fastify gives a serialised object. */
const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * Send the items of `batches`, rendered, as the array `key` of a JSON object.
 * @param batches items in answer order, a batch at a time; an error before the first batch is the
 *   request's error (a 4xx through the error handler), a later one ends the answer early (the
 *   client sees a truncated body, the log the error)
 * @param render an item's wire form (anything `JSON.stringify` takes)
 * @returns the reply, sent
 */
export async function sendJsonList<T>(
  reply: FastifyReply,
  key: string,
  batches: AsyncIterable<readonly T[]>,
  render: (item: T) => unknown,
): Promise<FastifyReply> {
  const it = batches[Symbol.asyncIterator]();
  const first = await it.next();
  if (first.done) return reply.send({ [key]: [] });
  const second = await it.next();
  if (second.done) return reply.send({ [key]: first.value.map(render) });
  async function* chunks(): AsyncGenerator<string> {
    let any = false;
    let text = `{${JSON.stringify(key)}:[`;
    // Pieces of about CHUNK_CHARS: a batch written as one string (hundreds of kilobytes) would be
    // allocated in V8's large-object space, which only a full collection frees, so a long list
    // grew the heap by its whole length before one ran; small pieces die young.
    function* pieces(items: readonly T[]): Generator<string> {
      for (const item of items) {
        text += any ? `,${JSON.stringify(render(item))}` : JSON.stringify(render(item));
        any = true;
        if (text.length >= CHUNK_CHARS) {
          yield text;
          text = '';
        }
      }
    }
    try {
      yield* pieces(first.value as readonly T[]);
      yield* pieces(second.value as readonly T[]);
      for (;;) {
        // A turn of the event loop before each further batch. With SQLite every read resolves at
        // once and a client draining as fast as it is written leaves the socket always writable,
        // so the whole answer would be produced in one run of microtasks: a 500,000-lease list
        // kept timers (the conductor's heartbeat), signals and every other request waiting for a
        // minute, and V8's full collections, finished by tasks of the event loop, never ran — the
        // heap grew by hundreds of megabytes of garbage (issue 22).
        await nextTurn();
        const next = await it.next();
        if (next.done) break;
        yield* pieces(next.value);
      }
      yield `${text}]}`;
    } finally {
      await it.return?.();
    }
  }
  return reply.type(JSON_TYPE).send(Readable.from(chunks(), { objectMode: false }));
}
