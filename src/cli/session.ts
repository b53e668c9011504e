/**
 * The CLI's connection to an esi (or any OpenStack) cloud, configured like the `openstack` CLI
 * from a cloud of `clouds.yaml` (`--os-cloud` / `OS_CLOUD`, see `./clouds.ts`) and `OS_*`
 * environment variables (which override the cloud's values), authenticated with Keystone v3,
 * and finding service endpoints in the token's catalogue.
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
 *
 * Requests carry `X-Auth-Token`. Failures are {@link CliError}s with one line for the user:
 * API errors as `<message> (HTTP <status>)` whatever the service's error format (esi-leap's
 * `faultstring`, Ironic's `error_message`, Keystone's `error.message`), connection failures
 * naming the URL. Secrets (password, token) never appear in messages.
 */
import fs from 'node:fs';
import { Agent, request, type Dispatcher } from 'undici';
import { cloudEnvironment, CloudsConfigError, defaultLocations, type CloudsLocations } from './clouds.ts';

/** An error to show the user as `esi: <message>` with exit code 1. */
export class CliError extends Error {
  constructor(
    message: string,
    /** HTTP status when the error came from an API, else null. */
    readonly status: number | null = null,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

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

/** One endpoint of the token's catalogue. */
interface Endpoint {
  readonly interface?: string;
  readonly region?: string;
  readonly region_id?: string;
  readonly url?: string;
}

/** The authenticated state: token secret, token body and catalogue. */
export interface Authenticated {
  readonly token: string;
  readonly body: Record<string, any>;
}

/** Options of one API request. */
export interface RequestOptions {
  /** Query parameters; undefined and null values are left out. */
  readonly query?: Readonly<Record<string, string | number | boolean | null | undefined>>;
  /** A JSON body. */
  readonly body?: unknown;
  /** Extra headers (e.g. `X-Subject-Token`). */
  readonly headers?: Readonly<Record<string, string>>;
}

/** A session with one cloud; call {@link close} when done. */
export class Session {
  private readonly dispatcher: Agent;
  private auth: Promise<Authenticated> | null = null;

  constructor(readonly settings: SessionSettings) {
    let ca: Buffer | undefined;
    if (settings.caCert) {
      try {
        ca = fs.readFileSync(settings.caCert);
      } catch (err) {
        throw new CliError(`cannot read OS_CACERT ${settings.caCert}: ${(err as Error).message}`);
      }
    }
    this.dispatcher = new Agent({
      connect: { ...(ca ? { ca } : {}), ...(settings.insecure ? { rejectUnauthorized: false } : {}) },
      connectTimeout: 10_000,
    });
  }

  /** A session configured from clouds.yaml and the environment ({@link resolveSettings}). @throws CliError */
  static fromEnv(env: NodeJS.ProcessEnv = process.env): Session {
    return new Session(resolveSettings(env));
  }

  /** The Keystone v3 root URL (`…/v3`). */
  get identityUrl(): string {
    return /\/v3$/.test(this.settings.authUrl) ? this.settings.authUrl : `${this.settings.authUrl}/v3`;
  }

  /** Authenticate once (password or token method, scope from the settings). @throws CliError */
  authenticate(): Promise<Authenticated> {
    this.auth ??= this.issueToken();
    return this.auth;
  }

  /**
   * The URL of a service from the catalogue (no trailing slash).
   * @param type catalogue service type, e.g. `lease`, `baremetal`
   * @throws CliError when the catalogue has no such endpoint for the interface and region
   */
  async endpoint(type: string): Promise<string> {
    const { body } = await this.authenticate();
    const catalog = body.catalog as Array<{ type?: string; endpoints?: Endpoint[] }> | undefined;
    if (!Array.isArray(catalog)) {
      throw new CliError('the token has no service catalogue: set OS_PROJECT_NAME (or OS_PROJECT_ID, or OS_SYSTEM_SCOPE=all).');
    }
    const region = this.settings.region;
    for (const service of catalog) {
      if (service.type !== type) continue;
      const match = (service.endpoints ?? []).find(
        (e) =>
          e.interface === this.settings.interface &&
          (region === null || e.region === region || e.region_id === region) &&
          typeof e.url === 'string',
      );
      if (match?.url) return match.url.replace(/\/+$/, '');
    }
    throw new CliError(
      `no ${this.settings.interface} endpoint for service type "${type}"${region ? ` in region ${region}` : ''} in the catalogue.`,
    );
  }

  /**
   * Send a request to a service found in the catalogue.
   * @param serviceType catalogue type (`lease`, `baremetal`, `identity`)
   * @param path path below the endpoint, e.g. `/v1/offers`
   * @returns the parsed JSON body (null when empty)
   * @throws CliError for HTTP errors and connection failures
   */
  async call(serviceType: string, method: string, path: string, options: RequestOptions = {}): Promise<any> {
    const { token } = await this.authenticate();
    const base = await this.endpoint(serviceType);
    return this.send(method, `${base}${path}`, options, token);
  }

  /** Release connections. */
  async close(): Promise<void> {
    await this.dispatcher.close();
  }

  private async issueToken(): Promise<Authenticated> {
    const s = this.settings;
    const user = s.userId ? { id: s.userId } : { name: s.username, domain: s.userDomain };
    const ac = s.applicationCredential;
    const identity = ac
      ? { methods: ['application_credential'], application_credential: 'id' in ac ? ac : { ...ac, user } }
      : s.token
        ? { methods: ['token'], token: { id: s.token } }
        : { methods: ['password'], password: { user: { ...user, password: s.password } } };
    const scope =
      s.scope.kind === 'system'
        ? { system: { all: true } }
        : s.scope.kind === 'project'
          ? { project: s.scope.id ? { id: s.scope.id } : { name: s.scope.name, domain: s.scope.domain } }
          : undefined;
    const res = await this.raw(
      'POST',
      `${this.identityUrl}/auth/tokens`,
      { body: { auth: { identity, ...(scope ? { scope } : {}) } } },
      null,
    );
    const token = res.headers['x-subject-token'];
    const secret = Array.isArray(token) ? token[0] : token;
    if (!secret || !res.body || typeof res.body.token !== 'object') throw new CliError(`${this.identityUrl} did not return a token.`);
    return { token: secret, body: res.body.token };
  }

  private async send(method: string, url: string, options: RequestOptions, token: string | null): Promise<any> {
    return (await this.raw(method, url, options, token)).body;
  }

  private async raw(
    method: string,
    url: string,
    options: RequestOptions,
    token: string | null,
  ): Promise<{ body: any; headers: Dispatcher.ResponseData['headers'] }> {
    const target = new URL(url);
    for (const [k, v] of Object.entries(options.query ?? {})) if (v !== undefined && v !== null) target.searchParams.append(k, String(v));
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': 'esi-cli', ...options.headers };
    if (token) headers['x-auth-token'] = token;
    let payload: string | undefined;
    if (options.body !== undefined) {
      payload = JSON.stringify(options.body);
      headers['content-type'] = 'application/json';
    }
    let res: Dispatcher.ResponseData;
    try {
      res = await request(target, { method: method, headers, body: payload ?? null, dispatcher: this.dispatcher });
    } catch (err) {
      throw new CliError(`cannot connect to ${target.origin}${target.pathname}: ${describeNetworkError(err)}`);
    }
    const text = await res.body.text();
    let body: any = null;
    if (text !== '') {
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
    }
    if (res.statusCode >= 400) throw new CliError(`${apiErrorMessage(body, res.statusCode)} (HTTP ${res.statusCode})`, res.statusCode);
    return { body, headers: res.headers };
  }
}

/**
 * The human message of an API error body, whatever its format: esi-leap/WSME
 * `{faultstring}`, Ironic `{error_message: "<JSON with faultstring>"}`, Keystone
 * `{error: {message}}`, Neutron `{NeutronError: {message}}`, Nova `{"<fault name>": {code, message}}`, or a plain `{message}`/text.
 */
export function apiErrorMessage(body: unknown, status: number): string {
  const fallback = `request failed with status ${status}`;
  if (typeof body === 'string') return body.trim().split('\n')[0]?.slice(0, 300) || fallback;
  if (!body || typeof body !== 'object') return fallback;
  const b = body as Record<string, any>;
  if (typeof b.faultstring === 'string') return b.faultstring;
  if (typeof b.error_message === 'string') {
    try {
      const inner = JSON.parse(b.error_message);
      if (inner && typeof inner.faultstring === 'string') return inner.faultstring;
    } catch {
      // not JSON: use it as it is
    }
    return b.error_message;
  }
  if (b.error_message && typeof b.error_message.faultstring === 'string') return b.error_message.faultstring;
  if (b.error && typeof b.error.message === 'string') return b.error.message;
  if (b.NeutronError && typeof b.NeutronError.message === 'string') return b.NeutronError.message;
  if (typeof b.message === 'string') return b.message;
  // Nova: {"<fault name>": {"code", "message"}}.
  const keys = Object.keys(b);
  const only = keys.length === 1 ? b[keys[0]!] : undefined;
  if (only && typeof only === 'object' && typeof only.message === 'string') return only.message;
  return fallback;
}

function describeNetworkError(err: unknown): string {
  const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  return e.cause?.code ?? e.code ?? e.cause?.message ?? e.message ?? 'unknown error';
}

/**
 * Run `fn` with a session from the environment and close it afterwards.
 * @throws CliError from the session or `fn`
 */
export async function withSession<T>(fn: (session: Session) => Promise<T>, env: NodeJS.ProcessEnv = process.env): Promise<T> {
  const session = Session.fromEnv(env);
  try {
    return await fn(session);
  } finally {
    await session.close();
  }
}
