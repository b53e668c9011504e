/**
 * A VIF lives only as long as its project's hold on the node (issue 14, "again where the work
 * uses it"): when a node changes hands by PATCH the VIFs its owner did not attach are detached;
 * and the switch reconciler, which derives every switch port when it programs it, carries a VIF
 * only while the project that attached it still owns or leases the node — a VIF left behind by
 * any other path (here: the lessee changed under the API's feet) is quarantined.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeSwitchState } from '../../../src/drivers/switch/fake.ts';
import { forceNode } from '../baremetal/helpers.ts';
import { bm, cabledNode, create, createSwitch, net, portAsAdmin, settle, startNetEnv, type NetEnv } from './support.ts';

let env: NetEnv;
let sw: any;

beforeAll(async () => {
  env = await startNetEnv();
  sw = await createSwitch(env, 'tor-t');
});
afterAll(async () => env?.ts.close());

/** A node cabled to tor-t port `<name>-0` with a lessee VIF on a fresh network, carried by the switch. */
async function withLesseeVif(name: string): Promise<{ node: any; vif: any }> {
  const { node } = await cabledNode(env, name, 'tor-t', [`52:54:00:0d:0${name.length}:00`]);
  const n = await create(env, env.p.lessee, 'networks', 'network', { name: `${name}-net` });
  const vif = await create(env, env.p.lessee, 'ports', 'port', { network_id: n.id });
  expect((await bm(env, env.p.lessee, 'POST', `/v1/nodes/${node.uuid}/vifs`, { id: vif.id })).status).toBe(204);
  await settle(
    env,
    () => portAsAdmin(env, vif.id),
    (x) => x.status === 'ACTIVE',
  );
  expect(fakeSwitchState(sw.id).get(`${name}-0`)?.mode).toBe('access');
  return { node, vif };
}

describe("VIFs end with their project's hold on the node", () => {
  it('a lessee changed by PATCH loses its VIFs: detached, switch port quarantined', async () => {
    const { node, vif } = await withLesseeVif('pa');
    const r = await bm(env, env.p.admin, 'PATCH', `/v1/nodes/${node.uuid}`, [
      { op: 'replace', path: '/lessee', value: env.p.other.projectId },
    ]);
    expect(r.status, r.text).toBe(200);
    expect((await bm(env, env.p.admin, 'GET', `/v1/nodes/${node.uuid}/vifs`)).body.vifs).toEqual([]);
    await settle(
      env,
      async () => fakeSwitchState(sw.id).get('pa-0'),
      (s) => s?.mode === 'quarantine',
    );
    expect(fakeSwitchState(sw.id).get('pa-0')).toEqual({ mode: 'quarantine' });
    expect((await portAsAdmin(env, vif.id)).status).toBe('DOWN');
  });

  it('a VIF whose project no longer holds the node is never carried, whatever left it attached', async () => {
    const { node, vif } = await withLesseeVif('pbb');
    // The lessee goes without any VIF detach (as a racing attach would leave it).
    await forceNode(env.ts, node.uuid, { lessee: null });
    expect((await bm(env, env.p.admin, 'GET', `/v1/nodes/${node.uuid}/vifs`)).body.vifs).toEqual([{ id: vif.id }]);
    expect((await net(env, env.p.admin, 'POST', `/switches/${sw.id}/resync`)).status).toBe(200);
    await settle(
      env,
      async () => fakeSwitchState(sw.id).get('pbb-0'),
      (s) => s?.mode === 'quarantine',
    );
    expect(fakeSwitchState(sw.id).get('pbb-0')).toEqual({ mode: 'quarantine' });
  });
});
