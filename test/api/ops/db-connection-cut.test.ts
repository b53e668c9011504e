/**
 * Issue 23's bad input "a PostgreSQL connection cut mid-transaction", with a real `esi server`
 * process on a fresh database: while 4 clients create leases one after the other, every
 * connection of the server's database is terminated (`pg_terminate_backend`) every 100 ms.
 * Each answer is either the lease (201) or esi-leap's error body with 503 and a message naming
 * the database — never a 500, a reset connection or a crash; every lease in the database has its
 * create event (a cut transaction left nothing half-written); and once the cuts stop the same
 * process serves again (it reconnects by itself). PostgreSQL only (the api-pg project).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, expect, it } from 'vitest';
import { formatLeaseTime } from '../../../src/domain/leasing/time.ts';
import { spawnEsiServer, type SpawnedServer } from '../../helpers/esi-process.ts';
import { describePostgresOnly } from '../../helpers/harness.ts';
import { createDatabase, freePort, http, tokenFor, type TempDatabase } from '../lease/processes.ts';

const ADMIN_PW = 'db-cut-admin-pw';
const LEASES = 80;
const HOUR = 3_600_000;

describePostgresOnly('PostgreSQL connections cut under load', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-db-cut-'));
  let db: TempDatabase | null = null;
  let server: SpawnedServer | null = null;

  afterAll(async () => {
    await server?.stop();
    await db?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers 201 or 503, leaves no half-written lease, and serves again after', async () => {
    db = await createDatabase();
    const port = await freePort();
    server = await spawnEsiServer(['--port', String(port), '--data-dir', dataDir, '--database-url', db.url], {
      ESI_ADMIN_PASSWORD: ADMIN_PW,
    });
    const url = `http://127.0.0.1:${port}`;
    const token = await tokenFor(url, 'admin', ADMIN_PW, 'admin');
    const project = (await http(`${url}/identity/v3/projects?name=admin`, 'GET', token)).body.projects[0].id as string;
    const node = await http(
      `${url}/baremetal/v1/nodes`,
      'POST',
      token,
      { driver: 'fake-hardware', name: 'cut-0', owner: project },
      {
        'x-openstack-ironic-api-version': '1.82',
      },
    );
    expect(node.status, JSON.stringify(node.body)).toBe(201);

    const admin = new pg.Client({ connectionString: db.url });
    // Ended below; cut only if the test fails first and the database is dropped with force.
    admin.on('error', () => undefined);
    await admin.connect();
    let cutting = true;
    let cuts = 0;
    const cutter = (async () => {
      while (cutting) {
        const r = await admin.query(
          'select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
        );
        cuts += r.rowCount ?? 0;
        await new Promise((res) => setTimeout(res, 100));
      }
    })();
    const answers: Array<{ status: number; body: any }> = [];
    const start = Date.now() + 24 * HOUR;
    let next = 0;
    try {
      await Promise.all(
        Array.from({ length: 4 }, async () => {
          for (let i = next++; i < LEASES; i = next++) {
            answers.push(
              await http(`${url}/lease/v1/leases`, 'POST', token, {
                resource_uuid: node.body.uuid,
                project_id: project,
                start_time: formatLeaseTime(start + i * HOUR),
                end_time: formatLeaseTime(start + i * HOUR + HOUR / 2),
              }),
            );
          }
        }),
      );
    } catch (err) {
      console.error(`esi server output:\n${server.output().slice(-4000)}`);
      throw err;
    } finally {
      cutting = false;
      await cutter;
    }
    const statuses = answers.map((a) => a.status);
    console.info(
      `${cuts} connections cut; answers: ${statuses.filter((s) => s === 201).length} × 201, ${statuses.filter((s) => s === 503).length} × 503`,
    );
    expect(statuses.filter((s) => s !== 201 && s !== 503)).toEqual([]);
    // The cuts reached requests in flight (else this test shows nothing).
    expect(statuses).toContain(503);
    for (const a of answers.filter((x) => x.status === 503)) {
      expect(a.body).toMatchObject({ faultcode: 'Server', debuginfo: null });
      expect(a.body.faultstring).toMatch(/database/i);
    }

    // No lease without its create event; every lease answered 201 is there.
    const leases = await admin.query(
      `select l.uuid, (select count(*) from lease_events e where e.object_uuid = l.uuid and e.event_type = 'esi_leap.lease.create')::int as events from leases l`,
    );
    expect(leases.rows.filter((r) => r.events !== 1)).toEqual([]);
    const stored = new Set(leases.rows.map((r) => r.uuid as string));
    for (const a of answers.filter((x) => x.status === 201)) expect(stored.has(a.body.uuid as string)).toBe(true);
    await admin.end();

    // The same process serves again.
    const after = await http(`${url}/lease/v1/leases`, 'POST', token, {
      resource_uuid: node.body.uuid,
      project_id: project,
      start_time: formatLeaseTime(start + LEASES * HOUR),
      end_time: formatLeaseTime(start + LEASES * HOUR + HOUR / 2),
    });
    expect(after.status, JSON.stringify(after.body)).toBe(201);
    expect(server.child.exitCode).toBeNull();
  });
});
