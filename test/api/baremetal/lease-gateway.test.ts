/**
 * The leasing port `NodeGateway` as implemented by the inventory, on a real database:
 * find/findMany/listVisible, applyLease, removeLease (esi-leap `remove_lease` semantics,
 * https://github.com/CCI-MOC/esi-leap esi_leap/resource_objects/ironic_node.py, plus esi's reclaim of available nodes) and NodeBusyError while a
 * conductor holds a node.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeBusyError } from '../../../src/domain/leasing/ports.ts';
import { createPersonas, startTestServer, type Personas, type TestServer } from '../../helpers/harness.ts';
import { bm, createNode, forceNode } from './helpers.ts';

let ts: TestServer;
let p: Personas;
const LEASE = '3c0b2c1e-aaaa-4bbb-8ccc-000000000001';
const gw = () => ts.server.services.inventory.leaseGateway;
const notified: string[] = [];

/** A fresh server for the tests of one describe block (the lookups list every node there is). */
function freshServer(): void {
  beforeAll(async () => {
    // These tests check the intent the API records; no conductor may act on it meanwhile.
    ts = await startTestServer({ env: { ESI_CONDUCTOR_WORKERS: '0' } });
    p = await createPersonas(ts);
    ts.server.services.inventory.conductorRelay.attach({ notifyNode: (u) => notified.push(u) });
  });
  afterAll(async () => ts?.close());
}

describe('lookups', () => {
  freshServer();

  it('find by uuid or name, findMany in one call, listVisible filtered like the node list', async () => {
    const a = await createNode(ts, p, { name: 'gw-a', lessee: null, resource_class: 'gpu', properties: { memory_mb: 49152 } });
    const b = await createNode(ts, p, { name: 'gw-b', owner: p.other.projectId, lessee: null });
    expect(await gw().find('gw-a')).toMatchObject({
      uuid: a.uuid,
      name: 'gw-a',
      owner: p.owner.projectId,
      lessee: null,
      resource_class: 'gpu',
      provision_state: 'enroll',
      maintenance: false,
      properties: { memory_mb: 49152 },
    });
    expect((await gw().find(a.uuid.toUpperCase()))?.uuid).toBe(a.uuid);
    expect(await gw().find('no-such')).toBeNull();
    expect(await gw().find('bad name!')).toBeNull();
    const many = await gw().findMany([a.uuid, b.uuid, 'f0f0f0f0-0000-4000-8000-000000000000', 'junk']);
    expect([...many.keys()].sort()).toEqual([a.uuid, b.uuid].sort());
    const names = async (ctx: any, f = {}) => (await gw().listVisible(ctx, f)).map((n) => n.name).sort();
    expect(await names(p.admin.context)).toEqual(['gw-a', 'gw-b']);
    expect(await names(p.owner.context)).toEqual(['gw-a']);
    expect(await names(p.other.context)).toEqual(['gw-b']);
    expect(await names(p.lessee.context)).toEqual([]);
    expect(await names(p.admin.context, { resourceClass: 'gpu' })).toEqual(['gw-a']);
    expect(await names(p.admin.context, { owner: p.other.projectId })).toEqual(['gw-b']);
    expect(await names(p.owner.context, { owner: p.other.projectId })).toEqual([]);
  });
});

describe('applyLease and removeLease', () => {
  freshServer();

  it('applies: sets lessee and properties.lease_uuid, the lessee then sees the node', async () => {
    const n = await createNode(ts, p, { name: 'lease-1', lessee: null, properties: { cpus: 4 } });
    expect((await bm(ts, p.lessee, 'GET', '/v1/nodes/lease-1')).status).toBe(404);
    await gw().applyLease(n.uuid, LEASE, p.lessee.projectId!);
    const seen = await bm(ts, p.lessee, 'GET', '/v1/nodes/lease-1');
    expect(seen.status).toBe(200);
    expect(seen.body.properties).toEqual({ cpus: 4, lease_uuid: LEASE });
    expect(seen.body.lessee).toBe(p.lessee.projectId);
  });

  it('removes only its own lease; clears lessee, lease_uuid, instance_info, extra, console', async () => {
    const n = await createNode(ts, p, { name: 'lease-2', lessee: null });
    await gw().applyLease(n.uuid, LEASE, p.lessee.projectId!);
    await bm(ts, p.lessee, 'PATCH', '/v1/nodes/lease-2', [
      { op: 'add', path: '/instance_info/image_source', value: 'img' },
      { op: 'add', path: '/extra/mine', value: 1 },
    ]);
    await bm(ts, p.lessee, 'PUT', '/v1/nodes/lease-2/states/console', { enabled: true });
    expect(await gw().removeLease(n.uuid, 'a0000000-0000-4000-8000-000000000000')).toBe(false);
    expect(await gw().removeLease('f0f0f0f0-0000-4000-8000-000000000000', LEASE)).toBe(false);
    notified.length = 0;
    expect(await gw().removeLease(n.uuid, LEASE)).toBe(true);
    expect(notified).toEqual([n.uuid]);
    const after = (await bm(ts, p.admin, 'GET', '/v1/nodes/lease-2')).body;
    expect(after).toMatchObject({
      lessee: null,
      properties: {},
      instance_info: {},
      extra: {},
      console_enabled: false,
      provision_state: 'enroll',
    });
    expect((await bm(ts, p.lessee, 'GET', '/v1/nodes/lease-2')).status).toBe(404);
    expect(await gw().removeLease(n.uuid, LEASE)).toBe(false);
  });

  it('undeploys a deployed node through the FSM (deleted → deleting [available]), rescued and failed ones too', async () => {
    // A rescued node still holds the tenant's instance disk; `error` is a failed teardown.
    for (const state of [
      'active',
      'wait call-back',
      'deploy failed',
      'rescue',
      'rescue wait',
      'rescue failed',
      'unrescue failed',
      'error',
    ] as const) {
      const n = await createNode(ts, p, { name: `deployed-${state.replace(/ /g, '-')}`, lessee: null });
      await gw().applyLease(n.uuid, LEASE, p.lessee.projectId!);
      await forceNode(ts, n.uuid, {
        provision_state: state,
        target_provision_state: state === 'active' ? null : 'active',
        instance_uuid: null,
      });
      expect(await gw().removeLease(n.uuid, LEASE)).toBe(true);
      const b = (await bm(ts, p.admin, 'GET', `/v1/nodes/${n.uuid}`)).body;
      expect([b.provision_state, b.target_provision_state], state).toEqual(['deleting', 'available']);
    }
  });

  it('reclaims an available node: cleaning [available], so it is wiped before the next lease; other states stay', async () => {
    const n = await createNode(ts, p, { name: 'reclaim-1', lessee: null });
    await gw().applyLease(n.uuid, LEASE, p.lessee.projectId!);
    await forceNode(ts, n.uuid, { provision_state: 'available', target_provision_state: null });
    expect(await gw().removeLease(n.uuid, LEASE)).toBe(true);
    const b = (await bm(ts, p.admin, 'GET', `/v1/nodes/${n.uuid}`)).body;
    expect([b.provision_state, b.target_provision_state, b.lessee]).toEqual(['cleaning', 'available', null]);
    const m = await createNode(ts, p, { name: 'reclaim-2', lessee: null });
    await gw().applyLease(m.uuid, LEASE, p.lessee.projectId!);
    await forceNode(ts, m.uuid, { provision_state: 'manageable', target_provision_state: null });
    expect(await gw().removeLease(m.uuid, LEASE)).toBe(true);
    expect((await bm(ts, p.admin, 'GET', `/v1/nodes/${m.uuid}`)).body.provision_state).toBe('manageable');
    // `reclaim` is internal: no API verb reaches it.
    const refused = await bm(ts, p.admin, 'PUT', `/v1/nodes/${m.uuid}/states/provision`, { target: 'reclaim' });
    expect(refused.status).toBe(400);
  });

  it('throws NodeBusyError while a conductor holds the node or it is deploying', async () => {
    const n = await createNode(ts, p, { name: 'busy-lease', lessee: null });
    const repo = ts.server.services.inventory.nodeRepository;
    expect(await repo.reserve(n.uuid, 'c9')).toBe(true);
    await expect(gw().applyLease(n.uuid, LEASE, p.lessee.projectId!)).rejects.toBeInstanceOf(NodeBusyError);
    await repo.release(n.uuid, 'c9');
    await gw().applyLease(n.uuid, LEASE, p.lessee.projectId!);
    await repo.reserve(n.uuid, 'c9');
    await expect(gw().removeLease(n.uuid, LEASE)).rejects.toBeInstanceOf(NodeBusyError);
    await repo.release(n.uuid, 'c9');
    for (const [state, target] of [
      ['deploying', 'active'],
      ['rescuing', 'rescue'],
      ['unrescuing', 'active'],
    ] as const) {
      await forceNode(ts, n.uuid, { provision_state: state, target_provision_state: target });
      await expect(gw().removeLease(n.uuid, LEASE), state).rejects.toBeInstanceOf(NodeBusyError);
    }
    // Refused removals still end the lessee's access at once (revocation never waits on a
    // lock); the lease stays recorded on the node for the retry.
    const after = (await bm(ts, p.admin, 'GET', `/v1/nodes/${n.uuid}`)).body;
    expect(after.lessee).toBeNull();
    expect(after.console_enabled).toBe(false);
    expect(after.properties.lease_uuid).toBe(LEASE);
    await expect(gw().applyLease('f0f0f0f0-0000-4000-8000-000000000000', LEASE, 'x')).rejects.toThrow(/could not be found/);
  });
});
