/**
 * Node claims of a process's previous life (issue 23): a conductor process takes lease node
 * claims as `<conductor name>#<uuid>` and, started again after a crash, releases those of its
 * name before the lease manager's first sweep. Only its own: claims of other names — one that
 * begins with this name, one that differs in its last character, an anonymous one — stay,
 * whatever their expiry. SQLite and PostgreSQL.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../helpers/harness.ts';

let ts: TestServer;
beforeAll(async () => {
  ts = await startTestServer();
});
afterAll(async () => ts?.close());

it('releases the claims of its own name only, and takes new ones under it', async () => {
  const { leasing, config } = ts.server.services;
  const me = config.conductor.hostname;
  const far = Date.now() + 3_600_000;
  const holders: Record<string, string> = {
    mine: `${me}#1`,
    longer: `${me}x#2`,
    wildcard: `${me.slice(0, -1)}_#3`,
    anonymous: 'b9a1c0de-0000-4000-8000-000000000000',
  };
  for (const [node, holder] of Object.entries(holders))
    expect(await leasing.repo.claimNode(`node-${node}`, holder, far, Date.now())).toBe(true);

  expect(await leasing.lifecycle.releaseClaimsOfPreviousLife()).toBe(1);
  const rows = await ts.server.services.store.db.selectFrom('lease_node_claims').select(['node_uuid', 'holder']).execute();
  expect(new Map(rows.map((r) => [r.node_uuid, r.holder]))).toEqual(
    new Map(Object.entries(holders).flatMap(([n, h]) => (n === 'mine' ? [] : [[`node-${n}`, h]]))),
  );
  // The freed node can be claimed at once (it did not wait for the hour-long expiry).
  expect(await leasing.repo.claimNode('node-mine', leasing.lifecycle.holder(), far, Date.now())).toBe(true);
  expect(leasing.lifecycle.holder().startsWith(`${me}#`)).toBe(true);
});
