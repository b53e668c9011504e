/**
 * Checks of one answer to a bad request: the status class, the error body in the API's own
 * format (Keystone, Ironic, esi-leap, Neutron, Nova), Ironic's version headers, `WWW-Authenticate` on
 * 401, and no token or password echoed back.
 */
import type { RawResponse } from './http.ts';

/** The APIs and their error formats. */
export type ApiName = 'identity' | 'baremetal' | 'lease' | 'network' | 'compute';

/** Header names of Ironic's microversion negotiation. */
const RANGE_HEADERS = ['x-openstack-ironic-api-minimum-version', 'x-openstack-ironic-api-maximum-version'];
const VERSION_HEADER = 'x-openstack-ironic-api-version';

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * What is wrong with an error answer, in the format of `api`.
 * @returns problems (empty when the body is right)
 */
export function errorFormatProblems(api: ApiName, res: RawResponse): string[] {
  const problems: string[] = [];
  const type = String(res.headers['content-type'] ?? '');
  if (!/^application\/json/.test(type)) problems.push(`content-type ${JSON.stringify(type)}`);
  const body = parse(res.text);
  const faultcode = res.status >= 500 ? 'Server' : 'Client';
  if (api === 'network') {
    // Neutron's body; 401 comes from keystonemiddleware in Keystone's format.
    const e = isObject(body) ? (res.status === 401 ? body.error : body.NeutronError) : undefined;
    const ok =
      res.status === 401
        ? isObject(e) && e.code === 401 && typeof e.message === 'string'
        : isObject(e) && typeof e.type === 'string' && typeof e.message === 'string' && e.detail === '';
    if (!isObject(body) || Object.keys(body).length !== 1 || !ok)
      problems.push('not a Neutron {"NeutronError": {type, message, detail}} body');
  } else if (api === 'identity') {
    const e = isObject(body) ? body.error : undefined;
    if (
      !isObject(body) ||
      Object.keys(body).join() !== 'error' ||
      !isObject(e) ||
      e.code !== res.status ||
      typeof e.title !== 'string' ||
      typeof e.message !== 'string'
    ) {
      problems.push('not a Keystone {"error": {code, title, message}} body');
    }
  } else if (api === 'compute') {
    const keys = isObject(body) ? Object.keys(body) : [];
    const fault = keys.length === 1 ? (body as Record<string, unknown>)[keys[0]!] : undefined;
    if (!isObject(fault) || fault.code !== res.status || typeof fault.message !== 'string')
      problems.push('not a Nova {"<name>": {code, message}} body');
  } else if (api === 'lease') {
    if (!isObject(body) || body.faultcode !== faultcode || typeof body.faultstring !== 'string' || body.debuginfo !== null) {
      problems.push(`not an esi-leap {faultcode: "${faultcode}", faultstring, debuginfo: null} body`);
    }
  } else {
    const inner = isObject(body) && typeof body.error_message === 'string' ? parse(body.error_message) : undefined;
    // Ironic wraps its plain HTTP errors (webob: a refused microversion, a resource the version
    // or the method does not have) as {code, title, description} instead.
    const webob = isObject(inner) && inner.code === res.status && typeof inner.title === 'string' && typeof inner.description === 'string';
    if (
      !webob &&
      (!isObject(inner) || inner.faultcode !== faultcode || typeof inner.faultstring !== 'string' || inner.debuginfo !== null)
    ) {
      problems.push('not an Ironic {"error_message": "<JSON of faultcode, faultstring, debuginfo>"} body');
    }
  }
  if (res.status === 401 && !/^Keystone uri=/.test(String(res.headers['www-authenticate'] ?? '')))
    problems.push('401 without WWW-Authenticate: Keystone uri=…');
  return problems;
}

/**
 * Missing Ironic version headers: every `/baremetal/v1` answer, errors too, carries the
 * supported range, and the negotiated version unless negotiation itself failed (406), as Ironic.
 */
export function missingIronicHeaders(res: RawResponse): string[] {
  const wanted = res.status === 406 ? RANGE_HEADERS : [...RANGE_HEADERS, VERSION_HEADER];
  return wanted.filter((h) => res.headers[h] === undefined).map((h) => `missing header ${h}`);
}

/** Secrets of the test that must never come back in a response. */
export function leakedSecrets(res: RawResponse, secrets: readonly string[]): string[] {
  return secrets.filter((s) => res.text.includes(s)).map((s) => `response contains a secret (${s.slice(0, 4)}…)`);
}
