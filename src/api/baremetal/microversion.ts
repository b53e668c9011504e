/**
 * Ironic API microversions (https://docs.openstack.org/api-ref/baremetal/#api-versions; Ironic 21.4
 * `ironic/api/controllers/v1/versions.py` and `VERSIONED_FIELDS` in `utils.py`): negotiation of the
 * `X-OpenStack-Ironic-API-Version` header and the version gates of fields, verbs and filters.
 *
 * - Supported range 1.1 … 1.82. No header → 1.1 (the minimum, not the maximum); `latest` →
 *   1.82. A malformed header, a major version other than 1 or a minor out of range → 406 with
 *   the Min/Max headers (python-ironicclient reads them from that 406 and retries with a version
 *   it can use; Ironic 21.4 omits them for a malformed header, esi always sends them), worded as
 *   Ironic; on resource paths the body has webob's shape, on `/v1` itself Ironic's usual one
 *   (./index.ts).
 * - Fields newer than the request's version are hidden in responses and refused (406) in
 *   create and PATCH bodies (`VERSIONED_FIELDS` of Ironic's `v1/utils.py`).
 */
import type { NodeField } from '../../domain/inventory/model.ts';
import type { ProvisionVerb } from '../../domain/inventory/states.ts';

/** Lowest supported minor version. */
export const MIN_MINOR = 1;
/** Highest supported minor version (Ironic 21.4: 1.82). */
export const MAX_MINOR = 82;
/** Header names. */
export const VERSION_HEADER = 'x-openstack-ironic-api-version';
export const MIN_HEADER = 'x-openstack-ironic-api-minimum-version';
export const MAX_HEADER = 'x-openstack-ironic-api-maximum-version';

/** A feature was used with a microversion too old (or too new) for it: HTTP 406. */
export class NotAcceptableError extends Error {
  readonly code = 'NotAcceptable';
  constructor(message = 'Request not acceptable.') {
    super(message);
    this.name = 'NotAcceptableError';
  }
}

/** A method a resource does not allow at the request's version (HTTP 405), e.g. a PATCH of an allocation before 1.57. */
export class MethodNotAllowedError extends Error {
  readonly code = 'MethodNotAllowed';
  constructor(message: string) {
    super(message);
    this.name = 'MethodNotAllowedError';
  }
}

/** The requested version cannot be served (Ironic `Version.parse_headers`): HTTP 406. */
export class VersionNotAcceptableError extends NotAcceptableError {
  constructor(message: string) {
    super(message);
    this.name = 'VersionNotAcceptableError';
  }
}

/**
 * The minor version a request asks for.
 * @param header the `X-OpenStack-Ironic-API-Version` value (absent → 1.1)
 * @returns the minor version number
 * @throws VersionNotAcceptableError for a malformed or unsupported version, worded as Ironic
 */
export function negotiateVersion(header: string | string[] | undefined): number {
  const raw = Array.isArray(header) ? header[0] : header;
  if (raw === undefined || raw.trim() === '') return MIN_MINOR;
  const value = raw.trim();
  if (value.toLowerCase() === 'latest') return MAX_MINOR;
  const m = /^\s*([+-]?\d+)\s*\.\s*([+-]?\d+)\s*$/.exec(value);
  if (!m) throw new VersionNotAcceptableError('Invalid value for X-OpenStack-Ironic-API-Version header');
  const major = Number(m[1]);
  const minor = Number(m[2]);
  const range = `The supported version range is: [1.${MIN_MINOR}, 1.${MAX_MINOR}].`;
  if (major !== 1) {
    throw new VersionNotAcceptableError(
      `Mutually exclusive versions requested. Version ${value} requested but not supported by this service. ${range}`,
    );
  }
  if (minor < MIN_MINOR || minor > MAX_MINOR) {
    throw new VersionNotAcceptableError(`Version ${value} was requested but the minor version is not supported by this service. ${range}`);
  }
  return minor;
}

/** @throws NotAcceptableError when `version` < `min` */
export function requireVersion(version: number, min: number, what?: string): void {
  if (version < min) {
    throw new NotAcceptableError(
      what
        ? `${what} requires API version 1.${min} or later; the request used 1.${version}.`
        : `Request not acceptable. The minimal required API version should be 1.${min}`,
    );
  }
}

/** Minimum minor version of each node field that is newer than 1.1 (Ironic `VERSIONED_FIELDS`). */
export const NODE_FIELD_VERSIONS: Readonly<Record<string, number>> = Object.freeze({
  driver_internal_info: 3,
  name: 5,
  inspection_finished_at: 6,
  inspection_started_at: 6,
  clean_step: 7,
  raid_config: 12,
  target_raid_config: 12,
  network_interface: 20,
  resource_class: 21,
  boot_interface: 31,
  console_interface: 31,
  deploy_interface: 31,
  inspect_interface: 31,
  management_interface: 31,
  power_interface: 31,
  raid_interface: 31,
  vendor_interface: 31,
  storage_interface: 33,
  traits: 37,
  rescue_interface: 38,
  bios_interface: 40,
  fault: 42,
  deploy_step: 44,
  conductor_group: 46,
  automated_clean: 47,
  protected: 48,
  protected_reason: 48,
  conductor: 49,
  owner: 50,
  description: 51,
  allocation_uuid: 52,
  retired: 61,
  retired_reason: 61,
  lessee: 65,
  network_data: 66,
  boot_mode: 75,
  secure_boot: 75,
  shard: 82,
});

/** True when a node field (or `conductor`) exists at this version. */
export function nodeFieldAllowed(field: string, version: number): boolean {
  return version >= (NODE_FIELD_VERSIONS[field] ?? MIN_MINOR);
}

/** Node fields newer than `version` that are set (non-empty) in a create body → 406. */
export function rejectNewerNodeFields(body: Readonly<Record<string, unknown>>, version: number): void {
  for (const [field, min] of Object.entries(NODE_FIELD_VERSIONS)) {
    if (version >= min || !Object.hasOwn(body, field)) continue;
    const v = body[field];
    if (field === 'conductor_group' ? v === '' || v === null : v === null) continue;
    throw new NotAcceptableError(`Field ${field} is not acceptable in version 1.${version}; it requires 1.${min}.`);
  }
}

/** Minimum minor version of each port field newer than 1.1. */
export const PORT_FIELD_VERSIONS: Readonly<Record<string, number>> = Object.freeze({
  internal_info: 18,
  local_link_connection: 19,
  pxe_enabled: 19,
  portgroup_uuid: 24,
  physical_network: 34,
  is_smartnic: 53,
});

/** True when a port field exists at this version. */
export function portFieldAllowed(field: string, version: number): boolean {
  return version >= (PORT_FIELD_VERSIONS[field] ?? MIN_MINOR);
}

/** Minimum version of each provision verb (Ironic `MIN_VERB_VERSIONS`). */
export const VERB_VERSIONS: Readonly<Partial<Record<ProvisionVerb, number>>> = Object.freeze({
  manage: 4,
  provide: 4,
  inspect: 6,
  abort: 13,
  clean: 15,
  adopt: 17,
  rescue: 38,
  unrescue: 38,
  deploy: 73,
  undeploy: 73,
});

/** Minimum version of each node list filter (query parameter). */
export const NODE_FILTER_VERSIONS: Readonly<Record<string, number>> = Object.freeze({
  fields: 8,
  provision_state: 9,
  driver: 16,
  resource_class: 21,
  fault: 42,
  conductor_group: 46,
  conductor: 49,
  owner: 50,
  description_contains: 51,
  lessee: 65,
  project: 65,
  shard: 82,
  sharded: 82,
});

/** Default fields of a node list (Ironic `_DEFAULT_RETURN_FIELDS`), before version hiding. */
export const NODE_DEFAULT_FIELDS: readonly NodeField[] = ['instance_uuid', 'maintenance', 'power_state', 'provision_state', 'uuid', 'name'];

/** Default fields of a port list. */
export const PORT_DEFAULT_FIELDS: readonly string[] = ['uuid', 'address'];

/** Version of the `detail=True` query on collections (before it: 400). */
export const DETAIL_QUERY_VERSION = 43;
/** Version from which new nodes start in `enroll` (before it: `available`). */
export const ENROLL_VERSION = 11;
