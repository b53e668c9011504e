/**
 * The owner's views in a real browser (issue 20 item 4). owner1 enrols a lab system behind a
 * real Redfish BMC through the enrol form (the validation is shown per interface), manages it
 * (the conductor reaches the BMC; the page's state goes to `manageable` by itself), offers it
 * for two weeks on My offers and finds the offer on the Schedule's Gantt chart; when the lessee
 * claims the offer through the API, the owner's chart draws the lease bar, labelled with the
 * lessee's project, without a reload (the live channel). A bad BMC address is refused beside
 * its field in the API's words. Each main view is photographed into docs/dashboard/
 * (1280×800).
 *
 * Enrolling is an operator's right under esi's default policy (`baremetal:node:create`:
 * admin), as in Ironic; this server runs with an operator policy file that lets an owner enrol
 * and delete nodes owned by its own project (Ironic 2023.2 has the same idea as
 * `baremetal:node:create:self_owned_node`).
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { startLab, type Lab } from '../../src/lab/index.ts';
import { call, createPersonas, startTestServer, type Personas, type TestServer } from '../helpers/harness.ts';
import { formatLeaseTime } from '../../src/domain/leasing/time.ts';
import { launchBrowser, pageErrors, signIn } from './support.ts';

const V = { 'x-openstack-ironic-api-version': '1.82' };
const SHOTS = fileURLToPath(new URL('../../docs/dashboard/', import.meta.url));
const POLICY = [
  '"baremetal:node:create": "rule:is_admin or (role:owner and project_id:%(node.owner)s)"',
  '"baremetal:node:delete": "rule:is_admin or rule:is_node_owner"',
  '',
].join('\n');

let lab: Lab;
let ts: TestServer;
let p: Personas;
let browser: Browser;
let dir: string;
/** A webhook receiver of o1: the event types it received. */
let receiver: http.Server;
const received: string[] = [];

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-owner-policy-'));
  const policyFile = path.join(dir, 'policy.yaml');
  fs.writeFileSync(policyFile, POLICY);
  lab = await startLab({ nodes: 1, port: 0 });
  ts = await startTestServer({ env: { ESI_POLICY_FILE: policyFile } });
  p = await createPersonas(ts);
  browser = await launchBrowser();
  fs.mkdirSync(SHOTS, { recursive: true });
  receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      received.push(String((JSON.parse(body) as { event_type?: string }).event_type));
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
});
afterAll(async () => {
  receiver?.close();
  await browser?.close();
  await ts?.close();
  await lab?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** Click a link of the main navigation (the token lives in the page: no reloads). */
async function go(page: Page, name: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true }).click();
}

it('owner1 enrols a Redfish node, manages it, offers it, and sees the lessee’s lease on the schedule', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const errors = pageErrors(page);
  await signIn(page, ts.url, 'owner1', 'pw-owner1', 'o1');
  const hook = await call(ts, p.owner, 'POST', '/lease/v1/webhooks', {
    name: 'o1-events',
    url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/esi`,
    secret: 'a-webhook-secret-of-o1-0123456789',
  });
  expect(hook.status, hook.text).toBe(201);

  // Enrol: the form saves the node in enroll and shows the validation of each interface.
  await go(page, 'Enrol');
  await page.getByRole('heading', { name: 'Enrol a node' }).waitFor();
  await page.getByLabel('Name', { exact: true }).fill('R1');
  await page.getByLabel('Driver').selectOption('redfish');
  await page.getByLabel('BMC address').fill(lab.url);
  await page.getByLabel('System ID').fill(`/redfish/v1/Systems/${lab.systems.ids[0]!}`);
  await page.getByLabel('Username').fill('admin');
  await page.getByLabel('Password').fill('password');
  await page.getByLabel('Resource class').fill('baremetal');
  await page.getByLabel('Properties (JSON)').fill('{"cpus": 8, "memory_mb": 32768}');
  await page.getByRole('button', { name: 'Save and validate' }).click();
  const validation = page.getByTestId('validation');
  await validation.waitFor();
  await expect.poll(() => validation.locator('tr[data-interface="power"]').textContent()).toContain('passed');
  expect(await validation.locator('tr[data-interface="management"]').textContent()).toContain('passed');
  const nodes = (await call(ts, p.owner, 'GET', '/baremetal/v1/nodes?fields=uuid,name,owner,provision_state', undefined, V)).body.nodes;
  expect(nodes).toEqual([expect.objectContaining({ name: 'R1', owner: p.owner.projectId, provision_state: 'enroll' })]);
  const uuid = nodes[0].uuid as string;
  await expect.poll(() => page.getByTestId('provision-state').textContent()).toContain('enroll');

  // Manage: the conductor reaches the lab's BMC; the state on the page follows by itself.
  await page.getByRole('button', { name: 'Manage' }).click();
  await expect.poll(() => page.getByTestId('provision-state').textContent(), { timeout: 20_000 }).toContain('manageable');
  await page.getByText('The BMC answered').waitFor();
  await page.screenshot({ path: path.join(SHOTS, 'owner-enrol.png') });

  // A lease policy on R1 and a quota of o1, made through the API, show on My offers.
  const policy = await call(ts, p.owner, 'POST', '/lease/v1/lease_policies', {
    resource_uuid: uuid,
    max_lease_seconds: 7 * 86_400,
    min_gap_seconds: 3_600,
  });
  expect(policy.status, policy.text).toBe(201);
  const quota = await call(ts, p.admin, 'PUT', `/lease/v1/quotas/${p.owner.projectId}`, {
    max_nodes: 4,
    max_node_hours: 500,
    window_hours: 720,
  });
  expect(quota.status, quota.text).toBe(200);

  // My offers: offer R1 for the next two weeks (the form's default window).
  await go(page, 'My offers');
  await page.getByRole('heading', { name: 'My offers' }).waitFor();
  const create = page.getByRole('button', { name: 'Create offer' });
  await expect.poll(() => create.isEnabled()).toBe(true);
  await create.click();
  const offerRow = page.locator('tr[data-my-offer="R1"]');
  await offerRow.waitFor();
  expect(await offerRow.textContent()).toContain('available');
  await expect.poll(() => page.getByRole('region', { name: 'Lease policies' }).textContent()).toContain('7 d');
  await expect.poll(() => page.getByRole('region', { name: 'Quotas' }).textContent()).toContain('0 of 4');
  await page.screenshot({ path: path.join(SHOTS, 'owner-offers.png'), fullPage: false });

  // A policy for all of o1's nodes made through the form (72 h at most), then removed.
  const policyForm = page.getByRole('form', { name: 'Make a lease policy' });
  await policyForm.getByLabel('Longest lease (hours)').fill('72');
  await policyForm.getByRole('button', { name: 'Make policy' }).click();
  const everyNode = page.getByRole('region', { name: 'Lease policies' }).locator('tr', { hasText: 'every node of o1' });
  await everyNode.waitFor();
  expect(await everyNode.textContent()).toContain('3 d');
  const made = (await call(ts, p.owner, 'GET', '/lease/v1/lease_policies')).body.lease_policies;
  expect(made.find((x: any) => x.resource_uuid === null)).toMatchObject({ max_lease_seconds: 72 * 3600, project_id: p.owner.projectId });
  await everyNode.getByRole('button', { name: 'Remove the policy of every node' }).click();
  await everyNode.waitFor({ state: 'detached' });

  // A second node of o1 (enrolled by the admin) with an offer and a lease to come, for the chart.
  const r2 = await call(ts, p.admin, 'POST', '/baremetal/v1/nodes', { name: 'R2', driver: 'fake-hardware', owner: p.owner.projectId }, V);
  expect(r2.status, r2.text).toBe(201);
  const r2Offer = await call(ts, p.owner, 'POST', '/lease/v1/offers', {
    resource_uuid: r2.body.uuid,
    start_time: formatLeaseTime(Date.now()),
    end_time: formatLeaseTime(Date.now() + 10 * 86_400_000),
  });
  expect(r2Offer.status, r2Offer.text).toBe(201);
  const r2Lease = await call(ts, p.lessee, 'POST', `/lease/v1/offers/${r2Offer.body.uuid}/claim`, {
    start_time: formatLeaseTime(Date.now() + 4 * 86_400_000),
    end_time: formatLeaseTime(Date.now() + 8 * 86_400_000),
  });
  expect(r2Lease.status, r2Lease.text).toBe(201);

  // Schedule: R1's row has the offer bar; no lease yet.
  await go(page, 'Schedule');
  const row = page.locator('[data-gantt-row="R1"]');
  await row.locator('[data-bar="offer"]').waitFor();
  expect(await row.locator('.gantt-bar.lease').count()).toBe(0);
  await page.locator('[data-gantt-row="R2"] .gantt-bar.lease').waitFor();

  // The lessee claims the offer through the API: the lease bar appears, labelled l1.
  const offer = (await call(ts, p.owner, 'GET', `/lease/v1/offers?resource_uuid=${uuid}`)).body.offers[0];
  const claim = await call(ts, p.lessee, 'POST', `/lease/v1/offers/${offer.uuid}/claim`, {
    start_time: formatLeaseTime(Date.now() + 60_000),
    end_time: formatLeaseTime(Date.now() + 3 * 86_400_000),
  });
  expect(claim.status, claim.text).toBe(201);
  const leaseBar = row.locator('.gantt-bar.lease');
  await leaseBar.waitFor({ timeout: 10_000 });
  expect(await leaseBar.textContent()).toContain('l1');
  expect(await leaseBar.getAttribute('title')).toMatch(/UTC\).*→.*UTC\)/);
  await leaseBar.click();
  await expect.poll(() => page.getByRole('region', { name: 'Chosen bar' }).textContent()).toContain('Lease by l1');
  // Below the chart, my nodes with their state and next lease.
  await expect.poll(() => page.locator('tr[data-my-node="R1"]').textContent()).toContain('next: l1');
  expect(await page.locator('tr[data-my-node="R1"]').textContent()).toContain('manageable');
  await page.screenshot({ path: path.join(SHOTS, 'owner-schedule.png') });

  // Events: the offer's creation and the lease's are listed.
  await go(page, 'Events');
  const events = page.getByTestId('events');
  await expect.poll(() => events.textContent()).toContain('offer.create');
  await expect.poll(() => events.textContent()).toContain('lease.create');
  // The webhook's deliveries: each event posted to the receiver, delivered.
  await expect.poll(() => received.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
  await page.getByRole('button', { name: 'Deliveries' }).click();
  const deliveries = page.getByTestId('deliveries');
  await expect.poll(() => deliveries.textContent()).toContain('esi_leap.offer.create');
  expect(await deliveries.textContent()).toContain('delivered');
  await page.screenshot({ path: path.join(SHOTS, 'owner-events.png') });

  // The node page carries the lifecycle actions for the owner.
  await go(page, 'Nodes');
  await page.locator('tr[data-node="R1"]').getByRole('link', { name: 'R1' }).click();
  await page.getByRole('region', { name: 'Lifecycle' }).waitFor();
  expect(await page.getByTestId('provision-state').textContent()).toContain('manageable');
  await expect.poll(() => page.getByRole('button', { name: 'Provide' }).isEnabled()).toBe(true);
  await page.screenshot({ path: path.join(SHOTS, 'owner-node.png') });

  // On a phone's width the schedule scrolls inside its frame, not the page.
  await page.setViewportSize({ width: 390, height: 844 });
  await go(page, 'Schedule');
  await row.waitFor();
  expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);

  expect(errors).toEqual([]);
  await context.close();
});

it('a bad BMC address is refused beside its field in the API’s words, and the node can be deleted', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const errors = pageErrors(page);
  await signIn(page, ts.url, 'owner1', 'pw-owner1', 'o1');
  await go(page, 'Enrol');
  await page.getByLabel('Name', { exact: true }).fill('bad1');
  await page.getByLabel('BMC address').fill('ftp://10.0.0.1');
  await page.getByLabel('Username').fill('admin');
  await page.getByLabel('Password').fill('password');
  await page.getByRole('button', { name: 'Save and validate' }).click();

  const address = page.getByLabel('BMC address');
  await expect.poll(() => address.getAttribute('aria-invalid')).toBe('true');
  const note = page.locator('#enrol-address-error');
  expect(await note.textContent()).toBe('redfish_address must use http or https, not ftp');
  expect(await address.getAttribute('aria-describedby')).toContain('enrol-address-error');
  expect(await page.getByTestId('validation').locator('tr[data-interface="power"]').textContent()).toContain('failed');
  await page.screenshot({ path: path.join(SHOTS, 'owner-enrol-bad-address.png') });

  // Fixed in place: the same node is patched and validated again. The address is well-formed
  // now but nothing answers there: Manage fails, and the conductor's reason shows beside it.
  await address.fill('http://127.0.0.1:9');
  await page.getByRole('button', { name: 'Save changes and validate' }).click();
  await expect.poll(() => address.getAttribute('aria-invalid')).toBe('false');
  await expect.poll(() => page.getByTestId('validation').locator('tr[data-interface="power"]').textContent()).toContain('passed');
  await page.getByRole('button', { name: 'Manage' }).click();
  await expect.poll(() => note.textContent(), { timeout: 30_000 }).toContain('while verifying it');
  expect(await page.getByTestId('provision-state').textContent()).toContain('enroll');
  await page.screenshot({ path: path.join(SHOTS, 'owner-enrol-bmc-unreachable.png') });
  await page.getByRole('button', { name: 'Delete this node' }).click();
  await page.getByRole('heading', { name: 'Nodes' }).waitFor();
  const left = (await call(ts, p.owner, 'GET', '/baremetal/v1/nodes?fields=name', undefined, V)).body.nodes.map(
    (n: { name: string }) => n.name,
  );
  expect(left).not.toContain('bad1');

  expect(errors).toEqual([]);
  await context.close();
});

it('a project the policy does not let enrol is told so in words', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const errors = pageErrors(page);
  await signIn(page, ts.url, 'lessee1', 'pw-lessee1', 'l1');
  await go(page, 'Enrol');
  await page.getByLabel('Name', { exact: true }).fill('not-mine');
  await page.getByLabel('BMC address').fill('https://bmc.example.com');
  await page.getByRole('button', { name: 'Save and validate' }).click();
  const note = page.locator('#enrol-error');
  await expect.poll(() => note.textContent()).toContain('baremetal:node:create');
  expect(await note.textContent()).toContain('your project may not enrol nodes here');
  expect(await page.getByTestId('validation').count()).toBe(0);
  const nodes = await call(ts, p.admin, 'GET', '/baremetal/v1/nodes?fields=name', undefined, V);
  expect(nodes.body.nodes.map((n: { name: string }) => n.name)).not.toContain('not-mine');
  expect(errors).toEqual([]);
  await context.close();
});
