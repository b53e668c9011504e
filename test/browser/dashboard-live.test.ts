/**
 * The live channel in the browser (issue 20 item 6 and "a lost connection shows a banner and
 * reconnects by itself"): the owner's node list follows a power change made elsewhere (the API)
 * without a reload; when the server goes away the page says so in a banner; when it comes back
 * (same data, same port: the token is still valid) the banner leaves by itself and changes made
 * meanwhile and afterwards reach the page.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { call, createPersonas, startTestServer, type Personas, type TestServer } from '../helpers/harness.ts';
import { launchBrowser, pageErrors, signIn } from './support.ts';

const V = { 'x-openstack-ironic-api-version': '1.82' };
let ts: TestServer;
let p: Personas;
let browser: Browser;

beforeAll(async () => {
  ts = await startTestServer();
  p = await createPersonas(ts);
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await ts?.close();
});

/** Rename a node as admin (a change every viewer of the node sees in the list). */
async function rename(uuid: string, name: string): Promise<void> {
  const r = await call(ts, p.admin, 'PATCH', `/baremetal/v1/nodes/${uuid}`, [{ op: 'replace', path: '/name', value: name }], V);
  expect(r.status, r.text).toBe(200);
}

it('follows changes live, shows a banner while the server is away, and reconnects by itself', async () => {
  const created = await call(
    ts,
    p.admin,
    'POST',
    '/baremetal/v1/nodes',
    { driver: 'fake-hardware', name: 'L1', owner: p.owner.projectId },
    V,
  );
  expect(created.status, created.text).toBe(201);
  const uuid = created.body.uuid as string;

  const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  const errors = pageErrors(page);
  await signIn(page, ts.url, 'owner1', 'pw-owner1', 'o1');
  await page.locator('tr[data-node="L1"]').waitFor();

  // A change made through the API reaches the open page.
  await rename(uuid, 'L1-renamed');
  await page.locator('tr[data-node="L1-renamed"]').waitFor({ timeout: 5_000 });

  // The server goes away: the banner says so.
  const port = Number(new URL(ts.url).port);
  await ts.close({ keepData: true });
  const banner = page.getByRole('status').filter({ hasText: 'Connection to esi lost' });
  await banner.waitFor({ timeout: 15_000 });

  // It comes back on the same data and port: the banner leaves and changes flow again.
  ts = await startTestServer({ reuse: ts, port });
  await banner.waitFor({ state: 'detached', timeout: 30_000 });
  await rename(uuid, 'L1-again');
  await page.locator('tr[data-node="L1-again"]').waitFor({ timeout: 5_000 });
  expect(errors).toEqual([]);
});
