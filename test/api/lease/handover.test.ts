/**
 * Hand-over of a node between tenants (docs/leasing.md "The lease manager": at a lease's end the node is undeployed
 * and cleaned before it can be leased again):
 * - a lease starting while its node is torn down, cleaned or failed waits (`wait fulfill`) and
 *   is applied once the node is settled and wiped; so does one whose node still carries the
 *   previous lease;
 * - at a sub-lease's end the node goes back to the parent's lessee only after the wipe;
 * - sub-lease rights come from the leasing store, not from node fields the owner writes;
 * - provision verbs that would skip the wipe (manage while cleaning, clean while deleting,
 *   abort of an automated clean) are refused to non-admins, and adopt to lessees.
 *
 * The server runs the API role only, with a manual clock: no conductor or lease manager moves a
 * node or a lease behind the test's back; the test forces node states and steps the lifecycle.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NODE_CLAIMED, type Lease } from '../../../src/domain/leasing/index.ts';
import { call, ManualClock, type Persona } from '../../helpers/harness.ts';
import { forceNode } from '../baremetal/helpers.ts';
import { at, enrolNode, expectFault, HOUR, MIN, nodeAs, startLeaseEnv, type LeaseEnv } from './support.ts';

let env: LeaseEnv;
const clock = new ManualClock(Date.UTC(2031, 0, 1));
let l1owner: Persona;

beforeAll(async () => {
  // Tokens outlive the clock's moves (the default TTL is one hour of the manual clock).
  env = await startLeaseEnv({ clock, roles: 'api', env: { ESI_TOKEN_TTL: String(7 * 86_400) } });
  // Sub-leasing needs the owner role on the lessee's project (as ESI's policy).
  const { grants, tokens } = env.ts.server.services.identity;
  const ownerRole = (await grants.listRoles(env.p.admin.context!, { name: 'owner' }))[0]!;
  await grants.grant(env.p.admin.context!, {
    user_id: env.p.lessee.userId!,
    role_id: ownerRole.id,
    target: { type: 'project', id: env.p.lessee.projectId! },
  });
  const issued = await tokens.authenticatePassword(
    { userId: env.p.lessee.userId!, password: 'pw-lessee1' },
    { kind: 'project', projectId: env.p.lessee.projectId! },
  );
  l1owner = { ...env.p.lessee, token: issued.secret };
});
afterAll(async () => env?.ts.close());

/** Run what is due for a lease now (the lease manager's step) and return its status. */
async function step(uuid: string): Promise<string | undefined> {
  const after = await env.ts.server.services.leasing.lifecycle.processLease(uuid);
  expect(after).not.toBe(NODE_CLAIMED);
  return (after as Lease | null)?.status;
}

async function lease(persona: Persona, node: string, project: string, fromMs: number, toMs: number): Promise<string> {
  const r = await call(env.ts, persona, 'POST', '/lease/v1/leases', {
    resource_uuid: node,
    project_id: project,
    start_time: at(fromMs, clock.now()),
    end_time: at(toMs, clock.now()),
  });
  expect(r.status, r.text).toBe(201);
  return r.body.uuid;
}

const settled = { provision_state: 'available', target_provision_state: null };

async function lesseeOf(node: string): Promise<string | null> {
  return (await nodeAs(env, env.p.admin, node)).body.lessee;
}

describe('a lease starts only on a settled, wiped node', () => {
  it('waits while the node is torn down, cleaned or failed; applied once it is available', async () => {
    const n = await enrolNode(env, 'ho-clean');
    await forceNode(env.ts, n, { provision_state: 'clean wait', target_provision_state: 'available' });
    const l = await lease(env.p.owner, n, 'l1', 0, HOUR);
    expect(await step(l)).toBe('wait fulfill');
    expect((await nodeAs(env, env.p.lessee, n)).status).toBe(404);
    for (const [state, target] of [
      ['deleting', 'available'],
      ['cleaning', 'available'],
      ['clean failed', 'available'],
      ['error', null],
      ['deploying', 'active'],
    ] as const) {
      await forceNode(env.ts, n, { provision_state: state, target_provision_state: target });
      expect(await step(l), state).toBe('wait fulfill');
      expect(await lesseeOf(n), state).toBeNull();
    }
    await forceNode(env.ts, n, settled);
    expect(await step(l)).toBe('active');
    expect((await nodeAs(env, env.p.lessee, n)).body.lessee).toBe(env.p.lessee.projectId);
  });

  it('waits while the node still carries the previous lease (its removal refused for now), then the wipe', async () => {
    const n = await enrolNode(env, 'ho-carry');
    await forceNode(env.ts, n, settled);
    const first = await lease(env.p.owner, n, 'l1', 0, HOUR);
    const next = await lease(env.p.owner, n, 'o2', HOUR, 2 * HOUR);
    expect(await step(first)).toBe('active');
    clock.advance(HOUR);
    const repo = env.ts.server.services.inventory.nodeRepository;
    expect(await repo.reserve(n, 'c9')).toBe(true);
    expect(await step(first)).toBe('wait expire');
    await repo.release(n, 'c9');
    // The next lease must not take the node over from the first: that one's removal (undeploy
    // and clean) would then find another lease on the node and leave the disk as it is.
    expect(await step(next)).toBe('wait fulfill');
    // The first lessee lost access when its lease ended (revocation does not wait for the
    // lock); the node still carries that lease until its removal is done.
    expect(await lesseeOf(n)).toBeNull();
    expect((await nodeAs(env, env.p.admin, n)).body.properties.lease_uuid).toBe(first);
    expect(await step(first)).toBe('expired');
    expect((await nodeAs(env, env.p.admin, n)).body).toMatchObject({ lessee: null, provision_state: 'cleaning' });
    expect(await step(next)).toBe('wait fulfill');
    await forceNode(env.ts, n, settled);
    expect(await step(next)).toBe('active');
    expect(await lesseeOf(n)).toBe(env.p.other.projectId);
  });
});

describe('a sub-lease’s end gives the node back to the parent’s lessee after the wipe', () => {
  it('the sub-lessee is removed at once; the parent lessee gets the node back only once it is available', async () => {
    const node = await enrolNode(env, 'ho-sub');
    await forceNode(env.ts, node, settled);
    const parent = await lease(env.p.owner, node, 'l1', 0, 4 * HOUR);
    expect(await step(parent)).toBe('active');
    const sub = await lease(l1owner, node, 'o2', 0, HOUR);
    expect(await step(sub)).toBe('active');
    expect(await lesseeOf(node)).toBe(env.p.other.projectId);
    await forceNode(env.ts, node, { provision_state: 'active', target_provision_state: null }); // o2 deployed
    clock.advance(HOUR);
    expect(await step(sub)).toBe('wait expire');
    expect((await nodeAs(env, env.p.admin, node)).body).toMatchObject({ lessee: null, provision_state: 'deleting' });
    expect((await nodeAs(env, env.p.lessee, node)).status).toBe(404);
    expect((await nodeAs(env, env.p.other, node)).status).toBe(404);
    await forceNode(env.ts, node, { provision_state: 'clean wait', target_provision_state: 'available' });
    expect(await step(sub)).toBe('wait expire');
    expect(await lesseeOf(node)).toBeNull();
    await forceNode(env.ts, node, settled);
    expect(await step(sub)).toBe('expired');
    const back = await nodeAs(env, env.p.lessee, node);
    expect(back.body).toMatchObject({ lessee: env.p.lessee.projectId, properties: { lease_uuid: parent } });
  });

  it('sub-lease rights come from the leasing store: node fields the owner writes grant nothing', async () => {
    // l1 holds ho-parent through an active lease; ho-decoy only claims so in fields o1 writes.
    const node = await enrolNode(env, 'ho-parent');
    await forceNode(env.ts, node, settled);
    const parent = await lease(env.p.owner, node, 'l1', 0, 4 * HOUR);
    expect(await step(parent)).toBe('active');
    const decoy = await enrolNode(env, 'ho-decoy');
    const patch = await call(
      env.ts,
      env.p.owner,
      'PATCH',
      `/baremetal/v1/nodes/${decoy}`,
      [
        { op: 'add', path: '/lessee', value: env.p.lessee.projectId },
        { op: 'add', path: '/properties/lease_uuid', value: parent },
      ],
      { 'x-openstack-ironic-api-version': '1.65' },
    );
    expect(patch.status, patch.text).toBe(200);
    const window = { start_time: at(10 * MIN, clock.now()), end_time: at(20 * MIN, clock.now()) };
    expectFault(
      await call(env.ts, l1owner, 'POST', '/lease/v1/offers', { resource_uuid: decoy, ...window }),
      403,
      `Access was denied to ironic_node ${decoy}.`,
    );
    expectFault(
      await call(env.ts, l1owner, 'POST', '/lease/v1/leases', { resource_uuid: decoy, project_id: 'o2', ...window }),
      403,
      `Access was denied to ironic_node ${decoy}.`,
    );
    const real = await call(env.ts, l1owner, 'POST', '/lease/v1/offers', { resource_uuid: node, ...window });
    expect(real.status, real.text).toBe(201);
    expect(real.body.parent_lease_uuid).toBe(parent);
  });
});

describe('provision verbs that skip the wipe', () => {
  const provision = (persona: Persona, node: string, body: Record<string, unknown>) =>
    call(env.ts, persona, 'PUT', `/baremetal/v1/nodes/${node}/states/provision`, body, { 'x-openstack-ironic-api-version': '1.78' });
  const denied = (rule: string) => new RegExp(`Access was denied to the following resource: ${rule}`);

  it('abort of an automated clean: refused to the lessee and the owner, allowed to an admin; a manual clean may be aborted', async () => {
    const n = await enrolNode(env, 'ho-abort', { lessee: env.p.lessee.projectId });
    await forceNode(env.ts, n, { provision_state: 'clean wait', target_provision_state: 'available' });
    for (const p of [env.p.lessee, env.p.owner]) {
      const r = await provision(p, n, { target: 'abort' });
      expect(r.status, r.text).toBe(403);
      expect(r.text).toMatch(denied('baremetal:node:disable_cleaning'));
    }
    expect((await nodeAs(env, env.p.admin, n)).body.provision_state).toBe('clean wait');
    expect((await provision(env.p.admin, n, { target: 'abort' })).status).toBe(202);
    await forceNode(env.ts, n, { provision_state: 'clean wait', target_provision_state: 'manageable' });
    expect((await provision(env.p.lessee, n, { target: 'abort' })).status).toBe(202);
  });

  it('manage while cleaning and clean while deleting: refused to non-admins', async () => {
    const n = await enrolNode(env, 'ho-manage', { lessee: env.p.lessee.projectId });
    await forceNode(env.ts, n, { provision_state: 'cleaning', target_provision_state: 'available' });
    for (const p of [env.p.lessee, env.p.owner])
      expect((await provision(p, n, { target: 'manage' })).text).toMatch(denied('baremetal:node:disable_cleaning'));
    await forceNode(env.ts, n, { provision_state: 'deleting', target_provision_state: 'available' });
    const steps = [{ interface: 'deploy', step: 'erase_devices_metadata' }];
    for (const p of [env.p.lessee, env.p.owner]) {
      const r = await provision(p, n, { target: 'clean', clean_steps: steps });
      expect(r.status, r.text).toBe(403);
    }
    expect((await nodeAs(env, env.p.admin, n)).body.provision_state).toBe('deleting');
  });

  it('adopt: the owner’s, not the lessee’s', async () => {
    const n = await enrolNode(env, 'ho-adopt', { lessee: env.p.lessee.projectId });
    await forceNode(env.ts, n, { provision_state: 'manageable', target_provision_state: null });
    const r = await provision(env.p.lessee, n, { target: 'adopt' });
    expect(r.status, r.text).toBe(403);
    expect(r.text).toMatch(denied('esi:node:provision:adopt'));
    expect((await provision(env.p.owner, n, { target: 'adopt' })).status).toBe(202);
  });
});
