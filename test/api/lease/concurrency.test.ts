/**
 * Concurrent conflicting requests: the conflict checks run under the node's exclusive lock,
 * so of ten parallel claims (or direct leases, or offers) of the same window exactly one
 * succeeds and the others get 409. On PostgreSQL, two servers sharing one database both run
 * the lease manager, and each lease is still applied and removed exactly once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, describePostgresOnly, startTestServer } from '../../helpers/harness.ts';
import { at, countRows, DAY, enrolNode, HOUR, nodeAs, startLeaseEnv, waitUntil, type LeaseEnv } from './support.ts';

let env: LeaseEnv;
const T = Date.now() + 10 * DAY;

beforeAll(async () => {
  env = await startLeaseEnv();
});
afterAll(async () => env?.ts.close());

function statuses(results: Array<{ status: number }>): Record<number, number> {
  const out: Record<number, number> = {};
  for (const r of results) out[r.status] = (out[r.status] ?? 0) + 1;
  return out;
}

describe('parallel creates of one window', () => {
  it('10 parallel claims of the same window: exactly one 201, nine 409', async () => {
    await enrolNode(env, 'cc-1');
    const offer = await call(env.ts, env.p.owner, 'POST', '/lease/v1/offers', {
      resource_uuid: 'cc-1',
      start_time: at(0, T),
      end_time: at(DAY, T),
    });
    expect(offer.status).toBe(201);
    const leasesBefore = await countRows(env, 'leases');
    const claimants = [env.p.lessee, env.p.other, env.p.owner, env.p.admin];
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        call(env.ts, claimants[i % claimants.length]!, 'POST', `/lease/v1/offers/${offer.body.uuid}/claim`, {
          start_time: at(HOUR, T),
          end_time: at(2 * HOUR, T),
        }),
      ),
    );
    expect(statuses(results)).toEqual({ 201: 1, 409: 9 });
    for (const r of results.filter((x) => x.status === 409))
      expect(r.body.faultstring).toContain('has no availabilities at given time range');
    expect(await countRows(env, 'leases')).toBe(leasesBefore + 1);
  });

  it('10 parallel direct leases of overlapping windows: exactly one 201', async () => {
    const node = await enrolNode(env, 'cc-2');
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        call(env.ts, env.p.owner, 'POST', '/lease/v1/leases', {
          resource_uuid: node,
          project_id: 'l1',
          start_time: at(i * 60_000, T),
          end_time: at(HOUR + i * 60_000, T),
        }),
      ),
    );
    expect(statuses(results)).toEqual({ 201: 1, 409: 9 });
    for (const r of results.filter((x) => x.status === 409))
      expect(r.body.faultstring).toMatch(new RegExp(`^Time conflict for ironic_node ${node}\\. Lease \\S+ holds it from`));
  });

  it('10 parallel offers of the same window: exactly one 201', async () => {
    await enrolNode(env, 'cc-3');
    const results = await Promise.all(
      Array.from({ length: 10 }, () =>
        call(env.ts, env.p.owner, 'POST', '/lease/v1/offers', { resource_uuid: 'cc-3', start_time: at(0, T), end_time: at(DAY, T) }),
      ),
    );
    expect(statuses(results)).toEqual({ 201: 1, 409: 9 });
  });

  it('parallel back-to-back claims all succeed (half-open windows)', async () => {
    await enrolNode(env, 'cc-4');
    const offer = await call(env.ts, env.p.owner, 'POST', '/lease/v1/offers', {
      resource_uuid: 'cc-4',
      start_time: at(0, T),
      end_time: at(DAY, T),
    });
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        call(env.ts, env.p.lessee, 'POST', `/lease/v1/offers/${offer.body.uuid}/claim`, {
          start_time: at(i * HOUR, T),
          end_time: at((i + 1) * HOUR, T),
        }),
      ),
    );
    expect(statuses(results)).toEqual({ 201: 6 });
    const shown = await call(env.ts, env.p.lessee, 'GET', `/lease/v1/offers/${offer.body.uuid}`);
    expect(shown.body.availabilities).toEqual([[at(6 * HOUR, T), at(DAY, T)]]);
  });
});

describePostgresOnly('two lease managers on one PostgreSQL database', () => {
  it('apply and remove each lease exactly once', async () => {
    // The same data directory: a name of its own, or its conductor would be refused (issue 21).
    const second = await startTestServer({ reuse: env.ts, env: { ESI_CONDUCTOR_HOSTNAME: 'second-manager' } });
    try {
      const node = await enrolNode(env, 'cc-two');
      const starts = Date.now() + 1500;
      const r = await call(env.ts, env.p.owner, 'POST', '/lease/v1/leases', {
        resource_uuid: node,
        project_id: 'l1',
        start_time: at(0, starts),
        end_time: at(1500, starts),
      });
      expect(r.status, r.text).toBe(201);
      // The second server learns of the lease at its sweep; make it sweep now, as it would within its interval.
      await second.server.services.leaseManager.sweep();
      await waitUntil(async () => (await nodeAs(env, env.p.lessee, node)).status === 200, 5000);
      await waitUntil(
        async () => (await call(env.ts, env.p.owner, 'GET', `/lease/v1/leases/${r.body.uuid}`)).body.status === 'expired',
        5000,
      );
      const events = await call(env.ts, env.p.admin, 'GET', `/lease/v1/events?resource_uuid=${node}`);
      const types = events.body.events.filter((e: any) => e.object_uuid === r.body.uuid).map((e: any) => e.event_type);
      expect(types).toEqual(['esi_leap.lease.create', 'esi_leap.lease.fulfill.end', 'esi_leap.lease.expire.end']);
    } finally {
      await second.close({ keepData: true });
    }
  });
});
