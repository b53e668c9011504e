/**
 * A server's console log (Nova `os-getConsoleOutput`) read from its bare-metal node's serial
 * console: the node's console is opened read-only *as the caller* (src/domain/inventory/
 * node-console.ts: `baremetal:node:get_console`, the console enabled, an interface the driver
 * has), what it sends is collected for a moment — the lab BMC's `redfish-serial` stream starts
 * with its scrollback (up to 64 KiB of the node's serial log, docs/console.md), the fake console
 * with its banner; IPMI Serial-over-LAN has no scrollback, so only what the node prints meanwhile
 * — and the session is closed.
 *
 * The text is decoded as UTF-8 and, as Nova does, control characters other than tab and line
 * feed are removed (`[\x00-\x08\x0B-\x1F]`, so CR LF becomes LF). `length` keeps the last N lines
 * (a final line feed does not count as a line of its own; Nova's tail counts the empty string
 * after it), 0 gives "", null everything read.
 */
import type { ConsoleSession } from '../hardware/console.ts';

/** How long a read waits, and how much it keeps. */
export interface ConsoleReadLimits {
  /** Give up when nothing arrives within this long (ms). */
  readonly firstMs: number;
  /** Stop once the stream was quiet this long after some output (ms). */
  readonly quietMs: number;
  /** Stop after this long whatever arrives (ms). */
  readonly maxMs: number;
  /** Keep at most the last this many bytes. */
  readonly maxBytes: number;
}

/** The defaults: a scrollback arrives in one piece right after the stream opens. */
export const CONSOLE_READ_LIMITS: ConsoleReadLimits = Object.freeze({ firstMs: 1500, quietMs: 300, maxMs: 4000, maxBytes: 256 * 1024 });

/**
 * Collect what a console session sends (see {@link ConsoleReadLimits}), then close it.
 * @returns the bytes read (the last `maxBytes`)
 */
export function collectConsole(session: ConsoleSession, limits: ConsoleReadLimits = CONSOLE_READ_LIMITS): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    let quiet: NodeJS.Timeout | undefined;
    const finish = (): void => {
      if (done) return;
      done = true;
      clearTimeout(first);
      clearTimeout(overall);
      clearTimeout(quiet);
      const all = Buffer.concat(chunks);
      void session.close().catch(() => undefined);
      resolve(all.length > limits.maxBytes ? all.subarray(all.length - limits.maxBytes) : all);
    };
    const first = setTimeout(finish, limits.firstMs);
    const overall = setTimeout(finish, limits.maxMs);
    session.onData((chunk) => {
      if (done) return;
      chunks.push(chunk);
      size += chunk.length;
      // Keep memory bounded on a chatty console: drop whole chunks from the front.
      while (size - (chunks[0]?.length ?? 0) >= limits.maxBytes && chunks.length > 1) size -= chunks.shift()!.length;
      clearTimeout(first);
      clearTimeout(quiet);
      quiet = setTimeout(finish, limits.quietMs);
    });
    session.onClose(finish);
  });
}

/**
 * The console text Nova answers: decoded, control characters removed, the last `length` lines.
 * @param length lines to keep from the end, or null for all
 */
export function consoleText(bytes: Buffer, length: number | null): string {
  // Nova's filter of control characters (tab and line feed stay).
  const text = bytes.toString('utf8').replace(/[\x00-\x08\x0B-\x1F]/g, '');
  if (length === null) return text;
  if (length === 0) return '';
  const ends = text.endsWith('\n');
  const lines = (ends ? text.slice(0, -1) : text).split('\n');
  const tail = lines.slice(-length).join('\n');
  return ends ? `${tail}\n` : tail;
}
