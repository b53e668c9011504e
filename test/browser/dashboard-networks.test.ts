/**
 * Networks and trunks in a real browser (issue 20): the lessee of a node whose NIC is cabled to
 * a switch creates a network with a subnet and a trunk (a native network and a tagged one) on
 * the Networks page, attaches the trunk to the node's NIC on the node's page — the NIC then
 * carries both networks — and detaches it again. Another project
 * sees none of it.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { call } from '../helpers/harness.ts';
import { bm, startConductorEnv, type ConductorEnv } from '../api/conductor/support.ts';
import { cableToFakeSwitch } from '../api/deploy/support.ts';
import { launchBrowser, pageErrors, SCREENSHOTS, signIn } from './support.ts';

let env: ConductorEnv;
let browser: Browser;
let uuid: string;

beforeAll(async () => {
  env = await startConductorEnv(1);
  const node = await bm(env.ts, env.p.admin, 'POST', '/v1/nodes', {
    driver: 'fake-hardware',
    name: 'N',
    owner: env.p.owner.projectId,
    lessee: env.p.lessee.projectId,
  });
  expect(node.status, node.text).toBe(201);
  uuid = node.body.uuid;
  const port = await bm(env.ts, env.p.admin, 'POST', '/v1/ports', { node_uuid: uuid, address: '52:54:00:aa:bb:01' });
  expect(port.status, port.text).toBe(201);
  await cableToFakeSwitch(env, uuid);
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await env?.close();
});

it('the lessee creates a network and a trunk, attaches the trunk to its node and detaches it', async () => {
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  const errors = pageErrors(page);
  await signIn(page, env.ts.url, 'lessee1', 'pw-lessee1', 'l1');

  await page.getByRole('link', { name: 'Networks' }).click();
  await page.getByLabel('Name', { exact: true }).fill('web-net');
  await page.getByLabel('Subnet (CIDR, optional)').fill('10.9.0.0/24');
  await page.getByRole('button', { name: 'Create network' }).click();
  await page.locator('tr[data-network="web-net"]').waitFor();

  await page.getByLabel('Trunk name').fill('t1');
  await page.getByLabel('Native network').selectOption({ label: 'lnet' });
  await page.getByRole('group', { name: 'Tagged networks' }).getByLabel('web-net').check();
  await page.getByRole('button', { name: 'Create trunk' }).click();
  const trunkRow = page.locator('tr[data-trunk="t1"]');
  await trunkRow.waitFor();
  expect(await trunkRow.textContent()).toMatch(/lnet[\s\S]*web-net/);
  await page.screenshot({ path: `${SCREENSHOTS}lessee-networks.png` });

  // Attach the trunk to the node's NIC: it carries both networks.
  await page.getByRole('link', { name: 'Nodes' }).click();
  await page.locator('tr[data-node="N"]').getByRole('link', { name: 'N' }).click();
  await page.getByLabel('Attach a network or a trunk').selectOption({ label: 't1' });
  await page.getByRole('button', { name: 'Attach' }).click();
  const nic = page.locator('section[aria-labelledby="node-networks-heading"] tbody tr').first();
  await expect.poll(() => nic.textContent(), { timeout: 10_000 }).toMatch(/lnet.*web-net/);
  const rows = (await call(env.ts, env.p.lessee, 'GET', `/network/v2.0/esi/node-networks?node=${uuid}`)).body.node_networks;
  expect(rows[0].networks.map((n: any) => n.name).sort()).toEqual(['lnet', 'web-net']);

  // Another project sees neither the network nor the trunk.
  const others = (await call(env.ts, env.p.other, 'GET', '/network/v2.0/networks')).body.networks.map((n: any) => n.name);
  expect(others).not.toContain('web-net');
  expect((await call(env.ts, env.p.other, 'GET', '/network/v2.0/esi/trunks')).body.trunks).toEqual([]);

  // Detach: the NIC carries nothing again.
  await nic.getByRole('button', { name: 'Detach' }).click();
  await expect.poll(() => nic.textContent(), { timeout: 10_000 }).not.toMatch(/lnet/);
  expect(errors).toEqual([]);
});
