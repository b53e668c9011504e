/**
 * `driver_info` of the `redfish` hardware type: the accepted keys, their descriptions for
 * `GET /v1/drivers/redfish/properties`, and parsing/validation into {@link RedfishDriverInfo}.
 *
 * Follows Ironic 21.4's `ironic/drivers/modules/redfish/utils.py` (`parse_driver_info`):
 * - `redfish_address` is required; an address without a scheme gets `https://`; only `http`
 *   and `https` are accepted. esi also refuses credentials inside the URL (they belong in
 *   `redfish_username`/`redfish_password`, where they are encrypted and masked);
 * - `redfish_system_id` is the path of the ComputerSystem (`/redfish/v1/Systems/<id>`); when
 *   absent the BMC must have exactly one system;
 * - `redfish_verify_ca` is a boolean (or a boolean-like string) or the path of a CA bundle file;
 * - `redfish_auth_type` is `basic`, `session` or `auto` (default `auto`: a session, else Basic).
 */
import fs from 'node:fs';
import { InvalidInputError } from '../../../domain/errors.ts';

/** How the driver authenticates to the BMC. */
export type RedfishAuthType = 'basic' | 'session' | 'auto';

/** Parsed, validated `driver_info` of a redfish node. */
export interface RedfishDriverInfo {
  /** Scheme, host and port of the BMC, no trailing slash, e.g. `http://127.0.0.1:8586`. */
  readonly address: string;
  /** Path of the ComputerSystem, or null to use the BMC's only system. */
  readonly systemId: string | null;
  readonly username: string | null;
  /** Secret: never logged, never put in a message. */
  readonly password: string | null;
  readonly authType: RedfishAuthType;
  /** Verify the BMC's TLS certificate (true), do not (false), or against this CA bundle file. */
  readonly verifyCa: boolean | string;
}

/** Descriptions of the accepted `driver_info` keys (Ironic's `COMMON_PROPERTIES` of redfish). */
export const REDFISH_PROPERTIES: Readonly<Record<string, string>> = Object.freeze({
  redfish_address:
    'The URL of the Redfish controller, e.g. https://bmc.example.com:8443 (https:// is assumed when no scheme is given). Required.',
  redfish_system_id:
    'The canonical path of the ComputerSystem resource the driver controls, e.g. /redfish/v1/Systems/1. Optional when the controller manages exactly one system.',
  redfish_username: 'User name for the Redfish controller. Optional.',
  redfish_password: 'Password for redfish_username. Optional.',
  redfish_verify_ca:
    'Whether to verify the TLS certificate of the controller: true, false, or the path of a CA bundle file on the conductor. Optional, default true.',
  redfish_auth_type:
    'Authentication to use: "basic" (HTTP Basic on every request), "session" (a Redfish session token) or "auto" (try a session, fall back to Basic). Optional, default "auto".',
});

const AUTH_TYPES: readonly RedfishAuthType[] = ['basic', 'session', 'auto'];
const TRUE_STRINGS = new Set(['true', '1', 'yes', 'on', 't', 'y']);
const FALSE_STRINGS = new Set(['false', '0', 'no', 'off', 'f', 'n']);

/**
 * Parses and validates a redfish node's `driver_info`. Unknown keys are ignored (other
 * interfaces read their own keys from the same object).
 *
 * @throws InvalidInputError naming every missing or invalid key; the password is never quoted.
 */
export function parseRedfishDriverInfo(driverInfo: Readonly<Record<string, unknown>>): RedfishDriverInfo {
  if (driverInfo === null || typeof driverInfo !== 'object' || Array.isArray(driverInfo)) {
    throw new InvalidInputError('driver_info must be an object.');
  }
  const problems: string[] = [];

  let address = '';
  const rawAddress = driverInfo.redfish_address;
  if (rawAddress === undefined || rawAddress === null || rawAddress === '') {
    problems.push('redfish_address is missing');
  } else if (typeof rawAddress !== 'string') {
    problems.push('redfish_address must be a string');
  } else {
    const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(rawAddress) ? rawAddress : `https://${rawAddress}`;
    let url: URL | null = null;
    try {
      url = new URL(withScheme);
    } catch {
      problems.push('redfish_address is not a valid URL');
    }
    if (url !== null) {
      if (url.protocol !== 'http:' && url.protocol !== 'https:') {
        problems.push(`redfish_address must use http or https, not ${url.protocol.replace(/:$/, '')}`);
      } else if (url.username !== '' || url.password !== '') {
        problems.push('redfish_address must not contain credentials; use redfish_username and redfish_password');
      } else {
        address = url.origin;
      }
    }
  }

  let systemId: string | null = null;
  const rawSystem = driverInfo.redfish_system_id;
  if (rawSystem !== undefined && rawSystem !== null && rawSystem !== '') {
    if (typeof rawSystem !== 'string' || !rawSystem.startsWith('/') || /[\s?#]/.test(rawSystem) || rawSystem.includes('..')) {
      problems.push('redfish_system_id must be a resource path such as /redfish/v1/Systems/1');
    } else {
      systemId = rawSystem.replace(/\/+$/, '');
    }
  }

  const username = optionalString(driverInfo, 'redfish_username', problems);
  const password = optionalString(driverInfo, 'redfish_password', problems);
  if (password !== null && username === null) problems.push('redfish_password is set but redfish_username is not');

  let authType: RedfishAuthType = 'auto';
  const rawAuth = driverInfo.redfish_auth_type;
  if (rawAuth !== undefined && rawAuth !== null && rawAuth !== '') {
    if (typeof rawAuth === 'string' && (AUTH_TYPES as readonly string[]).includes(rawAuth)) authType = rawAuth as RedfishAuthType;
    else problems.push(`redfish_auth_type must be one of ${AUTH_TYPES.join(', ')}`);
  }

  let verifyCa: boolean | string = true;
  const rawVerify = driverInfo.redfish_verify_ca;
  if (typeof rawVerify === 'boolean') {
    verifyCa = rawVerify;
  } else if (typeof rawVerify === 'string' && rawVerify !== '') {
    const lower = rawVerify.trim().toLowerCase();
    if (TRUE_STRINGS.has(lower)) verifyCa = true;
    else if (FALSE_STRINGS.has(lower)) verifyCa = false;
    else if (isFile(rawVerify)) verifyCa = rawVerify;
    else problems.push('redfish_verify_ca must be a boolean or the path of an existing CA bundle file');
  } else if (rawVerify !== undefined && rawVerify !== null && rawVerify !== '') {
    problems.push('redfish_verify_ca must be a boolean or the path of an existing CA bundle file');
  }

  if (problems.length > 0) {
    throw new InvalidInputError(`Invalid driver_info for the redfish driver: ${problems.join('; ')}.`, 'InvalidParameterValue');
  }
  return Object.freeze({ address, systemId, username, password, authType, verifyCa });
}

function optionalString(info: Readonly<Record<string, unknown>>, key: string, problems: string[]): string | null {
  const v = info[key];
  if (v === undefined || v === null || v === '') return null;
  if (typeof v !== 'string') {
    problems.push(`${key} must be a string`);
    return null;
  }
  return v;
}

function isFile(p: string): boolean {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}
