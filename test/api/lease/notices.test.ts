/**
 * Ending-soon notices recorded in batches (src/domain/leasing/notices.ts): leases ending within
 * the warning time get one `esi_leap.lease.ending_soon` event each when they are longer than the
 * warning time and none when they are not, whatever batch they fall in; a second scan records
 * nothing. Run over the server's real leasing repository with a small batch (2) and a warning
 * time (3 days) beyond the server's own (1 day), so that the server's own scans leave these
 * leases alone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LeaseNotices } from '../../../src/domain/leasing/notices.ts';
import { systemClock } from '../../../src/domain/clock.ts';
import { call } from '../../helpers/harness.ts';
import { at, DAY, enrolNode, HOUR, startLeaseEnv, waitUntil, type LeaseEnv } from './support.ts';

let env: LeaseEnv;
beforeAll(async () => {
  env = await startLeaseEnv();
});
afterAll(async () => env?.ts.close());

describe('ending-soon notices in batches', () => {
  it('writes one event per long lease ending soon, none for short ones, once', async () => {
    const now = Date.now();
    // Five nodes, each with one lease ending in 2 days: long ones (4 days) and short ones (~2 days).
    const shapes = [4 * DAY, 2 * DAY + HOUR, 4 * DAY, 4 * DAY, 2 * DAY + HOUR];
    const leases: { uuid: string; long: boolean }[] = [];
    for (const [i, length] of shapes.entries()) {
      const node = await enrolNode(env, `notice-${i}`);
      const res = await call(env.ts, env.p.owner, 'POST', '/lease/v1/leases', {
        resource_uuid: node,
        project_id: 'l1',
        start_time: at(2 * DAY - length, now),
        end_time: at(2 * DAY, now),
      });
      expect(res.status, res.text).toBe(201);
      leases.push({ uuid: res.body.uuid, long: length > 3 * DAY });
    }
    // Their start is past: the lease manager starts them (a notice is for active leases only).
    await waitUntil(async () => {
      for (const l of leases)
        if ((await call(env.ts, env.p.admin, 'GET', `/lease/v1/leases/${l.uuid}`)).body.status !== 'active') return false;
      return true;
    });
    const leasing = env.ts.server.services.leasing;
    const notices = new LeaseNotices(leasing.repo, systemClock, 3 * DAY, 2);
    expect(await notices.scan()).toBe(3);
    expect(await notices.scan()).toBe(0);
    const events = await call(env.ts, env.p.admin, 'GET', '/lease/v1/events?event_type=esi_leap.lease.ending_soon');
    expect(events.status, events.text).toBe(200);
    const byLease = new Map<string, number>();
    for (const e of events.body.events) byLease.set(e.object_uuid, (byLease.get(e.object_uuid) ?? 0) + 1);
    for (const l of leases) expect(byLease.get(l.uuid) ?? 0, `${l.long ? 'long' : 'short'} lease ${l.uuid}`).toBe(l.long ? 1 : 0);
  });
});
