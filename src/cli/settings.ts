/**
 * The settings of the CLI's connection to a cloud, read like the `openstack` CLI reads them
 * from a cloud of `clouds.yaml` (`--os-cloud` / `OS_CLOUD`, see `./clouds.ts`) and `OS_*`
 * environment variables (which override the cloud's values). `./session.ts` uses them.
 *
 * | variable                                          | use                                        |
 * |---------------------------------------------------|--------------------------------------------|
 * | `OS_CLOUD`                                        | a cloud of clouds.yaml (`--os-cloud` wins)  |
 * | `OS_AUTH_URL`                                     | Keystone, e.g. `http://host:8585/identity/v3` (a URL without `/v3` gets it appended) |
 * | `OS_AUTH_TYPE`                                    | `password`/`v3password`, `token`/`v3token`, `v3applicationcredential` (default: token when `OS_TOKEN` is set, else password) |
 * | `OS_USERNAME`, `OS_PASSWORD`                      | password authentication                    |
 * | `OS_USER_ID`                                      | the user by id instead of name             |
 * | `OS_USER_DOMAIN_NAME` / `OS_USER_DOMAIN_ID`       | the user's domain (default: id `default`)  |
 * | `OS_TOKEN`                                        | token authentication instead of a password |
 * | `OS_APPLICATION_CREDENTIAL_ID` / `_NAME`, `_SECRET` | application credential authentication (a name needs the user) |
 * | `OS_PROJECT_NAME` / `OS_PROJECT_ID`               | project scope                              |
 * | `OS_PROJECT_DOMAIN_NAME` / `OS_PROJECT_DOMAIN_ID` | the project's domain (default: id `default`) |
 * | `OS_SYSTEM_SCOPE`                                 | `all`: a system-scoped token               |
 * | `OS_REGION_NAME`                                  | pick endpoints of this region              |
 * | `OS_INTERFACE`                                    | `public` (default), `internal` or `admin`  |
 * | `OS_CACERT`                                       | CA bundle (PEM) for https                  |
 * | `OS_INSECURE`                                     | `true`: do not verify the server's certificate (clouds.yaml `verify: false`) |
 */
import { cloudEnvironment, CloudsConfigError, defaultLocations, type CloudsLocations } from './clouds.ts';
import { CliError } from './api-errors.ts';

/** An application credential: by id, or by name with its user (the session's user settings). */
export type ApplicationCredentialSettings = ({ readonly id: string } | { readonly name: string }) & { readonly secret: string };

/** Settings read from the environment. */
export interface SessionSettings {
  readonly authUrl: string;
  readonly username: string | null;
  readonly userId: string | null;
  readonly password: string | null;
  /** Token authentication when set (and no application credential). */
  readonly token: string | null;
  /** Application credential authentication when set (it carries its own scope). */
  readonly applicationCredential: ApplicationCredentialSettings | null;
  readonly userDomain: { id: string } | { name: string };
  readonly scope:
    | { readonly kind: 'project'; readonly id?: string; readonly name?: string; readonly domain: { id: string } | { name: string } }
    | { readonly kind: 'system' }
    | { readonly kind: 'unscoped' };
  readonly region: string | null;
  readonly interface: 'public' | 'internal' | 'admin';
  readonly caCert: string | null;
  /** Skip the verification of the server's TLS certificate. */
  readonly insecure: boolean;
}

const AUTH_TYPES: Readonly<Record<string, 'password' | 'token' | 'application_credential'>> = {
  password: 'password',
  v3password: 'password',
  token: 'token',
  v3token: 'token',
  v3applicationcredential: 'application_credential',
  applicationcredential: 'application_credential',
};

/**
 * Read the `OS_*` settings.
 * @param env the environment (normally `process.env`)
 * @throws CliError naming what is missing or wrong
 */
export function settingsFromEnv(env: NodeJS.ProcessEnv): SessionSettings {
  const get = (name: string): string | null => {
    const v = env[name];
    return v === undefined || v.trim() === '' ? null : v;
  };
  const authUrl = get('OS_AUTH_URL');
  if (!authUrl) {
    throw new CliError(
      'OS_AUTH_URL is not set; source an openrc file (e.g. <data-dir>/admin-openrc) first, or name a cloud of clouds.yaml (--os-cloud, OS_CLOUD).',
    );
  }
  try {
    const u = new URL(authUrl);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
  } catch {
    throw new CliError(`OS_AUTH_URL is not an http(s) URL: ${authUrl}`);
  }
  const authType = get('OS_AUTH_TYPE');
  const method = authType === null ? (get('OS_TOKEN') ? 'token' : 'password') : AUTH_TYPES[authType.toLowerCase()];
  if (!method) {
    throw new CliError(
      `OS_AUTH_TYPE "${authType}" is not supported by esi (password, v3password, token, v3token, v3applicationcredential).`,
    );
  }
  const token = method === 'token' ? get('OS_TOKEN') : null;
  const username = get('OS_USERNAME');
  const userId = get('OS_USER_ID');
  const password = get('OS_PASSWORD');
  if (method === 'token' && !token) throw new CliError('OS_TOKEN is not set (auth type token).');
  const applicationCredential = method === 'application_credential' ? appCredentialFrom(get, username || userId) : null;
  if (method === 'password') {
    if (!(username || userId)) throw new CliError('set OS_USERNAME (or OS_USER_ID) and OS_PASSWORD, or OS_TOKEN.');
    if (password === null) throw new CliError('OS_PASSWORD is not set.');
  }
  const domainOf = (idVar: string, nameVar: string): { id: string } | { name: string } => {
    const id = get(idVar);
    const name = get(nameVar);
    return id ? { id } : name ? { name } : { id: 'default' };
  };
  const system = get('OS_SYSTEM_SCOPE');
  if (system !== null && system !== 'all') throw new CliError(`OS_SYSTEM_SCOPE must be "all" (got "${system}").`);
  const projectId = get('OS_PROJECT_ID');
  const projectName = get('OS_PROJECT_NAME') ?? get('OS_TENANT_NAME');
  const scope: SessionSettings['scope'] = system
    ? { kind: 'system' }
    : projectId
      ? { kind: 'project', id: projectId, domain: domainOf('OS_PROJECT_DOMAIN_ID', 'OS_PROJECT_DOMAIN_NAME') }
      : projectName
        ? { kind: 'project', name: projectName, domain: domainOf('OS_PROJECT_DOMAIN_ID', 'OS_PROJECT_DOMAIN_NAME') }
        : { kind: 'unscoped' };
  const iface = (get('OS_INTERFACE') ?? 'public').replace(/URL$/, '');
  if (iface !== 'public' && iface !== 'internal' && iface !== 'admin')
    throw new CliError(`OS_INTERFACE must be public, internal or admin (got "${iface}").`);
  return {
    authUrl: authUrl.replace(/\/+$/, ''),
    username,
    userId,
    password: method === 'password' ? password : null,
    token,
    applicationCredential,
    userDomain: domainOf('OS_USER_DOMAIN_ID', 'OS_USER_DOMAIN_NAME'),
    scope: applicationCredential ? { kind: 'unscoped' } : scope,
    region: get('OS_REGION_NAME'),
    interface: iface,
    caCert: get('OS_CACERT'),
    insecure: /^(1|true|yes|on)$/i.test(get('OS_INSECURE') ?? ''),
  };
}

/**
 * The application credential settings (`OS_APPLICATION_CREDENTIAL_ID`, or `_NAME` with the
 * user, and `_SECRET`). @throws CliError naming what is missing
 */
function appCredentialFrom(get: (name: string) => string | null, hasUser: string | null): ApplicationCredentialSettings {
  const secret = get('OS_APPLICATION_CREDENTIAL_SECRET');
  const id = get('OS_APPLICATION_CREDENTIAL_ID');
  const name = get('OS_APPLICATION_CREDENTIAL_NAME');
  if (secret === null) throw new CliError('OS_APPLICATION_CREDENTIAL_SECRET is not set (auth type v3applicationcredential).');
  if (id) return { id, secret };
  if (name && hasUser) return { name, secret };
  throw new CliError('set OS_APPLICATION_CREDENTIAL_ID, or OS_APPLICATION_CREDENTIAL_NAME with OS_USERNAME (or OS_USER_ID).');
}

/**
 * The settings of this run: the cloud of clouds.yaml that `OS_CLOUD` (set by `--os-cloud`)
 * names, if any, overridden by the `OS_*` variables; else the `OS_*` variables alone
 * (`./clouds.ts`).
 * @param where where clouds.yaml is looked for (default: the process's directories)
 * @throws CliError for a bad clouds.yaml or missing settings
 */
export function resolveSettings(env: NodeJS.ProcessEnv = process.env, where: CloudsLocations = defaultLocations(env)): SessionSettings {
  let merged: NodeJS.ProcessEnv;
  try {
    merged = cloudEnvironment(env, where);
  } catch (err) {
    if (err instanceof CloudsConfigError) throw new CliError(err.message);
    throw err;
  }
  return settingsFromEnv(merged);
}
