/**
 * Issue 23, "no litter": a real `esi server` process killed with SIGKILL in the middle of an
 * image upload leaves its partial file in the image store's temporary folder; restarted on the
 * same data directory (and database), esi removes it at start, and the image janitor removes
 * stored data that no image record owns (an image whose record was deleted but whose data was
 * not, as a kill between the two steps of an image delete leaves it); the killed upload's image,
 * left `saving`, is `queued` again at once and takes an upload. Runs on SQLite and, in the
 * api-pg project, on a fresh PostgreSQL database.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, spawnEsiServer, type SpawnedServer } from '../../helpers/esi-process.ts';
import { testDb } from '../../helpers/harness.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import { createDatabase, http, tokenFor, type TempDatabase } from '../lease/processes.ts';

const ADMIN_PW = 'upload-crash-admin-pw';
const MIB = 1024 * 1024;

/** Every file under `dir` (recursively), relative paths. */
function filesUnder(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => fs.statSync(path.join(dir, f)).isFile());
}

describe('an upload killed with SIGKILL', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-upload-crash-'));
  let db: TempDatabase | null = null;
  let server: SpawnedServer | null = null;

  afterAll(async () => {
    await server?.stop();
    await db?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** Start esi on the test's data directory (and database). */
  async function start(): Promise<string> {
    const port = await freePort();
    const env: Record<string, string> = { ESI_ADMIN_PASSWORD: ADMIN_PW, ESI_SECRET_KEY: SECRET };
    const args = ['--port', String(port), '--data-dir', dataDir, ...(db ? ['--database-url', db.url] : [])];
    server = await spawnEsiServer(args, env);
    return `http://127.0.0.1:${port}`;
  }
  const SECRET = randomBytes(32).toString('base64');

  it('leaves nothing behind once esi restarts, and data without an image record is removed', async () => {
    if (testDb() === 'postgres') db = await createDatabase();
    let url = await start();
    const token = await tokenFor(url, 'admin', ADMIN_PW, 'admin');
    const image = await http(`${url}/image/v2/images`, 'POST', token, { name: 'killed', disk_format: 'raw', container_format: 'bare' });
    expect(image.status, JSON.stringify(image.body)).toBe(201);

    // An upload that never ends: 1 MiB every 20 ms until the server dies.
    const chunk = new Uint8Array(MIB).fill(7);
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        await new Promise((r) => setTimeout(r, 20));
        controller.enqueue(chunk);
      },
    });
    const upload = fetch(`${url}/image/v2/images/${image.body.id}/file`, {
      method: 'PUT',
      headers: { 'x-auth-token': token, 'content-type': 'application/octet-stream' },
      body,
      duplex: 'half',
    }).catch((err: unknown) => err);
    const tmp = path.join(dataDir, 'images', '.tmp');
    const partial = await waitFor(
      () => filesUnder(tmp).filter((f) => fs.statSync(path.join(tmp, f)).size >= 4 * MIB),
      (found) => found.length > 0,
      { timeoutMs: 30_000, intervalMs: 50, what: 'a partial upload of at least 4 MiB' },
    );
    server!.child.kill('SIGKILL');
    await new Promise((r) => server!.child.once('exit', r));
    await upload;
    expect(filesUnder(tmp)).toEqual(partial);

    // Data that no image record owns (the record deleted, the process killed before the data).
    const orphan = path.join(dataDir, 'images', randomUUID());
    fs.writeFileSync(orphan, 'data of a deleted image');

    url = await start();
    expect(filesUnder(tmp)).toEqual([]);
    await waitFor(
      () => fs.existsSync(orphan),
      (exists) => !exists,
      { timeoutMs: 30_000, intervalMs: 100, what: 'the image janitor to remove data without an image record' },
    );
    // The killed upload's image is queued again at once (its upload died with the previous
    // process), so it takes an upload; the server is usable.
    const again = await tokenFor(url, 'admin', ADMIN_PW, 'admin');
    await waitFor(
      async () => (await http(`${url}/image/v2/images/${image.body.id}`, 'GET', again)).body.status as string,
      (status) => status === 'queued',
      { timeoutMs: 30_000, intervalMs: 100, what: 'the image left saving by the killed upload to be queued again' },
    );
    const retried = await fetch(`${url}/image/v2/images/${image.body.id}/file`, {
      method: 'PUT',
      headers: { 'x-auth-token': again, 'content-type': 'application/octet-stream' },
      body: new Uint8Array(MIB).fill(9),
    });
    expect(retried.status).toBe(204);
    const fresh = await http(`${url}/image/v2/images`, 'POST', again, { name: 'after', disk_format: 'raw', container_format: 'bare' });
    const put = await fetch(`${url}/image/v2/images/${fresh.body.id}/file`, {
      method: 'PUT',
      headers: { 'x-auth-token': again, 'content-type': 'application/octet-stream' },
      body: new Uint8Array(MIB),
    });
    expect(put.status).toBe(204);
    expect(fs.existsSync(path.join(dataDir, 'images', fresh.body.id))).toBe(true);
    expect(filesUnder(tmp)).toEqual([]);
  }, 180_000);
});
