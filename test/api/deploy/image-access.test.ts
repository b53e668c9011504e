/**
 * A deploy writes only images the caller that asked for it may read (issue 14, breach 4): a
 * lessee that cannot see another project's private image can neither name it in
 * `instance_info.image_source` nor deploy it once an admin has named it, through the Ironic API
 * or the compute API; and the conductor, when it writes, checks the image again as the project
 * that requested the deploy, with that project's access at that moment — a share withdrawn after
 * the request fails the deploy with nothing written.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.ts';
import { bm, enrollRedfish, getNode, provision, startConductorEnv, waitNode, type ConductorEnv } from '../conductor/support.ts';
import { uploadImage } from './support.ts';

const LONG = 60_000;

/** Lab system node-0 enrolled for the agent deploy (no automated cleaning), made `available`. */
async function availableNode(env: ConductorEnv): Promise<any> {
  const node = await enrollRedfish(
    env,
    'node-0',
    { deploy_interface: 'direct', automated_clean: false },
    { deploy_iso: 'http://lab/esi-agent.iso' },
  );
  await provision(env, node.uuid, 'manage');
  await waitNode(env, node.uuid, (n) => n.provision_state === 'manageable' && n.reservation === null);
  await provision(env, node.uuid, 'provide');
  await waitNode(env, node.uuid, (n) => n.provision_state === 'available' && n.reservation === null);
  return node;
}

/** An image of o2's, shared with l1, which accepted it; returns its id. */
async function sharedWithLessee(env: ConductorEnv): Promise<string> {
  const shared = await uploadImage(env, new Uint8Array(4096), 'o2-shared', { as: env.p.other, visibility: 'shared' });
  expect((await call(env.ts, env.p.other, 'POST', `/image/v2/images/${shared}/members`, { member: env.p.lessee.projectId })).status).toBe(
    200,
  );
  expect(
    (await call(env.ts, env.p.lessee, 'PUT', `/image/v2/images/${shared}/members/${env.p.lessee.projectId}`, { status: 'accepted' }))
      .status,
  ).toBe(200);
  return shared;
}

describe('deploy images are read as the caller', () => {
  let env: ConductorEnv;
  let hidden: string;
  let shared: string;
  let node: any;

  beforeAll(async () => {
    env = await startConductorEnv(1);
    // o2's private image, and one o2 shares with l1 (accepted).
    hidden = await uploadImage(env, new Uint8Array(4096), 'o2-private', { as: env.p.other, visibility: 'private' });
    shared = await sharedWithLessee(env);
    node = await availableNode(env);
  }, LONG);
  afterAll(async () => {
    await env?.close();
  });

  it("the lessee cannot name another project's private image in instance_info: 400, nothing written", async () => {
    // From a node that names no image (other tests of this file name images on it: writing the
    // value already there changes nothing and is not refused).
    const cleared = await bm(env.ts, env.p.admin, 'PATCH', `/v1/nodes/${node.uuid}`, [
      { op: 'replace', path: '/instance_info', value: {} },
    ]);
    expect(cleared.status, cleared.text).toBe(200);
    for (const ops of [
      [{ op: 'add', path: '/instance_info/image_source', value: hidden }],
      [{ op: 'add', path: '/instance_info', value: { image_source: hidden } }],
    ]) {
      const r = await bm(env.ts, env.p.lessee, 'PATCH', `/v1/nodes/${node.uuid}`, ops);
      expect(r.status, r.text).toBe(400);
      // The same answer as for an image that does not exist.
      expect(r.body.error_message ?? r.text).toMatch(/could not be found/);
      expect(r.text).not.toMatch(/o2-private/);
    }
    const ghost = await bm(env.ts, env.p.lessee, 'PATCH', `/v1/nodes/${node.uuid}`, [
      { op: 'add', path: '/instance_info/image_source', value: '0b5b1c6e-7f1f-4d57-9a40-000000000000' },
    ]);
    expect(ghost.status).toBe(400);
    expect((await getNode(env, node.uuid)).instance_info).toEqual({});
  });

  it("once an admin named it, the lessee's deploy is refused (400) before anything changes; the owner's too", async () => {
    expect(
      (
        await bm(env.ts, env.p.admin, 'PATCH', `/v1/nodes/${node.uuid}`, [
          { op: 'add', path: '/instance_info/image_source', value: hidden },
        ])
      ).status,
    ).toBe(200);
    for (const who of [env.p.lessee, env.p.owner]) {
      const r = await bm(env.ts, who, 'PUT', `/v1/nodes/${node.uuid}/states/provision`, { target: 'active' });
      expect(r.status, r.text).toBe(400);
      expect(r.text).toMatch(/could not be found/);
    }
    const n = await getNode(env, node.uuid);
    expect(n).toMatchObject({ provision_state: 'available', target_provision_state: null });
    // The last request recorded is still the admin's `provide`.
    expect(n.driver_internal_info.esi_requested_by.user_id).toBe(env.p.admin.userId);
  });

  it('the compute API refuses it too', async () => {
    const nova = { 'x-openstack-nova-api-version': '2.90' };
    const flavor = await call(
      env.ts,
      env.p.admin,
      'POST',
      '/compute/v2.1/flavors',
      { flavor: { name: 'bm.img', id: 'bm.img', ram: 1, vcpus: 1, disk: 0 } },
      nova,
    );
    expect(flavor.status, flavor.text).toBe(200);
    const r = await call(
      env.ts,
      env.p.lessee,
      'POST',
      '/compute/v2.1/servers',
      { server: { name: 's1', flavorRef: 'bm.img', imageRef: hidden, networks: 'none' } },
      nova,
    );
    expect(r.status, r.text).toBe(400);
    expect(r.text).toMatch(/could not be found/);
  });

  it('an image shared with the lessee may be named by it', async () => {
    expect(
      (
        await bm(env.ts, env.p.lessee, 'PATCH', `/v1/nodes/${node.uuid}`, [
          { op: 'add', path: '/instance_info/image_source', value: shared },
        ])
      ).status,
    ).toBe(200);
    expect((await getNode(env, node.uuid)).instance_info.image_source).toBe(shared);
  });
});

describe('the conductor checks the image again as the requester, when it writes', () => {
  let env: ConductorEnv;
  let apiOnly: TestServer | null = null;
  let restarted: TestServer | null = null;

  afterAll(async () => {
    await apiOnly?.close({ keepData: true });
    await restarted?.close();
    await env?.lab.close();
  });

  it(
    'a share withdrawn between the request and the write fails the deploy, nothing written',
    async () => {
      env = await startConductorEnv(1);
      const shared = await sharedWithLessee(env);
      const node = await availableNode(env);
      await env.ts.close({ keepData: true });

      // No conductor runs while the lessee asks: the request is recorded, nothing acts on it.
      apiOnly = await startTestServer({ roles: 'api', reuse: env.ts });
      const api = { ...env, ts: apiOnly };
      expect(
        (
          await bm(apiOnly, env.p.lessee, 'PATCH', `/v1/nodes/${node.uuid}`, [
            { op: 'add', path: '/instance_info/image_source', value: shared },
          ])
        ).status,
      ).toBe(200);
      await provision(api, node.uuid, 'active', {}, env.p.lessee);
      const asked = await getNode(api, node.uuid);
      expect(asked).toMatchObject({ provision_state: 'deploying', target_provision_state: 'active' });
      expect(asked.driver_internal_info.esi_requested_by).toEqual({
        user_id: env.p.lessee.userId,
        project_id: env.p.lessee.projectId,
        system_scope: null,
      });
      // o2 withdraws the share before any conductor writes.
      expect((await call(apiOnly, env.p.other, 'DELETE', `/image/v2/images/${shared}/members/${env.p.lessee.projectId}`)).status).toBe(204);
      await apiOnly.close({ keepData: true });
      apiOnly = null;

      restarted = await startTestServer({ reuse: env.ts });
      const n = await waitNode(
        { ...env, ts: restarted },
        node.uuid,
        (x) => / failed$/.test(x.provision_state) || x.provision_state === 'active',
        LONG,
      );
      expect(n.provision_state).toBe('deploy failed');
      expect(n.last_error).toMatch(/may no longer read it/);
      // The agent was never booted: no virtual media inserted, the disk untouched.
      expect(env.lab.systems.get('node-0').lastBootOverride).not.toBe('Cd');
    },
    LONG,
  );
});
