/**
 * Offer availabilities read only the leases that reach the asked range (issue 22): a lease that
 * ended less than the owner's minimum gap ago still shortens the first free window, an older one
 * does not; an availability filter over a past window still sees the blocking leases there; and
 * `resource_class` lists the offers of that class's nodes only. The clock is a manual one and
 * no lease manager runs, so leases keep the status they were created with.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, ManualClock } from '../../helpers/harness.ts';
import { at, enrolNode, HOUR, DAY, startLeaseEnv, type LeaseEnv } from './support.ts';

const C0 = Date.UTC(2030, 0, 1);
const clock = new ManualClock(C0);
let env: LeaseEnv;
const offers: Record<string, string> = {};

/** The offers listed for `query`, by node name (offers made at the same instant list in uuid order). */
const list = async (query: string): Promise<Array<Record<string, unknown>>> => {
  const r = await call(env.ts, env.p.lessee, 'GET', `/lease/v1/offers${query}`);
  expect(r.status, r.text).toBe(200);
  return (r.body.offers as Array<Record<string, unknown>>).sort((a, b) => String(a.resource).localeCompare(String(b.resource)));
};
const claim = async (node: string, startH: number, endH: number): Promise<void> => {
  const r = await call(env.ts, env.p.lessee, 'POST', `/lease/v1/offers/${offers[node]}/claim`, {
    start_time: at(startH * HOUR, C0),
    end_time: at(endH * HOUR, C0),
  });
  expect(r.status, r.text).toBe(201);
};

beforeAll(async () => {
  env = await startLeaseEnv({ clock, roles: 'api', env: { ESI_TOKEN_TTL: String(7 * 86_400) } });
  for (const [name, cls] of [
    ['av-a1', 'gpu'],
    ['av-a2', 'gpu'],
    ['av-b1', 'cpu'],
  ] as const) {
    const node = await enrolNode(env, name, { resource_class: cls });
    const r = await call(env.ts, env.p.owner, 'POST', '/lease/v1/offers', {
      resource_uuid: node,
      start_time: at(0, C0),
      end_time: at(30 * DAY, C0),
    });
    expect(r.status, r.text).toBe(201);
    offers[name] = r.body.uuid as string;
  }
  await claim('av-a1', 1, 3);
  await claim('av-a1', 8, 9);
  await claim('av-a2', 0, 1);
  const policy = await call(env.ts, env.p.owner, 'POST', '/lease/v1/lease_policies', { min_gap_seconds: 3600 });
  expect(policy.status, policy.text).toBe(201);
  clock.set(C0 + 3.5 * HOUR);
});

afterAll(async () => env?.ts.close());

describe('offer availabilities and the leases they read', () => {
  it('a lease that ended within the owner gap still delays the first free window; an older one does not', async () => {
    const byName = new Map((await list('')).map((o) => [o.resource as string, o.availabilities]));
    // av-a1: the lease [1 h, 3 h) ended 30 min ago; with the 1-hour gap the node is free from 4 h.
    expect(byName.get('av-a1')).toEqual([
      [at(4 * HOUR, C0), at(7 * HOUR, C0)],
      [at(10 * HOUR, C0), at(30 * DAY, C0)],
    ]);
    // av-a2: the lease [0 h, 1 h) ended 2.5 h ago, beyond the gap: free from now.
    expect(byName.get('av-a2')).toEqual([[at(3.5 * HOUR, C0), at(30 * DAY, C0)]]);
  });

  it('an availability window in the past still sees the blocking leases there', async () => {
    const past = (s: number, e: number) => `?available_start_time=${at(s * HOUR, C0)}&available_end_time=${at(e * HOUR, C0)}`;
    expect((await list(past(1.5, 2))).map((o) => o.resource)).toEqual(['av-a2', 'av-b1']);
    expect((await list(past(0.25, 0.5))).map((o) => o.resource)).toEqual(['av-a1', 'av-b1']);
  });

  it('resource_class lists the offers of that class only, with their availabilities', async () => {
    const gpu = await list('?resource_class=gpu');
    expect(gpu.map((o) => [o.resource, o.resource_class])).toEqual([
      ['av-a1', 'gpu'],
      ['av-a2', 'gpu'],
    ]);
    expect(gpu[0]!.availabilities).toHaveLength(2);
    expect((await list('?resource_class=cpu')).map((o) => o.resource)).toEqual(['av-b1']);
    expect(await list('?resource_class=none')).toEqual([]);
    expect(await list('?resource_class=gpu&resource_uuid=av-b1')).toEqual([]);
    expect((await list('?resource_class=gpu&resource_uuid=av-a2')).map((o) => o.resource)).toEqual(['av-a2']);
    const week = `&available_start_time=${at(4 * HOUR, C0)}&available_end_time=${at(5 * HOUR, C0)}`;
    expect((await list(`?resource_class=gpu${week}`)).map((o) => o.resource)).toEqual(['av-a1', 'av-a2']);
  });
});
