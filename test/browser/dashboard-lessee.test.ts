/**
 * The talk's demo, the lessee's part, in a real browser (issue 20): the owner's node B (a lab
 * system behind a real Redfish BMC) is offered; the lessee signs in, finds B in the marketplace
 * and claims it; B appears on the lessee's node list by itself (the live channel, no reload);
 * the lessee powers it on (the lab's Redfish system turns on, and the page shows it), opens its
 * console and cannot change its properties (the API's refusal in words); when the
 * owner deletes the lease, the lessee's page loses B within a second.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { startLab, type Lab } from '../../src/lab/index.ts';
import { call, createPersonas, startTestServer, type Personas, type TestServer } from '../helpers/harness.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { formatLeaseTime } from '../../src/domain/leasing/time.ts';
import { launchBrowser, pageErrors, SCREENSHOTS, signIn } from './support.ts';

const V = { 'x-openstack-ironic-api-version': '1.82' };
let lab: Lab;
let ts: TestServer;
let p: Personas;
let browser: Browser;

beforeAll(async () => {
  lab = await startLab({ nodes: 1, port: 0 });
  ts = await startTestServer();
  p = await createPersonas(ts);
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await ts?.close();
  await lab?.close();
});

/** Enrol lab system `system` as node `name`, owned by o1, and make it manageable. */
async function enrolB(name: string): Promise<string> {
  const system = lab.systems.ids[0]!;
  const created = await call(
    ts,
    p.admin,
    'POST',
    '/baremetal/v1/nodes',
    {
      name,
      driver: 'redfish',
      owner: p.owner.projectId,
      resource_class: 'baremetal',
      console_interface: 'redfish-serial',
      driver_info: {
        redfish_address: lab.url,
        redfish_system_id: `/redfish/v1/Systems/${system}`,
        redfish_username: 'admin',
        redfish_password: 'password',
      },
    },
    V,
  );
  expect(created.status, created.text).toBe(201);
  const uuid = created.body.uuid as string;
  expect((await call(ts, p.admin, 'PUT', `/baremetal/v1/nodes/${uuid}/states/provision`, { target: 'manage' }, V)).status).toBe(202);
  await waitFor(
    () => call(ts, p.admin, 'GET', `/baremetal/v1/nodes/${uuid}`, undefined, V),
    (r) => r.body.provision_state === 'manageable' && r.body.reservation === null,
    { timeoutMs: 20_000, what: `node ${name} manageable`, show: (r) => r.body.provision_state },
  );
  return uuid;
}

it('a lessee claims B in the marketplace, sees it appear live, powers it on, and loses it live when the owner ends the lease', async () => {
  const uuid = await enrolB('B');
  const offer = await call(ts, p.owner, 'POST', '/lease/v1/offers', {
    resource_uuid: uuid,
    start_time: formatLeaseTime(Date.now() - 60_000),
    end_time: formatLeaseTime(Date.now() + 7 * 86_400_000),
  });
  expect(offer.status, offer.text).toBe(201);

  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const errors = pageErrors(page);
  await signIn(page, ts.url, 'lessee1', 'pw-lessee1', 'l1');

  // Not the lessee's yet (sign-in lands on the node list; the token lives in the page's memory,
  // so the test moves by links, as a user does, not by reloading).
  await page.getByRole('heading', { name: 'Nodes' }).waitFor();
  await expect.poll(() => page.getByText('No nodes to show.').isVisible()).toBe(true);

  // The marketplace lists B; the claim starts now.
  await page.getByRole('link', { name: 'Marketplace' }).click();
  const row = page.locator('tr[data-offer="B"]');
  await row.waitFor();
  // A hardware filter B does not meet hides it; a malformed one is said beside the field.
  const where = page.getByLabel('Hardware filter');
  await where.fill('memory_mb >= 1');
  await page.getByText('No offers match.').waitFor();
  await where.fill('memory_mb >= (');
  await page.locator('#where-error').waitFor();
  expect(await where.getAttribute('aria-invalid')).toBe('true');
  await where.fill('');
  await row.waitFor();
  await page.screenshot({ path: `${SCREENSHOTS}lessee-marketplace.png` });
  await row.getByRole('button', { name: 'Claim…' }).click();
  await row.getByRole('button', { name: 'Claim' }).click();
  await expect.poll(async () => (await call(ts, p.lessee, 'GET', '/lease/v1/leases')).body.leases.length).toBe(1);

  // B appears on the node list by itself once the lease is active.
  await page.getByRole('link', { name: 'Nodes' }).click();
  const nodeRow = page.locator('tr[data-node="B"]');
  await nodeRow.waitFor({ timeout: 10_000 });

  // Power on from the node's page: the lab's Redfish system turns on, and the page shows it.
  await nodeRow.getByRole('link', { name: 'B' }).click();
  await page.getByRole('button', { name: 'Power on' }).click();
  await waitFor(
    async () => lab.systems.get(lab.systems.ids[0]!).powerState,
    (s) => s === 'On',
    { timeoutMs: 15_000, what: 'the lab system powered on' },
  );
  await expect.poll(() => page.getByTestId('power-state').textContent(), { timeout: 10_000 }).toContain('power on');
  // The lessee cannot change B's properties: the API's refusal is said beside the form.
  await page.getByLabel('Property', { exact: true }).fill('cpus');
  await page.getByLabel('Value', { exact: true }).fill('64');
  await page.getByRole('button', { name: 'Set property' }).click();
  await expect.poll(() => page.locator('#property-error').textContent(), { timeout: 10_000 }).toMatch(/baremetal:node:update/);
  const props = (await call(ts, p.admin, 'GET', `/baremetal/v1/nodes/${uuid}`, undefined, V)).body.properties;
  expect(props.cpus).toBeUndefined();

  // The serial console opens in the page (read-only for a lessee, as the policy says).
  await page.getByRole('button', { name: 'Console' }).click();
  const consoleHeading = page.getByRole('heading', { name: /Serial console/ });
  await expect.poll(() => consoleHeading.textContent(), { timeout: 15_000 }).toMatch(/\(open\)/);
  await page.screenshot({ path: `${SCREENSHOTS}lessee-node.png` });
  await page.getByRole('link', { name: 'Leases' }).click();
  await page.locator('tr[data-lease="B"]').waitFor();
  await page.screenshot({ path: `${SCREENSHOTS}lessee-leases.png` });

  // The owner ends the lease: the lessee's page loses B within a second of the node's change.
  await page.getByRole('link', { name: 'Nodes' }).click();
  await nodeRow.waitFor();
  const lease = (await call(ts, p.lessee, 'GET', '/lease/v1/leases')).body.leases[0];
  const ended = await call(ts, p.owner, 'DELETE', `/lease/v1/leases/${lease.uuid}`);
  expect(ended.status, ended.text).toBe(200);
  await waitFor(
    () => call(ts, p.admin, 'GET', `/baremetal/v1/nodes/${uuid}`, undefined, V),
    (r) => r.body.lessee === null,
    { timeoutMs: 10_000, what: 'the lessee removed from B' },
  );
  const removedAt = Date.now();
  await nodeRow.waitFor({ state: 'detached', timeout: 5_000 });
  expect(Date.now() - removedAt).toBeLessThan(1_000);

  expect(errors).toEqual([]);
  await context.close();
});
