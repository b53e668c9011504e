/**
 * Every page of the dashboard passes an automated accessibility check (issue 20 item 7):
 * axe-core finds no `serious` or `critical` violation on the sign-in page and on every view
 * reachable from the navigation — the main bar's (whatever views it holds) and the Admin
 * section's — plus a node's page, a node's history and the opened forms of the quota and
 * conductor views, in the light and the dark theme (switched with the header's toggle), at
 * 1280 px and at 390 px (a phone) wide. The admin signs in; the views have rows to draw
 * (./seed.ts). The test moves by clicking links, as the token lives in the page's memory.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { ADMIN_PASSWORD, createPersonas, startTestServer, type Personas, type TestServer } from '../helpers/harness.ts';
import { launchBrowser, pageErrors, seriousViolations, signIn, type Violation } from './support.ts';
import { seedDashboard, type Seeded } from './seed.ts';

let ts: TestServer;
let p: Personas;
let seeded: Seeded;
let browser: Browser;

beforeAll(async () => {
  ts = await startTestServer();
  p = await createPersonas(ts);
  seeded = await seedDashboard(ts, p);
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await ts?.close();
});

/** Wait until the view has drawn: a level-1 heading and nothing still loading. */
async function settled(page: Page): Promise<void> {
  await page.locator('h1').first().waitFor();
  await expect.poll(() => page.locator('[aria-busy="true"]').count(), { timeout: 15_000 }).toBe(0);
}

/** Put the page in `theme` with the header's toggle (when it is not in it already). */
async function useTheme(page: Page, theme: 'light' | 'dark'): Promise<void> {
  const current = await page.locator('html').getAttribute('data-theme');
  if (current !== theme) await page.getByRole('button', { name: `Switch to ${theme} theme` }).click();
  await expect.poll(() => page.locator('html').getAttribute('data-theme')).toBe(theme);
}

/** The link names of a navigation landmark. */
async function links(page: Page, nav: string): Promise<string[]> {
  return (await page.getByRole('navigation', { name: nav }).getByRole('link').allTextContents()).map((t) => t.trim());
}

for (const width of [1280, 390])
  for (const theme of ['light', 'dark'] as const)
    it(`no serious accessibility violation on any page, ${theme} theme, ${width} px wide`, async () => {
      const context = await browser.newContext({ viewport: { width, height: 800 }, colorScheme: theme });
      const page = await context.newPage();
      const errors = pageErrors(page);
      const found: Array<Violation & { view: string }> = [];
      const checked: string[] = [];
      const check = async (view: string, toggle = true): Promise<void> => {
        if (toggle) await useTheme(page, theme);
        for (const v of await seriousViolations(page)) found.push({ view, ...v });
        checked.push(view);
      };

      await page.goto(`${ts.url}/dashboard/sign-in`);
      await settled(page);
      // The sign-in page has no theme toggle (the signed-in header has it).
      await check('sign-in', false);
      await signIn(page, ts.url, 'admin', ADMIN_PASSWORD, 'admin');
      await settled(page);

      const visited: string[] = [];
      for (const nav of ['Main', 'Admin']) {
        for (const name of await links(page, nav)) {
          await page.getByRole('navigation', { name: nav }).getByRole('link', { name, exact: true }).click();
          await settled(page);
          await check(`${nav} › ${name}`);
          visited.push(name);
          if (name === 'Nodes') {
            await page.locator(`tr[data-node="${seeded.nodeName}"]`).getByRole('link', { name: seeded.nodeName }).click();
            await settled(page);
            await check('node page');
          }
          if (name === 'All nodes') {
            await page.getByRole('button', { name: `Set maintenance… of ${seeded.nodeName}` }).click();
            await check('All nodes, maintenance form open');
            await page.getByRole('link', { name: `History of ${seeded.nodeName}` }).click();
            await settled(page);
            await check('node history');
          }
          if (name === 'Quotas') {
            await page.getByRole('button', { name: 'Edit quotas of l1' }).click();
            await page.getByRole('form', { name: 'Network quota of l1' }).waitFor();
            await check('Quotas, editor open');
          }
          if (name === 'Conductors') {
            await page
              .getByRole('button', { name: /^Show nodes of / })
              .first()
              .click();
            await page.getByRole('list', { name: /^Nodes of / }).waitFor();
            await check('Conductors, nodes shown');
          }
        }
      }
      // The lessee's views and the operator's are all there.
      expect(visited).toEqual(expect.arrayContaining(['Nodes', 'Marketplace', 'Leases', 'Projects', 'Users and roles', 'Quotas']));
      expect(visited).toEqual(expect.arrayContaining(['All nodes', 'Conductors', 'Switches']));
      expect(checked).toEqual(
        expect.arrayContaining(['sign-in', 'node page', 'node history', 'Quotas, editor open', 'Conductors, nodes shown']),
      );
      expect(checked.length).toBe(visited.length + 6);

      expect(found, found.map((v) => `${v.view}: ${v.id} (${v.impact}) ${v.help}\n  ${v.nodes.join('\n  ')}`).join('\n')).toEqual([]);
      expect(errors).toEqual([]);
      await context.close();
    });
