/**
 * The crash suite's flow kit: what a flow knows of its round, and the calls flows share
 * (a fake-hardware node, a provision step, a lease and its status), each failing with
 * {@link Refused} on a refusal and ProcessGone once the process is killed.
 */
import { formatLeaseTime } from '../../../src/domain/leasing/time.ts';
import type { Answer, CrashCloud } from './cloud.ts';

/** What a flow knows of the round it runs in. */
export interface FlowContext {
  readonly cloud: CrashCloud;
  /** The round's number (names made in it carry it). */
  readonly round: number;
  /** The lessee project's id and a token of its user. */
  readonly lessee: { readonly project: string; readonly token: string };
  /** A project whose lease quota is `max_nodes` 3, and a token of its user. */
  readonly quota: { readonly project: string; readonly token: string };
  /** The admin project's id (owner of the nodes). */
  readonly admin: string;
  /**
   * What the network flows use: a switch (fake driver), an admin network with a subnet behind a
   * router, and an external network that router has its gateway on (for floating IPs).
   */
  readonly net: { readonly switchName: string; readonly network: string; readonly external: string };
  /** Record the step the flow is in now. */
  mark(step: string): void;
}

/** A flow: loops until the process is gone (ProcessGone), then resolves. */
export type Flow = (c: FlowContext, name: string) => Promise<void>;

/** A refusal of a call the flow needed (the loop notes it and goes on). */
export class Refused extends Error {}

/** The answer when its status is `2xx`; else Refused. */
export function ok(a: Answer, what: string): any {
  if (a.status >= 300) throw new Refused(`${what}: ${a.status} ${JSON.stringify(a.body).slice(0, 200)}`);
  return a.body;
}

/**
 * Poll `read` every 100 ms until `done` holds or `ms` pass.
 * @returns the last value read
 */
export async function until<T>(read: () => Promise<T>, done: (v: T) => boolean, ms = 8000): Promise<T> {
  const end = Date.now() + ms;
  let v = await read();
  while (!done(v) && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 100));
    v = await read();
  }
  return v;
}

let serial = 0;
/** The next number of the suite's counter (names, resource classes). */
export const seq = (): number => ++serial;
/** A name unique in the suite. */
export const unique = (c: FlowContext, what: string) => `crash-${c.round}-${what}-${++serial}`;

/** Enrol a fake-hardware node owned by the admin project; @returns its uuid */
export async function node(c: FlowContext, what: string, extra: Record<string, unknown> = {}): Promise<string> {
  const n = ok(await c.cloud.bm('POST', '/nodes', { driver: 'fake-hardware', name: unique(c, what), owner: c.admin, ...extra }), 'enrol');
  return n.uuid as string;
}

/** Move a node through a provision verb and wait until it leaves the transient states. */
export async function provision(
  c: FlowContext,
  uuid: string,
  target: string,
  want: string,
  body: Record<string, unknown> = {},
): Promise<void> {
  ok(await c.cloud.bm('PUT', `/nodes/${uuid}/states/provision`, { target, ...body }), target);
  await until(
    async () => ok(await c.cloud.bm('GET', `/nodes/${uuid}`), 'read node').provision_state as string,
    (s) => s === want || s.endsWith('failed'),
  );
}

/** Create a lease on `uuid` for the lessee from now (−1 s) for `ms`; @returns the lease */
export async function lease(c: FlowContext, uuid: string, ms: number, extra: Record<string, unknown> = {}): Promise<any> {
  const body = {
    resource_uuid: uuid,
    project_id: c.lessee.project,
    start_time: formatLeaseTime(Date.now() - 1000),
    end_time: formatLeaseTime(Date.now() + ms),
    ...extra,
  };
  return ok(await c.cloud.call('POST', '/lease/v1/leases', body), 'lease');
}

/** Wait until lease `uuid` has a status in `want`. */
export async function leaseStatus(c: FlowContext, uuid: string, want: readonly string[], ms = 8000): Promise<string> {
  return until(
    async () => ok(await c.cloud.call('GET', `/lease/v1/leases/${uuid}`), 'read lease').status as string,
    (s) => want.includes(s),
    ms,
  );
}

export const HOUR = 3_600_000;

let macs = 0;
/** A MAC address unique in the suite. */
export function mac(): string {
  const n = ++macs;
  const b = [0x52, 0x54, 0x0c, (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff];
  return b.map((x) => x.toString(16).padStart(2, '0')).join(':');
}
