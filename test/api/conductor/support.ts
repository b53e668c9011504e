/**
 * Helpers of the conductor API tests: a test server (SQLite or PostgreSQL, `ESI_TEST_DB`) with
 * its conductor running, a virtual lab of real Redfish BMCs, nodes enrolled through the API,
 * and waiting for the conductor to finish.
 */
import net from 'node:net';
import { expect } from 'vitest';
import type { Conductor } from '../../../src/conductor/conductor.ts';
import { startLab, type Lab } from '../../../src/lab/index.ts';
import {
  createPersonas,
  startTestServer,
  type Persona,
  type Personas,
  type TestServer,
  type TestResponse,
  type TestServerOptions,
} from '../../helpers/harness.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import { bm } from '../baremetal/helpers.ts';

export { bm, expectError } from '../baremetal/helpers.ts';

/** A running test environment. */
export interface ConductorEnv {
  readonly ts: TestServer;
  readonly p: Personas;
  readonly lab: Lab;
  close(): Promise<void>;
}

/** Start a lab with `labNodes` systems and a test server (with `env`), and create the personas. */
export async function startConductorEnv(labNodes: number, options: TestServerOptions = {}): Promise<ConductorEnv> {
  const lab = await startLab({ nodes: labNodes, port: 0 });
  const ts = await startTestServer(options);
  const p = await createPersonas(ts);
  return {
    ts,
    p,
    lab,
    async close() {
      await ts.close();
      await lab.close();
    },
  };
}

/** The conductor worker of a test server. */
export function conductorOf(ts: TestServer): Conductor {
  const c = ts.server.services.workers.find((w) => w.name === 'conductor');
  expect(c, 'the server has no conductor worker').toBeDefined();
  return c as Conductor;
}

/** `driver_info` of the redfish driver for lab system `system`. */
export function redfishInfo(lab: Lab, system: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    redfish_address: lab.url,
    redfish_system_id: `/redfish/v1/Systems/${system}`,
    redfish_username: 'admin',
    redfish_password: 'password',
    ...extra,
  };
}

/** Create a node as admin (owner o1, lessee l1); returns its JSON. */
export async function enroll(env: ConductorEnv, body: Record<string, unknown>): Promise<any> {
  const res = await bm(env.ts, env.p.admin, 'POST', '/v1/nodes', { owner: env.p.owner.projectId, lessee: env.p.lessee.projectId, ...body });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

/** Create a redfish node for lab system `system`. */
export function enrollRedfish(
  env: ConductorEnv,
  system: string,
  extra: Record<string, unknown> = {},
  info: Record<string, unknown> = {},
): Promise<any> {
  return enroll(env, { driver: 'redfish', name: system, driver_info: redfishInfo(env.lab, system, info), ...extra });
}

/**
 * PATCH a node as admin, trying again while a periodic task (the power sync) briefly holds the
 * node's lock (409); the first answer that is not 409 is returned.
 */
export function patchNode(env: ConductorEnv, ident: string, ops: unknown[]): Promise<TestResponse> {
  return waitFor(
    () => bm(env.ts, env.p.admin, 'PATCH', `/v1/nodes/${ident}`, ops),
    (r) => r.status !== 409,
    {
      timeoutMs: 2_000,
      intervalMs: 100,
      what: `PATCH of node ${ident} not refused by a periodic task's lock`,
      show: (r) => r.status,
    },
  );
}

/** GET a node as admin. */
export async function getNode(env: ConductorEnv, ident: string, who?: Persona): Promise<any> {
  const res = await bm(env.ts, who ?? env.p.admin, 'GET', `/v1/nodes/${ident}`);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/**
 * Poll the node (as admin) until `done(node)` holds; fails the test after `timeoutMs`.
 * @returns the node that satisfied it
 */
export function waitNode(env: ConductorEnv, ident: string, done: (n: any) => boolean, timeoutMs = 10_000): Promise<any> {
  return waitFor(() => getNode(env, ident), done, { timeoutMs, what: `node ${ident} to reach the expected state`, show: pick });
}

/** Wait until nothing is pending on the node (no power or provision target outside failure states). */
export function settled(env: ConductorEnv, ident: string, timeoutMs = 10_000): Promise<any> {
  return waitNode(
    env,
    ident,
    (n) =>
      n.target_power_state === null && n.reservation === null && (n.target_provision_state === null || / failed$/.test(n.provision_state)),
    timeoutMs,
  );
}

/**
 * PUT a state change and expect 202. A 409 `NodeLocked` (a conductor's task or periodic task still
 * holds the node for a moment after its state was written) is retried for up to 5 s, as
 * python-ironicclient retries it.
 */
async function putState(
  env: ConductorEnv,
  ident: string,
  kind: 'power' | 'provision',
  body: Record<string, unknown>,
  who?: Persona,
): Promise<void> {
  const res = await waitFor(
    () => bm(env.ts, who ?? env.p.admin, 'PUT', `/v1/nodes/${ident}/states/${kind}`, body),
    (r) => !(r.status === 409 && /is locked by host/.test(r.text)),
    { timeoutMs: 5000, intervalMs: 100, what: `node ${ident} to be unlocked for a ${kind} change`, show: (r) => r.text },
  );
  expect(res.status, res.text).toBe(202);
}

/** Request a provision verb; expects 202 (NodeLocked retried, see putState). */
export function provision(
  env: ConductorEnv,
  ident: string,
  target: string,
  extra: Record<string, unknown> = {},
  who?: Persona,
): Promise<void> {
  return putState(env, ident, 'provision', { target, ...extra }, who);
}

/** Request a power target; expects 202 (NodeLocked retried, see putState). */
export function power(env: ConductorEnv, ident: string, target: string, who?: Persona, extra: Record<string, unknown> = {}): Promise<void> {
  return putState(env, ident, 'power', { target, ...extra }, who);
}

/** The state fields of a node, for messages. */
export function pick(n: any): Record<string, unknown> | null {
  if (!n) return null;
  const { provision_state, target_provision_state, power_state, target_power_state, last_error, maintenance, fault, reservation } = n;
  return { provision_state, target_provision_state, power_state, target_power_state, last_error, maintenance, fault, reservation };
}

/** A loopback URL on which nothing listens (a BMC that is down). */
export async function deadUrl(): Promise<string> {
  const port = await new Promise<number>((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => resolve(typeof a === 'object' && a ? a.port : 1));
    });
  });
  return `http://127.0.0.1:${port}`;
}
