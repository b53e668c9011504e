/**
 * Issue 21, item 1: events across processes on PostgreSQL LISTEN/NOTIFY. One `--roles api`
 * process and one `--roles conductor` process share a database; the conductor's lease sweep is
 * left at 30 s and its pending-work poll at 60 s, so only the notifications can explain a
 * change made through the API replica being acted on within a second:
 * - a lease created through the replica starting now: the node's lessee is set within 1 s;
 * - a lease starting (and ending) a few seconds ahead: applied and removed within 1 s of each
 *   boundary; a lease whose end is moved through the replica: removed within 1 s of the new end;
 * - a power intent recorded by the replica: carried out within 1 s;
 * - the listening connection cut (`pg_terminate_backend`) while the database refuses new
 *   connections, and a lease created meanwhile (its notification lost): once connections are
 *   allowed again the conductor reconnects, re-sweeps and applies it — seconds, not the 30 s sweep;
 * - every connection to the database cut at once (what a server restart does to them): both
 *   processes stay up, reconnect, and a lease created right after is applied within seconds.
 * (PostgreSQL only: SQLite is one process by design.)
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { formatLeaseTime } from '../../../src/domain/leasing/time.ts';
import { LISTENER_APPLICATION_NAME } from '../../../src/store/change-listener.ts';
import { describePostgresOnly, TEST_PG_URL } from '../../helpers/harness.ts';
import {
  createDatabase,
  http,
  projectWithUser,
  startServerProcess,
  tokenFor,
  type ServerProcess,
  type TempDatabase,
} from '../lease/processes.ts';

const ADMIN_PW = 'split-events-admin-pw';
const IRONIC = { 'x-openstack-ironic-api-version': '1.82' };
/** The goal: a change through the replica is acted on within this many ms. */
const WITHIN_MS = 1000;

/** Poll `probe` every 20 ms until it holds. @returns the epoch ms at which it held */
async function when(what: string, probe: () => Promise<boolean>, timeoutMs = 40_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await probe()) return Date.now();
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describePostgresOnly('events across processes (PostgreSQL LISTEN/NOTIFY)', () => {
  let db: TempDatabase;
  let api: ServerProcess;
  let conductor: ServerProcess;
  let a: string;
  let admin: string;
  let lessee: string;
  let lesseeId: string;
  const nodes: string[] = [];

  beforeAll(async () => {
    db = await createDatabase();
    const env = {
      ESI_ADMIN_PASSWORD: ADMIN_PW,
      ESI_SECRET_KEY: randomBytes(32).toString('base64'),
      ESI_LEASE_SWEEP_INTERVAL: '30',
      ESI_CONDUCTOR_POLL_MS: '60000',
      ESI_AUTOMATED_CLEAN: 'false',
    };
    api = await startServerProcess(['--roles', 'api', '--database-url', db.url], env);
    conductor = await startServerProcess(['--roles', 'conductor', '--database-url', db.url, '--conductor-name', 'events-c1'], {
      ...env,
      ESI_LOG_LEVEL: 'info',
    });
    a = api.url;
    admin = await tokenFor(a, 'admin', ADMIN_PW, 'admin');
    const owner = await projectWithUser(a, admin, 'ev-owner', 'ev-owner', 'pw-ev-owner', 'owner');
    lesseeId = await projectWithUser(a, admin, 'ev-lessee', 'ev-lessee', 'pw-ev-lessee', 'lessee');
    lessee = await tokenFor(a, 'ev-lessee', 'pw-ev-lessee', 'ev-lessee');
    for (let i = 0; i < 6; i++) {
      const node = await http(`${a}/baremetal/v1/nodes`, 'POST', admin, { driver: 'fake-hardware', name: `ev-${i}`, owner }, IRONIC);
      expect(node.status, JSON.stringify(node.body)).toBe(201);
      nodes.push(node.body.uuid);
    }
  }, 180_000);

  afterAll(async () => {
    await api?.stop();
    await conductor?.stop();
    await db?.drop();
  });

  const lesseeOf = async (uuid: string): Promise<string | null> =>
    (await http(`${a}/baremetal/v1/nodes/${uuid}`, 'GET', admin, undefined, IRONIC)).body.lessee;
  const lesseeSees = async (uuid: string): Promise<boolean> =>
    (await http(`${a}/baremetal/v1/nodes/${uuid}`, 'GET', lessee, undefined, IRONIC)).status === 200;
  const createLease = async (node: string, window: { start?: number; end?: number } = {}) => {
    const r = await http(`${a}/lease/v1/leases`, 'POST', admin, {
      resource_uuid: node,
      project_id: lesseeId,
      ...(window.start !== undefined ? { start_time: formatLeaseTime(window.start) } : {}),
      ...(window.end !== undefined ? { end_time: formatLeaseTime(window.end) } : {}),
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    return r.body.uuid as string;
  };

  it('a lease created through the replica starting now: the lessee is set within 1 s; its end moved through the replica: removed within 1 s of it', async () => {
    const node = nodes[0]!;
    const sent = Date.now();
    const lease = await createLease(node);
    const applied = await when('lessee set', async () => (await lesseeOf(node)) === lesseeId);
    expect(applied - sent).toBeLessThan(WITHIN_MS);
    expect(await lesseeSees(node)).toBe(true);

    // The conductor scheduled the end it knew; the replica moves it to 2 s from now.
    const end = Math.ceil((Date.now() + 2000) / 1000) * 1000;
    const patched = await http(`${a}/lease/v1/leases/${lease}`, 'PATCH', admin, { end_time: formatLeaseTime(end) });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    const removed = await when('lessee removed', async () => !(await lesseeSees(node)));
    expect(removed - end).toBeLessThan(WITHIN_MS);
    expect(await lesseeOf(node)).toBeNull();
  });

  it('a lease starting and ending seconds ahead, created through the replica: applied and removed within 1 s of each boundary', async () => {
    const node = nodes[1]!;
    const start = Math.ceil((Date.now() + 3000) / 1000) * 1000;
    const end = start + 3000;
    await createLease(node, { start, end });
    const applied = await when('lessee set', async () => (await lesseeOf(node)) === lesseeId);
    expect(applied).toBeGreaterThanOrEqual(start);
    expect(applied - start).toBeLessThan(WITHIN_MS);
    const removed = await when('lessee removed', async () => (await lesseeOf(node)) === null);
    expect(removed).toBeGreaterThanOrEqual(end);
    expect(removed - end).toBeLessThan(WITHIN_MS);
  });

  it('a lease deleted through the replica: the lessee gets 404 within 1 s', async () => {
    const node = nodes[2]!;
    const lease = await createLease(node);
    await when('lessee set', async () => await lesseeSees(node));
    const sent = Date.now();
    const deleted = await http(`${a}/lease/v1/leases/${lease}`, 'DELETE', admin);
    expect(deleted.status, JSON.stringify(deleted.body)).toBeLessThan(300);
    const gone = await when('lessee refused', async () => !(await lesseeSees(node)));
    expect(gone - sent).toBeLessThan(WITHIN_MS);
  });

  it('a power intent recorded by the replica is carried out within 1 s (the poll is 60 s)', async () => {
    const node = nodes[3]!;
    for (const target of ['power on', 'power off']) {
      const sent = Date.now();
      const r = await http(`${a}/baremetal/v1/nodes/${node}/states/power`, 'PUT', admin, { target }, IRONIC);
      expect(r.status, JSON.stringify(r.body)).toBe(202);
      const done = await when(`${target} done`, async () => {
        const n = (await http(`${a}/baremetal/v1/nodes/${node}`, 'GET', admin, undefined, IRONIC)).body;
        return n.power_state === target && n.target_power_state === null && n.reservation === null;
      });
      expect(done - sent).toBeLessThan(WITHIN_MS);
    }
  });

  it('the listening connection cut while a lease is created: the conductor reconnects, re-sweeps and applies it', async () => {
    const node = nodes[4]!;
    const name = new URL(db.url).pathname.slice(1);
    const ctl = new pg.Client({ connectionString: TEST_PG_URL });
    await ctl.connect();
    let allowedAt: number;
    try {
      // Warm the replica's pool: the lease is created while the database refuses new connections.
      await Promise.all(Array.from({ length: 6 }, () => lesseeOf(nodes[0]!)));
      await ctl.query(`alter database ${name} allow_connections false`);
      const cut = await ctl.query(
        `select pg_terminate_backend(pid) as done from pg_stat_activity where datname = $1 and application_name = $2`,
        [name, LISTENER_APPLICATION_NAME],
      );
      expect(cut.rows.length).toBe(2); // the replica's listener and the conductor's
      await new Promise((r) => setTimeout(r, 200));
      await createLease(node);
      await new Promise((r) => setTimeout(r, 1500));
      expect(await lesseeOf(node)).toBeNull(); // its notification was lost with the connection
    } finally {
      await ctl.query(`alter database ${name} allow_connections true`);
      allowedAt = Date.now();
      await ctl.end();
    }
    const applied = await when('lessee set after the reconnect', async () => (await lesseeOf(node)) === lesseeId);
    // Reconnect back-off (at most 5 s) plus the sweep, far below the 30 s periodic sweep.
    expect(applied - allowedAt).toBeLessThan(8000);
    expect(conductor.output()).toMatch(/change listener: listening again; resyncing/);
  });

  it('every connection cut at once, as a database restart does: the processes stay up and a lease created next is applied', async () => {
    const node = nodes[5]!;
    const name = new URL(db.url).pathname.slice(1);
    const ctl = new pg.Client({ connectionString: TEST_PG_URL });
    await ctl.connect();
    try {
      const cut = await ctl.query(`select pg_terminate_backend(pid) from pg_stat_activity where datname = $1`, [name]);
      expect(cut.rows.length).toBeGreaterThanOrEqual(2);
    } finally {
      await ctl.end();
    }
    const cutAt = Date.now();
    // The pools drop their dead connections as they notice (the error of an idle one); give them a moment.
    await new Promise((r) => setTimeout(r, 500));
    expect(api.child.exitCode, api.output()).toBeNull();
    expect(conductor.child.exitCode, conductor.output()).toBeNull();
    await createLease(node);
    const applied = await when('lessee set after the cut', async () => (await lesseeOf(node)) === lesseeId);
    expect(applied - cutAt).toBeLessThan(8000);
    expect(api.child.exitCode).toBeNull();
    expect(conductor.child.exitCode).toBeNull();
  });
});
