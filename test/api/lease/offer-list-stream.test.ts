/**
 * `GET /lease/v1/offers` longer than one enrichment batch (200 offers): written as it is read
 * (chunked), with the bytes of the whole answer serialised at once — the same offers, in the same
 * order (`created_at`, then `uuid`) as the in-process list, each rendered exactly as a short list
 * renders it, availabilities included (each batch reads its own offers' lease windows) — and with
 * the resource-class and availability filters applied across batches.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../../helpers/harness.ts';
import { DAY, enrolNode, startLeaseEnv, type LeaseEnv } from './support.ts';

let env: LeaseEnv;
/** Every seeded offer in list order, with its node. */
let seeded: { uuid: string; node: string }[];
/** The seeded offers' uuids in seeding order (offer i: node i / PER_NODE, slot i % PER_NODE). */
let bySeed: string[];
/** The nodes of resource class gpu. */
let gpuNodes: Set<string>;

const COUNT = 1_300;
/** Offers per node: back-to-back 10-day windows from now. */
const PER_NODE = 100;

beforeAll(async () => {
  env = await startLeaseEnv();
  const nodes: string[] = [];
  for (let n = 0; n < COUNT / PER_NODE; n++) nodes.push(await enrolNode(env, `ols-${n}`, n % 3 === 0 ? { resource_class: 'gpu' } : {}));
  gpuNodes = new Set(nodes.filter((_, n) => n % 3 === 0));
  const now = Date.now();
  const offers = Array.from({ length: COUNT }, (_, i) => {
    // Groups of 7 share a created_at, so that the uuid orders within a group.
    const created = now - 1_000_000 + Math.floor(i / 7);
    const slot = i % PER_NODE;
    return {
      uuid: randomUUID(),
      name: `ols-${i}`,
      project_id: env.p.owner.projectId!,
      lessee_id: null,
      resource_type: 'ironic_node',
      resource_uuid: nodes[Math.floor(i / PER_NODE)]!,
      start_time: now + slot * 10 * DAY,
      end_time: now + (slot + 1) * 10 * DAY,
      status: 'available',
      properties: '{}',
      parent_lease_uuid: null,
      created_at: created,
      updated_at: created,
    };
  });
  // One blocking lease in every third offer, so that availabilities differ from the offer windows.
  const leases = offers
    .filter((_, i) => i % 3 === 0)
    .map((o) => ({
      uuid: randomUUID(),
      name: null,
      project_id: env.p.lessee.projectId!,
      owner_id: env.p.owner.projectId!,
      purpose: null,
      resource_type: 'ironic_node',
      resource_uuid: o.resource_uuid,
      start_time: o.start_time + 2 * DAY,
      end_time: o.start_time + 3 * DAY,
      fulfill_time: null,
      expire_time: null,
      status: 'created',
      properties: '{}',
      offer_uuid: o.uuid,
      parent_lease_uuid: null,
      created_at: o.created_at,
      updated_at: o.created_at,
    }));
  const db = env.ts.server.services.store.db;
  for (let i = 0; i < offers.length; i += 500)
    await db
      .insertInto('offers')
      .values(offers.slice(i, i + 500))
      .execute();
  for (let i = 0; i < leases.length; i += 500)
    await db
      .insertInto('leases')
      .values(leases.slice(i, i + 500))
      .execute();
  bySeed = offers.map((o) => o.uuid);
  seeded = [...offers]
    .sort((a, b) => a.created_at - b.created_at || (a.uuid < b.uuid ? -1 : 1))
    .map((o) => ({ uuid: o.uuid, node: o.resource_uuid }));
});
afterAll(async () => env?.ts.close());

type OfferBody = { offers: Array<Record<string, unknown> & { uuid: string; availabilities: unknown[] }> };

describe('an offer list longer than a batch', () => {
  it('is chunked, with the bytes of JSON.stringify of the whole answer and each offer as a short list renders it', async () => {
    const r = await call(env.ts, env.p.lessee, 'GET', '/lease/v1/offers');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(r.headers.get('content-length')).toBeNull();
    expect(r.text).toBe(JSON.stringify(r.body));
    const body = r.body as OfferBody;
    expect(body.offers.map((o) => o.uuid)).toEqual(seeded.map((o) => o.uuid));
    // A blocked offer has two free windows, the others one.
    expect(body.offers.filter((o) => o.availabilities.length === 2)).toHaveLength(Math.ceil(COUNT / 3));
    for (const i of [0, 199, 200, 201, 1000, COUNT - 1]) {
      const one = await call(env.ts, env.p.lessee, 'GET', `/lease/v1/offers?uuid=${seeded[i]!.uuid}`);
      expect(one.headers.get('content-length')).toBe(String(Buffer.byteLength(one.text)));
      const single = (one.body as OfferBody).offers[0]!;
      // The first window starts at "now" when each list was made.
      expect({ ...body.offers[i], availabilities: body.offers[i]!.availabilities.slice(1) }).toEqual({
        ...single,
        availabilities: single.availabilities.slice(1),
      });
      expect(JSON.stringify(body.offers[i]!.availabilities[0]).slice(-22)).toBe(JSON.stringify(single.availabilities[0]).slice(-22));
    }
  });

  it('applies the resource-class and availability filters across batches', async () => {
    const gpuOnly = await call(env.ts, env.p.lessee, 'GET', '/lease/v1/offers?resource_class=gpu');
    expect(gpuOnly.text).toBe(JSON.stringify(gpuOnly.body));
    expect(gpuNodes.size).toBe(5);
    expect((gpuOnly.body as OfferBody).offers.map((o) => o.uuid)).toEqual(seeded.filter((o) => gpuNodes.has(o.node)).map((o) => o.uuid));
    // One hour in day 2 of each offer's window of slot 0: blocked in the offers with a lease.
    const from = new Date(Date.now() + 2 * DAY + 3_600_000).toISOString().slice(0, 19);
    const to = new Date(Date.now() + 2 * DAY + 7_200_000).toISOString().slice(0, 19);
    const free = await call(env.ts, env.p.lessee, 'GET', `/lease/v1/offers?available_start_time=${from}&available_end_time=${to}`);
    expect(free.status).toBe(200);
    const uuids = (free.body as OfferBody).offers.map((o) => o.uuid);
    // Slot 0 of each node: offers 0, 100, 200, …; blocked where the offer's index is a multiple of 3.
    const want = Array.from({ length: COUNT / PER_NODE }, (_, n) => n * PER_NODE).filter((i) => i % 3 !== 0);
    expect(new Set(uuids)).toEqual(new Set(want.map((i) => bySeed[i]!)));
  });
});
