/**
 * Small helpers shared by the hardware drivers in this folder.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { InvalidInputError } from '../../domain/errors.ts';
import { HardwareError, type PowerState } from '../../domain/hardware/interfaces.ts';

/**
 * The power-change timeout to use, seconds: `timeoutS` when given, else `defaultS`.
 * Ironic's API only passes positive integers; drivers also accept fractions of a second so
 * that tests can use short timeouts.
 *
 * @throws InvalidInputError when `timeoutS` is given but is not a finite number > 0.
 */
export function validTimeoutS(timeoutS: number | undefined, defaultS: number): number {
  if (timeoutS === undefined) return defaultS;
  if (typeof timeoutS !== 'number' || !Number.isFinite(timeoutS) || timeoutS <= 0) {
    throw new InvalidInputError(`timeout must be a positive number of seconds, got ${String(timeoutS)}.`);
  }
  return timeoutS;
}

/** How {@link pollPowerState} reads the BMC and reports a timeout. */
export interface PowerPoll {
  /** One read: the mapped state (null when it is neither on nor off) and how the BMC showed it. */
  read(): Promise<{ state: PowerState | null; shown: string }>;
  /** True for an error worth retrying until the deadline (no answer, a 5xx); others end the wait. */
  transient(err: HardwareError): boolean;
  /** The timeout error's message, given the last state the BMC showed (`unknown` if none). */
  timeoutMessage(lastShown: string): string;
  readonly nodeUuid: string;
  readonly operation: string;
}

/**
 * Polls a BMC every `pollMs` until it reports `want` or `timeoutMs` has passed since the call
 * (the power drivers' "wait for the final state", Ironic's `_wait_for_state_change`).
 *
 * @throws HardwareError `timeout` with {@link PowerPoll.timeoutMessage} when the deadline passes;
 *   the last transient error when the BMC never answered; any other error at once.
 */
export async function pollPowerState(poll: PowerPoll, want: PowerState, timeoutMs: number, pollMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: string | undefined;
  let lastError: HardwareError | undefined;
  for (;;) {
    try {
      const r = await poll.read();
      last = r.shown;
      lastError = undefined;
      if (r.state === want) return;
    } catch (err) {
      if (!(err instanceof HardwareError) || !poll.transient(err)) throw err;
      lastError = err;
    }
    const remaining = deadline - Date.now();
    if (remaining <= 0) break;
    await sleep(Math.min(pollMs, remaining));
  }
  if (lastError !== undefined) throw lastError;
  throw new HardwareError(poll.timeoutMessage(last ?? 'unknown'), {
    reason: 'timeout',
    nodeUuid: poll.nodeUuid,
    operation: poll.operation,
  });
}
