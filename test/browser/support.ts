/**
 * Helpers of the dashboard's browser tests: Debian's chromium (`/usr/bin/chromium`, installed by
 * .ci/run) driven by playwright-core (no browser download), against a real esi test server
 * that serves the built dashboard (web/dist, built by `npm install`'s `prepare`).
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { expect } from 'vitest';

/** Where the tests write the screenshots docs/dashboard.md shows (1280×800 PNG). */
export const SCREENSHOTS = fileURLToPath(new URL('../../docs/dashboard/', import.meta.url));

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

/** axe-core's browser build (injected into pages by {@link seriousViolations}). */
const AXE = fileURLToPath(new URL('../../node_modules/axe-core/axe.min.js', import.meta.url));

/** One accessibility violation as {@link seriousViolations} reports it. */
export interface Violation {
  readonly id: string;
  readonly impact: string;
  readonly help: string;
  /** The offending elements (CSS selectors) with axe's summary of each. */
  readonly nodes: readonly string[];
}

/**
 * Run axe-core on the page as it is now and return its violations of impact `serious` or
 * `critical` (axe's `minor` and `moderate` ones are left out). axe is injected once per page
 * (the page's memory holds the token, so the page is not reloaded).
 */
export async function seriousViolations(page: Page): Promise<Violation[]> {
  const loaded = (): Promise<boolean> => page.evaluate(() => 'axe' in globalThis);
  if (!(await loaded())) {
    try {
      await page.addScriptTag({ path: AXE });
    } catch {
      // The dashboard's Content-Security-Policy (script-src 'self') refuses an inline script
      // (unless the context bypasses CSP): evaluate axe's source instead.
    }
    if (!(await loaded())) await page.evaluate(readFileSync(AXE, 'utf8'));
  }
  return page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(): Promise<{ violations: any[] }> } }).axe;
    const result = await axe.run();
    return result.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => ({
        id: v.id as string,
        impact: v.impact as string,
        help: v.help as string,
        nodes: (v.nodes as any[]).map((n) => `${(n.target as string[]).join(' ')}: ${String(n.failureSummary ?? '').replace(/\s+/g, ' ')}`),
      }));
  });
}

/** Collect the page's script errors (a test expects none). */
export function pageErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  return errors;
}
