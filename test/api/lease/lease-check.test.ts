/**
 * Issue 23: the lease ↔ node check (src/domain/leasing/reconcile.ts) repairs what a process
 * killed between the change of a lease and the change of its node leaves behind, at start and
 * when it runs again, with a node history entry saying what it repaired. Runs on SQLite
 * (api-sqlite) and PostgreSQL (api-pg).
 *
 * The damage is made through the repositories, as a kill leaves it (the records written up to
 * the kill, nothing after): the case — an `active` lease whose node lost its `lessee`
 * (the node still records the lease); a node still carrying a lease that is `deleted`; an
 * `active` lease whose node carries nothing. Then the server restarts on the same database and
 * its start-up check repairs all three; a later disagreement is repaired by the next pass. Last,
 * an offer's cancel killed after its first step (the offer `deleted`, its lease still `active`):
 * the check cancels the lease; and a sub-lease `deleted` while its node still carries it: the
 * check removes it and gives the node back to the parent lease.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { call, startTestServer } from '../../helpers/harness.ts';
import { at, enrolNode, HOUR, nodeAs, startLeaseEnv, type LeaseEnv } from './support.ts';

let env: LeaseEnv;

beforeAll(async () => {
  env = await startLeaseEnv();
});
afterAll(async () => env?.ts.close());

/** An active lease of a fresh node for the lessee persona's project. */
async function activeLease(name: string): Promise<{ node: string; lease: string }> {
  const node = await enrolNode(env, name);
  const r = await call(env.ts, env.p.owner, 'POST', '/lease/v1/leases', {
    resource_uuid: node,
    project_id: env.p.lessee.projectId,
    start_time: at(-1000),
    end_time: at(HOUR),
  });
  expect(r.status, r.text).toBe(201);
  await env.ts.server.services.leaseManager.runDue();
  expect((await nodeAs(env, env.p.lessee, node)).status).toBe(200);
  return { node, lease: r.body.uuid };
}

const leaseOf = async (uuid: string): Promise<any> => (await call(env.ts, env.p.admin, 'GET', `/lease/v1/leases/${uuid}`)).body;
const nodeOf = async (uuid: string): Promise<any> => (await nodeAs(env, env.p.admin, uuid)).body;

/** The node's history entries of type `lease`, as the admin reads them. */
async function leaseHistory(node: string): Promise<Array<{ event: string; severity: string }>> {
  const r = await call(env.ts, env.p.admin, 'GET', `/baremetal/v1/nodes/${node}/history/detail`, undefined, {
    'x-openstack-ironic-api-version': '1.78',
  });
  expect(r.status, r.text).toBe(200);
  return r.body.history.filter((e: any) => e.event_type === 'lease');
}

/** Write node fields as a crashed step left them (the node repository's conditional update). */
async function damageNode(uuid: string, change: (n: any) => Record<string, unknown>): Promise<void> {
  const nodes = env.ts.server.services.inventory.nodeRepository;
  const n = (await nodes.get(uuid))!;
  const result = await nodes.update(uuid, n.version, change(n), Date.now());
  expect(result.ok).toBe(true);
}

/** Write a lease's status as a crashed step left it, without touching its node. */
async function damageLease(uuid: string, from: 'active', to: 'deleted'): Promise<void> {
  const repo = env.ts.server.services.leasing.repo;
  const lease = (await repo.getLease(uuid))!;
  const changed = await repo.withNodeLock(lease.resource_uuid, (tx) => tx.transitionLease(uuid, [from], { status: to }, Date.now()));
  expect(changed?.status).toBe(to);
}

it('repairs at start what killed lease changes left: lost lessee, a deleted lease on its node, a lost lease', async () => {
  // The case: the cancel's revocation cleared the lessee, then the process died.
  const a = await activeLease('check-lessee');
  const nodes = env.ts.server.services.inventory.nodeRepository;
  const na = (await nodes.get(a.node))!;
  expect((await nodes.revokeLessee(a.node, na.version, Date.now())).ok).toBe(true);

  // The lease was written deleted, the node was never changed.
  const b = await activeLease('check-stale');
  await damageLease(b.lease, 'active', 'deleted');

  // The node lost the lease (lessee and lease_uuid) while the lease stayed active.
  const c = await activeLease('check-lost');
  await damageNode(c.node, (n) => {
    const properties = { ...n.properties };
    delete properties.lease_uuid;
    return { lessee: null, properties };
  });

  expect((await nodeOf(a.node)).lessee).toBeNull();
  expect((await nodeOf(b.node)).lessee).toBe(env.p.lessee.projectId);
  expect((await nodeOf(c.node)).properties.lease_uuid).toBeUndefined();

  // Restart on the same database: the start-up check repairs all three.
  await env.ts.close({ keepData: true });
  const ts = await startTestServer({ reuse: env.ts });
  env = { ts, p: env.p };

  const nodeA = await nodeOf(a.node);
  expect(nodeA.lessee).toBe(env.p.lessee.projectId);
  expect(nodeA.properties.lease_uuid).toBe(a.lease);
  expect((await leaseOf(a.lease)).status).toBe('active');
  expect((await leaseHistory(a.node)).map((e) => e.event)).toEqual([
    `Lease ${a.lease} is active but the node had no lessee; lessee set back to ${env.p.lessee.projectId}.`,
  ]);

  const nodeB = await nodeOf(b.node);
  expect(nodeB.lessee).toBeNull();
  expect(nodeB.properties.lease_uuid).toBeUndefined();
  expect((await leaseOf(b.lease)).status).toBe('deleted');
  expect((await nodeAs(env, env.p.lessee, b.node)).status).toBe(404);
  const hb = await leaseHistory(b.node);
  expect(hb.map((e) => e.event)).toEqual([`Lease ${b.lease} is deleted but the node still carried it; removed it from the node.`]);
  expect(hb[0]!.severity).toBe('WARNING');

  const nodeC = await nodeOf(c.node);
  expect(nodeC.lessee).toBe(env.p.lessee.projectId);
  expect(nodeC.properties.lease_uuid).toBe(c.lease);
  expect((await leaseHistory(c.node)).map((e) => e.event)).toEqual([
    `Lease ${c.lease} is active but the node carried no lease; lease applied again (lessee ${env.p.lessee.projectId}).`,
  ]);

  // Nothing left to repair: a second pass changes nothing and writes no history.
  const again = await env.ts.server.services.leaseCheck.run();
  expect(again).toEqual({ repaired: [], deferred: [] });
  expect(await leaseHistory(a.node)).toHaveLength(1);
});

it('a later disagreement is repaired by the next pass; agreeing nodes, and an admin lessee without a lease, are left alone', async () => {
  const { node, lease } = await activeLease('check-later');
  const plain = await enrolNode(env, 'check-admin-lessee');
  await damageNode(plain, () => ({ lessee: env.p.other.projectId }));
  await damageNode(node, () => ({ lessee: env.p.other.projectId }));

  const report = await env.ts.server.services.leaseCheck.run();
  expect(report.deferred).toEqual([]);
  expect(report.repaired.map((r) => [r.node, r.kind, r.lease])).toEqual([[node, 'lessee', lease]]);
  expect((await nodeOf(node)).lessee).toBe(env.p.lessee.projectId);
  expect((await leaseHistory(node)).map((e) => e.event)).toEqual([
    `Lease ${lease} is active but the node had lessee ${env.p.other.projectId}; lessee set back to ${env.p.lessee.projectId}.`,
  ]);
  expect((await nodeOf(plain)).lessee).toBe(env.p.other.projectId);
  expect(await leaseHistory(plain)).toEqual([]);
});

it('a node another actor holds is left for the next pass', async () => {
  const { node } = await activeLease('check-claimed');
  const nodes = env.ts.server.services.inventory.nodeRepository;
  const n = (await nodes.get(node))!;
  expect((await nodes.revokeLessee(node, n.version, Date.now())).ok).toBe(true);
  const repo = env.ts.server.services.leasing.repo;
  expect(await repo.claimNode(node, 'someone-else', Date.now() + 60_000, Date.now())).toBe(true);
  try {
    const report = await env.ts.server.services.leaseCheck.run();
    expect(report.deferred).toEqual([node]);
    expect((await nodeOf(node)).lessee).toBeNull();
  } finally {
    await repo.releaseNode(node, 'someone-else');
  }
  expect((await env.ts.server.services.leaseCheck.run()).repaired.map((r) => r.node)).toEqual([node]);
  expect((await nodeOf(node)).lessee).toBe(env.p.lessee.projectId);
});

it("an offer's cancel killed after the offer was marked deleted: its live leases are cancelled", async () => {
  const node = await enrolNode(env, 'check-offer');
  const o = await call(env.ts, env.p.owner, 'POST', '/lease/v1/offers', {
    resource_uuid: node,
    start_time: at(-2000),
    end_time: at(2 * HOUR),
  });
  expect(o.status, o.text).toBe(201);
  const l = await call(env.ts, env.p.lessee, 'POST', `/lease/v1/offers/${o.body.uuid}/claim`, {
    start_time: at(-1000),
    end_time: at(HOUR),
  });
  expect(l.status, l.text).toBe(201);
  await env.ts.server.services.leaseManager.runDue();
  expect((await leaseOf(l.body.uuid)).status).toBe('active');
  // The offer's first step, then the kill: its lease is untouched.
  const repo = env.ts.server.services.leasing.repo;
  await repo.withNodeLock(node, (tx) => tx.transitionOffer(o.body.uuid, ['available'], 'deleted', Date.now()));

  const report = await env.ts.server.services.leaseCheck.run();
  expect(report.repaired.map((r) => [r.node, r.kind, r.lease])).toEqual([[node, 'cancelled', l.body.uuid]]);
  expect((await leaseOf(l.body.uuid)).status).toBe('deleted');
  expect((await nodeOf(node)).lessee).toBeNull();
  expect((await leaseHistory(node)).map((e) => e.event)).toEqual([
    `Lease ${l.body.uuid} was active but its offer ${o.body.uuid} is deleted; lease cancelled.`,
  ]);
});

it('a sub-lease that is over but still on its node is removed, and the node goes back to the parent lease', async () => {
  const { node, lease: parent } = await activeLease('check-sub');
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
  const sub = await call(env.ts, { ...env.p.lessee, token: issued.secret }, 'POST', '/lease/v1/leases', {
    resource_uuid: node,
    project_id: env.p.other.projectId,
    start_time: at(-500),
    end_time: at(HOUR / 2),
  });
  expect(sub.status, sub.text).toBe(201);
  expect(sub.body.parent_lease_uuid).toBe(parent);
  await env.ts.server.services.leaseManager.runDue();
  expect((await nodeOf(node)).lessee).toBe(env.p.other.projectId);
  await damageLease(sub.body.uuid, 'active', 'deleted');

  const report = await env.ts.server.services.leaseCheck.run();
  expect(report.repaired.map((r) => [r.kind, r.lease])).toEqual([
    ['removed', sub.body.uuid],
    ['applied', parent],
  ]);
  const after = await nodeOf(node);
  expect(after.lessee).toBe(env.p.lessee.projectId);
  expect(after.properties.lease_uuid).toBe(parent);
  expect((await leaseHistory(node)).map((e) => e.event)).toEqual([
    `Lease ${sub.body.uuid} is deleted but the node still carried it; removed it from the node.`,
    `Lease ${parent} is active but the node carried no lease; lease applied again (lessee ${env.p.lessee.projectId}).`,
  ]);
});
