/**
 * A change of hands removes the volume connectors and targets a lessee wrote (esi's rule, as
 * for VIFs: the next holder must never boot from or attach the previous lessee's volumes),
 * while those of the owner and of an operator stay: at a lease's end (`DELETE
 * /lease/v1/leases/{id}`) and when an owner takes the lessee away by PATCH. Every persona:
 * the lessee writes, another project and anonymous reach nothing, the owner's and the admin's
 * objects survive, and the node's history says what was removed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type Persona } from '../../helpers/harness.ts';
import { at, enrolNode, HOUR, startLeaseEnv, waitUntil, type LeaseEnv } from '../lease/support.ts';
import { bm, forceNode } from './helpers.ts';

let env: LeaseEnv;

beforeAll(async () => {
  env = await startLeaseEnv();
});
afterAll(async () => env?.ts.close());

let seq = 0;

/** Create a connector and a target on `node` as `who`; returns their UUIDs. */
async function volumes(who: Persona, node: string): Promise<{ connector: string; target: string }> {
  const c = await bm(env.ts, who, 'POST', '/v1/volume/connectors', {
    node_uuid: node,
    type: 'iqn',
    connector_id: `iqn.2026-11.org.example:c${++seq}`,
  });
  expect(c.status, c.text).toBe(201);
  const t = await bm(env.ts, who, 'POST', '/v1/volume/targets', {
    node_uuid: node,
    volume_type: 'iscsi',
    volume_id: `vol-${seq}`,
    boot_index: seq,
  });
  expect(t.status, t.text).toBe(201);
  return { connector: c.body.uuid, target: t.body.uuid };
}

/** The status of reading a connector and a target as admin (200 or 404). */
async function exists(v: { connector: string; target: string }): Promise<[number, number]> {
  return [
    (await bm(env.ts, env.p.admin, 'GET', `/v1/volume/connectors/${v.connector}`)).status,
    (await bm(env.ts, env.p.admin, 'GET', `/v1/volume/targets/${v.target}`)).status,
  ];
}

/** Lease `node` to l1 from now for an hour and wait until l1 holds it. */
async function leased(node: string): Promise<string> {
  const r = await call(env.ts, env.p.owner, 'POST', '/lease/v1/leases', {
    resource_uuid: node,
    project_id: env.p.lessee.projectId,
    start_time: at(-1000),
    end_time: at(HOUR),
  });
  expect(r.status, r.text).toBe(201);
  await waitUntil(async () => (await bm(env.ts, env.p.admin, 'GET', `/v1/nodes/${node}`)).body.lessee === env.p.lessee.projectId);
  return r.body.uuid as string;
}

describe('volume objects at a change of hands', () => {
  it("a lease's end removes what the lessee wrote, keeps the owner's and the operator's, and says so in the history", async () => {
    const node = await enrolNode(env, 'vol-lease-end');
    await forceNode(env.ts, node, { power_state: 'power off' });
    const ownerBefore = await volumes(env.p.owner, node);
    const lease = await leased(node);
    const mine = await volumes(env.p.lessee, node);
    const admins = await volumes(env.p.admin, node);
    // The lessee changes the owner's target: it is then the lessee's and goes too.
    const patched = await bm(env.ts, env.p.lessee, 'PATCH', `/v1/volume/targets/${ownerBefore.target}`, [
      { op: 'replace', path: '/volume_id', value: 'lessee-volume' },
    ]);
    expect(patched.status, patched.text).toBe(200);
    // Another project and anonymous reach none of them.
    for (const [who, status] of [
      [env.p.other, 404],
      [env.p.anonymous, 401],
    ] as const) {
      expect((await bm(env.ts, who, 'GET', `/v1/volume/connectors/${mine.connector}`)).status).toBe(status);
      expect((await bm(env.ts, who, 'DELETE', `/v1/volume/targets/${mine.target}`)).status).toBe(status);
    }
    expect(await exists(mine)).toEqual([200, 200]);

    const ended = await call(env.ts, env.p.owner, 'DELETE', `/lease/v1/leases/${lease}`);
    expect(ended.status, ended.text).toBeLessThan(300);
    await waitUntil(async () => (await bm(env.ts, env.p.admin, 'GET', `/v1/nodes/${node}`)).body.lessee === null);

    expect(await exists(mine)).toEqual([404, 404]);
    expect(await exists(admins)).toEqual([200, 200]);
    expect(await exists(ownerBefore)).toEqual([200, 404]);
    // The lessee no longer sees the node's objects at all; the owner sees what stayed.
    expect((await bm(env.ts, env.p.lessee, 'GET', `/v1/volume/connectors/${ownerBefore.connector}`)).status).toBe(404);
    const list = await bm(env.ts, env.p.owner, 'GET', `/v1/nodes/${node}/volume/connectors`);
    expect(list.body.connectors.map((c: any) => c.uuid).sort()).toEqual([ownerBefore.connector, admins.connector].sort());
    const history = await bm(env.ts, env.p.admin, 'GET', `/v1/nodes/${node}/history`);
    const entry = history.body.history.find((h: any) => /previous lessee's volume/.test(h.event));
    expect(entry?.event).toContain(mine.connector);
    expect(entry?.event).toContain(mine.target);
    expect(entry?.event).toContain(ownerBefore.target);
  });

  it("an owner's PATCH that takes the lessee away removes the lessee's objects too", async () => {
    const node = await enrolNode(env, 'vol-patch', { lessee: env.p.lessee.projectId });
    const mine = await volumes(env.p.lessee, node);
    const owners = await volumes(env.p.owner, node);
    const r = await bm(env.ts, env.p.admin, 'PATCH', `/v1/nodes/${node}`, [{ op: 'remove', path: '/lessee' }]);
    expect(r.status, r.text).toBe(200);
    expect(await exists(mine)).toEqual([404, 404]);
    expect(await exists(owners)).toEqual([200, 200]);
  });
});
