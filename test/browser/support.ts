/**
 * Helpers of the dashboard's browser tests: Debian's chromium (`/usr/bin/chromium`, installed by
 * .ci/run) driven by playwright-core (no browser download), against a real esi test server
 * that serves the built dashboard (web/dist, built by `npm install`'s `prepare`).
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { expect } from 'vitest';

/** Debian's chromium. */
export const CHROMIUM = process.env.ESI_TEST_CHROMIUM ?? '/usr/bin/chromium';

/** Launch headless chromium; fails with the reason when it or the built dashboard is missing. */
export async function launchBrowser(): Promise<Browser> {
  expect(existsSync(CHROMIUM), `${CHROMIUM} is missing: apt-get install chromium`).toBe(true);
  const index = fileURLToPath(new URL('../../web/dist/index.html', import.meta.url));
  expect(existsSync(index), 'the dashboard is not built: npm run build:web').toBe(true);
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });
}

/** Sign in on the dashboard's sign-in page of `url` as a user, in a project. */
export async function signIn(page: Page, url: string, user: string, password: string, project: string): Promise<void> {
  await page.goto(`${url}/dashboard/sign-in`);
  await page.getByLabel('User').fill(user);
  await page.getByLabel('Password').fill(password);
  await page.getByLabel('Project').fill(project);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Main' }).waitFor();
}

/** Collect the page's script errors (a test expects none). */
export function pageErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  return errors;
}
