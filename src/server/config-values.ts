/**
 * The value parsers of esi's configuration: each takes a setting's text as given (option,
 * environment or config file, already turned into a string) and returns its typed value, or
 * throws a {@link ConfigError} whose message names the setting and the bad value.
 */
import { KNOWN_DRIVERS } from '../drivers/hardware/registry.ts';
import { ConfigError, type Config, type Role } from './config-types.ts';

/**
 * An integer setting.
 * @param name the setting, as the message names it
 * @param min smallest accepted value (inclusive)
 * @param max largest accepted value (inclusive)
 * @throws ConfigError when `value` is not an integer or out of range
 */
export function toInt(value: string, name: string, min: number, max: number): number {
  if (!/^-?\d+$/.test(value.trim())) throw new ConfigError(`${name} must be an integer (got "${value}")`);
  const n = Number(value);
  if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max} (got ${n})`);
  return n;
}

/** A TCP port, 0 (any free port) to 65535. @throws ConfigError naming the setting */
export function toPort(value: string, name: string): number {
  return toInt(value, name, 0, 65_535);
}

/** A boolean: `1|true|yes|on` or `0|false|no|off`, any case. @throws ConfigError naming the setting */
export function parseBool(value: string, name: string): boolean {
  const v = value.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'false', 'no', 'off'].includes(v)) return false;
  throw new ConfigError(`${name} must be true or false (got "${value}")`);
}

/** `value` when it is one of `allowed`. @throws ConfigError naming the setting */
export function oneOfSetting<T extends string>(value: string, name: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(value)) throw new ConfigError(`${name} must be one of ${allowed.join(', ')} (got ${value})`);
  return value as T;
}

/**
 * The secret key sealing secrets at rest: base64 of exactly 32 bytes, or null for none.
 * @throws ConfigError when it is not
 */
export function parseSecretKey(value: string | null): string | null {
  if (value === null) return null;
  const v = value.trim();
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(v) || Buffer.from(v, 'base64').length !== 32) {
    throw new ConfigError('secret key (ESI_SECRET_KEY) must be the base64 encoding of 32 bytes');
  }
  return v;
}

/** Comma-separated process roles (`api`, `conductor`), deduplicated. @throws ConfigError for none or an unknown one */
export function parseRoles(value: string): Role[] {
  const roles = value
    .split(',')
    .map((r) => r.trim())
    .filter(Boolean);
  if (roles.length === 0) throw new ConfigError('roles must name at least one of: api, conductor');
  for (const r of roles) {
    if (r !== 'api' && r !== 'conductor') throw new ConfigError(`unknown role "${r}" (roles are api, conductor)`);
  }
  return [...new Set(roles)] as Role[];
}

/** Comma-separated hardware types, each one the registry knows. @throws ConfigError for none or an unknown one */
export function parseHardwareTypes(value: string): string[] {
  const names = [
    ...new Set(
      value
        .split(',')
        .map((n) => n.trim())
        .filter(Boolean),
    ),
  ];
  if (names.length === 0) throw new ConfigError(`enabled hardware types must name at least one of: ${KNOWN_DRIVERS.join(', ')}`);
  const unknown = names.filter((n) => !KNOWN_DRIVERS.includes(n));
  if (unknown.length > 0) throw new ConfigError(`unknown hardware types ${unknown.join(', ')} (known: ${KNOWN_DRIVERS.join(', ')})`);
  return names;
}

/** The log format: `pretty`, `json` or `auto`, any case. @throws ConfigError for another */
export function parseLogFormat(value: string): Config['logFormat'] {
  const v = value.trim().toLowerCase();
  if (v === 'pretty' || v === 'json' || v === 'auto') return v;
  throw new ConfigError(`log format must be one of pretty, json, auto (got "${value}")`);
}

/** A pino log level (`fatal` … `trace`, `silent`), any case. @throws ConfigError for another */
export function parseLogLevel(value: string): Config['logLevel'] {
  const levels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
  const v = value.trim().toLowerCase();
  if ((levels as readonly string[]).includes(v)) return v as Config['logLevel'];
  throw new ConfigError(`log level must be one of ${levels.join(', ')} (got "${value}")`);
}

/** Hide the password of a database URL for messages. */
export function redactUrl(url: string): string {
  return url.replace(/\/\/([^:/@]+):([^@]*)@/, '//$1:******@');
}

/** Freeze `value` and every object inside it; returns it. */
export function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
