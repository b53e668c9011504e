/**
 * The lease manager's own timer applies and removes a lease at its boundaries, with the clock in
 * the test's hands (a {@link ManualClock} that only moves when the test moves it):
 *
 * - once a lease is created, its start is the deadline of the manager's timer; while the clock is
 *   before it, nothing happens however often the timer wakes;
 * - when the clock reaches the start, the timer applies the lease — no sweep (sweeps are an hour
 *   apart here, and counted) and no `runDue` from the test — and the recorded fulfil time is the
 *   start itself; the same at the end, with the expire time;
 * - the boundaries survive a restart of the server on the same database (the start-up sweep loads
 *   them, the timer fires them), and a lease whose end passed while the server was down is expired
 *   at start.
 *
 * How long after a boundary the change is visible on the real clock (a figure, not an assertion)
 * is measured by the `lease-skew` benchmark: bench/lease-skew.ts, bench/README.md "Leasing figures".
 */
import { afterAll, afterEach, describe, expect, it, vi, type MockInstance } from 'vitest';
import { call, ManualClock, startTestServer } from '../../helpers/harness.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import { at, enrolNode, nodeAs, startLeaseEnv, type LeaseEnv } from './support.ts';

/** Sweeps an hour apart (the most the config allows): within a test, only the timer can act. */
const NO_SWEEP = { ESI_LEASE_SWEEP_INTERVAL: '3600' };
/** How far (manual ms) a boundary is from the clock when the timer is armed: the timer wakes this often. */
const NEAR = 40;

/** Servers still to close (each test closes its own; afterAll catches failures). */
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});
afterEach(() => {
  vi.restoreAllMocks();
});

/** Create a direct lease o1 → l1 on `node` for [start, end). */
async function lease(env: LeaseEnv, node: string, start: number, end: number): Promise<string> {
  const r = await call(env.ts, env.p.owner, 'POST', '/lease/v1/leases', {
    resource_uuid: node,
    project_id: 'l1',
    start_time: at(0, start),
    end_time: at(0, end),
  });
  expect(r.status, r.text).toBe(201);
  return r.body.uuid as string;
}

const leaseOf = async (env: LeaseEnv, uuid: string) => (await call(env.ts, env.p.owner, 'GET', `/lease/v1/leases/${uuid}`)).body;
const lesseeStatus = async (env: LeaseEnv, node: string) => (await nodeAs(env, env.p.lessee, node)).status;

/** Count the manager's sweeps and the test-driven runs from now on (neither may act here). */
function watchManager(env: LeaseEnv): { sweep: MockInstance; runDue: MockInstance } {
  const manager = env.ts.server.services.leaseManager;
  return { sweep: vi.spyOn(manager, 'sweep'), runDue: vi.spyOn(manager, 'runDue') };
}

/** Wait until the manager's timer holds `at` as the lease's deadline. */
function deadlineIs(env: LeaseEnv, uuid: string, deadline: number): Promise<number | undefined> {
  const manager = env.ts.server.services.leaseManager;
  return waitFor(
    () => manager.deadlineOf({ kind: 'lease', uuid }),
    (d) => d === deadline,
    { what: `lease ${uuid}'s deadline ${at(0, deadline)}`, show: (d) => (d === undefined ? 'none' : at(0, d)) },
  );
}

/**
 * Move the manual clock to the lease's start and wait for the timer to apply it: the lessee sees
 * the node, then the lease is active (the node changes first, the lease's status right after:
 * two writes, both awaited). @returns the active lease
 */
async function crossStart(env: LeaseEnv, clock: ManualClock, uuid: string, node: string, start: number): Promise<any> {
  clock.set(start);
  await waitFor(
    () => lesseeStatus(env, node),
    (s) => s === 200,
    { what: 'the lessee to see the node' },
  );
  return waitFor(
    () => leaseOf(env, uuid),
    (l) => l.status === 'active',
    { what: 'the lease to be active' },
  );
}

/** As {@link crossStart}, at the lease's end: the lessee loses the node, then the lease is expired. @returns the expired lease */
async function crossEnd(env: LeaseEnv, clock: ManualClock, uuid: string, node: string, end: number): Promise<any> {
  clock.set(end);
  await waitFor(
    () => lesseeStatus(env, node),
    (s) => s === 404,
    { what: 'the lessee to lose the node' },
  );
  return waitFor(
    () => leaseOf(env, uuid),
    (l) => l.status === 'expired',
    { what: 'the lease to be expired' },
  );
}

/** Let the timer wake a few times before its deadline (it must do nothing). */
const severalEarlyWakes = () => new Promise((r) => setTimeout(r, 4 * NEAR));

describe('activation and expiry on the lease manager’s timer', () => {
  it('applies a lease when the clock reaches its start and removes it at its end: the timer, not a sweep', async () => {
    const start = Date.UTC(2031, 2, 1, 9);
    const end = start + 2 * NEAR;
    const clock = new ManualClock(start - NEAR);
    const env = await startLeaseEnv({ clock, env: NO_SWEEP });
    cleanups.push(() => env.ts.close());
    const node = await enrolNode(env, 'rt-1');
    const watched = watchManager(env);

    const uuid = await lease(env, node, start, end);
    await deadlineIs(env, uuid, start);
    await severalEarlyWakes();
    expect(await lesseeStatus(env, node)).toBe(404);
    expect((await leaseOf(env, uuid)).status).toBe('created');

    const active = await crossStart(env, clock, uuid, node, start);
    expect(active.fulfill_time).toBe(at(0, start));
    await deadlineIs(env, uuid, end);
    await severalEarlyWakes();
    expect(await lesseeStatus(env, node)).toBe(200);

    const expired = await crossEnd(env, clock, uuid, node, end);
    expect(expired.expire_time).toBe(at(0, end));
    expect(watched.sweep).not.toHaveBeenCalled();
    expect(watched.runDue).not.toHaveBeenCalled();
    await cleanups.pop()!();
  });
});

describe('restart survival', () => {
  it('a lease created before a restart is loaded by the start-up sweep and fires on the timer after it', async () => {
    const start = Date.UTC(2031, 2, 2, 9);
    const end = start + 2 * NEAR;
    const clock = new ManualClock(start - NEAR);
    const first = await startLeaseEnv({ clock, env: NO_SWEEP });
    cleanups.push(() => first.ts.close());
    const node = await enrolNode(first, 'rs-1');
    const uuid = await lease(first, node, start, end);
    cleanups.pop();
    await first.ts.close({ keepData: true });

    const ts = await startTestServer({ reuse: first.ts, clock, env: NO_SWEEP });
    cleanups.push(() => ts.close());
    const env: LeaseEnv = { ts, p: first.p }; // same database: the personas' tokens are still valid
    // The start-up sweep ran before startTestServer returned: the boundary is already the timer's.
    expect(ts.server.services.leaseManager.deadlineOf({ kind: 'lease', uuid })).toBe(start);
    const watched = watchManager(env);
    await severalEarlyWakes();
    expect(await lesseeStatus(env, node)).toBe(404);

    const active = await crossStart(env, clock, uuid, node, start);
    expect(active.fulfill_time).toBe(at(0, start));
    await deadlineIs(env, uuid, end);

    const expired = await crossEnd(env, clock, uuid, node, end);
    expect(expired.expire_time).toBe(at(0, end));
    expect(watched.sweep).not.toHaveBeenCalled();
    expect(watched.runDue).not.toHaveBeenCalled();
    await cleanups.pop()!();
  });

  it('a lease whose end passed while the server was down is expired at start', async () => {
    const start = Date.UTC(2031, 2, 3, 9);
    const end = start + 1200;
    const clock = new ManualClock(start);
    const first = await startLeaseEnv({ clock, env: NO_SWEEP });
    cleanups.push(() => first.ts.close());
    const node = await enrolNode(first, 'rs-2');
    const uuid = await lease(first, node, start, end);
    await waitFor(
      () => lesseeStatus(first, node),
      (s) => s === 200,
      { what: 'the lessee to see the node' },
    );
    cleanups.pop();
    await first.ts.close({ keepData: true });
    clock.set(end + 100); // the end passes while no server runs

    const ts = await startTestServer({ reuse: first.ts, clock, env: NO_SWEEP });
    cleanups.push(() => ts.close());
    // The first sweep ran before startTestServer returned: no waiting here.
    const shown = await call(ts, first.p.owner, 'GET', `/lease/v1/leases/${uuid}`);
    expect(shown.body.status).toBe('expired');
    expect((await nodeAs({ ts, p: first.p }, first.p.lessee, node)).status).toBe(404);
    await cleanups.pop()!();
  });
});
