/**
 * Issue 23's bad input "a data directory with a half-written SQLite WAL", with a real `esi server`
 * process: leases are written, the process is killed with SIGKILL (its write-ahead log
 * `esi.sqlite-wal` still holds frames), and the log is then damaged as a crash of the machine
 * could leave it — its last frame cut short, then garbage appended (a frame whose checksum does
 * not match). Each time esi starts again on the directory, answers, and the database passes
 * `PRAGMA integrity_check`; every lease it lists has its node and its create event (a torn
 * transaction is lost whole, never in part). SQLite only (in the api-pg project it is skipped).
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { formatLeaseTime } from '../../../src/domain/leasing/time.ts';
import { spawnEsiServer, type SpawnedServer } from '../../helpers/esi-process.ts';
import { testDb } from '../../helpers/harness.ts';
import { freePort, http, tokenFor } from '../lease/processes.ts';

const ADMIN_PW = 'wal-torn-admin-pw';
const HOUR = 3_600_000;
/** SQLite's WAL frame header (24 bytes); a frame is this plus one page. */
const FRAME_HEADER = 24;

const suite = testDb() === 'sqlite' ? describe : describe.skip;

suite('a half-written SQLite write-ahead log', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-wal-torn-'));
  const file = path.join(dataDir, 'esi.sqlite');
  let server: SpawnedServer | null = null;

  afterAll(async () => {
    await server?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** Start esi on the directory. @returns its URL, an admin token and the admin project */
  async function start(): Promise<{ url: string; token: string; project: string }> {
    const port = await freePort();
    server = await spawnEsiServer(['--port', String(port), '--data-dir', dataDir], { ESI_ADMIN_PASSWORD: ADMIN_PW });
    const url = `http://127.0.0.1:${port}`;
    const token = await tokenFor(url, 'admin', ADMIN_PW, 'admin');
    const project = (await http(`${url}/identity/v3/projects?name=admin`, 'GET', token)).body.projects[0].id as string;
    return { url, token, project };
  }

  /** Create a node named `name` and `n` leases on it; then SIGKILL the server. */
  async function writeAndKill(n: number, name: string): Promise<void> {
    const { url, token, project } = await start();
    const node = await http(
      `${url}/baremetal/v1/nodes`,
      'POST',
      token,
      { driver: 'fake-hardware', name, owner: project },
      {
        'x-openstack-ironic-api-version': '1.82',
      },
    );
    expect(node.status, JSON.stringify(node.body)).toBe(201);
    const base = Date.now() + 24 * HOUR;
    for (let i = 0; i < n; i++) {
      const l = await http(`${url}/lease/v1/leases`, 'POST', token, {
        resource_uuid: node.body.uuid,
        project_id: project,
        start_time: formatLeaseTime(base + i * HOUR),
        end_time: formatLeaseTime(base + i * HOUR + HOUR / 2),
      });
      expect(l.status, JSON.stringify(l.body)).toBe(201);
    }
    server!.child.kill('SIGKILL');
    await new Promise((r) => server!.child.once('exit', r));
    server = null;
  }

  /** Start esi again: it serves, and what it lists is whole. @returns the leases it lists */
  async function restartAndCheck(): Promise<number> {
    const { url, token } = await start();
    const leases = (await http(`${url}/lease/v1/leases?project_id=admin`, 'GET', token)).body.leases as Array<{
      uuid: string;
      resource_uuid: string;
    }>;
    for (const l of leases) {
      const node = await http(`${url}/baremetal/v1/nodes/${l.resource_uuid}`, 'GET', token, undefined, {
        'x-openstack-ironic-api-version': '1.82',
      });
      expect(node.status).toBe(200);
    }
    await server!.stop();
    server = null;
    const db = new Database(file, { readonly: true });
    try {
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      const orphans = db
        .prepare(
          `select count(*) as n from leases l where not exists (select 1 from lease_events e where e.object_uuid = l.uuid and e.event_type = 'esi_leap.lease.create')`,
        )
        .get() as { n: number };
      expect(orphans.n).toBe(0);
    } finally {
      db.close();
    }
    return leases.length;
  }

  it('starts on a log whose last frame was cut short, and on one with garbage at its end', async () => {
    await writeAndKill(12, 'wal-a');
    const wal = `${file}-wal`;
    const size = fs.existsSync(wal) ? fs.statSync(wal).size : 0;
    // Frames were left in the log by the kill (else there is nothing to damage).
    expect(size).toBeGreaterThan(32 + FRAME_HEADER);
    fs.truncateSync(wal, size - 100);
    const afterCut = await restartAndCheck();
    console.info(`log of ${size} bytes cut by 100: ${afterCut} leases listed`);
    expect(afterCut).toBeGreaterThan(0);

    await writeAndKill(6, 'wal-b');
    fs.appendFileSync(wal, randomBytes(4096 + FRAME_HEADER));
    const afterGarbage = await restartAndCheck();
    console.info(`garbage frame appended: ${afterGarbage} leases listed`);
    expect(afterGarbage).toBeGreaterThanOrEqual(afterCut);
  });
});
