/**
 * Images in a real browser (issue 20): the lessee uploads a file through the Images page, with
 * an upload progress bar, and the image becomes active with the file's bytes; it shares the
 * image with another project, which then sees it.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { call, createPersonas, startTestServer, type Personas, type TestServer } from '../helpers/harness.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { launchBrowser, pageErrors, SCREENSHOTS, signIn } from './support.ts';

let ts: TestServer;
let p: Personas;
let browser: Browser;
let dir: string;

beforeAll(async () => {
  ts = await startTestServer();
  p = await createPersonas(ts);
  browser = await launchBrowser();
  dir = mkdtempSync(path.join(os.tmpdir(), 'esi-upload-'));
});
afterAll(async () => {
  await browser?.close();
  await ts?.close();
  rmSync(dir, { recursive: true, force: true });
});

it('uploads an image with a progress bar, and shares it with another project', async () => {
  const file = path.join(dir, 'disk.raw');
  const bytes = Buffer.alloc(24 * 1024 * 1024, 7);
  writeFileSync(file, bytes);

  const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  const errors = pageErrors(page);
  await signIn(page, ts.url, 'lessee1', 'pw-lessee1', 'l1');
  await page.getByRole('link', { name: 'Images' }).click();
  await page.getByLabel('File').setInputFiles(file);
  await page.getByLabel('Name').fill('uploaded');
  await page.getByLabel('Disk format').selectOption('raw');
  await page.getByRole('button', { name: 'Upload' }).click();
  await page.getByTestId('upload-progress').waitFor({ timeout: 10_000 });

  const mine = async (): Promise<any[]> => (await call(ts, p.lessee, 'GET', '/image/v2/images?name=uploaded')).body.images;
  await waitFor(mine, (xs) => xs[0]?.status === 'active', { timeoutMs: 30_000, what: 'the image active', show: (xs) => xs[0]?.status });
  const image = (await mine())[0];
  expect(image).toMatchObject({ size: bytes.length, disk_format: 'raw', owner: p.lessee.projectId });
  await expect.poll(() => page.getByTestId('upload-progress').getAttribute('value')).toBe('1');
  await page.locator('tr[data-image="uploaded"]').waitFor();
  await page.screenshot({ path: `${SCREENSHOTS}lessee-images.png` });

  // Not shared yet: another project does not see it; shared: it does.
  expect((await call(ts, p.other, 'GET', `/image/v2/images/${image.id}`)).status).toBe(404);
  const row = page.locator('tr[data-image="uploaded"]');
  await row.getByPlaceholder('project ID').fill(p.other.projectId!);
  await row.getByRole('button', { name: 'Share' }).click();
  await expect.poll(async () => (await call(ts, p.other, 'GET', `/image/v2/images/${image.id}`)).status, { timeout: 10_000 }).toBe(200);
  expect(errors).toEqual([]);
});
