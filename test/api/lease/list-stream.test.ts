/**
 * `GET /lease/v1/leases` longer than one read batch (200 leases): written as it is read
 * (chunked), with the bytes of the whole answer serialised at once — the same leases, in the same
 * order (`created_at`, then `uuid`), each rendered exactly as a short list renders it — and with
 * every filter applied across batches (status, project, resource class).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../../helpers/harness.ts';
import { DAY, enrolNode, startLeaseEnv, type LeaseEnv } from './support.ts';

let env: LeaseEnv;
let gpu: string;
/** Every seeded lease uuid in list order, with its node and status. */
let seeded: { uuid: string; node: string; status: string; project: string }[];

const COUNT = 2_500;

beforeAll(async () => {
  env = await startLeaseEnv();
  gpu = await enrolNode(env, 'ls-gpu', { resource_class: 'gpu' });
  const plain = await enrolNode(env, 'ls-plain');
  const t0 = Date.now() + 400 * DAY;
  const rows = Array.from({ length: COUNT }, (_, i) => {
    // Groups of 7 share a created_at, so that the uuid orders within a group.
    const created = t0 - 1_000_000 + Math.floor(i / 7);
    return {
      uuid: randomUUID(),
      name: i % 3 === 0 ? `ls-${i}` : null,
      project_id: i % 2 === 0 ? env.p.lessee.projectId! : env.p.other.projectId!,
      owner_id: env.p.owner.projectId!,
      purpose: null,
      resource_type: 'ironic_node',
      resource_uuid: i % 4 === 0 ? gpu : plain,
      start_time: t0 + i * DAY,
      end_time: t0 + i * DAY + DAY / 2,
      fulfill_time: null,
      expire_time: i % 5 === 0 ? t0 : null,
      status: i % 5 === 0 ? 'expired' : 'created',
      properties: '{}',
      offer_uuid: null,
      parent_lease_uuid: null,
      created_at: created,
      updated_at: created,
    };
  });
  const db = env.ts.server.services.store.db;
  for (let i = 0; i < rows.length; i += 500)
    await db
      .insertInto('leases')
      .values(rows.slice(i, i + 500))
      .execute();
  seeded = [...rows]
    .sort((a, b) => a.created_at - b.created_at || (a.uuid < b.uuid ? -1 : 1))
    .map((r) => ({ uuid: r.uuid, node: r.resource_uuid, status: r.status, project: r.project_id }));
});
afterAll(async () => env?.ts.close());

describe('a lease list longer than a batch', () => {
  it('is chunked, with the bytes of JSON.stringify of the whole answer and each lease as a short list renders it', async () => {
    const r = await call(env.ts, env.p.admin, 'GET', '/lease/v1/leases?view=all');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(r.headers.get('content-length')).toBeNull();
    const body = r.body as { leases: Record<string, unknown>[] };
    expect(r.text).toBe(JSON.stringify(body));
    const live = seeded.filter((l) => l.status !== 'expired');
    expect(body.leases.map((l) => l.uuid)).toEqual(live.map((l) => l.uuid));
    // Short lists (one batch, sent whole as before) render the same objects.
    for (const i of [0, 199, 200, 201, 999, 1000, 1001, live.length - 1]) {
      const one = await call(env.ts, env.p.admin, 'GET', `/lease/v1/leases?view=all&uuid=${live[i]!.uuid}`);
      expect(one.headers.get('content-length')).toBe(String(Buffer.byteLength(one.text)));
      expect(JSON.stringify(body.leases[i])).toBe(JSON.stringify((one.body as { leases: unknown[] }).leases[0]));
    }
  });

  it('applies status, project and resource-class filters across batches', async () => {
    const all = await call(env.ts, env.p.admin, 'GET', '/lease/v1/leases?view=all&status=any');
    expect((all.body as { leases: { uuid: string }[] }).leases.map((l) => l.uuid)).toEqual(seeded.map((l) => l.uuid));
    const gpuOnly = await call(env.ts, env.p.admin, 'GET', '/lease/v1/leases?view=all&status=any&resource_class=gpu');
    expect(gpuOnly.text).toBe(JSON.stringify(gpuOnly.body));
    expect((gpuOnly.body as { leases: { uuid: string }[] }).leases.map((l) => l.uuid)).toEqual(
      seeded.filter((l) => l.node === gpu).map((l) => l.uuid),
    );
    const mine = await call(env.ts, env.p.lessee, 'GET', '/lease/v1/leases?status=any');
    expect((mine.body as { leases: { uuid: string }[] }).leases.map((l) => l.uuid)).toEqual(
      seeded.filter((l) => l.project === env.p.lessee.projectId).map((l) => l.uuid),
    );
  });
});
