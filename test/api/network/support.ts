/**
 * Helpers of the network API tests: a server with the five personas, calls under
 * `/network/v2.0`, Neutron error checks, and fixtures — a switch (fake driver) and nodes owned
 * by o1 and leased to l1 whose ports are cabled to it.
 */
import { expect } from 'vitest';
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
export interface NetEnv {
  readonly ts: TestServer;
  readonly p: Personas;
}

/** Fast switch retries, so failure paths settle within a test. */
export const FAST_SWITCH_ENV = {
  ESI_SWITCH_POLL_MS: '50',
  ESI_SWITCH_RETRY_BASE_MS: '10',
  ESI_SWITCH_MAX_ATTEMPTS: '2',
  ESI_SWITCH_TIMEOUT: '5',
};

/** Start a server and create the personas. */
export async function startNetEnv(options: TestServerOptions = {}): Promise<NetEnv> {
  const ts = await startTestServer({
    ...options,
    env: { ...FAST_SWITCH_ENV, ESI_NETWORK_VLAN_RANGES: 'physnet1:100:109,physnet2', ...options.env },
  });
  return { ts, p: await createPersonas(ts) };
}

/** Call the network API (`/network/v2.0<path>`). */
export function net(env: NetEnv, persona: Persona | null, method: string, path: string, body?: unknown): Promise<TestResponse> {
  return call(env.ts, persona, method, `/network/v2.0${path}`, body);
}

/** Call the baremetal API at microversion `version`. */
export function bm(
  env: NetEnv,
  persona: Persona | null,
  method: string,
  path: string,
  body?: unknown,
  version = '1.78',
): Promise<TestResponse> {
  return call(env.ts, persona, method, `/baremetal${path}`, body, { 'x-openstack-ironic-api-version': version });
}

/** Assert a Neutron error (401 in keystonemiddleware's format). */
export function expectNeutronError(res: TestResponse, status: number, type?: string, message?: RegExp): void {
  expect(res.status, res.text).toBe(status);
  if (status === 401) {
    expect(res.body.error.code).toBe(401);
    return;
  }
  expect(Object.keys(res.body)).toEqual(['NeutronError']);
  expect(typeof res.body.NeutronError.message).toBe('string');
  expect(res.body.NeutronError.detail).toBe('');
  if (type !== undefined) expect(res.body.NeutronError.type).toBe(type);
  if (message !== undefined) expect(res.body.NeutronError.message).toMatch(message);
}

/** Create a resource as a persona; fails the test unless 201. */
export async function create(
  env: NetEnv,
  persona: Persona,
  collection: string,
  resource: string,
  attrs: Record<string, unknown>,
): Promise<any> {
  const res = await net(env, persona, 'POST', `/${collection}`, { [resource]: attrs });
  expect(res.status, `${collection} create as ${persona.name}: ${res.text}`).toBe(201);
  return res.body[resource];
}

/** Count the rows of a table (to prove a refused request wrote nothing). */
export async function rows(
  env: NetEnv,
  table: 'networks' | 'network_ports' | 'network_subnets' | 'network_trunks' | 'network_rbac' | 'switch_ports',
): Promise<number> {
  const r = await env.ts.server.services.store.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/** A switch as admin; returns its JSON. */
export async function createSwitch(
  env: NetEnv,
  name: string,
  driver = 'fake',
  driverInfo: Record<string, unknown> = {},
  extra: Record<string, unknown> = {},
): Promise<any> {
  return create(env, env.p.admin, 'switches', 'switch', {
    name,
    switch_id: `02:00:00:00:00:${name.length.toString(16).padStart(2, '0')}`,
    driver,
    driver_info: driverInfo,
    ...extra,
  });
}

/**
 * A node owned by o1 and leased to l1 (unless overridden) with ports cabled to `switchName`
 * ports `<prefix>-0`, `<prefix>-1`…; returns the node and its port JSON.
 */
export async function cabledNode(
  env: NetEnv,
  name: string,
  switchName: string,
  macs: readonly string[],
  body: Record<string, unknown> = {},
): Promise<{ node: any; ports: any[] }> {
  const n = await bm(env, env.p.admin, 'POST', '/v1/nodes', {
    driver: 'fake-hardware',
    name,
    owner: env.p.owner.projectId,
    lessee: env.p.lessee.projectId,
    ...body,
  });
  expect(n.status, n.text).toBe(201);
  const ports = [];
  for (const [i, mac] of macs.entries()) {
    const r = await bm(env, env.p.admin, 'POST', '/v1/ports', {
      node_uuid: n.body.uuid,
      address: mac,
      local_link_connection: { switch_id: '00:00:00:00:00:00', switch_info: switchName, port_id: `${name}-${i}` },
    });
    expect(r.status, r.text).toBe(201);
    ports.push(r.body);
  }
  return { node: n.body, ports };
}

/**
 * Wait until the switch reconciler has nothing running, then read; until `check` holds.
 * @throws when it does not hold within 10 s (with the last value read)
 */
export function settle<T>(env: NetEnv, read: () => Promise<T>, check: (v: T) => boolean): Promise<T> {
  return waitFor(
    async () => {
      await env.ts.server.services.switchReconciler.idle();
      return read();
    },
    check,
    { intervalMs: 25, what: 'the switch state to settle' },
  );
}

/** A port as admin sees it. */
export async function portAsAdmin(env: NetEnv, id: string): Promise<any> {
  return (await net(env, env.p.admin, 'GET', `/ports/${id}`)).body.port;
}
