/**
 * Helpers of the lease API tests: a server with the five personas, nodes enrolled through the
 * baremetal API as admin (owner o1), the node as a persona sees it through the baremetal API
 * (microversion 1.65, which shows `lessee`), esi-leap times, and a polling helper.
 */
import { expect } from 'vitest';
import { formatLeaseTime } from '../../../src/domain/leasing/time.ts';
import {
  call,
  createPersonas,
  startTestServer,
  type Persona,
  type Personas,
  type TestResponse,
  type TestServer,
  type TestServerOptions,
} from '../../helpers/harness.ts';
import { waitFor } from '../../helpers/wait-for.ts';

/** A test server and its personas. */
export interface LeaseEnv {
  readonly ts: TestServer;
  readonly p: Personas;
}

/** Start a server (fresh database) and create the personas. */
export async function startLeaseEnv(options: TestServerOptions = {}): Promise<LeaseEnv> {
  const ts = await startTestServer(options);
  if (options.roles === 'api') {
    // No conductor runs here; a registered idle one lets the API accept nodes (Ironic's NoValidHost otherwise).
    const inventory = ts.server.services.inventory;
    await inventory.conductorRepository.upsert('idle-conductor', '', ['fake-hardware'], Date.UTC(2100, 0, 1)); // alive for any test clock
    inventory.conductors.invalidate();
  }
  return { ts, p: await createPersonas(ts) };
}

/**
 * Enrol a `fake-hardware` node owned by `owner` (default: the owner persona's project o1)
 * through `POST /baremetal/v1/nodes` as admin.
 * @returns the node UUID
 */
export async function enrolNode(env: LeaseEnv, name: string, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await call(
    env.ts,
    env.p.admin,
    'POST',
    '/baremetal/v1/nodes',
    { driver: 'fake-hardware', name, owner: env.p.owner.projectId, ...extra },
    { 'x-openstack-ironic-api-version': '1.82' },
  );
  if (res.status !== 201) throw new Error(`node enrolment failed (${res.status}): ${res.text}`);
  return res.body.uuid as string;
}

/** `GET /baremetal/v1/nodes/{uuid}` as a persona at microversion 1.65 (shows `lessee`). */
export function nodeAs(env: LeaseEnv, persona: Persona, uuid: string): Promise<TestResponse> {
  return call(env.ts, persona, 'GET', `/baremetal/v1/nodes/${uuid}`, undefined, { 'x-openstack-ironic-api-version': '1.65' });
}

/** An esi-leap time `ms` milliseconds from `base` (default: now). */
export function at(ms: number, base = Date.now()): string {
  return formatLeaseTime(base + ms);
}

/** Minutes and hours in ms. */
export const MIN = 60_000;
export const HOUR = 3_600_000;
export const DAY = 86_400_000;

/** Assert an esi-leap error body with a status. */
export function expectFault(res: TestResponse, status: number, message?: RegExp | string): void {
  expect(res.status, res.text).toBe(status);
  expect(res.body).toMatchObject({ faultcode: status >= 500 ? 'Server' : 'Client', debuginfo: null });
  expect(typeof res.body.faultstring).toBe('string');
  if (message !== undefined) expect(res.body.faultstring).toMatch(message);
}

/**
 * Poll `probe` every `intervalMs` until it returns true ({@link waitFor}).
 * @param timeoutMs a liveness bound: the test fails when the probe never succeeds within it
 * @throws when it never succeeds
 */
export async function waitUntil(probe: () => Promise<boolean>, timeoutMs = 10_000, intervalMs = 20): Promise<void> {
  await waitFor(probe, (ok) => ok, { timeoutMs, intervalMs });
}

/** Count rows of a leasing table (to prove that refused requests wrote nothing). */
export async function countRows(env: LeaseEnv, table: 'offers' | 'leases' | 'lease_events' | 'console_auth_tokens'): Promise<number> {
  const row = await env.ts.server.services.store.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Replace a node's traits through `PUT /baremetal/v1/nodes/{uuid}/traits` as admin. */
export async function setTraits(env: LeaseEnv, uuid: string, traits: string[]): Promise<void> {
  const res = await call(
    env.ts,
    env.p.admin,
    'PUT',
    `/baremetal/v1/nodes/${uuid}/traits`,
    { traits },
    { 'x-openstack-ironic-api-version': '1.82' },
  );
  if (res.status !== 204) throw new Error(`setting traits failed (${res.status}): ${res.text}`);
}

/** Count rows of any table (to prove that refused requests wrote nothing). */
export async function countAny(
  env: LeaseEnv,
  table: 'lease_policies' | 'lease_quotas' | 'lease_webhooks' | 'lease_webhook_deliveries',
): Promise<number> {
  const row = await env.ts.server.services.store.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
