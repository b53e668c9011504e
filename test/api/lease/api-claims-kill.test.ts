/**
 * Issue 23: an API-only replica (`esi server --roles api`) killed with SIGKILL while it holds a
 * lease node claim does not hold the node for the claim's whole 60 s. The replica registers a
 * heartbeat (`api_processes`) whose id its claims carry (`api:<id>#<uuid>`); the conductor beside
 * it releases the claims of a replica whose heartbeat stopped (src/domain/leasing/api-claims.ts),
 * so a lease start due on that node is applied once the replica is taken for dead (30 s without
 * a heartbeat), before the claim would have expired. Real processes sharing one PostgreSQL
 * database (PostgreSQL only: SQLite is one process by design).
 *
 * The claim is written into the database under the replica's id just before the kill — the
 * record a replica killed inside a lease step leaves (a real step holds its claim for
 * milliseconds, too short to kill into reliably).
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { formatLeaseTime } from '../../../src/domain/leasing/time.ts';
import { describePostgresOnly } from '../../helpers/harness.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import { createDatabase, http, startServerProcess, tokenFor, type ServerProcess, type TempDatabase } from './processes.ts';

const ADMIN_PW = 'api-claims-admin-password';

describePostgresOnly('claims of a killed API-only replica', () => {
  let db: TempDatabase;
  let sql: pg.Client;
  const servers: ServerProcess[] = [];
  let conductor: ServerProcess;
  let replica: ServerProcess;

  beforeAll(async () => {
    db = await createDatabase();
    const env = { ESI_ADMIN_PASSWORD: ADMIN_PW, ESI_SECRET_KEY: randomBytes(32).toString('base64'), ESI_LEASE_SWEEP_INTERVAL: '2' };
    conductor = await startServerProcess(['--database-url', db.url], env);
    servers.push(conductor);
    replica = await startServerProcess(['--roles', 'api', '--database-url', db.url], env);
    servers.push(replica);
    sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
  }, 120_000);

  afterAll(async () => {
    await sql?.end();
    for (const s of servers) await s.stop().catch(() => undefined);
    await db?.drop();
  });

  it('a lease start on a node the killed replica claimed is applied before the claim expires', async () => {
    const admin = await tokenFor(replica.url, 'admin', ADMIN_PW, 'admin');
    const node = await http(
      `${replica.url}/baremetal/v1/nodes`,
      'POST',
      admin,
      { driver: 'fake-hardware', name: 'api-claim-node' },
      { 'x-openstack-ironic-api-version': '1.82' },
    );
    expect(node.status, JSON.stringify(node.body)).toBe(201);
    // The replica is registered with a heartbeat; the conductor process is not (its claims carry its name).
    const registered = (await sql.query('select id from api_processes')).rows;
    expect(registered).toHaveLength(1);
    const id = registered[0].id as string;

    const project = (await sql.query("select id from projects where name = 'admin'")).rows[0].id as string;
    const lease = await http(`${replica.url}/lease/v1/leases`, 'POST', admin, {
      resource_uuid: node.body.uuid,
      project_id: project,
      start_time: formatLeaseTime(Date.now() + 3000),
      end_time: formatLeaseTime(Date.now() + 3_600_000),
    });
    expect(lease.status, JSON.stringify(lease.body)).toBe(201);
    expect(lease.body.status).toBe('created');
    const expiresAt = Date.now() + 60_000;
    await sql.query('insert into lease_node_claims (node_uuid, holder, expires_at) values ($1, $2, $3)', [
      node.body.uuid,
      `api:${id}#killed-mid-step`,
      expiresAt,
    ]);
    replica.child.kill('SIGKILL');

    const leaseStatus = async () => (await http(`${conductor.url}/lease/v1/leases/${lease.body.uuid}`, 'GET', admin)).body.status;
    const started = await waitFor(leaseStatus, (s) => s === 'active', {
      timeoutMs: 58_000,
      intervalMs: 250,
      what: 'the lease to start once the killed replica is taken for dead',
    });
    expect(started).toBe('active');
    // Released by the conductor, not expired: the claim's expiry is still ahead.
    expect(Date.now()).toBeLessThan(expiresAt);
    expect((await sql.query('select holder from lease_node_claims where holder like $1', [`api:${id}#%`])).rows).toEqual([]);
    expect((await sql.query('select id from api_processes')).rows).toEqual([]);
    const nodeNow = await http(`${conductor.url}/baremetal/v1/nodes/${node.body.uuid}`, 'GET', admin, undefined, {
      'x-openstack-ironic-api-version': '1.82',
    });
    expect(nodeNow.body.properties.lease_uuid).toBe(lease.body.uuid);
  }, 120_000);
});
