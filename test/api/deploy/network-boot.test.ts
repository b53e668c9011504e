/**
 * Network boot scripts (`/boot/boot.ipxe`, `/boot/node.ipxe?mac=`): public, as firmware has no
 * credentials; only a NIC of a node whose deploy agent is to boot from the network gets the
 * agent's kernel and ramdisk, every other MAC gets `exit` (the firmware's next device), and no
 * script carries a secret.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bm, enrollRedfish, provision, startConductorEnv, waitNode, type ConductorEnv } from '../conductor/support.ts';

let env: ConductorEnv;
let node: { uuid: string };
let mac: string;

/** GET a boot script, anonymously, as iPXE does. */
async function script(path: string): Promise<{ status: number; type: string | null; text: string }> {
  const res = await fetch(`${env.ts.url}${path}`);
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
}

let files: string;

beforeAll(async () => {
  files = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-netboot-'));
  env = await startConductorEnv(3, { env: { ESI_FILE_URL_ALLOWED_PATHS: files } });
  node = await enrollRedfish(
    env,
    'node-0',
    { deploy_interface: 'direct', boot_interface: 'ipxe', name: 'netboot' },
    { deploy_kernel: 'http://10.42.0.1:8080/esi-agent.kernel', deploy_ramdisk: 'http://10.42.0.1:8080/esi-agent.initramfs' },
  );
  mac = env.lab.systems.get('node-0').mac;
  const port = await bm(env.ts, env.p.admin, 'POST', '/v1/ports', { node_uuid: node.uuid, address: mac });
  expect(port.status, port.text).toBe(201);
}, 60_000);

afterAll(async () => {
  await env?.close();
  fs.rmSync(files, { recursive: true, force: true });
});

describe('network boot scripts', () => {
  it('the chain script asks for the script of the booting NIC', async () => {
    const r = await script('/boot/boot.ipxe');
    expect(r.status).toBe(200);
    expect(r.type).toMatch(/^text\/plain/);
    expect(r.text).toMatch(/^#!ipxe\n/);
    expect(r.text).toContain(`chain --autofree ${env.ts.url}/boot/node.ipxe?mac=\${netX/mac}`);
  });

  it('unknown, malformed and idle MACs get exit; a node booting its agent from the network gets the kernel and ramdisk, without secrets', async () => {
    expect((await script('/boot/node.ipxe?mac=52:54:00:00:00:99')).text).toMatch(/not enrolled\nexit 1\n$/);
    expect((await script('/boot/node.ipxe?mac=zz')).text).toMatch(/no valid MAC address/);
    expect((await script('/boot/node.ipxe')).text).toMatch(/no valid MAC address/);
    // Enrolled but idle (enroll): nothing to boot.
    expect((await script(`/boot/node.ipxe?mac=${mac}`)).text).toMatch(/is not booting the deploy agent from the network\nexit 1\n$/);

    // provide: automated cleaning boots the agent from the network; no agent answers in this
    // lab, so the node waits in `clean wait` with its agent phase open.
    await provision(env, node.uuid, 'manage');
    await waitNode(env, node.uuid, (n) => n.provision_state === 'manageable' && n.reservation === null);
    await provision(env, node.uuid, 'provide');
    await waitNode(env, node.uuid, (n) => n.provision_state === 'clean wait' && n.reservation === null);
    expect(env.lab.systems.get('node-0').boot.target).toBe('Pxe');
    const r = await script(`/boot/node.ipxe?mac=${mac.toUpperCase().replace(/:/g, '-')}`);
    expect(r.status).toBe(200);
    expect(r.text).toContain(
      `kernel --name kernel http://10.42.0.1:8080/esi-agent.kernel initrd=ramdisk ipa-api-url=${env.ts.url}/baremetal BOOTIF=01-${mac.replace(/:/g, '-')}`,
    );
    expect(r.text).toContain('initrd --name ramdisk http://10.42.0.1:8080/esi-agent.initramfs');
    expect(r.text).not.toMatch(/password|token|redfish/i);
  });

  it('a file:// kernel and ramdisk are published at signed /boot/media URLs; unsigned, forged or other paths are 404', async () => {
    const dir = files;
    {
      fs.writeFileSync(path.join(dir, 'k'), 'a kernel');
      fs.writeFileSync(path.join(dir, 'r'), 'a ramdisk of some size');
      const n = await enrollRedfish(
        env,
        'node-1',
        { deploy_interface: 'direct', boot_interface: 'ipxe', name: 'netboot-file' },
        { deploy_kernel: `file://${dir}/k`, deploy_ramdisk: `file://${dir}/r` },
      );
      const nic = env.lab.systems.get('node-1').mac;
      expect((await bm(env.ts, env.p.admin, 'POST', '/v1/ports', { node_uuid: n.uuid, address: nic })).status).toBe(201);
      await provision(env, n.uuid, 'manage');
      await waitNode(env, n.uuid, (x) => x.provision_state === 'manageable' && x.reservation === null);
      await provision(env, n.uuid, 'provide');
      await waitNode(env, n.uuid, (x) => x.provision_state === 'clean wait' && x.reservation === null);
      const text = (await script(`/boot/node.ipxe?mac=${nic}`)).text;
      const kernel = /kernel --name kernel (\S+)/.exec(text)?.[1];
      const ramdisk = /initrd --name ramdisk (\S+)/.exec(text)?.[1];
      expect(kernel).toMatch(new RegExp(`^${env.ts.url}/boot/media/${n.uuid}/kernel\\?temp_url_sig=[0-9a-f]+&temp_url_expires=\\d+$`));
      expect(await (await fetch(kernel!)).text()).toBe('a kernel');
      expect(await (await fetch(ramdisk!)).text()).toBe('a ramdisk of some size');
      const u = new URL(kernel!);
      expect((await fetch(`${env.ts.url}/boot/media/${n.uuid}/kernel`)).status).toBe(404);
      expect((await fetch(`${env.ts.url}/boot/media/${n.uuid}/kernel?temp_url_sig=00&temp_url_expires=9999999999`)).status).toBe(404);
      expect((await fetch(`${env.ts.url}/boot/media/${n.uuid}/ramdisk${u.search}`)).status).toBe(404);
      expect((await fetch(`${env.ts.url}/boot/media/${n.uuid}/passwd${u.search}`)).status).toBe(404);
      expect((await fetch(`${env.ts.url}/boot/media/${node.uuid}/kernel${u.search}`)).status).toBe(404);
    }
  });

  it('a file:// kernel outside the allowed directories is never read or served (Ironic file_url_allowed_paths)', async () => {
    const n = await enrollRedfish(
      env,
      'node-2',
      { deploy_interface: 'direct', boot_interface: 'ipxe', name: 'netboot-outside' },
      { deploy_kernel: 'file:///etc/passwd', deploy_ramdisk: `file://${files}/../../etc/shadow` },
    );
    const nic = env.lab.systems.get('node-2').mac;
    expect((await bm(env.ts, env.p.admin, 'POST', '/v1/ports', { node_uuid: n.uuid, address: nic })).status).toBe(201);
    await provision(env, n.uuid, 'manage');
    await waitNode(env, n.uuid, (x) => x.provision_state === 'manageable' && x.reservation === null);
    await provision(env, n.uuid, 'provide');
    await waitNode(env, n.uuid, (x) => x.provision_state === 'clean wait' && x.reservation === null);
    const text = (await script(`/boot/node.ipxe?mac=${nic}`)).text;
    expect(text).toMatch(/outside the directories esi may serve/);
    expect(text).toMatch(/exit 1\n$/);
    expect(text).not.toMatch(/root:/);
  });
});
