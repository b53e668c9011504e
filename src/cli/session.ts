/**
 * The CLI's connection to an esi (or any OpenStack) cloud, configured like the `openstack` CLI
 * from a cloud of `clouds.yaml` (`--os-cloud` / `OS_CLOUD`, see `./clouds.ts`) and `OS_*`
 * environment variables (which override the cloud's values), authenticated with Keystone v3,
 * and finding service endpoints in the token's catalogue. The `OS_*` variables and clouds.yaml
 * are read by `./settings.ts`.
 *
 * Requests carry `X-Auth-Token`. Failures are {@link CliError}s with one line for the user
 * (`./api-errors.ts`): API errors as `<message> (HTTP <status>)` whatever the service's error
 * format (esi-leap's `faultstring`, Ironic's `error_message`, Keystone's `error.message`); a
 * refused token request or a 401/403 also names who was refused, for which scope, and the policy
 * rule in words; connection failures name the URL. Secrets (password, token) never appear in
 * messages.
 */
import fs from 'node:fs';
import { Agent, request, type Dispatcher } from 'undici';
import { apiErrorMessage, CliError, refusedMessage, tokenHolder, tokenRefusedMessage, type Requester } from './api-errors.ts';
import { resolveSettings, type SessionSettings } from './settings.ts';

export { apiErrorMessage, CliError } from './api-errors.ts';
export { resolveSettings, settingsFromEnv, type ApplicationCredentialSettings, type SessionSettings } from './settings.ts';

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
    const { token, body } = await this.authenticate();
    const base = await this.endpoint(serviceType);
    try {
      return await this.send(method, `${base}${path}`, options, token);
    } catch (err) {
      if (!(err instanceof CliError) || (err.status !== 401 && err.status !== 403)) throw err;
      const request = `${method} ${new URL(`${base}${path}`).pathname}`;
      throw new CliError(
        `${refusedMessage(err.status, tokenHolder(body), request, err.apiMessage ?? err.message)} (HTTP ${err.status})`,
        err.status,
      );
    }
  }

  /** Who asks for the token, as the settings name them (for messages; never the secret). */
  private requester(): Requester {
    const s = this.settings;
    const ac = s.applicationCredential;
    const domain = 'id' in s.userDomain ? `domain ${s.userDomain.id}` : `domain "${s.userDomain.name}"`;
    const who = ac
      ? `application credential ${'id' in ac ? ac.id : `"${ac.name}"`}`
      : s.token
        ? 'the token in OS_TOKEN'
        : s.userId
          ? `user ${s.userId}`
          : `user "${s.username}" (${domain})`;
    const scope =
      s.scope.kind === 'system' ? 'system scope' : s.scope.kind === 'project' ? `project ${s.scope.id ?? `"${s.scope.name}"`}` : null;
    return { who, scope };
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
    let res: Awaited<ReturnType<Session['raw']>>;
    try {
      res = await this.raw('POST', `${this.identityUrl}/auth/tokens`, { body: { auth: { identity, ...(scope ? { scope } : {}) } } }, null);
    } catch (err) {
      if (!(err instanceof CliError) || err.status !== 401) throw err;
      throw new CliError(`${tokenRefusedMessage(this.requester(), err.apiMessage ?? err.message, this.identityUrl)} (HTTP 401)`, 401);
    }
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
    if (res.statusCode >= 400) {
      const message = apiErrorMessage(body, res.statusCode);
      throw new CliError(`${message} (HTTP ${res.statusCode})`, res.statusCode, message);
    }
    return { body, headers: res.headers };
  }
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
