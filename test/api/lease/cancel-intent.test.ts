/**
 * Issue 23: a lease's cancel writes its durable intent (`wait cancel`) before it touches the
 * node, so a process killed between the node change and the final status write leaves a lease
 * the lease manager finishes — never an `active` lease on a node that no longer carries it.
 *
 * The node gateway is watched: when the cancel removes the lease from the node, the lease's
 * stored status is already `wait cancel`. Then a "crash" is played: the node change is made and
 * the cancel dies before writing (the gateway throws an error the cancel cannot survive, as a
 * kill would stop it), and the manager's next sweep — what a restart runs first — finishes it:
 * the lease `deleted`, the node without its lessee, one `delete.end` event.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { call, ManualClock } from '../../helpers/harness.ts';
import { at, enrolNode, HOUR, nodeAs, startLeaseEnv, type LeaseEnv } from './support.ts';

const clock = new ManualClock(Date.UTC(2032, 2, 1, 9));
let env: LeaseEnv;

beforeAll(async () => {
  env = await startLeaseEnv({ clock });
});
afterAll(async () => env?.ts.close());

/** An active lease of a fresh node for the lessee persona's project. */
async function activeLease(name: string): Promise<{ node: string; lease: string }> {
  const node = await enrolNode(env, name);
  const r = await call(env.ts, env.p.owner, 'POST', '/lease/v1/leases', {
    resource_uuid: node,
    project_id: env.p.lessee.projectId,
    start_time: at(0, clock.now()),
    end_time: at(HOUR, clock.now()),
  });
  expect(r.status, r.text).toBe(201);
  await env.ts.server.services.leaseManager.runDue();
  expect((await nodeAs(env, env.p.lessee, node)).status).toBe(200);
  return { node, lease: r.body.uuid };
}

const leaseStatus = async (uuid: string): Promise<string> =>
  (await call(env.ts, env.p.admin, 'GET', `/lease/v1/leases/${uuid}`)).body.status;

it('the intent is stored before the node is touched', async () => {
  const { lease } = await activeLease('intent-1');
  const gateway = env.ts.server.services.inventory.leaseGateway;
  const original = gateway.removeLease.bind(gateway);
  const seen: string[] = [];
  gateway.removeLease = async (node: string, uuid: string) => {
    seen.push(await leaseStatus(uuid));
    return original(node, uuid);
  };
  try {
    expect((await call(env.ts, env.p.lessee, 'DELETE', `/lease/v1/leases/${lease}`)).status).toBe(200);
  } finally {
    gateway.removeLease = original;
  }
  expect(seen).toEqual(['wait cancel']);
  expect(await leaseStatus(lease)).toBe('deleted');
});

it('a cancel that dies after the node change is finished by the next sweep', async () => {
  const { node, lease } = await activeLease('intent-2');
  const gateway = env.ts.server.services.inventory.leaseGateway;
  const original = gateway.removeLease.bind(gateway);
  // The node change is made, then the cancel stops (a kill would stop it here): nothing after
  // the gateway call runs, so the lease keeps what was stored before it.
  let killed = false;
  let revive = (): void => undefined;
  gateway.removeLease = async (n: string, uuid: string) => {
    await original(n, uuid);
    killed = true;
    await new Promise<void>((resolve) => (revive = resolve));
    return true;
  };
  const request = call(env.ts, env.p.lessee, 'DELETE', `/lease/v1/leases/${lease}`);
  const deadline = Date.now() + 10_000;
  while (!killed && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  expect(killed).toBe(true);
  gateway.removeLease = original;
  expect(await leaseStatus(lease)).toBe('wait cancel');
  expect((await nodeAs(env, env.p.lessee, node)).status).toBe(404);

  // What a restart does first: the manager's sweep, here once the dead actor's claim (60 s) has lapsed.
  clock.advance(61_000);
  await env.ts.server.services.leaseManager.sweep();
  expect(await leaseStatus(lease)).toBe('deleted');
  expect((await nodeAs(env, env.p.owner, node)).body.lessee).toBeNull();
  const events = await call(env.ts, env.p.admin, 'GET', `/lease/v1/events?resource_uuid=${node}`);
  expect(events.body.events.filter((e: any) => e.object_uuid === lease).map((e: any) => e.event_type)).toEqual([
    'esi_leap.lease.create',
    'esi_leap.lease.fulfill.end',
    'esi_leap.lease.delete.end',
  ]);
  // The stalled request, let go (a killed process never does), finds the cancel done.
  revive();
  expect((await request).status).toBe(200);
  expect(await leaseStatus(lease)).toBe('deleted');
});
