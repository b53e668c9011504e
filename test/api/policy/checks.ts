/**
 * What the matrix checks in one answer besides its status: the error body format of the
 * service (each OpenStack API has its own), and that the answer reveals no object of the world
 * the caller may not see.
 *
 * Each check returns a list of problems (empty when fine) rather than throwing, so that the
 * runner can record every problem of every persona and the test can report them per row.
 */
import type { TestResponse } from '../../helpers/harness.ts';
import type { PersonaKey, Service } from './matrix.ts';
import type { World, WorldObject } from './world.ts';

/** True for a JSON object (not null, not an array). */
function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Ironic: `{"error_message": "<JSON of {faultcode, faultstring, debuginfo}>"}` (double-encoded). */
function ironicProblems(res: TestResponse): string[] {
  if (!isObject(res.body) || typeof res.body.error_message !== 'string') return ['not an Ironic error body'];
  let inner: unknown;
  try {
    inner = JSON.parse(res.body.error_message);
  } catch {
    return ['Ironic error_message is not JSON'];
  }
  if (!isObject(inner) || typeof inner.faultstring !== 'string' || inner.debuginfo !== null)
    return ['Ironic fault lacks faultstring/debuginfo'];
  return inner.faultcode === (res.status >= 500 ? 'Server' : 'Client') ? [] : [`Ironic faultcode ${String(inner.faultcode)}`];
}

/** esi-leap (WSME): `{"faultcode": "Client"|"Server", "faultstring": …, "debuginfo": null}`. */
function wsmeProblems(res: TestResponse): string[] {
  const b = res.body;
  if (!isObject(b) || typeof b.faultstring !== 'string' || b.debuginfo !== null) return ['not an esi-leap (WSME) error body'];
  return b.faultcode === (res.status >= 500 ? 'Server' : 'Client') ? [] : [`esi-leap faultcode ${String(b.faultcode)}`];
}

/** Keystone (and keystonemiddleware's 401): `{"error": {"code", "title", "message"}}`. */
function keystoneProblems(res: TestResponse): string[] {
  const e = isObject(res.body) ? res.body.error : undefined;
  if (!isObject(e) || e.code !== res.status || typeof e.title !== 'string' || typeof e.message !== 'string')
    return ['not a Keystone error body'];
  return [];
}

/** Neutron: `{"NeutronError": {"type", "message", "detail": ""}}`; 401 is keystonemiddleware's. */
function neutronProblems(res: TestResponse): string[] {
  if (res.status === 401) return keystoneProblems(res);
  const b = res.body;
  if (!isObject(b) || Object.keys(b).join() !== 'NeutronError') return ['not a NeutronError body'];
  const e = b.NeutronError;
  if (!isObject(e) || typeof e.type !== 'string' || typeof e.message !== 'string' || e.detail !== '')
    return ['NeutronError lacks type/message/detail'];
  return [];
}

/** Glance (WebOb JSON): `{"code": "<status> <title>", "title", "message"}`. */
function glanceProblems(res: TestResponse): string[] {
  const b = res.body;
  if (
    !isObject(b) ||
    typeof b.code !== 'string' ||
    !b.code.startsWith(`${res.status} `) ||
    typeof b.title !== 'string' ||
    typeof b.message !== 'string'
  ) {
    return ['not a Glance error body'];
  }
  return [];
}

/** Nova: `{"<faultName>": {"code": <status>, "message"}}`. */
function novaProblems(res: TestResponse): string[] {
  const b = res.body;
  if (!isObject(b) || Object.keys(b).length !== 1) return ['not a Nova error body'];
  const e = Object.values(b)[0];
  if (!isObject(e) || e.code !== res.status || typeof e.message !== 'string') return ['Nova fault lacks code/message'];
  return [];
}

const FORMATS: Readonly<Record<Service, (res: TestResponse) => string[]>> = {
  baremetal: ironicProblems,
  lease: wsmeProblems,
  identity: keystoneProblems,
  network: neutronProblems,
  image: glanceProblems,
  compute: novaProblems,
};

/**
 * Problems with the error body of a 4xx/5xx answer in `service`'s format (none for 2xx/3xx, HEAD).
 */
export function errorFormatProblems(service: Service, method: string, res: TestResponse): string[] {
  if (res.status < 400 || method === 'HEAD') return [];
  return FORMATS[service](res).map((p) => `${p}: ${res.text.slice(0, 200)}`);
}

/** The ids and names of `objects` that occur in `text` (ids `who` may know are not counted). */
export function revealed(text: string, objects: readonly WorldObject[], who: PersonaKey): string[] {
  const out: string[] = [];
  for (const o of objects) {
    if (text.includes(o.id) && !o.knows.includes(who)) out.push(`${o.key} (id ${o.id})`);
    else if (o.name !== null && text.includes(o.name)) out.push(`${o.key} (name ${o.name})`);
  }
  return out;
}

/** Secrets of the world (passwords, other callers' tokens) that an answer to `p` contains. */
export function secretProblems(w: World, p: PersonaKey, res: TestResponse): string[] {
  const found = [...w.secretsFor(p)].filter(([, secret]) => res.text.includes(secret)).map(([label]) => label);
  return found.length ? [`answer ${res.status} reveals secrets: ${found.join(', ')}`] : [];
}

/** How strictly {@link leakProblems} looks at an answer. */
export interface LeakInput {
  readonly persona: PersonaKey;
  readonly res: TestResponse;
  /** The request's path, headers and body as sent (what the caller already knew). */
  readonly request: string;
  /** The row asks that successful answers reveal nothing invisible (lists). */
  readonly isolation: boolean;
}

/**
 * Objects the answer reveals to a persona that may not see them:
 * - a 403 must name none at all (not even one the caller named: that one is due a 404);
 * - any other error may repeat what the request named, nothing more;
 * - a success answer of an `isolation` row must name none.
 */
export function leakProblems(w: World, i: LeakInput): string[] {
  const hidden = w.invisibleTo(i.persona);
  const { status } = i.res;
  let found: string[] = [];
  if (status === 403 || (status < 400 && i.isolation)) found = revealed(i.res.text, hidden, i.persona);
  else if (status >= 400)
    found = revealed(
      i.res.text,
      hidden.filter((o) => !i.request.includes(o.id) && (o.name === null || !i.request.includes(o.name))),
      i.persona,
    );
  return found.length ? [`answer ${status} reveals objects ${i.persona} may not see: ${found.join(', ')}`] : [];
}
