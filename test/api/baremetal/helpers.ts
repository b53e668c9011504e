/**
 * Helpers of the baremetal API tests: requests with a microversion, Ironic error parsing, and
 * node/port fixtures created through the API as the admin.
 */
import { expect } from 'vitest';
import { call, type Persona, type Personas, type TestResponse, type TestServer } from '../../helpers/harness.ts';

/** The version python-ironicclient 5.0.1 sends by default. */
export const CLI_VERSION = '1.78';

/** A baremetal request (`/baremetal` prefix added) with a microversion header (null: none). */
export function bm<T = any>(
  ts: TestServer,
  persona: Persona | null,
  method: string,
  path: string,
  body?: unknown,
  version: string | null = CLI_VERSION,
  headers: Record<string, string> = {},
): Promise<TestResponse<T>> {
  const h: Record<string, string> = { ...headers };
  if (version !== null) h['x-openstack-ironic-api-version'] = version;
  return call<T>(ts, persona, method, `/baremetal${path}`, body, h);
}

/** The decoded inner Ironic fault of an error response. */
export function fault(res: TestResponse): { faultcode: string; faultstring: string; debuginfo: null } {
  expect(typeof res.body?.error_message, `not an Ironic error body: ${res.text}`).toBe('string');
  return JSON.parse(res.body.error_message);
}

/** Assert an Ironic error with this status (and message pattern), with version headers. */
export function expectError(res: TestResponse, status: number, message?: RegExp): void {
  expect(res.status, res.text).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/application\/json/);
  const f = fault(res);
  expect(f.faultcode).toBe(status >= 500 ? 'Server' : 'Client');
  expect(f.debuginfo).toBeNull();
  if (message) expect(f.faultstring).toMatch(message);
  expect(res.headers.get('x-openstack-ironic-api-minimum-version')).toBe('1.1');
  expect(res.headers.get('x-openstack-ironic-api-maximum-version')).toBe('1.82');
}

/** Create a node as admin (owner o1, lessee l1 unless overridden); returns its JSON. */
export async function createNode(ts: TestServer, p: Personas, body: Record<string, unknown> = {}): Promise<any> {
  const res = await bm(ts, p.admin, 'POST', '/v1/nodes', {
    driver: 'fake-hardware',
    owner: p.owner.projectId,
    lessee: p.lessee.projectId,
    ...body,
  });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

/** Create a port as admin on a node; returns its JSON. */
export async function createPort(
  ts: TestServer,
  p: Personas,
  nodeUuid: string,
  address: string,
  extra: Record<string, unknown> = {},
): Promise<any> {
  const res = await bm(ts, p.admin, 'POST', '/v1/ports', { node_uuid: nodeUuid, address, ...extra });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

/** Read a node row straight from the database (to check what is stored). */
export async function nodeRow(ts: TestServer, uuid: string): Promise<Record<string, unknown> | undefined> {
  return ts.server.services.store.db.selectFrom('nodes').selectAll().where('uuid', '=', uuid).executeTakeFirst();
}

/** Count rows of a table. */
export async function countRows(ts: TestServer, table: 'nodes' | 'ports'): Promise<number> {
  const r = await ts.server.services.store.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/** Set node columns directly (to put a node into a state the API would only reach via a conductor). */
export async function forceNode(ts: TestServer, uuid: string, changes: Record<string, unknown>): Promise<void> {
  const repo = ts.server.services.inventory.nodeRepository;
  const r = await repo.applyConductorResult(uuid, changes, Date.now());
  expect(r).not.toBeNull();
}
