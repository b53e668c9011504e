/**
 * Data for the dashboard's admin and accessibility tests, made through esi's APIs as the
 * personas: a fake-hardware node owned by o1 with a network port cabled to a fake switch, an
 * offer of it and a lease of it to l1 (so that every view has rows to draw), and a lease quota.
 */
import { expect } from 'vitest';
import { formatLeaseTime } from '../../src/domain/leasing/time.ts';
import { call, type Personas, type TestServer } from '../helpers/harness.ts';

const V = { 'x-openstack-ironic-api-version': '1.82' };

/** What {@link seedDashboard} made. */
export interface Seeded {
  readonly nodeUuid: string;
  readonly nodeName: string;
  readonly switchName: string;
}

/** Make the data; `name` names the node (`N1`). */
export async function seedDashboard(ts: TestServer, p: Personas, name = 'N1'): Promise<Seeded> {
  const node = await call(
    ts,
    p.admin,
    'POST',
    '/baremetal/v1/nodes',
    { name, driver: 'fake-hardware', owner: p.owner.projectId, resource_class: 'baremetal', properties: { memory_mb: 65536, cpus: 16 } },
    V,
  );
  expect(node.status, node.text).toBe(201);
  const nodeUuid = node.body.uuid as string;
  const sw = await call(ts, p.admin, 'POST', '/network/v2.0/switches', {
    switch: { name: 'sw-a', driver: 'fake', switch_id: 'aa:bb:cc:00:00:01', description: 'rack A' },
  });
  expect(sw.status, sw.text).toBe(201);
  const port = await call(
    ts,
    p.admin,
    'POST',
    '/baremetal/v1/ports',
    {
      node_uuid: nodeUuid,
      address: '52:54:00:aa:00:01',
      local_link_connection: { switch_id: 'aa:bb:cc:00:00:01', port_id: 'Eth1/1', switch_info: 'sw-a' },
    },
    V,
  );
  expect(port.status, port.text).toBe(201);
  const offer = await call(ts, p.owner, 'POST', '/lease/v1/offers', {
    resource_uuid: nodeUuid,
    start_time: formatLeaseTime(Date.now() + 86_400_000),
    end_time: formatLeaseTime(Date.now() + 14 * 86_400_000),
  });
  expect(offer.status, offer.text).toBe(201);
  const lease = await call(ts, p.owner, 'POST', '/lease/v1/leases', {
    resource_uuid: nodeUuid,
    project_id: p.lessee.projectId,
    start_time: formatLeaseTime(Date.now() + 20 * 86_400_000),
    end_time: formatLeaseTime(Date.now() + 21 * 86_400_000),
  });
  expect(lease.status, lease.text).toBe(201);
  const quota = await call(ts, p.admin, 'PUT', `/lease/v1/quotas/${p.lessee.projectId}`, { max_nodes: 4, window_hours: 168 });
  expect(quota.status, quota.text).toBe(200);
  return { nodeUuid, nodeName: name, switchName: 'sw-a' };
}
