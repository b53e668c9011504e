/**
 * The one-line messages the CLI prints for failed API calls (`esi: <message> (HTTP <status>)`):
 * the service's own message whatever its error format, and, for 401 and 403, who was refused and
 * by which policy rule, in words — so that a user sees at once whether the password, the project
 * or the role is wrong (`kubectl` and `gh` name the identity the same way).
 *
 * Secrets (password, token) never appear in these messages.
 */

/** An error to show the user as `esi: <message>` with exit code 1. */
export class CliError extends Error {
  constructor(
    message: string,
    /** HTTP status when the error came from an API, else null. */
    readonly status: number | null = null,
    /** The API's own message (without the status), when the error came from an API. */
    readonly apiMessage: string | null = null,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/**
 * The human message of an API error body, whatever its format: esi-leap/WSME
 * `{faultstring}`, Ironic `{error_message: "<JSON with faultstring>"}`, Keystone
 * `{error: {message}}`, Neutron `{NeutronError: {message}}`, Nova `{"<fault name>": {code, message}}`, or a plain `{message}`/text.
 * @param status the HTTP status, used in the fallback message when the body says nothing
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

/** Who asked for a token: what the settings name (never the secret). */
export interface Requester {
  /** `user "owner" (domain default)`, `the token in OS_TOKEN`, `application credential "ci"`. */
  readonly who: string;
  /** `project "l1"`, `system scope`, or null when unscoped. */
  readonly scope: string | null;
}

/**
 * The message for a refused token request (HTTP 401 from `POST /v3/auth/tokens`): who was
 * refused, for what scope, at which Keystone, the server's reason, and what to check.
 * @param message the server's message ({@link apiErrorMessage})
 * @param identityUrl the Keystone v3 URL asked
 */
export function tokenRefusedMessage(requester: Requester, message: string, identityUrl: string): string {
  const scope = requester.scope === null ? '' : ` for ${requester.scope}`;
  const check = requester.who.startsWith('user')
    ? 'check OS_USERNAME, OS_PASSWORD and OS_USER_DOMAIN_NAME, and that the user has a role on the project (OS_PROJECT_NAME)'
    : requester.who.startsWith('the token')
      ? 'the token may have expired or been revoked: get a new one with esi token issue'
      : 'check the application credential id or name and its secret, and that it has not expired';
  return `${requester.who} could not get a token${scope} from ${identityUrl}: ${message} (${check}).`;
}

/** Who holds a token, as its body says (`token.user`, `token.project`, `token.system`, `token.roles`). */
export function tokenHolder(token: Readonly<Record<string, any>>): string {
  const user = typeof token.user?.name === 'string' ? `user "${token.user.name}"` : 'the caller';
  const scope =
    typeof token.project?.name === 'string'
      ? ` in project "${token.project.name}"`
      : token.system && typeof token.system === 'object'
        ? ' with system scope'
        : ' (unscoped)';
  const roles = Array.isArray(token.roles)
    ? token.roles.map((r: { name?: unknown }) => r?.name).filter((n: unknown): n is string => typeof n === 'string')
    : [];
  return `${user}${scope}${roles.length > 0 ? ` (roles: ${roles.join(', ')})` : ''}`;
}

/** A policy rule name as OpenStack writes them: `service:resource[:sub…]:action`, e.g. `baremetal:node:set_power_state`. */
const RULE = /\b((?:[a-z][a-z0-9_-]*:){1,4}[a-z][a-z0-9_-]*)\b/i;

/**
 * A policy rule in words: `baremetal:node:set_power_state` → `baremetal node: set power state`,
 * `os_compute_api:servers:create` → `compute servers: create`.
 */
export function ruleInWords(rule: string): string {
  const parts = rule.split(':');
  const action = parts[parts.length - 1]!.replace(/[_-]+/g, ' ');
  const what = parts
    .slice(0, -1)
    .map((p) => p.replace(/^os_compute_api$/, 'compute').replace(/^os-/, ''))
    .join(' ');
  return `${what}: ${action}`;
}

/**
 * The message for a refused request (HTTP 403, or 401 with a token in hand): who was refused,
 * what they asked, the policy rule the server named (in words), and the server's message.
 * @param holder {@link tokenHolder} of the token used
 * @param request e.g. `POST /lease/v1/leases` (path only, no query: it may carry secrets)
 */
export function refusedMessage(status: number, holder: string, request: string, message: string): string {
  if (status === 401) return `${holder}: the token was refused for ${request} (expired or revoked?): ${message}`;
  const rule = RULE.exec(message)?.[1];
  const because = rule ? `; policy rule ${rule} (${ruleInWords(rule)}) does not allow it` : '';
  return `${holder} may not ${request}${because}: ${message}`;
}
