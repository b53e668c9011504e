/**
 * A server logger whose JSON lines a test can read: pino (with the server's own redaction) writing
 * into an in-memory list of parsed lines, for tests of what an operator reads in the log.
 */
import { Writable } from 'node:stream';
import pino, { type Logger } from 'pino';
import { LOG_REDACT } from '../../src/server/container.ts';

/** A logger and the lines it has written so far (each a parsed JSON object). */
export interface CapturedLog {
  readonly logger: Logger;
  readonly lines: Array<Record<string, unknown>>;
}

/**
 * A pino logger at `level` that keeps every line it writes.
 * @param level pino level name, e.g. `info`, `debug`
 */
export function captureLog(level: string): CapturedLog {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n')) if (l.trim() !== '') lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level, redact: LOG_REDACT }, sink), lines };
}
