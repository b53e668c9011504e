/**
 * Long JSON lists written as they are read: `{"<key>":[item,item,…]}` from batches of items, so
 * that an answer of a million items never exists whole in memory (esi-leap's lease list has no
 * paging). The bytes are those of `JSON.stringify({ [key]: items })`, which Fastify sends for a
 * returned object; an answer that fits in one batch is sent exactly that way (with its
 * `content-length`), a longer one chunked.
 */
import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';

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
    const part = (items: readonly T[]): string => {
      if (items.length === 0) return '';
      const text = items.map((i) => JSON.stringify(render(i))).join(',');
      const out = any ? `,${text}` : text;
      any = true;
      return out;
    };
    try {
      yield `{${JSON.stringify(key)}:[${part(first.value as readonly T[])}`;
      let rest = part(second.value as readonly T[]);
      for (let next = await it.next(); ; next = await it.next()) {
        if (rest !== '') yield rest;
        if (next.done) break;
        rest = part(next.value);
      }
      yield ']}';
    } finally {
      await it.return?.();
    }
  }
  return reply.type(JSON_TYPE).send(Readable.from(chunks(), { objectMode: false }));
}
