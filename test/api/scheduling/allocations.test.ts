/**
 * Ironic allocations (`/baremetal/v1/allocations`, `/v1/nodes/{node}/allocation`), processed
 * by the conductor: every persona, version gates, bad input (400 and nothing written),
 * backfill, deletion rules, teardown deleting the allocation, and concurrent allocations never
 * sharing a node.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPersonas, startTestServer, type Personas, type TestServer } from '../../helpers/harness.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import { bm, expectError, fault, forceNode, freeNode, rows, settledAllocation } from './support.ts';

let ts: TestServer;
let p: Personas;
const nodes: Record<string, any> = {};

/**
 * A fresh server for the tests of one describe block — gold-1 (o1, trait CUSTOM_A), gold-2 (o1,
 * leased to l1), gold-3 (o2) and silver-1 (o1), all available — then `fixture`.
 */
function freshServer(fixture: () => Promise<void> = async () => {}): void {
  beforeAll(async () => {
    ts = await startTestServer();
    p = await createPersonas(ts);
    nodes.ownerGold = await freeNode(ts, p, { name: 'gold-1', traits: undefined });
    await bm(ts, p.admin, 'PUT', `/v1/nodes/${nodes.ownerGold.uuid}/traits/CUSTOM_A`);
    nodes.leasedGold = await freeNode(ts, p, { name: 'gold-2', lessee: p.lessee.projectId });
    nodes.otherGold = await freeNode(ts, p, { name: 'gold-3', owner: p.other.projectId });
    nodes.ownerSilver = await freeNode(ts, p, { name: 'silver-1', resource_class: 'silver' });
    await fixture();
  });
  afterAll(async () => ts?.close());
}

async function create(who: keyof Personas, body: Record<string, unknown>, version?: string) {
  return bm(ts, p[who], 'POST', '/v1/allocations', body, version);
}

let lesseeAlloc: any;
let ownerAlloc: any;

/** The lessee's allocation `lessee-job` (on gold-2) and the owner's with trait CUSTOM_A (on gold-1), both active. */
async function withAllocations(): Promise<void> {
  const settled = async (who: 'lessee' | 'owner', body: Record<string, unknown>) => {
    const r = await create(who, body);
    expect(r.status, r.text).toBe(201);
    const a = await settledAllocation(ts, p[who], r.body.uuid);
    expect(a.state, a.last_error).toBe('active');
    return a;
  };
  lesseeAlloc = await settled('lessee', { resource_class: 'gold', name: 'lessee-job', extra: { purpose: 'ci' } });
  ownerAlloc = await settled('owner', { resource_class: 'gold', traits: ['CUSTOM_A'] });
}

describe('allocations: version gates and anonymous callers', () => {
  freshServer();

  it('before 1.52 GET is 404 and POST 405; PATCH needs 1.57, backfill 1.58, owner 1.60', async () => {
    expectError(await bm(ts, p.admin, 'GET', '/v1/allocations', undefined, '1.51'), 404);
    expectError(await create('admin', { resource_class: 'gold' }, '1.51'), 405);
    expectError(await bm(ts, p.admin, 'PATCH', '/v1/allocations/x', [{ op: 'add', path: '/extra/a', value: 1 }], '1.56'), 405);
    expectError(await create('admin', { node: nodes.ownerGold.uuid }, '1.57'), 400, /Cannot set node when creating an allocation/);
    expectError(await create('admin', { resource_class: 'gold', owner: p.owner.projectId }, '1.59'), 406);
    expectError(await bm(ts, p.admin, 'GET', '/v1/allocations?owner=x', undefined, '1.59'), 406);
    const root = await bm(ts, p.admin, 'GET', '/v1', undefined, '1.52');
    expect(root.body.allocations[0].href).toMatch(/\/v1\/allocations\/$/);
    expect(await rows(ts, 'allocations')).toBe(0);
  });

  it('anonymous callers get 401 on every route', async () => {
    for (const [m, path] of [
      ['GET', '/v1/allocations'],
      ['POST', '/v1/allocations'],
      ['GET', '/v1/allocations/x'],
      ['PATCH', '/v1/allocations/x'],
      ['DELETE', '/v1/allocations/x'],
      ['GET', `/v1/nodes/${nodes.ownerGold.uuid}/allocation`],
      ['DELETE', `/v1/nodes/${nodes.ownerGold.uuid}/allocation`],
    ] as const) {
      expectError(await bm(ts, p.anonymous, m, path, m === 'POST' ? { resource_class: 'gold' } : undefined), 401);
    }
  });
});

describe('allocations per persona', () => {
  describe('allocating', () => {
    freshServer();

    it('the lessee gets the node it leases (owner forced to its project); the node carries the allocation', async () => {
      const r = await create('lessee', { resource_class: 'gold', name: 'lessee-job', extra: { purpose: 'ci' } });
      expect(r.status, r.text).toBe(201);
      expect(r.headers.get('location')).toBe(`${ts.url}/baremetal/v1/allocations/${r.body.uuid}`);
      expect(r.body).toMatchObject({
        state: 'allocating',
        node_uuid: null,
        last_error: null,
        owner: p.lessee.projectId,
        resource_class: 'gold',
        traits: [],
        candidate_nodes: [],
        extra: { purpose: 'ci' },
      });
      const lesseeAlloc = await settledAllocation(ts, p.lessee, r.body.uuid);
      expect(lesseeAlloc).toMatchObject({ state: 'active', node_uuid: nodes.leasedGold.uuid, last_error: null });
      const node = await bm(ts, p.lessee, 'GET', `/v1/nodes/${nodes.leasedGold.uuid}`);
      expect(node.body).toMatchObject({ instance_uuid: r.body.uuid, allocation_uuid: r.body.uuid });
      const viaNode = await bm(ts, p.lessee, 'GET', `/v1/nodes/${nodes.leasedGold.uuid}/allocation`);
      expect(viaNode.body).toMatchObject({ uuid: r.body.uuid, name: 'lessee-job' });
    });

    it('the owner gets its own unleased node with the trait (never the one leased to l1)', async () => {
      const r = await create('owner', { resource_class: 'gold', traits: ['CUSTOM_A'] });
      expect(r.status, r.text).toBe(201);
      const old = await bm(ts, p.owner, 'GET', `/v1/allocations/${r.body.uuid}`, undefined, '1.59');
      expect(old.body.owner).toBeUndefined();
      expect(old.body.resource_class).toBe('gold');
      const ownerAlloc = await settledAllocation(ts, p.owner, r.body.uuid);
      expect(ownerAlloc).toMatchObject({
        state: 'active',
        node_uuid: nodes.ownerGold.uuid,
        owner: p.owner.projectId,
        traits: ['CUSTOM_A'],
      });
      // As Ironic: the node's instance_info.traits are the allocation's (the deploy templates they select).
      const node = await bm(ts, p.owner, 'GET', `/v1/nodes/${nodes.ownerGold.uuid}`);
      expect(node.body.instance_info.traits).toEqual(['CUSTOM_A']);
    });
  });

  describe('with the lessee’s and the owner’s allocations: reading and renaming', () => {
    freshServer(withAllocations);

    it('who sees which allocation: owner its own, lessee its own, other none (404), admin all', async () => {
      const list = async (who: keyof Personas) =>
        (await bm(ts, p[who], 'GET', '/v1/allocations')).body.allocations.map((a: any) => a.uuid).sort();
      expect(await list('owner')).toEqual([ownerAlloc.uuid]);
      expect(await list('lessee')).toEqual([lesseeAlloc.uuid]);
      expect(await list('other')).toEqual([]);
      expect(await list('admin')).toEqual([ownerAlloc.uuid, lesseeAlloc.uuid].sort());
      expectError(await bm(ts, p.other, 'GET', `/v1/allocations/${ownerAlloc.uuid}`), 404, /could not be found/);
      expectError(await bm(ts, p.lessee, 'GET', `/v1/allocations/${ownerAlloc.uuid}`), 404);
      expectError(await bm(ts, p.owner, 'GET', '/v1/allocations/lessee-job'), 404);
      expect((await bm(ts, p.lessee, 'GET', '/v1/allocations/lessee-job')).body.uuid).toBe(lesseeAlloc.uuid);
      expectError(await bm(ts, p.owner, 'GET', `/v1/allocations?owner=${p.lessee.projectId}`), 403);
      // The owner sees its leased node but not the lessee's allocation on it.
      expectError(await bm(ts, p.owner, 'GET', `/v1/nodes/${nodes.leasedGold.uuid}/allocation`), 404);
      expectError(await bm(ts, p.other, 'GET', `/v1/nodes/${nodes.leasedGold.uuid}/allocation`), 404, /Node/);
      const filtered = await bm(ts, p.admin, 'GET', `/v1/allocations?node=${nodes.ownerGold.uuid}&state=active&fields=uuid,state`);
      expect(filtered.body.allocations).toEqual([{ uuid: ownerAlloc.uuid, state: 'active', links: expect.any(Array) }]);
    });

    it('PATCH changes name and extra only, by the allocation owner (others 404)', async () => {
      const ok = await bm(ts, p.owner, 'PATCH', `/v1/allocations/${ownerAlloc.uuid}`, [
        { op: 'add', path: '/name', value: 'renamed' },
        { op: 'add', path: '/extra/team', value: 'blue' },
      ]);
      expect(ok.status, ok.text).toBe(200);
      expect(ok.body).toMatchObject({ name: 'renamed', extra: { team: 'blue' } });
      expectError(await bm(ts, p.lessee, 'PATCH', `/v1/allocations/${ownerAlloc.uuid}`, [{ op: 'add', path: '/extra/x', value: 1 }]), 404);
      expectError(
        await bm(ts, p.owner, 'PATCH', `/v1/allocations/${ownerAlloc.uuid}`, [{ op: 'replace', path: '/resource_class', value: 'x' }]),
        400,
        /Only the following can be updated: name, extra/,
      );
      expectError(
        await bm(ts, p.owner, 'PATCH', `/v1/allocations/${ownerAlloc.uuid}`, [{ op: 'add', path: '/name', value: 'lessee-job' }]),
        409,
        /already exists/,
      );
      expectError(
        await bm(ts, p.owner, 'PATCH', `/v1/allocations/${ownerAlloc.uuid}`, [{ op: 'add', path: '/name', value: 'not a name!' }]),
        400,
      );
    });
  });

  describe('with the lessee’s and the owner’s allocations: failures another project and candidates meet', () => {
    freshServer(withAllocations);

    it('another project sees only its own nodes: the failure names none of the owner’s', async () => {
      const r = await create('other', { resource_class: 'silver' });
      expect(r.status, r.text).toBe(201);
      const failed = await settledAllocation(ts, p.other, r.body.uuid);
      expect(failed.state).toBe('error');
      expect(failed.last_error).toMatch(
        new RegExp(`^Failed to process allocation ${r.body.uuid}: no available nodes match the resource class silver\\.`),
      );
      expect(failed.last_error).not.toContain(nodes.ownerSilver.uuid);
      expect(failed.last_error).not.toContain('silver-1');
      // Its own gold node is free, but the trait is missing: the message says so and names it.
      const t = await settledAllocation(ts, p.other, (await create('other', { resource_class: 'gold', traits: ['CUSTOM_B'] })).body.uuid);
      expect(t.last_error).toMatch(
        /no suitable nodes have the requested traits CUSTOM_B\. Explanation: .*gold-3 \(traits: missing trait CUSTOM_B\)/,
      );
    });

    it('candidates must be visible nodes (else 400); a failing candidate list says so', async () => {
      expectError(await create('other', { resource_class: 'gold', candidate_nodes: [nodes.ownerGold.uuid] }), 400, /could not be found/);
      expectError(await create('other', { resource_class: 'gold', candidate_nodes: ['gold-1'] }), 400);
      const r = await create('owner', { resource_class: 'gold', candidate_nodes: ['gold-1', nodes.ownerGold.uuid] });
      expect(r.body.candidate_nodes).toEqual([nodes.ownerGold.uuid]);
      const failed = await settledAllocation(ts, p.owner, r.body.uuid);
      expect(failed.last_error).toMatch(
        /none of the requested nodes are available and match the resource class gold.*gold-1 \(instance: already holds instance/,
      );
    });
  });

  describe('owner rules', () => {
    freshServer(withAllocations);

    it('owner rules: a project cannot name another owner (403); the admin can', async () => {
      expectError(await create('owner', { resource_class: 'gold', owner: p.other.projectId }), 403);
      const r = await create('admin', { resource_class: 'gold', owner: p.other.projectId, name: 'for-other' });
      expect(r.status, r.text).toBe(201);
      const a = await settledAllocation(ts, p.admin, r.body.uuid);
      expect(a).toMatchObject({ state: 'active', node_uuid: nodes.otherGold.uuid, owner: p.other.projectId });
      expect((await bm(ts, p.other, 'GET', '/v1/allocations/for-other')).status).toBe(200);
    });
  });
});

describe('allocations: bad input writes nothing', () => {
  // The two allocations and one the admin made for o2 (three: two pages of two).
  freshServer(async () => {
    await withAllocations();
    const r = await create('admin', { resource_class: 'gold', owner: p.other.projectId, name: 'for-other' });
    expect((await settledAllocation(ts, p.admin, r.body.uuid)).state).toBe('active');
  });

  it('refuses malformed bodies with Ironic errors', async () => {
    const before = await rows(ts, 'allocations');
    const bad: Array<[Record<string, unknown>, RegExp]> = [
      [{}, /resource_class' is a required property/],
      [{ resource_class: 'gold', colour: 'red' }, /Additional properties are not allowed/],
      [{ resource_class: 'x'.repeat(81) }, /1 to 80 characters/],
      [{ resource_class: 'gold', traits: ['lowercase'] }, /Invalid trait/],
      [{ resource_class: 'gold', traits: 'CUSTOM_A' }, /list of trait names/],
      [{ resource_class: 'gold', candidate_nodes: [''] }, /candidate_nodes/],
      [{ resource_class: 'gold', name: '9a6d0a7e-93f1-4c5f-9b4e-2f6a2d7c1b11' }, /invalid name/],
      [{ resource_class: 'gold', uuid: 'not-a-uuid' }, /Expected a UUID/],
      [{ resource_class: 'gold', extra: [] }, /extra/],
      [{ resource_class: 'gold', candidate_nodes: ['no-such-node'] }, /could not be found/],
    ];
    for (const [body, re] of bad) expectError(await create('owner', body), 400, re);
    expectError(await bm(ts, p.owner, 'POST', '/v1/allocations', '{"resource_class": '), 400);
    expectError(await create('owner', { resource_class: 'gold', name: 'lessee-job' }), 409, /already exists/);
    expect(await rows(ts, 'allocations')).toBe(before);
  });

  it('list parameters: bad state, sort key, unknown node → 400; an invisible marker → 404', async () => {
    expectError(await bm(ts, p.admin, 'GET', '/v1/allocations?state=sleeping'), 400);
    expectError(await bm(ts, p.admin, 'GET', '/v1/allocations?sort_key=traits'), 400);
    expectError(await bm(ts, p.admin, 'GET', '/v1/allocations?node=nope'), 400);
    expectError(await bm(ts, p.admin, 'GET', '/v1/allocations?fields=uuid,colour'), 400);
    const mine = (await bm(ts, p.owner, 'GET', '/v1/allocations')).body.allocations[0].uuid;
    expectError(await bm(ts, p.other, 'GET', `/v1/allocations?marker=${mine}`), 404);
  });

  it('pages with a next link', async () => {
    const first = await bm(ts, p.admin, 'GET', '/v1/allocations?limit=2&sort_key=created_at');
    expect(first.body.allocations).toHaveLength(2);
    expect(first.body.next).toMatch(/\/v1\/allocations\?sort_key=created_at&limit=2&marker=/);
    const second = await bm(ts, p.admin, 'GET', first.body.next.replace(ts.url + '/baremetal', ''));
    expect(second.body.allocations[0].uuid).not.toBe(first.body.allocations[1].uuid);
  });
});

describe('allocations: deletion, backfill, teardown', () => {
  freshServer();

  it('delete frees the node; refused (409) on an active node outside maintenance', async () => {
    const n = await freeNode(ts, p, { name: 'del-1', resource_class: 'del' });
    const a = await settledAllocation(ts, p.owner, (await create('owner', { resource_class: 'del' })).body.uuid);
    expect(a.node_uuid).toBe(n.uuid);
    await forceNode(ts, n.uuid, { provision_state: 'active' });
    expectError(await bm(ts, p.owner, 'DELETE', `/v1/allocations/${a.uuid}`), 409, /provision state "active"/);
    expectError(await bm(ts, p.other, 'DELETE', `/v1/allocations/${a.uuid}`), 404);
    await bm(ts, p.admin, 'PUT', `/v1/nodes/${n.uuid}/maintenance`, { reason: 'test' });
    const del = await bm(ts, p.owner, 'DELETE', `/v1/nodes/${n.uuid}/allocation`);
    expect(del.status, del.text).toBe(204);
    const node = (await bm(ts, p.owner, 'GET', `/v1/nodes/${n.uuid}`)).body;
    expect(node).toMatchObject({ instance_uuid: null, allocation_uuid: null });
    expectError(await bm(ts, p.owner, 'GET', `/v1/allocations/${a.uuid}`), 404);
  });

  it('backfill binds an active node synchronously; a mismatch is 400 and writes nothing', async () => {
    const n = await freeNode(ts, p, { name: 'bf-1', resource_class: 'bf' });
    const instance = '1b7c4e80-2c33-4f7e-9d53-0f6e5b4a3c21';
    await forceNode(ts, n.uuid, { provision_state: 'active', instance_uuid: instance });
    const before = await rows(ts, 'allocations');
    expectError(await create('owner', { node: 'bf-1', resource_class: 'gold' }), 400, /resource class gold for node/);
    expectError(await create('owner', { node: 'bf-1', traits: ['CUSTOM_A'] }), 400, /lacks CUSTOM_A/);
    expectError(await create('other', { node: 'bf-1' }), 400, /could not be found/);
    expectError(await create('owner', { node: 'silver-1' }), 400, /only active nodes/);
    expect(await rows(ts, 'allocations')).toBe(before);
    const r = await create('owner', { node: 'bf-1' });
    expect(r.status, r.text).toBe(201);
    expect(r.body).toMatchObject({ uuid: instance, state: 'active', node_uuid: n.uuid, resource_class: 'bf', owner: p.owner.projectId });
    expect((await bm(ts, p.owner, 'GET', `/v1/nodes/${n.uuid}`)).body).toMatchObject({
      instance_uuid: instance,
      allocation_uuid: instance,
      instance_info: { traits: [] },
    });
    expectError(await create('owner', { node: 'bf-1' }), 409);
  });

  it('undeploy deletes the allocation (Ironic teardown)', async () => {
    const n = await freeNode(ts, p, { name: 'td-1', resource_class: 'td' });
    const a = await settledAllocation(ts, p.owner, (await create('owner', { resource_class: 'td' })).body.uuid);
    expect(a.node_uuid).toBe(n.uuid);
    await forceNode(ts, n.uuid, { provision_state: 'active' });
    const r = await bm(ts, p.owner, 'PUT', `/v1/nodes/${n.uuid}/states/provision`, { target: 'undeploy' });
    expect(r.status, r.text).toBe(202);
    const node = await waitFor(
      async () => (await bm(ts, p.owner, 'GET', `/v1/nodes/${n.uuid}`)).body,
      (x) => x.provision_state === 'available',
      { what: `node ${n.uuid} available after the undeploy`, show: (x) => x.provision_state },
    );
    expect(node).toMatchObject({ provision_state: 'available', instance_uuid: null, allocation_uuid: null });
    expectError(await bm(ts, p.owner, 'GET', `/v1/allocations/${a.uuid}`), 404);
  });

  it('removing instance_uuid through a node PATCH deletes the allocation', async () => {
    const n = await freeNode(ts, p, { name: 'rm-1', resource_class: 'rm' });
    const a = await settledAllocation(ts, p.owner, (await create('owner', { resource_class: 'rm' })).body.uuid);
    expect(a.node_uuid).toBe(n.uuid);
    const r = await bm(ts, p.owner, 'PATCH', `/v1/nodes/${n.uuid}`, [{ op: 'remove', path: '/instance_uuid' }]);
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({ instance_uuid: null, allocation_uuid: null });
    expectError(await bm(ts, p.owner, 'GET', `/v1/allocations/${a.uuid}`), 404);
  });
});

describe('allocations: concurrency', () => {
  freshServer();

  it('30 concurrent allocations on 12 nodes: 12 active on 12 distinct nodes, 18 errors', async () => {
    const made = await Promise.all(Array.from({ length: 12 }, (_, i) => freeNode(ts, p, { name: `race-${i}`, resource_class: 'race' })));
    const created = await Promise.all(Array.from({ length: 30 }, () => create('owner', { resource_class: 'race' })));
    for (const c of created) expect(c.status, c.text).toBe(201);
    const done = await Promise.all(created.map((c) => settledAllocation(ts, p.owner, c.body.uuid, 30_000)));
    const active = done.filter((a) => a.state === 'active');
    expect(active).toHaveLength(12);
    expect(new Set(active.map((a) => a.node_uuid)).size).toBe(12);
    expect(new Set(active.map((a) => a.node_uuid))).toEqual(new Set(made.map((n) => n.uuid)));
    for (const e of done.filter((a) => a.state === 'error'))
      expect(e.last_error).toMatch(/no available nodes match the resource class race/);
    const listed = await bm(ts, p.admin, 'GET', '/v1/nodes?resource_class=race&fields=uuid,instance_uuid&limit=100');
    const instances = listed.body.nodes.map((n: any) => n.instance_uuid);
    expect(new Set(instances).size).toBe(12);
    expect(instances.sort()).toEqual(active.map((a) => a.uuid).sort());
    expect(fault).toBeDefined();
  }, 60_000);
});
