/**
 * The console websocket's wire format (an esi protocol; esi-leap's proxy is websockify, which
 * also carries raw bytes in binary frames), shared by the lease API's token endpoint and the
 * baremetal API's Keystone-token endpoint:
 *
 * - server → client: binary frames with the bytes the node's serial port writes;
 * - client → server: binary or text frames with bytes typed at the console. A read-only holder's
 *   bytes are dropped; the first time, the server answers with the line
 *   `\r\n[esi: read-only console: input ignored]\r\n`;
 * - the server closes with a code and a one-sentence reason (at most 123 bytes, RFC 6455 §5.5):
 *
 * | code | when |
 * |------|------|
 * | 1000 | the node's BMC ended the stream, or the server is shutting down |
 * | 4400 | the console cannot be opened: not enabled, or not supported by the node's driver |
 * | 4401 | no, an unknown, an expired or a revoked token (tokens die with the lease); the token expired or was revoked during the session |
 * | 4403 | the caller may not open this console |
 * | 4404 | no such node, or not one the caller may see |
 * | 4409 | the console was disabled, or the caller lost access to the node, during the session |
 * | 4502 | the node's BMC could not be reached or refused the console |
 * | 1011 | an unexpected server error (logged; the reason says nothing more) |
 *
 * The grant is re-checked every {@link CHECK_INTERVAL_MS}; an ended grant closes the socket and
 * the driver session at once. A client that reads too slowly loses output beyond
 * {@link MAX_BUFFERED_OUTPUT} queued bytes, and is told so with {@link DROPPED_NOTICE}.
 */
import type { FastifyBaseLogger } from 'fastify';
import {
  DomainError,
  ForbiddenError,
  InvalidInputError,
  InvalidStateError,
  NotFoundError,
  UnauthorizedError,
} from '../../domain/errors.ts';
import { HardwareError } from '../../domain/hardware/interfaces.ts';
import type { OpenConsole } from '../../domain/inventory/node-console.ts';

/** How often an open console's grant is re-checked, milliseconds. */
export const CHECK_INTERVAL_MS = 1000;

/** Largest frame a client may send, bytes (a paste of a few pages). */
export const MAX_INPUT_FRAME = 64 * 1024;

/**
 * Output queued for a client beyond this many bytes is dropped (a console server does not let a
 * slow reader hold the node's output in memory); the client is told once per episode.
 */
export const MAX_BUFFERED_OUTPUT = 1024 * 1024;

/** The notice a client gets when output was dropped because it read too slowly. */
export const DROPPED_NOTICE = '\r\n[esi: console output dropped: the connection is too slow]\r\n';

/** The notice a read-only holder gets, once, when typing. */
export const READ_ONLY_NOTICE = '\r\n[esi: read-only console: input ignored]\r\n';

/** The subset of a `ws` WebSocket (as @fastify/websocket hands it over) this module uses. */
export interface ConsoleSocket {
  readonly readyState: number;
  /** Bytes queued for the client and not yet handed to the network. */
  readonly bufferedAmount: number;
  send(data: Buffer): void;
  close(code?: number, reason?: string): void;
  on(event: 'message', listener: (data: Buffer | ArrayBuffer | Buffer[]) => void): void;
  on(event: 'close', listener: () => void): void;
  on(event: 'error', listener: (err: Error) => void): void;
}

/** `read_only` query values: absent/false-like → false, true-like → true, anything else → null. */
export function parseReadOnly(v: unknown): boolean | null {
  if (v === undefined || v === '') return false;
  if (typeof v !== 'string') return null;
  const s = v.toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(s)) return true;
  if (['0', 'false', 'no', 'off'].includes(s)) return false;
  return null;
}

/** A close code and reason for an error that prevented or ended a console. */
export function closeFor(err: unknown): { code: number; reason: string } {
  if (err instanceof UnauthorizedError) return { code: 4401, reason: err.message };
  if (err instanceof ForbiddenError) return { code: 4403, reason: err.message };
  if (err instanceof NotFoundError) return { code: 4404, reason: err.message };
  if (err instanceof InvalidInputError || err instanceof InvalidStateError) return { code: 4400, reason: err.message };
  if (err instanceof HardwareError) return { code: 4502, reason: err.message };
  if (err instanceof DomainError) return { code: 4400, reason: err.message };
  return { code: 1011, reason: 'Internal error; see the server log.' };
}

/** Closes `socket` with `code` and `reason` cut to RFC 6455's 123-byte limit. */
export function closeSocket(socket: ConsoleSocket, code: number, reason: string): void {
  let r = reason;
  if (Buffer.byteLength(r, 'utf8') > 123) {
    while (Buffer.byteLength(`${r}…`, 'utf8') > 123) r = r.slice(0, -1);
    r = `${r}…`;
  }
  try {
    socket.close(code, r);
  } catch {
    // already closed
  }
}

/**
 * Opens a console with `open` and pipes it to `socket` until either side ends or the grant
 * does (see the module documentation). Never throws: failures close the socket with their code.
 */
export async function serveConsole(socket: ConsoleSocket, open: () => Promise<OpenConsole>, log: FastifyBaseLogger): Promise<void> {
  // Frames that arrive while the console is being opened are kept and typed once it is.
  const early: Buffer[] = [];
  let gone = false;
  let onInput: (chunk: Buffer) => void = (chunk) => void early.push(chunk);
  socket.on('message', (data) => onInput(toBuffer(data)));
  socket.on('close', () => {
    gone = true;
  });
  socket.on('error', (err) => log.debug({ err }, 'console websocket error'));

  let opened: OpenConsole;
  try {
    opened = await open();
  } catch (err) {
    const { code, reason } = closeFor(err);
    if (code === 1011) log.error({ err }, 'opening a console failed');
    closeSocket(socket, code, reason);
    return;
  }
  const { session, writable } = opened;
  if (gone) {
    await session.close();
    return;
  }
  let ended = false;
  // Set once below, read by `end` (declared first, so it can clear the interval that calls it).
  // eslint-disable-next-line prefer-const
  let timer: NodeJS.Timeout | undefined;
  const end = async (code: number, reason: string): Promise<void> => {
    if (ended) return;
    ended = true;
    clearInterval(timer);
    closeSocket(socket, code, reason);
    await session.close().catch((err: unknown) => log.warn({ err, node: opened.nodeUuid }, 'closing a console session failed'));
  };
  let warned = false;
  onInput = (chunk) => {
    if (ended || chunk.length === 0) return;
    if (writable) session.write(chunk.length > MAX_INPUT_FRAME ? chunk.subarray(0, MAX_INPUT_FRAME) : chunk);
    else if (!warned) {
      warned = true;
      if (socket.readyState === 1) socket.send(Buffer.from(READ_ONLY_NOTICE));
    }
  };
  let dropping = false;
  session.onData((chunk) => {
    if (ended || socket.readyState !== 1) return;
    if (socket.bufferedAmount > MAX_BUFFERED_OUTPUT) {
      dropping = true;
      return;
    }
    if (dropping) {
      dropping = false;
      socket.send(Buffer.from(DROPPED_NOTICE));
    }
    socket.send(chunk);
  });
  session.onClose((reason) => void end(1000, reason === 'closed' ? 'The console was closed.' : reason));
  socket.on('close', () => void end(1000, 'closed'));
  if (ended) return;
  timer = setInterval(() => {
    opened.check().then(
      (over) => {
        if (over !== null) void end(over.why === 'token' ? 4401 : 4409, over.message);
      },
      (err: unknown) => log.warn({ err, node: opened.nodeUuid }, 'checking a console grant failed; retrying'),
    );
  }, CHECK_INTERVAL_MS);
  timer.unref();
  for (const chunk of early.splice(0)) onInput(chunk);
}

function toBuffer(data: Buffer | ArrayBuffer | Buffer[]): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}
