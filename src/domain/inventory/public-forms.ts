/**
 * Public forms of a node's secret-bearing JSON fields: `driver_info` (secrets masked),
 * `driver_internal_info` (`agent_secret_token` masked) and `instance_info` (secrets,
 * `configdrive` and `image_url` masked) as every caller may see them — Ironic 21.4
 * `node_sanitize` (Ironic 21.4 `ironic/api/controllers/v1/node.py`).
 *
 * The baremetal API's node display documents (src/api/baremetal/node-document.ts), which the
 * store keeps with every node, hold these public forms; a stored document is trusted only when
 * it was made under the running code's rules ({@link PUBLIC_FORMS_REVISION} is part of its
 * fingerprint).
 */
import { createHash } from 'node:crypto';
import { MASKING_REVISION, maskDriverInternalInfo, maskInstanceInfo, maskSecrets, type JsonObject } from './masking.ts';

/** A node field with a public form (the only JSON fields that can hold secrets). */
export type PublicFormField = 'driver_info' | 'driver_internal_info' | 'instance_info';

const FORMS: Readonly<Record<PublicFormField, (value: Readonly<JsonObject>) => JsonObject>> = Object.freeze({
  driver_info: maskSecrets,
  driver_internal_info: maskDriverInternalInfo,
  instance_info: maskInstanceInfo,
});

/** True for `driver_info`, `driver_internal_info` and `instance_info`. */
export function isPublicFormField(field: string): field is PublicFormField {
  return field === 'driver_info' || field === 'driver_internal_info' || field === 'instance_info';
}

/**
 * The value of a secret-bearing field as every caller may see it (before per-caller redaction).
 * @param value the stored value (secrets possibly sealed, `enc:v1:…`); not modified
 * @returns a masked copy (or `value` itself when nothing needed masking)
 */
export function publicForm(field: PublicFormField, value: Readonly<JsonObject>): JsonObject {
  return FORMS[field](value);
}

/**
 * Fingerprint (16 hex digits) of the rules producing public forms: the masking rules
 * (`MASKING_REVISION`) and this module's mapping.
 */
export const PUBLIC_FORMS_REVISION: string = createHash('sha256')
  .update(JSON.stringify([MASKING_REVISION, Object.entries(FORMS).map(([k, f]) => `${k}:${f.name}`), String(publicForm)]))
  .digest('hex')
  .slice(0, 16);
