/**
 * The world of the policy matrix: the twelve personas, the objects they act on (with who may
 * see each one), the placeholder values rows refer to, and one request helper that speaks every
 * service (microversion headers included).
 *
 * The world is built by `world-build.ts`; fresh per-row objects come from `factories.ts`.
 */
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { formatLeaseTime } from '../../../src/domain/leasing/time.ts';
import { call, type ManualClock, type Persona, type TestResponse, type TestServer } from '../../helpers/harness.ts';
import { AUTHENTICATED, type PersonaKey } from './matrix.ts';

/** The microversion every baremetal row is sent with (the newest esi serves). */
export const IRONIC_VERSION = '1.82';
/** The microversion every compute row is sent with. */
export const NOVA_VERSION = '2.90';
/** One hour and one day in ms. */
export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;

/** An object of the world and who may see it (the others must never read its id or name). */
export interface WorldObject {
  /** Placeholder key (`node_o1`) or a factory label (`fresh:offer_o1#3`). */
  readonly key: string;
  readonly id: string;
  /** A distinctive name (`pm-…`), or null when the object has none. */
  readonly name: string | null;
  /** Authenticated personas that may see it; callers without a token see nothing. */
  readonly visible: readonly PersonaKey[];
  /**
   * Personas that may not see it but legitimately learn its id from an object they see (as
   * Neutron shows a trunk's id in its parent port's `trunk_details` to the network's owner).
   */
  readonly knows: readonly PersonaKey[];
}

/** Visibility shorthands. */
export const SEES = {
  all: AUTHENTICATED,
  /** Every persona with a leasing role (what offers and their nodes are shown to). */
  leasing: ['admin', 'o1', 'o2', 'l1', 'l2', 'l3'] as readonly PersonaKey[],
} as const;

/** The world: a server, its manual clock, personas, objects and placeholder values. */
export class World {
  /** Placeholder name → value (ids, names, project ids, times). */
  readonly values = new Map<string, string>();
  /** Every object of the world, fixtures and fresh ones. */
  readonly objects: WorldObject[] = [];
  /** Personas by key (unauthenticated ones carry a bad token or none). */
  readonly personas = {} as Record<PersonaKey, Persona>;
  /** Secret text that no answer may contain: BMC password, webhook secret, tokens (see {@link secretsFor}). */
  readonly secrets = new Map<string, string>();
  private counter = 0;
  private slotIndex = 0;

  constructor(
    readonly ts: TestServer,
    readonly clock: ManualClock,
  ) {}

  /** A number never returned before (names, MACs, CIDRs). */
  next(): number {
    return ++this.counter;
  }

  /**
   * A fresh one-hour lease window far in the future (day 100 on), never overlapping another.
   * @returns esi-leap times
   */
  slot(): { start: string; end: string } {
    const start = this.clock.now() + 100 * DAY + this.slotIndex++ * 4 * HOUR;
    return { start: formatLeaseTime(start), end: formatLeaseTime(start + HOUR) };
  }

  /** Record an object under a placeholder key and remember who may see it. */
  add(key: string, id: string, name: string | null, visible: readonly PersonaKey[], knows: readonly PersonaKey[] = []): string {
    this.values.set(key, id);
    if (name !== null) this.values.set(`${key}.name`, name);
    this.objects.push({ key, id, name, visible, knows });
    return id;
  }

  /** Record an object made for one row (not a placeholder). */
  track(key: string, id: string, name: string | null, visible: readonly PersonaKey[], knows: readonly PersonaKey[] = []): void {
    this.objects.push({ key, id, name, visible, knows });
  }

  /** The objects `p` may not see (all of them for callers without a valid token). */
  invisibleTo(p: PersonaKey): WorldObject[] {
    return this.objects.filter((o) => !o.visible.includes(p));
  }

  /**
   * The secrets an answer to `p` must not contain: every registered secret and every persona's
   * token but `p`'s own.
   * @returns label → secret text
   */
  secretsFor(p: PersonaKey): Map<string, string> {
    const out = new Map(this.secrets);
    for (const [k, persona] of Object.entries(this.personas)) if (k !== p && persona.token) out.set(`token of ${k}`, persona.token);
    return out;
  }

  /** A placeholder value. @throws Error when unknown */
  value(key: string): string {
    const v = this.values.get(key);
    if (v === undefined) throw new Error(`unknown placeholder {${key}}`);
    return v;
  }

  /** The project id of a persona. */
  project(p: PersonaKey): string {
    return this.value(`project.${p}`);
  }
}

/** Options of {@link send}. */
export interface SendOptions {
  readonly headers?: Readonly<Record<string, string>>;
  /** Send this text as `application/octet-stream` instead of a JSON body. */
  readonly raw?: string;
}

/**
 * Send a request as a persona, with the microversion header of the service the path belongs to.
 * @param body a JSON value (omitted when undefined)
 */
export async function send(
  w: World,
  who: Persona,
  method: string,
  urlPath: string,
  body?: unknown,
  o: SendOptions = {},
): Promise<TestResponse> {
  const headers: Record<string, string> = {};
  if (urlPath.startsWith('/baremetal/')) headers['x-openstack-ironic-api-version'] = IRONIC_VERSION;
  if (urlPath.startsWith('/compute/')) headers['x-openstack-nova-api-version'] = NOVA_VERSION;
  Object.assign(headers, o.headers ?? {});
  if (o.raw !== undefined) {
    const h: Record<string, string> = { accept: 'application/json', 'content-type': 'application/octet-stream', ...headers };
    if (who.token) h['x-auth-token'] = who.token;
    const res = await fetch(w.ts.url + urlPath, { method, headers: h, body: o.raw });
    const text = await res.text();
    let parsed: unknown = text === '' ? null : text;
    try {
      parsed = JSON.parse(text);
    } catch {
      /* not JSON */
    }
    return { status: res.status, headers: res.headers, body: parsed, text };
  }
  return call(w.ts, who, method, urlPath, body, headers);
}

/**
 * Send as a persona and require one status (fixture building).
 * @returns the response
 * @throws (assertion) when the status differs
 */
export async function must(
  w: World,
  who: Persona,
  method: string,
  urlPath: string,
  status: number,
  body?: unknown,
  o: SendOptions = {},
): Promise<TestResponse> {
  const res = await send(w, who, method, urlPath, body, o);
  expect(res.status, `${who.name} ${method} ${urlPath}: ${res.text}`).toBe(status);
  return res;
}

/** A token that no server issued. */
export function forgedToken(): string {
  return `gAAAAAB${randomBytes(48).toString('base64url')}`;
}
