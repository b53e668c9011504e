/**
 * The operator's views in a real browser (issue 20 item 5): the admin signs in (project
 * `admin`), creates a project and a user through the forms and grants the user a role on the
 * project; the new user then signs in in a second browser context and sees the dashboard (and
 * no Admin section; an admin view reached anyway shows the API's refusal in words). A duplicate
 * project name shows Keystone's message beside the name field. The admin sets maintenance on a
 * node with a reason, sees it in the list, reads it in the node's history, and ends it; edits
 * quotas; reads the views again under a system-scoped token. Each admin view is saved as a
 * 1280×800 screenshot in docs/dashboard/.
 */
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { ADMIN_PASSWORD, call, createPersonas, startTestServer, type Personas, type TestServer } from '../helpers/harness.ts';
import { launchBrowser, pageErrors, signIn } from './support.ts';
import { seedDashboard, type Seeded } from './seed.ts';

const SHOTS = fileURLToPath(new URL('../../docs/dashboard/', import.meta.url));
let ts: TestServer;
let p: Personas;
let seeded: Seeded;
let browser: Browser;

beforeAll(async () => {
  ts = await startTestServer();
  p = await createPersonas(ts);
  seeded = await seedDashboard(ts, p);
  browser = await launchBrowser();
  mkdirSync(SHOTS, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
  await ts?.close();
});

/** Open an admin view by its link in the Admin navigation and wait for its heading. */
async function openAdmin(page: Page, link: string, heading: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Admin' }).getByRole('link', { name: link, exact: true }).click();
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
  await expect.poll(() => page.locator('[aria-busy="true"]').count(), { timeout: 15_000 }).toBe(0);
}

/** Save the view as docs/dashboard/<name>.png (1280×800, the viewport). */
async function shoot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: `${SHOTS}${name}.png` });
}

it('the admin creates a project and a user, grants a role, and the new user signs in; a duplicate name is refused beside the field', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: 'light' });
  const page = await context.newPage();
  const errors = pageErrors(page);
  await signIn(page, ts.url, 'admin', ADMIN_PASSWORD, 'admin');

  // A project through the form.
  await openAdmin(page, 'Projects', 'Projects');
  const projectForm = page.getByRole('form', { name: 'Create a project' });
  await projectForm.getByLabel('Name').fill('web-team');
  await projectForm.getByLabel('Description').fill('Made in the dashboard');
  await projectForm.getByRole('button', { name: 'Create project' }).click();
  await page.locator('tr[data-project="web-team"]').waitFor();
  const made = await call(ts, p.admin, 'GET', '/identity/v3/projects?name=web-team');
  expect(made.body.projects.map((x: { description: string }) => x.description)).toEqual(['Made in the dashboard']);

  // The same name again: Keystone's 409 message, beside the name field, which points to it.
  await projectForm.getByLabel('Name').fill('web-team');
  await projectForm.getByRole('button', { name: 'Create project' }).click();
  const note = projectForm.locator('#project-name-error');
  await note.waitFor();
  expect(await note.textContent()).toContain('same name');
  expect(await projectForm.getByLabel('Name').getAttribute('aria-describedby')).toBe('project-name-error');
  expect(await projectForm.getByLabel('Name').getAttribute('aria-invalid')).toBe('true');
  // Beside the field: the note sits right under the input, in the same field box.
  const [field, noteBox] = [await projectForm.getByLabel('Name').boundingBox(), await note.boundingBox()];
  expect(noteBox!.y - (field!.y + field!.height)).toBeLessThan(40);
  expect(Math.abs(noteBox!.x - field!.x)).toBeLessThan(40);
  await shoot(page, 'admin-projects');

  // A project deleted: the button asks for a second press, then the row goes.
  await projectForm.getByLabel('Name').fill('short-lived');
  await projectForm.getByRole('button', { name: 'Create project' }).click();
  const doomed = page.locator('tr[data-project="short-lived"]');
  await doomed.getByRole('button', { name: 'Delete project short-lived' }).click();
  await doomed.getByRole('button', { name: 'Confirm delete project short-lived' }).click();
  await doomed.waitFor({ state: 'detached' });
  expect((await call(ts, p.admin, 'GET', '/identity/v3/projects?name=short-lived')).body.projects).toEqual([]);

  // A user with a default project and an email.
  await openAdmin(page, 'Users and roles', 'Users and roles');
  const userForm = page.getByRole('form', { name: 'Create a user' });
  await userForm.getByLabel('Name').fill('webber');
  await userForm.getByLabel('Password').fill('pw-webber-2026');
  await userForm.getByLabel('Default project').selectOption({ label: 'web-team' });
  await userForm.getByLabel('Email').fill('webber@example.org');
  await userForm.getByRole('button', { name: 'Create user' }).click();
  const userRow = page.locator('tr[data-user="webber"]');
  await userRow.waitFor();
  expect(await userRow.textContent()).toContain('webber@example.org');
  expect(await userRow.textContent()).toContain('web-team');

  // A role on the project.
  const grant = page.getByRole('form', { name: 'Grant a role' });
  await grant.getByLabel('Role').selectOption({ label: 'lessee' });
  await grant.getByLabel('User').selectOption({ label: 'webber' });
  await grant.getByLabel('Project').selectOption({ label: 'web-team' });
  await grant.getByRole('button', { name: 'Grant role' }).click();
  await page.locator('tr[data-assignment="webber lessee project web-team"]').waitFor();
  await shoot(page, 'admin-users');

  // The new user signs in (another browser) and sees the dashboard, without the Admin section.
  const second = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const userPage = await second.newPage();
  const userErrors = pageErrors(userPage);
  await signIn(userPage, ts.url, 'webber', 'pw-webber-2026', 'web-team');
  await userPage.getByRole('heading', { level: 1, name: 'Nodes' }).waitFor();
  expect(await userPage.getByRole('navigation', { name: 'Admin' }).count()).toBe(0);
  // An admin view reached anyway (as a typed URL would, without reloading the page's memory):
  // the API's refusal in words.
  await userPage.evaluate(() => {
    const w = globalThis as unknown as {
      history: { pushState(s: null, t: string, u: string): void };
      dispatchEvent(e: Event): void;
      PopStateEvent: typeof Event;
    };
    w.history.pushState(null, '', '/dashboard/admin/projects');
    w.dispatchEvent(new w.PopStateEvent('popstate'));
  });
  await userPage.getByRole('heading', { level: 1, name: 'Projects' }).waitFor();
  await expect
    .poll(() => userPage.getByRole('alert').first().textContent(), { timeout: 10_000 })
    .toContain('not authorized to perform the requested action: identity:list_projects');
  expect(userErrors).toEqual([]);
  await second.close();

  expect(errors).toEqual([]);
  await context.close();
});

it('the admin sets maintenance on a node with a reason, sees it in the list and the history, and ends it; every admin view has a screenshot', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: 'light' });
  const page = await context.newPage();
  const errors = pageErrors(page);
  await signIn(page, ts.url, 'admin', ADMIN_PASSWORD, 'admin');

  await openAdmin(page, 'All nodes', 'All nodes');
  const row = page.locator(`tr[data-node="${seeded.nodeName}"]`);
  await row.getByRole('button', { name: `Set maintenance… of ${seeded.nodeName}` }).click();
  await row.getByLabel('Reason').fill('fan 2 failing');
  await row.getByRole('button', { name: 'Set maintenance' }).click();
  await expect.poll(() => row.getByTestId('maintenance').textContent(), { timeout: 10_000 }).toContain('fan 2 failing');
  const node = await call(ts, p.admin, 'GET', `/baremetal/v1/nodes/${seeded.nodeUuid}`, undefined, {
    'x-openstack-ironic-api-version': '1.82',
  });
  expect([node.body.maintenance, node.body.maintenance_reason]).toEqual([true, 'fan 2 failing']);
  // The filter to troubled nodes keeps it.
  await page.getByLabel('Only nodes in maintenance, with a fault or an error').check();
  await row.waitFor();
  await shoot(page, 'admin-nodes');

  // Its history records it.
  await row.getByRole('link', { name: `History of ${seeded.nodeName}` }).click();
  await page.getByRole('heading', { level: 1, name: `History of ${seeded.nodeName}` }).waitFor();
  await page.getByRole('cell', { name: /fan 2 failing/ }).waitFor();
  await shoot(page, 'admin-node-history');

  // Back to the list; maintenance ends.
  await page.getByRole('link', { name: 'All nodes', exact: true }).first().click();
  await row.getByRole('button', { name: `End maintenance of ${seeded.nodeName}` }).click();
  await expect.poll(() => row.getByTestId('maintenance').textContent(), { timeout: 10_000 }).toBe('no');

  // Quotas: the lessee's lease quota as seeded; edit the network quota of project o1.
  await openAdmin(page, 'Quotas', 'Quotas');
  expect(await page.locator('tr[data-quota="l1"]').textContent()).toContain('168 h');
  await page.getByRole('button', { name: 'Edit quotas of o1' }).click();
  const net = page.getByRole('form', { name: 'Network quota of o1' });
  await net.getByLabel('Routers').fill('3');
  await net.getByRole('button', { name: 'Save network quota' }).click();
  await expect.poll(async () => (await call(ts, p.admin, 'GET', `/network/v2.0/quotas/${p.owner.projectId}`)).body.quota.router).toBe(3);
  const leaseQuota = page.getByRole('form', { name: 'Lease quota of o1' });
  await leaseQuota.getByLabel('Max nodes at once').fill('2');
  await leaseQuota.getByRole('button', { name: 'Save lease quota' }).click();
  await expect.poll(async () => (await call(ts, p.admin, 'GET', `/lease/v1/quotas/${p.owner.projectId}`)).body.max_nodes).toBe(2);
  await expect.poll(() => page.locator('tr[data-quota="o1"]').textContent()).toContain('2');
  await shoot(page, 'admin-quotas');

  // Conductors with their nodes; switches with their port states.
  await openAdmin(page, 'Conductors', 'Conductors');
  await page
    .getByRole('button', { name: /^Show nodes of / })
    .first()
    .click();
  await page
    .getByRole('list', { name: /^Nodes of / })
    .getByRole('link', { name: seeded.nodeName })
    .waitFor();
  await shoot(page, 'admin-conductors');
  await openAdmin(page, 'Switches', 'Switches');
  const port = page.locator(`section[data-switch="${seeded.switchName}"] tr[data-port="Eth1/1"]`);
  await port.waitFor();
  expect(await port.textContent()).toContain(seeded.nodeName);
  expect(await port.textContent()).toContain('quarantine');
  await shoot(page, 'admin-switches');

  // The same views under a system-scoped token (the header's scope switcher).
  await page.getByRole('combobox', { name: 'Project' }).selectOption({ label: 'System (all projects)' });
  await expect.poll(() => page.getByRole('combobox', { name: 'Project' }).inputValue()).toBe('system');
  await openAdmin(page, 'Projects', 'Projects');
  await page.locator('tr[data-project="o1"]').waitFor();
  await openAdmin(page, 'All nodes', 'All nodes');
  await page.locator(`tr[data-node="${seeded.nodeName}"]`).waitFor();

  expect(errors).toEqual([]);
  await context.close();
});
