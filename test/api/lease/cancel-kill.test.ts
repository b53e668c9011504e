/**
 * Issue 23's first damage, with real processes: `esi server` killed with SIGKILL a few
 * milliseconds into `DELETE /lease/v1/leases/{id}`. Each round starts esi, makes leases active
 * on fresh nodes, sends their cancels 20 ms apart and kills the process while they run (so the
 * kill lands before, during and after the node changes of one or another), then restarts esi on
 * the same data and database. Whatever instant the kill hit, every lease and its node must come
 * to agree: the lease `deleted` and the node free, or the lease `active` and the node its
 * lessee's — never an `active` lease on a node without its lessee. (A cancel killed while it
 * held the node's claim is finished at once: the restarted process releases the claims of its
 * previous life, `LeaseLifecycle.releaseClaimsOfPreviousLife`.) Runs on SQLite and, in the
 * api-pg project, on a fresh PostgreSQL database.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { formatLeaseTime } from '../../../src/domain/leasing/time.ts';
import { spawnEsiServer, type SpawnedServer } from '../../helpers/esi-process.ts';
import { testDb } from '../../helpers/harness.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import { createDatabase, freePort, http, tokenFor, type TempDatabase } from './processes.ts';

const ADMIN_PW = 'cancel-kill-admin-pw';
const SECRET = randomBytes(32).toString('base64');
const LEASES_PER_ROUND = 6;
/** When each round's kill comes, ms after the first cancel was sent. */
const KILL_AFTER_MS = [110, 200];
const ROUNDS = KILL_AFTER_MS.length;

describe('lease cancels killed with SIGKILL', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-cancel-kill-'));
  let db: TempDatabase | null = null;
  let server: SpawnedServer | null = null;

  afterAll(async () => {
    await server?.stop();
    await db?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** Start esi on the test's data directory (and database); @returns its URL and an admin token */
  async function start(): Promise<{ url: string; token: string }> {
    const port = await freePort();
    const args = ['--port', String(port), '--data-dir', dataDir, ...(db ? ['--database-url', db.url] : [])];
    server = await spawnEsiServer(args, { ESI_ADMIN_PASSWORD: ADMIN_PW, ESI_SECRET_KEY: SECRET });
    const url = `http://127.0.0.1:${port}`;
    return { url, token: await tokenFor(url, 'admin', ADMIN_PW, 'admin') };
  }

  it('leaves every lease and its node in agreement after a restart', async () => {
    if (testDb() === 'postgres') db = await createDatabase();
    const all: Array<{ node: string; lease: string }> = [];
    let project = '';
    for (let round = 0; round < ROUNDS; round++) {
      const { url, token } = await start();
      if (project === '') project = (await http(`${url}/identity/v3/projects?name=admin`, 'GET', token)).body.projects[0].id as string;
      const made: Array<{ node: string; lease: string }> = [];
      for (let i = 0; i < LEASES_PER_ROUND; i++) {
        const n = await http(
          `${url}/baremetal/v1/nodes`,
          'POST',
          token,
          { driver: 'fake-hardware', name: `kill-${round}-${i}`, owner: project },
          { 'x-openstack-ironic-api-version': '1.82' },
        );
        expect(n.status, JSON.stringify(n.body)).toBe(201);
        const l = await http(`${url}/lease/v1/leases`, 'POST', token, {
          resource_uuid: n.body.uuid,
          project_id: project,
          start_time: formatLeaseTime(Date.now() - 1000),
          end_time: formatLeaseTime(Date.now() + 3_600_000),
        });
        expect(l.status, JSON.stringify(l.body)).toBe(201);
        made.push({ node: n.body.uuid as string, lease: l.body.uuid as string });
      }
      for (const m of made) {
        await waitFor(
          async () => (await http(`${url}/lease/v1/leases/${m.lease}`, 'GET', token)).body.status as string,
          (s) => s === 'active',
          { timeoutMs: 30_000, intervalMs: 50, what: `lease ${m.lease} to become active` },
        );
      }
      // The cancels 20 ms apart, the kill while they run: some done, some in flight, some not begun.
      const cancels = made.map(async (m, i) => {
        await new Promise((r) => setTimeout(r, i * 20));
        return http(`${url}/lease/v1/leases/${m.lease}`, 'DELETE', token).catch((e: unknown) => e);
      });
      await new Promise((r) => setTimeout(r, KILL_AFTER_MS[round]));
      server!.child.kill('SIGKILL');
      await new Promise((r) => server!.child.once('exit', r));
      await Promise.all(cancels);
      all.push(...made);
    }

    const { url, token } = await start();
    const agreement = async (m: { node: string; lease: string }): Promise<string> => {
      const lease = (await http(`${url}/lease/v1/leases/${m.lease}`, 'GET', token)).body;
      const node = (
        await http(`${url}/baremetal/v1/nodes/${m.node}`, 'GET', token, undefined, { 'x-openstack-ironic-api-version': '1.65' })
      ).body;
      const carried = node.properties?.lease_uuid ?? null;
      if (lease.status === 'deleted' && node.lessee === null && carried === null) return 'deleted';
      if (lease.status === 'active' && node.lessee === project && carried === m.lease) return 'active';
      return `disagree: lease ${lease.status}, node lessee ${node.lessee}, lease_uuid ${carried}`;
    };
    // What the kills left, as read at once after the restart (shown, not asserted: it varies).
    const left = [];
    for (const m of all) left.push((await http(`${url}/lease/v1/leases/${m.lease}`, 'GET', token)).body.status as string);
    console.info(`lease statuses after the restart: ${left.join(', ')}`);
    for (const m of all) {
      await waitFor(
        () => agreement(m),
        (s) => !s.startsWith('disagree'),
        { timeoutMs: 120_000, intervalMs: 500, what: `lease ${m.lease} and node ${m.node} to agree`, show: (s) => s },
      );
    }
    // The server is usable: a surviving active lease can still be cancelled.
    const survivors = [];
    for (const m of all) if ((await agreement(m)) === 'active') survivors.push(m);
    for (const m of survivors) expect((await http(`${url}/lease/v1/leases/${m.lease}`, 'DELETE', token)).status).toBe(200);
  }, 400_000);
});
