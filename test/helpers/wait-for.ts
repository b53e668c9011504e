/**
 * The one polling helper of the tests: read a value until it is what the test waits for.
 *
 * Every wait in test/ goes through {@link waitFor} (the helpers with their own names — `waitNode`,
 * `settled`, `waitUntil`, `waitServer`, … — are written with it). The timeout is a liveness bound
 * only: a test waits for an event, never asserts how long the event took (figures of that kind
 * live in bench/).
 */
import { inspect } from 'node:util';

/** Options of {@link waitFor}. */
export interface WaitForOptions<T> {
  /** Give up after this many milliseconds (default 10,000). */
  readonly timeoutMs?: number;
  /** Pause between two reads, milliseconds (default 50). */
  readonly intervalMs?: number;
  /** What is awaited, for the error message (e.g. `node n1 active`). */
  readonly what?: string;
  /** How to show the last value in the error message (default: `util.inspect` of it). */
  readonly show?: (value: T) => unknown;
  /**
   * Treat a read that throws as "not yet" and read again (the last error is in the timeout's
   * message); by default an error of `read` ends the wait at once.
   */
  readonly retryErrors?: boolean;
}

/** Thrown by {@link waitFor} when the wait times out; carries the last value read. */
export class WaitForTimeout extends Error {
  constructor(
    message: string,
    /** The last value read (undefined when every read threw). */
    readonly lastValue: unknown,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'WaitForTimeout';
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Call `read` until `done(value)` holds, pausing `intervalMs` between calls.
 * @returns the value that satisfied `done`
 * @throws {WaitForTimeout} after `timeoutMs`, naming `what` and showing the last value read
 */
export async function waitFor<T>(read: () => T | Promise<T>, done: (value: T) => boolean, options: WaitForOptions<T> = {}): Promise<T> {
  const { timeoutMs = 10_000, intervalMs = 50, what = 'the condition', show, retryErrors = false } = options;
  const deadline = Date.now() + timeoutMs;
  let reads = 0;
  let last: { value: T } | null = null;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await read();
      reads++;
      last = { value };
      lastError = undefined;
      if (done(value)) return value;
    } catch (err) {
      if (!retryErrors) throw err;
      reads++;
      lastError = err;
    }
    if (Date.now() >= deadline) {
      const shown =
        lastError !== undefined
          ? `the last read failed: ${lastError instanceof Error ? lastError.message : String(lastError)}`
          : `last value: ${last ? inspect(show ? show(last.value) : last.value, { depth: 6, breakLength: 120 }) : 'none'}`;
      throw new WaitForTimeout(
        `timed out after ${timeoutMs} ms (${reads} reads) waiting for ${what}; ${shown}`,
        last?.value,
        lastError !== undefined ? { cause: lastError } : undefined,
      );
    }
    await sleep(Math.max(0, Math.min(intervalMs, deadline - Date.now())));
  }
}

/** {@link waitFor} of a predicate: resolves once `probe()` is true. */
export async function waitUntilTrue(probe: () => boolean | Promise<boolean>, options: WaitForOptions<boolean> = {}): Promise<void> {
  await waitFor(probe, (v) => v, options);
}
