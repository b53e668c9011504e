/**
 * Node history (Ironic API 1.78, https://docs.openstack.org/api-ref/baremetal/#node-history-nodes): `GET /v1/nodes/{node}/history`
 * (list, `detail`, `marker`/`limit`, oldest first), `…/history/detail` (the client's `--long`)
 * and `…/history/{uuid}`; policy `baremetal:node:history:get` (admin and owner; the lessee sees
 * the node but not its history: 403; another project: 404; anonymous: 401); entries recorded
 * automatically for conductor errors, for maintenance set and cleared (with the user); at most
 * `ESI_NODE_HISTORY_MAX_ENTRIES` per node; deleted with the node.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bm, deadUrl, enroll, expectError, power, settled, startConductorEnv, type ConductorEnv } from '../conductor/support.ts';

let env: ConductorEnv;
const MAX = 6;

beforeAll(async () => {
  env = await startConductorEnv(1, {
    env: { ESI_NODE_HISTORY_MAX_ENTRIES: String(MAX), ESI_POWER_TIMEOUT: '3', ESI_POWER_SYNC_INTERVAL: '3600' },
  });
});
afterAll(async () => env?.close());

async function history(ident: string, query = '', who = env.p.admin): Promise<any> {
  const r = await bm(env.ts, who, 'GET', `/v1/nodes/${ident}/history${query}`);
  expect(r.status, r.text).toBe(200);
  return r.body;
}

async function maintenance(ident: string, on: boolean, reason?: string, who = env.p.admin): Promise<void> {
  const r = await bm(env.ts, who, on ? 'PUT' : 'DELETE', `/v1/nodes/${ident}/maintenance`, on && reason ? { reason } : undefined);
  expect(r.status, r.text).toBe(202);
}

describe('node history', () => {
  it('records a failed power change on an unreachable BMC (ERROR, power), visible to admin and owner only', async () => {
    const secret = 'History-Secret-Pw-3';
    const n = await enroll(env, {
      driver: 'redfish',
      name: 'hist-dead',
      driver_info: {
        redfish_address: await deadUrl(),
        redfish_system_id: '/redfish/v1/Systems/x',
        redfish_username: 'admin',
        redfish_password: secret,
      },
    });
    await power(env, n.uuid, 'power on');
    const after = await settled(env, n.uuid);
    expect(after.last_error).toMatch(/unreachable/);

    const list = await history(n.uuid);
    expect(list.history).toHaveLength(1);
    const e = list.history[0];
    expect(Object.keys(e).sort()).toEqual(['created_at', 'event', 'links', 'severity', 'uuid']);
    expect(e.severity).toBe('ERROR');
    expect(e.event).toBe(after.last_error.length > 255 ? `${after.last_error.slice(0, 251)}...` : after.last_error);
    // Python's isoformat(): no fraction when the microseconds are 0 (one write in a thousand here).
    expect(e.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?\+00:00$/);
    expect(e.links[0].href).toBe(`${env.ts.url}/baremetal/v1/nodes/${n.uuid}/history/${e.uuid}`);
    expect(JSON.stringify(list)).not.toContain(secret);

    const one = await bm(env.ts, env.p.owner, 'GET', `/v1/nodes/${n.uuid}/history/${e.uuid}`);
    expect(one.status, one.text).toBe(200);
    expect(one.body).toMatchObject({ uuid: e.uuid, severity: 'ERROR', event_type: 'power', event: after.last_error, user: null });
    expect(typeof one.body.conductor).toBe('string');

    // Personas: owner reads; the lessee sees the node but not its history (Ironic: owner, not lessee).
    expect((await bm(env.ts, env.p.owner, 'GET', `/v1/nodes/${n.uuid}/history`)).status).toBe(200);
    expectError(await bm(env.ts, env.p.lessee, 'GET', `/v1/nodes/${n.uuid}/history`), 403, /baremetal:node:history:get/);
    expectError(await bm(env.ts, env.p.lessee, 'GET', `/v1/nodes/${n.uuid}/history/${e.uuid}`), 403);
    expectError(await bm(env.ts, env.p.other, 'GET', `/v1/nodes/${n.uuid}/history`), 404);
    expectError(await bm(env.ts, env.p.other, 'GET', `/v1/nodes/${n.uuid}/history/${e.uuid}`), 404);
    expect((await bm(env.ts, env.p.anonymous, 'GET', `/v1/nodes/${n.uuid}/history`)).status).toBe(401);
  });

  it('records maintenance set and cleared with the user; detail, pagination, version gate, bad input', async () => {
    const n = await enroll(env, { driver: 'fake-hardware', name: 'hist-maint' });
    await maintenance(n.uuid, true, 'disk swap', env.p.owner);
    await maintenance(n.uuid, false, undefined, env.p.admin);
    await maintenance(n.uuid, true);

    const detail = await history(n.uuid, '?detail=true');
    expect(detail.history.map((h: any) => h.event)).toEqual(['Maintenance set: disk swap', 'Maintenance cleared.', 'Maintenance set.']);
    expect(detail.history[0]).toMatchObject({ severity: 'INFO', event_type: 'maintenance', user: env.p.owner.userId });
    expect(detail.history[1].user).toBe(env.p.admin.userId);
    expect(Object.keys(detail.history[0]).sort()).toEqual([
      'conductor',
      'created_at',
      'event',
      'event_type',
      'links',
      'severity',
      'user',
      'uuid',
    ]);
    const viaPath = await history(n.uuid, '/detail');
    expect(viaPath.history).toEqual(detail.history);

    const p1 = await history(n.name, '?limit=2');
    expect(p1.history.map((h: any) => h.uuid)).toEqual(detail.history.slice(0, 2).map((h: any) => h.uuid));
    expect(p1.next).toBe(`${env.ts.url}/baremetal/v1/nodes/${n.name}/history?limit=2&marker=${p1.history[1].uuid}`);
    const p2 = await history(n.name, `?limit=2&marker=${p1.history[1].uuid}`);
    expect(p2.history.map((h: any) => h.uuid)).toEqual([detail.history[2].uuid]);
    expect(p2.next).toBeUndefined();

    expectError(await bm(env.ts, env.p.admin, 'GET', `/v1/nodes/${n.uuid}/history`, undefined, '1.77'), 404);
    expectError(await bm(env.ts, env.p.admin, 'GET', `/v1/nodes/${n.uuid}/history/${p1.history[0].uuid}`, undefined, '1.77'), 404);
    expectError(await bm(env.ts, env.p.admin, 'GET', `/v1/nodes/${n.uuid}/history?marker=nope`), 400);
    expectError(
      await bm(env.ts, env.p.admin, 'GET', `/v1/nodes/${n.uuid}/history?marker=0b2f6a64-9c3c-4f55-8d0e-7a3c9a1e0f00`),
      404,
      /could not be found/,
    );
    expectError(await bm(env.ts, env.p.admin, 'GET', `/v1/nodes/${n.uuid}/history?limit=0`), 400);
    expectError(await bm(env.ts, env.p.admin, 'GET', `/v1/nodes/${n.uuid}/history?detail=maybe`), 400);
    expectError(await bm(env.ts, env.p.admin, 'GET', `/v1/nodes/${n.uuid}/history?sort_key=id`), 400, /Unexpected arguments/);
    expectError(
      await bm(env.ts, env.p.admin, 'GET', `/v1/nodes/${n.uuid}/history/0b2f6a64-9c3c-4f55-8d0e-7a3c9a1e0f00`),
      404,
      /history record/,
    );
    expectError(await bm(env.ts, env.p.admin, 'GET', `/v1/nodes/${n.uuid}/history/not-a-uuid`), 404);
    expectError(await bm(env.ts, env.p.admin, 'GET', '/v1/nodes/no-such-node/history'), 404);

    // A maintenance change by PATCH is recorded the same way.
    const patched = await bm(env.ts, env.p.owner, 'PATCH', `/v1/nodes/${n.uuid}`, [{ op: 'replace', path: '/maintenance', value: false }]);
    expect(patched.status, patched.text).toBe(200);
    expect((await history(n.uuid, '?detail=true')).history.at(-1)).toMatchObject({
      event: 'Maintenance cleared.',
      event_type: 'maintenance',
      user: env.p.owner.userId,
    });

    // An entry of another node is not found through this one.
    const other = await enroll(env, { driver: 'fake-hardware', name: 'hist-other' });
    await maintenance(other.uuid, true, 'x');
    const otherEntry = (await history(other.uuid)).history[0];
    expectError(await bm(env.ts, env.p.admin, 'GET', `/v1/nodes/${n.uuid}/history/${otherEntry.uuid}`), 404);
  });

  it(`keeps at most ${MAX} entries per node (oldest go first) and deletes history with the node`, async () => {
    const n = await enroll(env, { driver: 'fake-hardware', name: 'hist-prune' });
    for (let i = 0; i < MAX + 3; i++) await maintenance(n.uuid, i % 2 === 0, `round ${i}`);
    const all = (await history(n.uuid)).history;
    expect(all).toHaveLength(MAX);
    expect(all[0].event).toBe('Maintenance cleared.');
    expect(all.at(-1).event).toBe(`Maintenance set: round ${MAX + 2}`);

    const db = env.ts.server.services.store.db;
    const nodeId = Number((await db.selectFrom('nodes').select('id').where('uuid', '=', n.uuid).executeTakeFirstOrThrow()).id);
    expect((await db.selectFrom('node_history').select('uuid').where('node_id', '=', nodeId).execute()).length).toBe(MAX);
    expect((await bm(env.ts, env.p.admin, 'DELETE', `/v1/nodes/${n.uuid}`)).status).toBe(204);
    expect((await db.selectFrom('node_history').select('uuid').where('node_id', '=', nodeId).execute()).length).toBe(0);
  });
});
