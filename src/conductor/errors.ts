/**
 * Turning failures of conductor tasks into `last_error` text that is safe to show to every
 * caller who may see the node: clear about what failed, and never carrying a secret.
 *
 * Driver errors (`HardwareError`) and domain errors already promise password-free messages
 * (src/domain/hardware/interfaces.ts); as a second line of defence every message is scrubbed
 * of the node's own secret values (the decrypted `driver_info` values whose keys are secret
 * under the masking rule, e.g. `redfish_password`) and of inline `password=…` patterns
 * (oslo `mask_password`) before it is stored or logged.
 */
import { HardwareError } from '../domain/hardware/interfaces.ts';
import { DomainError } from '../domain/errors.ts';
import { isJsonObject, isSecretKey, MASK, maskPasswordText } from '../domain/inventory/masking.ts';
import { SecretBoxError } from '../domain/secrets.ts';

/** Longest `last_error` the conductor writes, characters (longer text is cut with `...`). */
export const MAX_ERROR_LENGTH = 2000;

/**
 * Every secret string in a decrypted `driver_info` (values of secret keys, at any depth).
 * @param driverInfo decrypted driver_info (never logged)
 * @returns the non-empty secret strings, longest first (so that scrubbing replaces whole values)
 */
export function secretValues(driverInfo: Readonly<Record<string, unknown>> | null): string[] {
  const out: string[] = [];
  const walk = (obj: Readonly<Record<string, unknown>>): void => {
    for (const [k, v] of Object.entries(obj)) {
      if (isJsonObject(v)) walk(v);
      else if (isSecretKey(k) && v !== null && v !== undefined) {
        const s = typeof v === 'string' ? v : JSON.stringify(v);
        if (s !== '') out.push(s);
      }
    }
  };
  if (driverInfo) walk(driverInfo);
  return [...new Set(out)].sort((a, b) => b.length - a.length);
}

/** Replace every occurrence of each secret in `text` with `******`. */
export function scrub(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) out = out.split(s).join(MASK);
  return out;
}

/**
 * A one-line, secret-free description of a task failure.
 * - `HardwareError`, domain errors: their message (written for users).
 * - `SecretBoxError`: a fixed text (the stored secrets cannot be decrypted with this key).
 * - anything else: `<name>: <message>` (an unexpected failure; also logged by the caller).
 * @param secrets values to scrub (see {@link secretValues})
 */
export function describeError(err: unknown, secrets: readonly string[] = []): string {
  let text: string;
  if (err instanceof HardwareError || err instanceof DomainError) text = err.message;
  else if (err instanceof SecretBoxError) text = "the secrets of driver_info cannot be decrypted with this server's secret key";
  else if (err instanceof Error) text = `${err.name}: ${err.message}`;
  else text = `unexpected failure: ${String(err)}`;
  return limit(maskPasswordText(scrub(text.replace(/\s+/g, ' ').trim(), secrets)));
}

/** Cut `text` to {@link MAX_ERROR_LENGTH} characters. */
export function limit(text: string): string {
  return text.length <= MAX_ERROR_LENGTH ? text : `${text.slice(0, MAX_ERROR_LENGTH - 3)}...`;
}
