/**
 * Issue 23: the record check (src/domain/networking/vif-check.ts,
 * src/domain/scheduling/allocation-check.ts) repairs, when esi starts, bare-metal port ↔ VIF
 * and allocation / server ↔ node records that disagree, with a node history entry (`WARNING`)
 * per repair. Runs on SQLite (api-sqlite) and PostgreSQL (api-pg).
 *
 * The damage is written straight into the stopped cloud's database (no kill produces it: each
 * pair is written in one transaction; a restored backup or a hand edit does): a bare-metal
 * port's VIF bound to another port, unbound, or missing; network ports bound to a missing
 * bare-metal port or to one that names no VIF; a node naming a missing allocation; an
 * allocation whose node does not name it; a live server whose node does not name it. esi starts
 * again on the same data and its start-up check repairs every one, and the switch ports of the
 * repaired bare-metal ports are programmed again.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { fakeSwitchState } from '../../../src/drivers/switch/fake.ts';
import { ORPHAN_SERVER_FAULT } from '../../../src/domain/scheduling/allocation-check.ts';
import { startTestServer, TEST_PG_URL, type TestServer } from '../../helpers/harness.ts';
import {
  bm,
  cabledNode,
  create,
  createSwitch,
  FAST_SWITCH_ENV,
  portAsAdmin,
  settle,
  startNetEnv,
  type NetEnv,
} from '../network/support.ts';
import { freeNode, settledAllocation } from '../scheduling/support.ts';

const ENV = { ...FAST_SWITCH_ENV, ESI_NETWORK_VLAN_RANGES: 'physnet1:100:109,physnet2' };

let env: NetEnv;
let sw: any;
beforeAll(async () => {
  env = await startNetEnv();
  sw = await createSwitch(env, 'tor1');
});
afterAll(async () => env?.ts.close());

/** Run statements (`?` placeholders) on the database of a stopped server. */
async function writeStopped(ts: TestServer, statements: ReadonlyArray<readonly [string, ...unknown[]]>): Promise<void> {
  if (ts.schema !== undefined) {
    const c = new pg.Client({ connectionString: TEST_PG_URL, options: `-c search_path=${ts.schema}` });
    await c.connect();
    try {
      for (const [q, ...args] of statements) {
        let i = 0;
        await c.query(
          q.replace(/\?/g, () => `$${++i}`),
          args,
        );
      }
    } finally {
      await c.end();
    }
    return;
  }
  const db = new Database(path.join(ts.dataDir, 'esi.sqlite'), { fileMustExist: true });
  try {
    for (const [q, ...args] of statements) db.prepare(q).run(...args);
  } finally {
    db.close();
  }
}

/** The node's history entries of one type, as the admin reads them. */
async function history(node: string, type: string): Promise<Array<{ event: string; severity: string }>> {
  const r = await bm(env, env.p.admin, 'GET', `/v1/nodes/${node}/history/detail`);
  expect(r.status, r.text).toBe(200);
  return r.body.history.filter((e: any) => e.event_type === type).map((e: any) => ({ event: e.event, severity: e.severity }));
}

/** A bare-metal port's `internal_info` and a switch port's revisions, read from the running server's store. */
async function internalInfo(uuid: string): Promise<Record<string, unknown>> {
  const r = await env.ts.server.services.store.db
    .selectFrom('ports')
    .select('internal_info')
    .where('uuid', '=', uuid)
    .executeTakeFirstOrThrow();
  return JSON.parse(r.internal_info);
}
async function switchPort(portId: string): Promise<{ desired: number; applied: number | null }> {
  const r = await env.ts.server.services.store.db
    .selectFrom('switch_ports')
    .select(['desired_rev', 'applied_rev'])
    .where('switch_uuid', '=', sw.id)
    .where('port_id', '=', portId)
    .executeTakeFirstOrThrow();
  return { desired: Number(r.desired_rev), applied: r.applied_rev === null ? null : Number(r.applied_rev) };
}

it('repairs at start port ↔ VIF and allocation / server ↔ node damage, with a history entry per repair', async () => {
  const { lessee, admin } = env.p;
  const a = await cabledNode(env, 'rc-a', 'tor1', ['52:54:00:00:0a:00', '52:54:00:00:0a:01']);
  const b = await cabledNode(env, 'rc-b', 'tor1', ['52:54:00:00:0b:00', '52:54:00:00:0b:01']);
  const network = await create(env, lessee, 'networks', 'network', { name: 'rc-net' });
  const vifs: any[] = [];
  for (const name of ['rc-p1', 'rc-p2', 'rc-p3']) vifs.push(await create(env, lessee, 'ports', 'port', { network_id: network.id, name }));
  for (const [i, vif] of vifs.slice(0, 2).entries()) {
    const r = await bm(env, lessee, 'POST', `/v1/nodes/${a.node.uuid}/vifs`, { id: vif.id, port_uuid: a.ports[i].uuid });
    expect(r.status, r.text).toBe(204);
  }
  for (const vif of vifs.slice(0, 2))
    await settle(
      env,
      () => portAsAdmin(env, vif.id),
      (p) => p.status === 'ACTIVE',
    );
  expect(fakeSwitchState(sw.id).get('rc-a-0')).toMatchObject({ mode: 'access' });

  // Allocations: x is allocated (its record will lose it), y will name a missing allocation, z
  // will carry a server it does not name.
  const [x, y, z] = [await freeNode(env.ts, env.p), await freeNode(env.ts, env.p), await freeNode(env.ts, env.p)];
  const made = await bm(env, admin, 'POST', '/v1/allocations', { resource_class: 'gold', candidate_nodes: [x.uuid] });
  expect(made.status, made.text).toBe(201);
  const allocation = await settledAllocation(env.ts, admin, made.body.uuid);
  expect(allocation).toMatchObject({ state: 'active', node_uuid: x.uuid });

  const before = { a0: await switchPort('rc-a-0'), a1: await switchPort('rc-a-1') };
  await env.ts.close({ keepData: true });

  const elsewhere = randomUUID();
  const ghostVif = randomUUID();
  const ghostAllocation = randomUUID();
  const server = randomUUID();
  const now = Date.now();
  await writeStopped(env.ts, [
    // a0's VIF (p1) is bound to a bare-metal port that does not exist.
    ['update network_ports set bound_port_uuid = ? where id = ?', elsewhere, vifs[0].id],
    // a1's VIF (p2) is not bound at all.
    ['update network_ports set bound_port_uuid = null where id = ?', vifs[1].id],
    // p3 is bound to b0, which names no VIF.
    [
      "update network_ports set bound_port_uuid = ?, binding_host_id = ?, binding_vif_type = 'other' where id = ?",
      b.ports[0].uuid,
      b.node.uuid,
      vifs[2].id,
    ],
    // b1 names a VIF that does not exist.
    ['update ports set internal_info = ? where uuid = ?', JSON.stringify({ tenant_vif_port_id: ghostVif }), b.ports[1].uuid],
    ['update nodes set allocation_uuid = ?, instance_uuid = ? where uuid = ?', ghostAllocation, ghostAllocation, y.uuid],
    ['update nodes set allocation_uuid = null, instance_uuid = null where uuid = ?', x.uuid],
    [
      "insert into servers (uuid, name, project_id, user_id, flavor, node_uuid, reservation_id, hostname, created_at) values (?, 'rc-server', ?, ?, '{}', ?, 'r-rc', 'rc-server', ?)",
      server,
      lessee.projectId,
      lessee.userId,
      z.uuid,
      now,
    ],
  ]);

  env = { ts: await startTestServer({ reuse: env.ts, env: ENV }), p: env.p };

  // Port ↔ VIF: every half-binding is gone, both sides.
  expect(await internalInfo(a.ports[0].uuid)).not.toHaveProperty('tenant_vif_port_id');
  expect(await internalInfo(a.ports[1].uuid)).not.toHaveProperty('tenant_vif_port_id');
  expect(await internalInfo(b.ports[1].uuid)).not.toHaveProperty('tenant_vif_port_id');
  expect((await bm(env, admin, 'GET', `/v1/nodes/${a.node.uuid}/vifs`)).body.vifs).toEqual([]);
  for (const vif of [vifs[0], vifs[2]])
    expect(await portAsAdmin(env, vif.id)).toMatchObject({ 'binding:host_id': '', 'binding:vif_type': 'unbound', status: 'DOWN' });
  const ah = await history(a.node.uuid, 'vif');
  expect(ah.map((e) => e.event)).toEqual([
    `Port ${a.ports[0].uuid} had VIF ${vifs[0].id}, which is bound to port ${elsewhere}; the VIF was removed from the port.`,
    `Port ${a.ports[1].uuid} had VIF ${vifs[1].id}, which is not bound; the VIF was removed from the port.`,
    `Network port ${vifs[0].id} was bound to port ${elsewhere}, which does not exist; the network port was unbound.`,
  ]);
  expect(new Set(ah.map((e) => e.severity))).toEqual(new Set(['WARNING']));
  expect((await history(b.node.uuid, 'vif')).map((e) => e.event)).toEqual([
    `Port ${b.ports[1].uuid} had VIF ${ghostVif}, which does not exist; the VIF was removed from the port.`,
    `Network port ${vifs[2].id} was bound to port ${b.ports[0].uuid}, which has no VIF; the network port was unbound.`,
  ]);
  // The switch ports of the repaired bare-metal ports are programmed again: quarantined.
  for (const [id, was] of [
    ['rc-a-0', before.a0],
    ['rc-a-1', before.a1],
  ] as const) {
    const now = await settle(
      env,
      () => switchPort(id),
      (s) => s.applied === s.desired,
    );
    expect(now.desired).toBeGreaterThan(was.desired);
    expect(fakeSwitchState(sw.id).get(id)).toEqual({ mode: 'quarantine' });
  }

  // Allocation / server ↔ node.
  const node = async (uuid: string) => (await bm(env, admin, 'GET', `/v1/nodes/${uuid}`)).body;
  expect(await node(y.uuid)).toMatchObject({ allocation_uuid: null, instance_uuid: null });
  expect((await history(y.uuid, 'allocation')).map((e) => e.event)).toEqual([
    `The node named allocation ${ghostAllocation}, which does not exist; the node's allocation was cleared.`,
  ]);
  expect((await bm(env, admin, 'GET', `/v1/allocations/${allocation.uuid}`)).status).toBe(404);
  expect((await history(x.uuid, 'allocation')).map((e) => e.event)).toEqual([
    `Allocation ${allocation.uuid} was on the node, which names no allocation; the allocation was released.`,
  ]);
  const s = await env.ts.server.services.store.db
    .selectFrom('servers')
    .select(['deleted_at', 'fault'])
    .where('uuid', '=', server)
    .executeTakeFirstOrThrow();
  expect(s.deleted_at).not.toBeNull();
  expect(JSON.parse(s.fault!).message).toBe(ORPHAN_SERVER_FAULT);
  const zh = await history(z.uuid, 'allocation');
  expect(zh).toEqual([
    {
      event: `Server ${server} was on node ${z.uuid}, which has no instance; the server was marked deleted and its allocation released.`,
      severity: 'WARNING',
    },
  ]);
  // Nothing left to repair: a second pass changes nothing.
  const again = await env.ts.server.services.store.db
    .selectFrom('node_history')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  const worker = env.ts.server.services.workers.find((w) => w.name === 'record-check') as unknown as { runOnce(): Promise<void> };
  await worker.runOnce();
  const after = await env.ts.server.services.store.db
    .selectFrom('node_history')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  expect(Number(after.n)).toBe(Number(again.n));
});
