/**
 * The talk's demo, whole, in the browser (issue 20 "How it is shown"), every step through the
 * dashboard's forms: the admin creates the owner's and the lessee's projects and users and grants
 * their roles; the owner signs in, enrols B (a lab system behind a real Redfish BMC), manages it
 * and offers it; the lessee signs in, claims B in the marketplace and sees it appear on its node
 * list by itself, powers it on (the lab's Redfish system turns on), opens its console, and cannot
 * change its properties; the owner ends the lease on its Leases page and the lessee's page loses
 * B within a second.
 *
 * Enrolling is an operator's right under esi's default policy, as in Ironic; this server runs
 * with an operator policy file that lets an owner enrol nodes owned by its own project (as
 * test/browser/dashboard-owner.test.ts does; Ironic 2023.2: `baremetal:node:create:self_owned_node`).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { startLab, type Lab } from '../../src/lab/index.ts';
import { ADMIN_PASSWORD, call, createPersonas, startTestServer, type Personas, type TestServer } from '../helpers/harness.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { launchBrowser, pageErrors, signIn } from './support.ts';

const V = { 'x-openstack-ironic-api-version': '1.82' };
const POLICY = '"baremetal:node:create": "rule:is_admin or (role:owner and project_id:%(node.owner)s)"\n';

let lab: Lab;
let ts: TestServer;
let p: Personas;
let browser: Browser;
let dir: string;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-demo-policy-'));
  fs.writeFileSync(path.join(dir, 'policy.yaml'), POLICY);
  lab = await startLab({ nodes: 1, port: 0 });
  ts = await startTestServer({ env: { ESI_POLICY_FILE: path.join(dir, 'policy.yaml') } });
  // The roles `owner` and `lessee` (and the harness's own personas, which the demo does not use).
  p = await createPersonas(ts);
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await ts?.close();
  await lab?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** Click a link of a navigation bar (the token lives in the page: no reloads). */
async function go(page: Page, nav: 'Main' | 'Admin', name: string): Promise<void> {
  await page.getByRole('navigation', { name: nav }).getByRole('link', { name, exact: true }).click();
}

it('runs the talk’s demo in the browser: admin, owner and lessee', async () => {
  // The admin: two projects, two users, their roles.
  const adminPage = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  const errors = pageErrors(adminPage);
  await signIn(adminPage, ts.url, 'admin', ADMIN_PASSWORD, 'admin');
  await go(adminPage, 'Admin', 'Projects');
  const projectForm = adminPage.getByRole('form', { name: 'Create a project' });
  for (const name of ['acme', 'lab-users']) {
    await projectForm.getByLabel('Name').fill(name);
    await projectForm.getByRole('button', { name: 'Create project' }).click();
    await adminPage.locator(`tr[data-project="${name}"]`).waitFor();
  }
  await go(adminPage, 'Admin', 'Users and roles');
  const userForm = adminPage.getByRole('form', { name: 'Create a user' });
  const grant = adminPage.getByRole('form', { name: 'Grant a role' });
  for (const [user, project, role] of [
    ['alice', 'acme', 'owner'],
    ['bob', 'lab-users', 'lessee'],
  ] as const) {
    await userForm.getByLabel('Name').fill(user);
    await userForm.getByLabel('Password').fill(`pw-${user}-demo`);
    await userForm.getByLabel('Default project').selectOption({ label: project });
    await userForm.getByRole('button', { name: 'Create user' }).click();
    await adminPage.locator(`tr[data-user="${user}"]`).waitFor();
    await grant.locator('select[name="role"]').selectOption({ label: role });
    await grant.locator('select[name="user"]').selectOption({ label: user });
    await grant.locator('select[name="project"]').selectOption({ label: project });
    await grant.getByRole('button', { name: 'Grant role' }).click();
    await adminPage.locator(`tr[data-assignment="${user} ${role} project ${project}"]`).waitFor();
  }

  // The owner: enrol B, manage it, offer it.
  const ownerPage = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  errors.push(...pageErrors(ownerPage));
  await signIn(ownerPage, ts.url, 'alice', 'pw-alice-demo', 'acme');
  await go(ownerPage, 'Main', 'Enrol');
  await ownerPage.getByLabel('Name', { exact: true }).fill('B');
  await ownerPage.getByLabel('Driver').selectOption('redfish');
  await ownerPage.getByLabel('BMC address').fill(lab.url);
  await ownerPage.getByLabel('System ID').fill(`/redfish/v1/Systems/${lab.systems.ids[0]!}`);
  await ownerPage.getByLabel('Username').fill('admin');
  await ownerPage.getByLabel('Password').fill('password');
  await ownerPage.getByLabel('Resource class').fill('baremetal');
  await ownerPage.getByLabel('Properties (JSON)').fill('{"cpus": 8, "memory_mb": 32768}');
  await ownerPage.getByRole('button', { name: 'Save and validate' }).click();
  await expect.poll(() => ownerPage.getByTestId('validation').locator('tr[data-interface="power"]').textContent()).toContain('passed');
  await ownerPage.getByRole('button', { name: 'Manage' }).click();
  await expect.poll(() => ownerPage.getByTestId('provision-state').textContent(), { timeout: 20_000 }).toContain('manageable');
  const uuid = (await call(ts, p.admin, 'GET', '/baremetal/v1/nodes/B', undefined, V)).body.uuid as string;
  // The serial console is the BMC's (an operator's choice of interface, as in the CLI tour);
  // retried while a conductor's task still holds the node (409), as python-ironicclient does.
  const patched = await waitFor(
    () =>
      call(
        ts,
        p.admin,
        'PATCH',
        `/baremetal/v1/nodes/${uuid}`,
        [{ op: 'replace', path: '/console_interface', value: 'redfish-serial' }],
        V,
      ),
    (r) => r.status !== 409,
    { timeoutMs: 10_000, what: 'the node unlocked for a PATCH', show: (r) => r.status },
  );
  expect(patched.status, patched.text).toBe(200);
  await go(ownerPage, 'Main', 'My offers');
  const create = ownerPage.getByRole('button', { name: 'Create offer' });
  await expect.poll(() => create.isEnabled()).toBe(true);
  await create.click();
  await ownerPage.locator('tr[data-my-offer="B"]').waitFor();

  // The lessee: claim B in the marketplace; B appears on its node list by itself.
  const lesseePage = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  errors.push(...pageErrors(lesseePage));
  await signIn(lesseePage, ts.url, 'bob', 'pw-bob-demo', 'lab-users');
  await lesseePage.getByText('No nodes to show.').waitFor();
  await go(lesseePage, 'Main', 'Marketplace');
  const offerRow = lesseePage.locator('tr[data-offer="B"]');
  await offerRow.getByRole('button', { name: 'Claim…' }).click();
  await offerRow.getByRole('button', { name: 'Claim' }).click();
  // The owner's offer starts on the minute (My offers' default window): the lease starts then.
  const lease = await waitFor(
    async () => (await call(ts, p.admin, 'GET', `/lease/v1/leases?view=all&resource_uuid=${uuid}`)).body.leases[0],
    (l) => l !== undefined,
    { timeoutMs: 10_000, what: 'the lease made by the claim' },
  );
  const startsIn = Math.max(0, Date.parse(`${lease.start_time}Z`) - Date.now());
  await go(lesseePage, 'Main', 'Nodes');
  const nodeRow = lesseePage.locator('tr[data-node="B"]');
  await nodeRow.waitFor({ timeout: startsIn + 10_000 });

  // Power on: the lab's Redfish system turns on. The console opens. Properties stay the owner's.
  await nodeRow.getByRole('link', { name: 'B' }).click();
  await lesseePage.getByRole('button', { name: 'Power on' }).click();
  await waitFor(
    async () => lab.systems.get(lab.systems.ids[0]!).powerState,
    (s) => s === 'On',
    { timeoutMs: 15_000, what: 'the lab system powered on' },
  );
  await lesseePage.getByRole('button', { name: 'Console' }).click();
  await expect
    .poll(() => lesseePage.getByRole('heading', { name: /Serial console/ }).textContent(), { timeout: 15_000 })
    .toMatch(/\(open\)/);
  await lesseePage.getByLabel('Property', { exact: true }).fill('cpus');
  await lesseePage.getByLabel('Value', { exact: true }).fill('64');
  await lesseePage.getByRole('button', { name: 'Set property' }).click();
  await expect.poll(() => lesseePage.locator('#property-error').textContent(), { timeout: 10_000 }).toMatch(/baremetal:node:update/);
  await go(lesseePage, 'Main', 'Nodes');
  await nodeRow.waitFor();

  // The owner ends the lease on its Leases page: the lessee's page loses B within a second of
  // the node's change.
  await go(ownerPage, 'Main', 'Leases');
  await ownerPage.locator('tr[data-lease="B"]').getByRole('button', { name: 'End lease' }).click();
  await waitFor(
    () => call(ts, p.admin, 'GET', `/baremetal/v1/nodes/${uuid}`, undefined, V),
    (r) => r.body.lessee === null,
    { timeoutMs: 10_000, what: 'the lessee removed from B' },
  );
  const removedAt = Date.now();
  await nodeRow.waitFor({ state: 'detached', timeout: 5_000 });
  expect(Date.now() - removedAt).toBeLessThan(1_000);
  expect((await call(ts, p.admin, 'GET', `/baremetal/v1/nodes/${uuid}`, undefined, V)).body.properties.cpus).toBe(8);
  expect(errors).toEqual([]);
});
