/**
 * Small helpers shared by the hardware drivers in this folder.
 */
import { InvalidInputError } from '../../domain/errors.ts';

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
