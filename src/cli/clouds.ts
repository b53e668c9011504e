/**
 * `clouds.yaml` for the esi CLI, read as the `openstack` CLI (openstacksdk's config loader and
 * osc-lib) reads it, and turned into the `OS_*` settings `./session.ts` understands.
 *
 * Which cloud: `--os-cloud <name>` (see {@link registerCloudOption}), else `OS_CLOUD`; with
 * neither, the `OS_*` environment alone when it holds any setting other than the selectors
 * (`OS_CLOUD`, `OS_REGION_NAME`, `OS_CLIENT_CONFIG_FILE`, `OS_CLIENT_SECURE_FILE`,
 * `OS_CLOUD_NAME`), else the one cloud of a file that defines exactly one.
 *
 * Where: the first of `OS_CLIENT_CONFIG_FILE`, `./clouds.{yaml,yml,json}`,
 * `~/.config/openstack/clouds.{yaml,yml,json}`, `/etc/openstack/clouds.{yaml,yml,json}` that
 * exists and can be read; `secure.{yaml,yml,json}` (or `OS_CLIENT_SECURE_FILE`), looked for in
 * the same places, is merged over it key by key (passwords kept apart from the rest). YAML is
 * read as YAML 1.1, as PyYAML reads it (`yes`/`no` are booleans); within a cloud, numbers become
 * strings and `-` in keys `_` (cloud names are kept as written).
 *
 * What a cloud may say (keys with `-` are read as `_`): `auth_type` (`password`, `v3password`,
 * `token`, `v3token`, `v3applicationcredential`), `auth: {auth_url, username | user_id,
 * password, project_name | project_id (tenant_* too), user_domain_name | user_domain_id,
 * project_domain_name | project_domain_id, domain_name | domain_id (both domains at once),
 * default_domain_name | default_domain_id, token, application_credential_id |
 * application_credential_name, application_credential_secret, system_scope}`, `region_name` or
 * `regions` (names, or `{name, values}` whose values override the cloud's), `interface` (or
 * `endpoint_type`), `cacert`, `verify: false`. A region asked for must be one of the cloud's.
 *
 * Precedence, as the `openstack` CLI's: a non-empty `OS_*` variable overrides the cloud's
 * value of the same setting (osc-lib's options default to the environment and win over
 * clouds.yaml). Vendor profiles (`profile:`) are not read; esi says so.
 *
 * Errors are {@link CloudsConfigError}s naming the file and the setting, never a secret.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Command } from 'commander';
import { parse } from 'yaml';

/** A problem with clouds.yaml; `./session.ts` shows it as `esi: <message>`. */
export class CloudsConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CloudsConfigError';
  }
}

/** Where the files are looked for (the process's by default; tests give their own). */
export interface CloudsLocations {
  /** The current directory (`./clouds.yaml`). */
  readonly cwd: string;
  /** The home directory (`~/.config/openstack`). */
  readonly home: string;
  /** The system directory, `/etc/openstack`. */
  readonly system: string;
}

/** The process's locations: its working directory, its home (`HOME`), `/etc/openstack`. */
export function defaultLocations(env: NodeJS.ProcessEnv = process.env): CloudsLocations {
  return { cwd: process.cwd(), home: env.HOME && env.HOME !== '' ? env.HOME : os.homedir(), system: '/etc/openstack' };
}

const SUFFIXES = ['.yaml', '.yml', '.json'] as const;
const SELECTORS = new Set(['OS_CLOUD', 'OS_REGION_NAME', 'OS_CLIENT_CONFIG_FILE', 'OS_CLIENT_SECURE_FILE', 'OS_CLOUD_NAME']);

/**
 * The files looked for, in order: the override variable's, then `<base>` with each suffix in
 * the current directory, `~/.config/openstack` and the system directory.
 */
export function candidateFiles(base: 'clouds' | 'secure', env: NodeJS.ProcessEnv, where: CloudsLocations): string[] {
  const override = env[base === 'clouds' ? 'OS_CLIENT_CONFIG_FILE' : 'OS_CLIENT_SECURE_FILE'];
  const dirs = [where.cwd, path.join(where.home, '.config', 'openstack'), where.system];
  return [...(override ? [override] : []), ...dirs.flatMap((d) => SUFFIXES.map((s) => path.join(d, `${base}${s}`)))];
}

/** A JSON-like object. */
type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Keys with `-` as `_`, numbers as strings, recursively (openstacksdk `normalize_keys`). */
function normalise(v: unknown): unknown {
  if (typeof v === 'number' || typeof v === 'bigint') return String(v);
  if (Array.isArray(v)) return v.map(normalise);
  if (!isObj(v)) return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k.replace(/-/g, '_'), normalise(x)]));
}

/** `over` merged into `base`, objects key by key (openstacksdk `merge_clouds`). */
function merge(base: Obj, over: Obj): Obj {
  const out: Obj = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = isObj(v) && isObj(out[k]) ? merge(out[k], v) : v;
  return out;
}

/**
 * Read the first existing, readable file of `files`.
 * @returns its path and its content, or null when none exists
 * @throws CloudsConfigError when the file is not valid YAML/JSON or not a mapping
 */
export function readFirst(files: readonly string[]): { path: string; content: Obj } | null {
  for (const file of files) {
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'EACCES' || code === 'EISDIR' || code === 'ENOTDIR') continue;
      throw new CloudsConfigError(`cannot read ${file}: ${(err as Error).message}`);
    }
    let parsed: unknown;
    try {
      parsed = file.endsWith('json') ? JSON.parse(text) : parse(text, { version: '1.1', intAsBigInt: true });
    } catch (err) {
      throw new CloudsConfigError(
        `${file} is not valid ${file.endsWith('json') ? 'JSON' : 'YAML'}: ${(err as Error).message.split('\n')[0]}`,
      );
    }
    if (parsed === null || parsed === undefined) return { path: file, content: {} };
    if (!isObj(parsed)) throw new CloudsConfigError(`${file} must hold a mapping with a "clouds" key.`);
    return { path: file, content: parsed };
  }
  return null;
}

/** True when the environment holds an `OS_*` setting that is not only a selector. */
function envHasSettings(env: NodeJS.ProcessEnv): boolean {
  return Object.entries(env).some(
    ([k, v]) => k.startsWith('OS_') && !SELECTORS.has(k) && !/^OS_(TEST|STD|LOG)/.test(k) && v !== undefined && v !== '',
  );
}

/**
 * The `OS_*` settings to use: the chosen cloud of clouds.yaml (merged with secure.yaml) turned
 * into `OS_*` names, overridden by the non-empty `OS_*` variables of `env`; or `env` itself
 * when no cloud is chosen.
 * @param env the environment (`OS_CLOUD`, `OS_CLIENT_CONFIG_FILE`, overrides)
 * @param cloudName `--os-cloud`, which beats `OS_CLOUD`
 * @throws CloudsConfigError for a named cloud that is not there, a bad file or a setting esi
 *   cannot use
 */
export function cloudEnvironment(env: NodeJS.ProcessEnv, where: CloudsLocations, cloudName: string | null = null): NodeJS.ProcessEnv {
  const explicit = cloudName ?? (env.OS_CLOUD && env.OS_CLOUD !== '' ? env.OS_CLOUD : null);
  if (!explicit && envHasSettings(env)) return env;
  const file = readFirst(candidateFiles('clouds', env, where));
  const secure = readFirst(candidateFiles('secure', env, where));
  const config = merge(file?.content ?? {}, secure?.content ?? {});
  const clouds = isObj(config.clouds) ? config.clouds : {};
  let name = explicit;
  if (!name) {
    const names = Object.keys(clouds);
    if (names.length !== 1) return env;
    name = names[0]!;
  }
  const cloud = normalise(clouds[name]);
  if (!isObj(cloud)) {
    const known = Object.keys(clouds);
    throw new CloudsConfigError(
      file
        ? `cloud "${name}" is not in ${file.path}${known.length ? ` (clouds: ${known.join(', ')})` : ''}.`
        : `cloud "${name}" was asked for, but there is no clouds.yaml (looked in ${[where.cwd, path.join(where.home, '.config', 'openstack'), where.system].join(', ')}).`,
    );
  }
  const source = file?.path ?? secure?.path ?? 'clouds.yaml';
  const fromCloud = cloudVariables(name, cloud, env.OS_REGION_NAME && env.OS_REGION_NAME !== '' ? env.OS_REGION_NAME : null, source);
  const overrides = Object.fromEntries(Object.entries(env).filter(([k, v]) => k.startsWith('OS_') && v !== undefined && v !== ''));
  return { ...fromCloud, ...overrides };
}

/**
 * One cloud's settings as `OS_*` variables.
 * @param region the region asked for (`OS_REGION_NAME`), checked against the cloud's regions
 * @param file the file named in messages
 */
export function cloudVariables(name: string, cloud: Obj, region: string | null, file: string): Record<string, string> {
  if (cloud.profile !== undefined || cloud.cloud !== undefined) {
    throw new CloudsConfigError(`cloud "${name}" in ${file} names a vendor profile; esi does not read profiles: write its settings out.`);
  }
  const regions = regionsOf(name, cloud, file);
  let chosen: { name: string; values: Obj } | null = null;
  if (regions.length > 0) {
    chosen = region === null ? regions[0]! : (regions.find((r) => r.name === region) ?? null);
    if (!chosen) {
      throw new CloudsConfigError(
        `region "${region}" is not a region of cloud "${name}" in ${file} (regions: ${regions.map((r) => r.name).join(', ')}).`,
      );
    }
  }
  const c = chosen ? merge(cloud, normalise(chosen.values) as Obj) : cloud;
  const auth = isObj(c.auth) ? c.auth : {};
  /** The value of the last of `keys` that is set; the auth section's wins over the cloud's own (openstacksdk). */
  const pick = (...keys: string[]): string | undefined => {
    let found: string | undefined;
    for (const k of keys) {
      for (const v of [c[k], auth[k]]) if (typeof v === 'string' && v !== '') found = v;
    }
    return found;
  };
  const projectId = pick('tenant_id', 'project_id');
  const projectName = pick('tenant_name', 'project_name');
  const domainId = pick('domain_id');
  const domainName = pick('domain_name');
  if ((domainId || domainName) && !projectId && !projectName) {
    throw new CloudsConfigError(`cloud "${name}" in ${file} asks for a domain scope; esi issues project- and system-scoped tokens only.`);
  }
  const out: Record<string, string | undefined> = {
    OS_AUTH_TYPE: pick('auth_plugin', 'auth_type'),
    OS_AUTH_URL: pick('auth_url'),
    OS_USERNAME: pick('username'),
    OS_USER_ID: pick('user_id'),
    OS_PASSWORD: pick('password'),
    OS_PROJECT_ID: projectId,
    OS_PROJECT_NAME: projectName,
    OS_USER_DOMAIN_ID: pick('user_domain_id') ?? domainId ?? pick('default_domain_id'),
    OS_USER_DOMAIN_NAME: pick('user_domain_name') ?? domainName ?? pick('default_domain_name'),
    OS_PROJECT_DOMAIN_ID: pick('project_domain_id') ?? domainId ?? pick('default_domain_id'),
    OS_PROJECT_DOMAIN_NAME: pick('project_domain_name') ?? domainName ?? pick('default_domain_name'),
    OS_TOKEN: pick('auth_token', 'token'),
    OS_APPLICATION_CREDENTIAL_ID: pick('application_credential_id'),
    OS_APPLICATION_CREDENTIAL_NAME: pick('application_credential_name'),
    OS_APPLICATION_CREDENTIAL_SECRET: pick('application_credential_secret'),
    OS_SYSTEM_SCOPE: pick('system_scope'),
    OS_REGION_NAME: chosen?.name,
    OS_INTERFACE: pick('endpoint_type', 'interface'),
    OS_CACERT: pick('cacert'),
    OS_INSECURE: c.verify === false || c.verify === 'false' || c.insecure === true || c.insecure === 'true' ? 'true' : undefined,
  };
  return Object.fromEntries(Object.entries(out).filter((e): e is [string, string] => e[1] !== undefined));
}

/** A cloud's regions: `regions` (names or `{name, values}`), else `region_name` (a comma list is split). */
function regionsOf(name: string, cloud: Obj, file: string): Array<{ name: string; values: Obj }> {
  const bad = (what: unknown) => new CloudsConfigError(`cloud "${name}" in ${file} has an invalid region entry: ${JSON.stringify(what)}.`);
  if (Array.isArray(cloud.regions)) {
    return cloud.regions.map((r) => {
      if (typeof r === 'string' && r !== '') return { name: r, values: {} };
      if (isObj(r) && typeof r.name === 'string' && Object.keys(r).every((k) => k === 'name' || k === 'values')) {
        if (r.values !== undefined && !isObj(r.values)) throw bad(r);
        return { name: r.name, values: r.values ?? {} };
      }
      throw bad(r);
    });
  }
  if (cloud.regions !== undefined) throw bad(cloud.regions);
  const rn = cloud.region_name;
  const names = Array.isArray(rn) ? rn : typeof rn === 'string' ? rn.split(',') : [];
  return names.filter((n): n is string => typeof n === 'string' && n.trim() !== '').map((n) => ({ name: n.trim(), values: {} }));
}

/**
 * Add the global `--os-cloud <name>` option to the program, as the `openstack` CLI has it: it
 * picks a cloud of clouds.yaml and beats `OS_CLOUD` (it is passed on as `OS_CLOUD` before the
 * command runs). Accepted before or after the command's own words.
 */
export function registerCloudOption(program: Command): void {
  program.option('--os-cloud <name>', 'a cloud of clouds.yaml (default: OS_CLOUD)');
  program.hook('preAction', (root) => {
    const cloud = root.opts<{ osCloud?: string }>().osCloud;
    if (cloud !== undefined) process.env.OS_CLOUD = cloud;
  });
}
