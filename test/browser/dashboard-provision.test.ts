/**
 * Provisioning in a real browser (issue 20): the lessee of node B (a lab system whose "ramdisk"
 * is esi's deploy agent, writing to a real disk file) picks its own image, pastes an SSH key and
 * user data, provisions, and watches the progress bar follow the deploy live until B is active;
 * captures its disk into a new private image; then unprovisions and watches the cleaning until B is available again. The disk is checked
 * to hold the image, as the CLI's provisioning test does.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { osImage } from '../helpers/os-image.ts';
import { waitNode, type ConductorEnv } from '../api/conductor/support.ts';
import { agentNode, cableToFakeSwitch, startDeployEnv, uploadImage } from '../api/deploy/support.ts';
import { launchBrowser, pageErrors, SCREENSHOTS, signIn } from './support.ts';
import { call } from '../helpers/harness.ts';
import { waitFor } from '../helpers/wait-for.ts';

const LONG = 120_000;
const KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDvC3hT0l2fJ5kq3n7ZlVxq8YVw3pX6m8A0bq4b8wD1u lessee@laptop';
let env: ConductorEnv;
let browser: Browser;
let uuid: string;

beforeAll(async () => {
  env = await startDeployEnv(1);
  ({
    node: { uuid },
  } = await agentNode(env, 'node-0', { name: 'B' }));
  await waitNode(env, uuid, (n) => n.provision_state === 'available' && n.reservation === null, LONG);
  await cableToFakeSwitch(env, uuid);
  await uploadImage(env, osImage('lessee-os', 8, 'qcow2'), 'my-os', { as: env.p.lessee, diskFormat: 'qcow2' });
  browser = await launchBrowser();
}, LONG);
afterAll(async () => {
  await browser?.close();
  await env?.close();
});

it('the lessee provisions B with a progress bar that follows the deploy, then unprovisions it', { timeout: 240_000 }, async () => {
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  const errors = pageErrors(page);
  await signIn(page, env.ts.url, 'lessee1', 'pw-lessee1', 'l1');
  await page.locator('tr[data-node="B"]').getByRole('link', { name: 'B' }).click();

  await page.getByLabel('Image').selectOption({ label: 'my-os' });
  await page.getByLabel('SSH public key').fill(KEY);
  await page.getByLabel('User data (cloud-init)').fill('#cloud-config\npackages: [htop]\n');
  await page.getByRole('button', { name: 'Provision' }).click();

  // The bar appears, moves, and the page ends on an active node without a reload.
  const bar = page.getByTestId('provision-progress');
  await bar.waitFor({ timeout: 30_000 });
  await page.screenshot({ path: `${SCREENSHOTS}lessee-provision.png` });
  const seen = new Set<string>();
  const started = Date.now();
  while (Date.now() - started < LONG) {
    if (await page.getByRole('button', { name: 'Unprovision' }).isVisible()) break;
    const label = await page
      .locator('.progress-block label')
      .textContent()
      .catch(() => null);
    if (label) seen.add(label.replace(/\(.*\)/, '').trim());
    await page.waitForTimeout(100);
  }
  expect(await page.getByRole('button', { name: 'Unprovision' }).isVisible(), `phases seen: ${[...seen].join(' | ')}`).toBe(true);
  expect(
    [...seen].some((s) => /booting the deploy agent|waiting for the deploy agent|writing the image|converting/.test(s)),
    [...seen].join(' | '),
  ).toBe(true);
  const node = await waitNode(env, uuid, (n) => n.provision_state === 'active');
  expect(node.instance_info.image_source).toBeTruthy();

  // Capture the disk into a new private image: the capture shows, the image becomes active, and
  // the node runs its instance again.
  // Once in six runs under load the click started nothing and showed no error: most likely the
  // form was drawn again by a live update of the node just after it became active, emptying the
  // name (not proven). Fill again only when the name is gone; any other failure ends the test.
  const nameField = page.getByLabel('Image name');
  for (let attempt = 1; ; attempt++) {
    if ((await nameField.inputValue()) !== 'my-capture') await nameField.fill('my-capture');
    await page.getByRole('button', { name: 'Capture' }).click();
    const started = await page
      .getByText('capture started')
      .waitFor({ timeout: 10_000 })
      .then(() => true)
      .catch(() => false);
    if (started) break;
    if (attempt === 3 || (await nameField.inputValue()) === 'my-capture')
      throw new Error(
        `the capture did not start (attempt ${attempt}); the page: ${(await page.locator('main').textContent())?.slice(0, 2000)}`,
      );
  }
  const images = async (): Promise<any[]> => (await call(env.ts, env.p.lessee, 'GET', '/image/v2/images?name=my-capture')).body.images;
  await waitFor(images, (xs) => xs[0]?.status === 'active', {
    timeoutMs: LONG,
    what: 'the captured image active',
    show: (xs) => xs[0]?.status,
  });
  expect((await images())[0]).toMatchObject({ visibility: 'private', disk_format: 'qcow2', owner: env.p.lessee.projectId });
  await waitNode(env, uuid, (n) => n.provision_state === 'active' && n.target_provision_state === null, LONG);
  await page.getByRole('button', { name: 'Unprovision' }).waitFor({ timeout: LONG });

  // Unprovision: the cleaning shows, and the node comes back available (the provision form again).
  await page.getByRole('button', { name: 'Unprovision' }).click();
  await page.getByRole('heading', { name: 'Provision' }).waitFor({ timeout: LONG });
  await waitNode(env, uuid, (n) => n.provision_state === 'available');
  expect(errors).toEqual([]);
});
