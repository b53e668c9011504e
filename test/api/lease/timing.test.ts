/**
 * The lease manager on the real clock: a lease starting 1.5 s from now and ending 2 s later is
 * applied and removed within 1 s of each boundary (measured from the lessee's point of view,
 * polling the baremetal API, and from the lease's recorded fulfil/expire times), and the
 * boundaries survive a restart of the server on the same database.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { parseLeaseTime } from '../../../src/domain/leasing/time.ts';
import { call, startTestServer } from '../../helpers/harness.ts';
import { at, enrolNode, nodeAs, startLeaseEnv, waitUntil, type LeaseEnv } from './support.ts';

/** Bound asserted between a boundary and the observed change, ms. */
const BOUND_MS = 1000;

/** Servers still to close (each test closes its own; afterAll catches failures). */
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

/** Create a direct lease o1 → l1 on `node` for [now + startInMs, + lengthMs). */
async function leaseSoon(
  env: LeaseEnv,
  node: string,
  startInMs: number,
  lengthMs: number,
): Promise<{ uuid: string; start: number; end: number }> {
  const start = Date.now() + startInMs;
  const end = start + lengthMs;
  const r = await call(env.ts, env.p.owner, 'POST', '/lease/v1/leases', {
    resource_uuid: node,
    project_id: 'l1',
    start_time: at(0, start),
    end_time: at(0, end),
  });
  expect(r.status, r.text).toBe(201);
  return { uuid: r.body.uuid, start, end };
}

const lesseeSees = (env: LeaseEnv, node: string) => async () => (await nodeAs(env, env.p.lessee, node)).status === 200;
const lesseeLost = (env: LeaseEnv, node: string) => async () => (await nodeAs(env, env.p.lessee, node)).status === 404;
const leaseIs = (env: LeaseEnv, uuid: string, status: string) => async () =>
  (await call(env.ts, env.p.owner, 'GET', `/lease/v1/leases/${uuid}`)).body.status === status;

describe('activation and expiry on the real clock', () => {
  it(`applies and removes a lease within ${BOUND_MS} ms of its start and end`, async () => {
    const env = await startLeaseEnv();
    cleanups.push(() => env.ts.close());
    const node = await enrolNode(env, 'rt-1');
    const lease = await leaseSoon(env, node, 1500, 2000);
    expect(await lesseeSees(env, node)()).toBe(false);

    const seenAt = await waitUntil(lesseeSees(env, node), 5000);
    // The node changes first, the lease's status right after (two writes): wait for both.
    await waitUntil(leaseIs(env, lease.uuid, 'active'), 1000);
    const shown = await call(env.ts, env.p.lessee, 'GET', `/lease/v1/leases/${lease.uuid}`);
    const fulfilled = parseLeaseTime(shown.body.fulfill_time)!;
    const activation = { fulfilledAfterStart: fulfilled - lease.start, observedAfterStart: seenAt - lease.start };

    const goneAt = await waitUntil(lesseeLost(env, node), 5000);
    await waitUntil(leaseIs(env, lease.uuid, 'expired'), 1000);
    const ended = await call(env.ts, env.p.owner, 'GET', `/lease/v1/leases/${lease.uuid}`);
    const expired = parseLeaseTime(ended.body.expire_time)!;
    const expiry = { expiredAfterEnd: expired - lease.end, observedAfterEnd: goneAt - lease.end };

    console.info(`lease manager latency (ms): activation ${JSON.stringify(activation)}, expiry ${JSON.stringify(expiry)}`);
    // Never early, always within the bound.
    expect(activation.fulfilledAfterStart).toBeGreaterThanOrEqual(0);
    expect(activation.observedAfterStart).toBeLessThan(BOUND_MS);
    expect(activation.fulfilledAfterStart).toBeLessThan(BOUND_MS);
    expect(expiry.expiredAfterEnd).toBeGreaterThanOrEqual(0);
    expect(expiry.observedAfterEnd).toBeLessThan(BOUND_MS);
    expect(expiry.expiredAfterEnd).toBeLessThan(BOUND_MS);
    await cleanups.pop()!();
  });
});

describe('restart survival', () => {
  it('a lease created before a restart still fires on time after it', async () => {
    const first = await startLeaseEnv();
    cleanups.push(() => first.ts.close());
    const node = await enrolNode(first, 'rs-1');
    const lease = await leaseSoon(first, node, 2000, 2000);
    cleanups.pop();
    await first.ts.close({ keepData: true });

    const ts = await startTestServer({ reuse: first.ts });
    cleanups.push(() => ts.close());
    const env: LeaseEnv = { ts, p: first.p }; // same database: the personas' tokens are still valid
    const seenAt = await waitUntil(lesseeSees(env, node), 6000);
    expect(seenAt - lease.start).toBeLessThan(BOUND_MS);
    const goneAt = await waitUntil(lesseeLost(env, node), 6000);
    expect(goneAt - lease.end).toBeLessThan(BOUND_MS);
    await waitUntil(leaseIs(env, lease.uuid, 'expired'), 1000);
    await cleanups.pop()!();
  });

  it('a lease whose end passed while the server was down is expired at start', async () => {
    const first = await startLeaseEnv();
    cleanups.push(() => first.ts.close());
    const node = await enrolNode(first, 'rs-2');
    const lease = await leaseSoon(first, node, 0, 1200);
    await waitUntil(lesseeSees(first, node), 3000);
    cleanups.pop();
    await first.ts.close({ keepData: true });
    await new Promise((r) => setTimeout(r, Math.max(0, lease.end - Date.now()) + 100));

    const ts = await startTestServer({ reuse: first.ts });
    cleanups.push(() => ts.close());
    // The first sweep ran before startTestServer returned: no waiting here.
    const shown = await call(ts, first.p.owner, 'GET', `/lease/v1/leases/${lease.uuid}`);
    expect(shown.body.status).toBe('expired');
    expect((await nodeAs({ ts, p: first.p }, first.p.lessee, node)).status).toBe(404);
    await cleanups.pop()!();
  });
});
