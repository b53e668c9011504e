/**
 * Node claims the database lost track of (issue 21, the database restarted under load): when a
 * lease batch's claims cannot be released because the database went away in the middle of the
 * step, the lease lifecycle remembers them and releases them before it claims again — so the
 * lease, retried once the database is back, is not refused by its own stale claim until the
 * claim expires (60 s; before the fix a start due at the restart was never applied and its end
 * came 50 s late, test/api/ops/db-restart.test.ts). SQLite and PostgreSQL.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { NODE_CLAIMED } from '../../../src/domain/leasing/lifecycle.ts';
import { DatabaseUnavailableError } from '../../../src/domain/errors.ts';
import { formatLeaseTime } from '../../../src/domain/leasing/time.ts';
import { call, createPersonas, startTestServer, type Personas, type TestServer } from '../../helpers/harness.ts';

let ts: TestServer;
let p: Personas;
beforeAll(async () => {
  ts = await startTestServer();
  p = await createPersonas(ts);
});
afterAll(async () => ts?.close());

const claims = async () => ts.server.services.store.db.selectFrom('lease_node_claims').select(['node_uuid', 'holder']).execute();

it('a claim whose release failed is released before the next claim, and the lease is processed', async () => {
  const node = await call(
    ts,
    p.admin,
    'POST',
    '/baremetal/v1/nodes',
    { driver: 'fake-hardware', name: 'unreleased-0' },
    {
      'x-openstack-ironic-api-version': '1.82',
    },
  );
  expect(node.status, node.text).toBe(201);
  // A lease an hour ahead: the manager leaves it alone; processing it claims the node and changes nothing.
  const start = Date.now() + 3_600_000;
  const lease = await call(ts, p.admin, 'POST', '/lease/v1/leases', {
    resource_uuid: node.body.uuid,
    project_id: p.admin.projectId,
    start_time: formatLeaseTime(start),
    end_time: formatLeaseTime(start + 3_600_000),
  });
  expect(lease.status, lease.text).toBe(201);
  const { lifecycle, repo } = ts.server.services.leasing;

  // The database goes away after the claim: the release fails, the claim stays in the table.
  const release = repo.releaseNodes.bind(repo);
  repo.releaseNodes = async () => {
    throw new DatabaseUnavailableError();
  };
  try {
    await expect(lifecycle.processLeases([lease.body.uuid])).rejects.toBeInstanceOf(DatabaseUnavailableError);
  } finally {
    repo.releaseNodes = release;
  }
  expect((await claims()).map((c) => c.node_uuid)).toEqual([node.body.uuid]);

  // Back: the stale claim is released first, so the lease is processed (not NODE_CLAIMED) and no claim is left.
  const after = await lifecycle.processLeases([lease.body.uuid]);
  expect(after.get(lease.body.uuid)).not.toBe(NODE_CLAIMED);
  expect((after.get(lease.body.uuid) as { status: string }).status).toBe('created');
  expect(await claims()).toEqual([]);
});
