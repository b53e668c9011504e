/**
 * `driver_info` of the `ipmi` hardware type: the accepted keys, their descriptions for
 * `GET /v1/drivers/ipmi/properties`, and parsing/validation into {@link IpmiDriverInfo}.
 *
 * Keys and defaults follow Ironic's ipmitool modules (`ironic/drivers/modules/ipmitool.py`,
 * `REQUIRED_PROPERTIES`, `COMMON_PROPERTIES`, `CONSOLE_PROPERTIES`, `_parse_driver_info`):
 * - `ipmi_address` (required): host name or IP address of the BMC;
 * - `ipmi_port`: UDP port, default 623 (IPMI v2.0 §13.1, RMCP port);
 * - `ipmi_username`, `ipmi_password`: credentials (both optional: anonymous/null user);
 * - `ipmi_priv_level`: `ADMINISTRATOR` (default), `OPERATOR`, `USER`, `CALLBACK`;
 * - `ipmi_protocol_version`: `2.0` (default, `ipmitool -I lanplus`) or `1.5` (`-I lan`);
 * - `ipmi_cipher_suite`: RMCP+ cipher suite id (IPMI v2.0 §22.15.2), esi's default is 3
 *   (RAKP-HMAC-SHA1, HMAC-SHA1-96, AES-CBC-128) because ipmitool otherwise spends ~18 s per call
 *   negotiating with many BMCs (Ironic's default is ipmitool's own choice);
 * - `ipmi_disable_boot_timeout`: send "disable the 60 s boot flag timeout" (Set System Boot
 *   Options parameter 3) before setting a boot device, default true;
 * - `ipmi_terminal_port`: the serial console's TCP port on the conductor in Ironic's socat
 *   console; esi proxies the console over a websocket instead, so it is only validated.
 *
 * Ironic's bridging keys (`ipmi_bridging`, `ipmi_target_*`, `ipmi_transit_*`),
 * `ipmi_hex_kg_key` and `ipmi_force_boot_device=true` are not supported: a node that sets them is
 * refused with a clear message rather than silently talking to the wrong controller, without
 * its BMC key, or without re-sending its boot device at each power on.
 */
import { InvalidInputError } from '../../../domain/errors.ts';

/** IPMI privilege level of the session (`ipmitool -L`). */
export type IpmiPrivLevel = 'ADMINISTRATOR' | 'OPERATOR' | 'USER' | 'CALLBACK';

/** Parsed, validated `driver_info` of an ipmi node. */
export interface IpmiDriverInfo {
  /** BMC host name or IP address (no port). */
  readonly address: string;
  /** BMC UDP port. */
  readonly port: number;
  readonly username: string | null;
  /** Secret: never logged, never put in a message or on a command line. */
  readonly password: string | null;
  readonly privLevel: IpmiPrivLevel;
  readonly protocolVersion: '1.5' | '2.0';
  /** RMCP+ cipher suite id, 0–17 (IPMI v2.0 table 22-20 and later additions); used with 2.0 only. */
  readonly cipherSuite: number;
  readonly disableBootTimeout: boolean;
  /** Ironic's socat console port, or null; informational in esi. */
  readonly terminalPort: number | null;
}

/** Descriptions of the accepted `driver_info` keys (Ironic's ipmitool property texts, adapted). */
export const IPMI_PROPERTIES: Readonly<Record<string, string>> = Object.freeze({
  ipmi_address: "IP address or hostname of the node's BMC. Required.",
  ipmi_port: 'Remote IPMI RMCP port (UDP). Optional, default 623.',
  ipmi_username: 'User name of the BMC account. Optional (the anonymous user when absent).',
  ipmi_password: 'Password of the BMC account. Optional. Stored encrypted, shown as ******.',
  ipmi_priv_level: 'Privilege level of the IPMI session: ADMINISTRATOR, OPERATOR, USER or CALLBACK. Optional, default ADMINISTRATOR.',
  ipmi_protocol_version: 'IPMI protocol version: "2.0" (RMCP+, ipmitool lanplus) or "1.5" (RMCP, ipmitool lan). Optional, default "2.0".',
  ipmi_cipher_suite: 'RMCP+ cipher suite id (0-17) for IPMI 2.0 sessions. Optional, default 3 (HMAC-SHA1 with AES-CBC-128).',
  ipmi_disable_boot_timeout:
    "Whether to disable the BMC's 60-second boot device timeout before setting a boot device. Optional, default true.",
  ipmi_terminal_port:
    "TCP port of the serial console in Ironic's socat console. Optional; esi serves the console over its websocket instead.",
});

const PRIV_LEVELS: readonly IpmiPrivLevel[] = ['ADMINISTRATOR', 'OPERATOR', 'USER', 'CALLBACK'];
const UNSUPPORTED_KEYS = [
  'ipmi_bridging',
  'ipmi_target_address',
  'ipmi_target_channel',
  'ipmi_transit_address',
  'ipmi_transit_channel',
  'ipmi_local_address',
  'ipmi_hex_kg_key',
];
const TRUE_STRINGS = new Set(['true', '1', 'yes', 'on', 't', 'y']);
const FALSE_STRINGS = new Set(['false', '0', 'no', 'off', 'f', 'n']);
/** A host name (RFC 1123 labels), an IPv4 address, or an IPv6 address (optionally in brackets). */
const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*|\[?[0-9A-Fa-f:.]+\]?)$/;

/**
 * Parses and validates an ipmi node's `driver_info`. Unknown keys are ignored (other
 * interfaces read their own keys from the same object). Numbers may be given as JSON
 * numbers or decimal strings, as the `openstack` CLI sends every `--driver-info` value as a string.
 *
 * @throws InvalidInputError (`InvalidParameterValue`) naming every missing or invalid key; the
 *   password is never quoted.
 */
export function parseIpmiDriverInfo(driverInfo: Readonly<Record<string, unknown>>): IpmiDriverInfo {
  if (driverInfo === null || typeof driverInfo !== 'object' || Array.isArray(driverInfo)) {
    throw new InvalidInputError('driver_info must be an object.');
  }
  const problems: string[] = [];

  let address = '';
  const rawAddress = driverInfo.ipmi_address;
  if (rawAddress === undefined || rawAddress === null || rawAddress === '') problems.push('ipmi_address is missing');
  else if (typeof rawAddress !== 'string' || rawAddress.length > 253 || !HOST.test(rawAddress.trim())) {
    problems.push('ipmi_address must be a host name or an IP address');
  } else address = rawAddress.trim().replace(/^\[(.*)\]$/, '$1');

  const port = intKey(driverInfo, 'ipmi_port', 1, 65535, problems) ?? 623;
  const username = stringKey(driverInfo, 'ipmi_username', problems);
  const password = stringKey(driverInfo, 'ipmi_password', problems);
  // ipmitool limits passwords to 20 bytes for IPMI 2.0 (16 for 1.5) and user names to 16 bytes.
  if (username !== null && Buffer.byteLength(username) > 16) problems.push('ipmi_username must be at most 16 bytes');
  if (password !== null && Buffer.byteLength(password) > 20) problems.push('ipmi_password must be at most 20 bytes');

  let privLevel: IpmiPrivLevel = 'ADMINISTRATOR';
  const rawPriv = driverInfo.ipmi_priv_level;
  if (rawPriv !== undefined && rawPriv !== null && rawPriv !== '') {
    if (typeof rawPriv === 'string' && (PRIV_LEVELS as readonly string[]).includes(rawPriv.toUpperCase())) {
      privLevel = rawPriv.toUpperCase() as IpmiPrivLevel;
    } else problems.push(`ipmi_priv_level must be one of ${PRIV_LEVELS.join(', ')}`);
  }

  let protocolVersion: '1.5' | '2.0' = '2.0';
  const rawVersion = driverInfo.ipmi_protocol_version;
  if (rawVersion !== undefined && rawVersion !== null && rawVersion !== '') {
    const v = String(rawVersion);
    if (v === '1.5' || v === '2.0') protocolVersion = v;
    else if (v === '2') protocolVersion = '2.0';
    else problems.push('ipmi_protocol_version must be "1.5" or "2.0"');
  }

  const cipherSuite = intKey(driverInfo, 'ipmi_cipher_suite', 0, 17, problems) ?? 3;
  const terminalPort = intKey(driverInfo, 'ipmi_terminal_port', 1, 65535, problems);

  let disableBootTimeout = true;
  const rawDisable = driverInfo.ipmi_disable_boot_timeout;
  if (typeof rawDisable === 'boolean') disableBootTimeout = rawDisable;
  else if (typeof rawDisable === 'string' && rawDisable !== '') {
    const lower = rawDisable.trim().toLowerCase();
    if (TRUE_STRINGS.has(lower)) disableBootTimeout = true;
    else if (FALSE_STRINGS.has(lower)) disableBootTimeout = false;
    else problems.push('ipmi_disable_boot_timeout must be a boolean');
  } else if (rawDisable !== undefined && rawDisable !== null && rawDisable !== '') {
    problems.push('ipmi_disable_boot_timeout must be a boolean');
  }

  const force = driverInfo.ipmi_force_boot_device;
  if (force === true || (typeof force === 'string' && TRUE_STRINGS.has(force.trim().toLowerCase()))) {
    problems.push("ipmi_force_boot_device=true is not supported by esi's ipmi driver");
  }

  for (const key of UNSUPPORTED_KEYS) {
    const v = driverInfo[key];
    if (v !== undefined && v !== null && v !== '' && !(key === 'ipmi_bridging' && v === 'no')) {
      problems.push(`${key} is not supported by esi's ipmi driver`);
    }
  }

  if (problems.length > 0) {
    throw new InvalidInputError(`Invalid driver_info for the ipmi driver: ${problems.join('; ')}.`, 'InvalidParameterValue');
  }
  return Object.freeze({ address, port, username, password, privLevel, protocolVersion, cipherSuite, disableBootTimeout, terminalPort });
}

/** `host:port` of the BMC, for messages and per-BMC serialisation (IPv6 in brackets). */
export function bmcLabel(info: IpmiDriverInfo): string {
  return info.address.includes(':') ? `[${info.address}]:${info.port}` : `${info.address}:${info.port}`;
}

function stringKey(info: Readonly<Record<string, unknown>>, key: string, problems: string[]): string | null {
  const v = info[key];
  if (v === undefined || v === null || v === '') return null;
  if (typeof v !== 'string') {
    problems.push(`${key} must be a string`);
    return null;
  }
  if (/[\0\r\n]/.test(v)) {
    problems.push(`${key} must not contain NUL or line breaks`);
    return null;
  }
  return v;
}

function intKey(info: Readonly<Record<string, unknown>>, key: string, min: number, max: number, problems: string[]): number | null {
  const v = info[key];
  if (v === undefined || v === null || v === '') return null;
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\s*\d+\s*$/.test(v) ? Number(v) : NaN;
  if (!Number.isInteger(n) || n < min || n > max) {
    problems.push(`${key} must be an integer from ${min} to ${max}`);
    return null;
  }
  return n;
}
