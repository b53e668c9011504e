/**
 * Connection loss on PostgreSQL as the domain's {@link DatabaseUnavailableError} (HTTP 503 in
 * every API), instead of a driver error that the APIs can only answer with 500: a pool whose
 * `connect()` and clients' `query()` turn the errors of a lost or refused connection into that
 * error, the original kept as its `cause`. Other errors (constraint violations, serialisation
 * failures, syntax) pass unchanged.
 *
 * What counts as connection loss: SQLSTATE class 08 (connection exception), 57P01–57P03
 * (admin shutdown, crash shutdown, cannot connect now; PostgreSQL "Appendix A. Error Codes"),
 * node-postgres' "Connection terminated…" errors and the socket errors of a refused or reset
 * connection.
 */
import type pg from 'pg';
import { DatabaseUnavailableError } from '../domain/errors.ts';

const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND']);

/** True when `err` says the database connection was lost or could not be made (see the module documentation). */
export function isConnectionLoss(err: unknown): boolean {
  if (err === null || typeof err !== 'object') return false;
  const e = err as { code?: unknown; message?: unknown };
  const code = typeof e.code === 'string' ? e.code : '';
  if (code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03' || SOCKET_CODES.has(code)) return true;
  const message = typeof e.message === 'string' ? e.message : '';
  return /^Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect/.test(message);
}

/** `err` as a {@link DatabaseUnavailableError} when it is a connection loss, else itself. */
function translated(err: unknown): unknown {
  if (!isConnectionLoss(err)) return err;
  const out = new DatabaseUnavailableError();
  (out as { cause?: unknown }).cause = err;
  return out;
}

/** A client whose promise-returning `query` calls reject with translated errors. */
function translatingClient(client: pg.PoolClient): pg.PoolClient {
  return new Proxy(client, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown;
      if (prop !== 'query' || typeof value !== 'function') return typeof value === 'function' ? value.bind(target) : value;
      return (...args: unknown[]) => {
        const result = (value as (...a: unknown[]) => unknown).apply(target, args);
        return result instanceof Promise
          ? result.catch((err: unknown) => {
              throw translated(err);
            })
          : result;
      };
    },
  });
}

/**
 * The part of a `pg.Pool` that Kysely's PostgresDialect uses (`connect`, `end`), translating
 * connection loss (see the module documentation).
 */
export function translatingPool(pool: pg.Pool): Pick<pg.Pool, 'connect' | 'end'> {
  // One wrapper per pooled client, so the client keeps one identity (Kysely keys its
  // connections by client).
  const wrappers = new WeakMap<pg.PoolClient, pg.PoolClient>();
  return {
    connect: (async () => {
      try {
        const client = await pool.connect();
        let wrapper = wrappers.get(client);
        if (wrapper === undefined) wrappers.set(client, (wrapper = translatingClient(client)));
        return wrapper;
      } catch (err) {
        throw translated(err);
      }
    }) as pg.Pool['connect'],
    end: () => pool.end(),
  };
}

/**
 * Give every client of `pool` a lasting `'error'` listener from its creation. A connection lost
 * while its client is lent out (between the statements of a transaction, or in the same network
 * read as the end of its start-up, before the borrower could listen) is reported on the client
 * as an `'error'` event, which would end the process unheard; the borrower's next statement then
 * fails and is translated.
 */
export function hearClientErrors(pool: pg.Pool, onClientError: (err: Error) => void): void {
  pool.on('connect', (client) => void client.on('error', onClientError));
}

/** `pool.query` of an array-mode SELECT with translated errors (`Store.selectArrays`). */
export async function queryArrays(pool: pg.Pool, text: string, values: unknown[]): Promise<unknown[][]> {
  try {
    return (await pool.query({ text, values, rowMode: 'array' })).rows as unknown[][];
  } catch (err) {
    throw translated(err);
  }
}
