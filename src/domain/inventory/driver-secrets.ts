/**
 * Encryption at rest of node `driver_info` secrets (BMC passwords and the like).
 *
 * Every value whose key matches the masking rule (`isSecretKey`: the name contains `password`,
 * `secret`, `token`, …) and that is not itself an object is stored sealed by a
 * {@link SecretBox}, as `enc:v1:…` of its JSON encoding. Values are masked in every API
 * response anyway; only the conductor (drivers) needs them in clear, through
 * {@link openDriverInfo}.
 */
import { SecretBox } from '../secrets.ts';
import { isJsonObject, isSecretKey, type JsonObject } from './masking.ts';

/**
 * Seal the secret values of `next`, keeping already-sealed values that are unchanged from
 * `previous` (so a PATCH of another key does not re-encrypt, and a sealed value is never
 * sealed twice).
 * @param next the driver_info to store (not modified)
 * @param previous the stored driver_info before this change ({} on create)
 * @returns a copy of `next` with every secret value sealed
 */
export function sealDriverInfo(box: SecretBox, next: Readonly<JsonObject>, previous: Readonly<JsonObject>): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(next)) {
    const prev = previous[k];
    if (isJsonObject(v)) out[k] = sealDriverInfo(box, v, isJsonObject(prev) ? prev : {});
    else if (isSecretKey(k) && v !== null && v !== undefined)
      out[k] = SecretBox.isSealed(v) && v === prev ? v : box.seal(JSON.stringify(v));
    else out[k] = v;
  }
  return out;
}

/**
 * The driver_info with secrets in clear, for drivers. Never render or log the result.
 * @throws SecretBoxError when a sealed value cannot be opened (wrong key or tampered data)
 */
export function openDriverInfo(box: SecretBox, stored: Readonly<JsonObject>): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(stored)) {
    if (isJsonObject(v)) out[k] = openDriverInfo(box, v);
    else if (isSecretKey(k) && SecretBox.isSealed(v)) out[k] = JSON.parse(box.open(v)) as unknown;
    else out[k] = v;
  }
  return out;
}
