/**
 * Interop: the real OpenStack Ironic 21.4 conductor (Debian's ironic-api and ironic-conductor)
 * drives esi's deploy agent, proving that the agent speaks ironic-python-agent's protocol as
 * Ironic itself expects it — lookup with the token, heartbeats, command names and results as
 * Ironic polls them — and that esi's lab is a BMC Ironic's redfish driver can use.
 *
 * Ironic manages a node of esi's lab (hardware type `redfish`, boot `pxe`, deploy `direct`);
 * when Ironic sets the lab system to boot from Pxe and powers it on, the lab starts `esi agent`
 * pointed at Ironic's API. Ironic then cleans the node through the agent
 * (`erase_devices_metadata`), deploys an image from this test's HTTP server with a JSON config
 * drive (which Ironic turns into an ISO), has the agent power the machine off, boots it from
 * disk — the lab's console shows the OS and the config drive — and undeploys it (cleaning again).
 * These are steps of one node's life, each needing the previous one's state: one test.
 *
 * Needs ironic-api and ironic-conductor (`.ci/run` installs them; a failure when missing, see
 * test/helpers/tools.ts).
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startIronic, type IronicPeer } from '../../bench/peers/ironic.ts';
import { inspectDisk } from '../../src/lab/disk-report.ts';
import { startLab, type Lab } from '../../src/lab/index.ts';
import { osImage } from '../helpers/os-image.ts';
import { describeNeeding, TOOLS } from '../helpers/tools.ts';
import { waitFor } from '../helpers/wait-for.ts';

const CONF = path.join(path.dirname(fileURLToPath(import.meta.url)), 'ironic-agent.conf.in');
const H = { 'x-openstack-ironic-api-version': '1.78', 'content-type': 'application/json' };
const LONG = 240_000;

/** Fails, naming the Debian packages, when one is missing (ESI_TEST_ALLOW_MISSING_TOOLS=1 skips instead). */
const NEEDS = [TOOLS.ironicApi, TOOLS.ironicConductor, TOOLS.ironicDbsync];

describeNeeding(NEEDS, 'the real Ironic 21.4 drives esi agent on esi lab', () => {
  let ironic: IronicPeer;
  let lab: Lab;
  let files: http.Server;
  let filesUrl: string;
  let dir: string;
  let node: string;
  const image = osImage('ironic-os', 8);

  async function api(method: string, p: string, body?: unknown): Promise<any> {
    const res = await fetch(`${ironic.url}/v1${p}`, { method, headers: H, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
    const text = await res.text();
    if (res.status >= 400) throw new Error(`${method} ${p}: HTTP ${res.status} ${text.slice(0, 400)}`);
    return text ? JSON.parse(text) : null;
  }

  async function waitState(want: string, timeoutMs = 150_000): Promise<any> {
    return waitFor(
      () => api('GET', `/nodes/${node}`),
      (n) => {
        if (/ failed$|^error$/.test(n.provision_state)) throw new Error(`node ${n.provision_state}: ${n.last_error}`);
        return n.provision_state === want && n.target_provision_state === null;
      },
      {
        timeoutMs,
        intervalMs: 500,
        what: `node ${want}`,
        show: (n) => ({ provision_state: n.provision_state, target_provision_state: n.target_provision_state }),
      },
    );
  }

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-ironic-agent-'));
    files = http.createServer((req, res) => {
      const body =
        req.url === '/os.raw'
          ? image
          : req.url === '/kernel' || req.url === '/ramdisk'
            ? Buffer.from('placeholder: the lab boots esi agent\n')
            : null;
      if (body === null) return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(body.length) }).end(body);
    });
    await new Promise<void>((r) => files.listen(0, '127.0.0.1', r));
    filesUrl = `http://127.0.0.1:${(files.address() as { port: number }).port}`;
    ironic = await startIronic(() => {}, { confTemplate: CONF, driver: 'redfish' });
    lab = await startLab({
      nodes: 1,
      port: 0,
      hardware: { diskGiB: 1 },
      agents: { apiUrl: ironic.url, dataDir: dir, heartbeatIntervalS: 1 },
    });
    const n = await api('POST', '/nodes', {
      name: 'lab-0',
      driver: 'redfish',
      boot_interface: 'pxe',
      deploy_interface: 'direct',
      driver_info: {
        redfish_address: lab.url,
        redfish_system_id: '/redfish/v1/Systems/node-0',
        redfish_username: 'admin',
        redfish_password: 'password',
        deploy_kernel: `${filesUrl}/kernel`,
        deploy_ramdisk: `${filesUrl}/ramdisk`,
      },
      properties: { local_gb: 1, cpus: 2, memory_mb: 4096, cpu_arch: 'x86_64' },
      instance_info: {
        image_source: `${filesUrl}/os.raw`,
        image_os_hash_algo: 'sha256',
        image_os_hash_value: createHash('sha256').update(image).digest('hex'),
        image_disk_format: 'raw',
      },
    });
    node = n.uuid;
    await api('POST', '/ports', { node_uuid: node, address: lab.systems.get('node-0').mac });
  }, LONG);

  afterAll(async () => {
    await lab?.close();
    await ironic?.stop();
    await new Promise((r) => files?.close(r));
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  // One node's life in steps, each needing the previous one's state (Ironic refuses to deploy
  // a node in `enroll`, and undeploying needs a deployed node): one test.
  it(
    "one node's life: manage and provide (Ironic cleans it through esi agent), deploy with a config drive (the agent writes the image and powers off, Ironic boots the disk), undeploy (cleaned again)",
    async () => {
      // step: manage, then provide: Ironic cleans the node through esi agent.
      await api('PUT', `/nodes/${node}/states/provision`, { target: 'manage' });
      await waitState('manageable');
      // Something on the disk for cleaning to remove.
      fs.mkdirSync(path.dirname(lab.agents!.diskPath('node-0')), { recursive: true });
      fs.writeFileSync(lab.agents!.diskPath('node-0'), image);
      fs.truncateSync(lab.agents!.diskPath('node-0'), 1024 ** 3);
      await api('PUT', `/nodes/${node}/states/provision`, { target: 'provide' });
      const provided = await waitState('available');
      expect(provided.power_state).toBe('power off');
      expect((await inspectDisk(lab.agents!.diskPath('node-0'))).blank).toBe(true);
      await expect
        .poll(() => fs.readFileSync(lab.agents!.consoleLogPath('node-0'), 'utf8'), { timeout: 5000 })
        .toMatch(/esi-agent: looked up as node[\s\S]*command clean\.execute_clean_step erase_devices_metadata succeeded/);

      // step: deploy with a config drive: the agent writes the image and powers off, Ironic boots the disk.
      await api('PUT', `/nodes/${node}/states/provision`, { target: 'active', configdrive: { meta_data: { hostname: 'from-ironic' } } });
      const deployed = await waitState('active');
      expect(deployed.power_state).toBe('power on');
      const report = await inspectDisk(lab.agents!.diskPath('node-0'));
      expect(report.filesystems).toContainEqual({ partition: 1, type: 'ext2/3/4', label: 'ironic-os' });
      expect(report.metaData).toMatchObject({ hostname: 'from-ironic' });
      await expect
        .poll(() => fs.readFileSync(lab.agents!.consoleLogPath('node-0'), 'utf8'), { timeout: 5000 })
        .toMatch(/command deploy\.execute_deploy_step write_image succeeded[\s\S]*command standby\.power_off succeeded/);
      await expect
        .poll(() => fs.readFileSync(lab.agents!.consoleLogPath('node-0'), 'utf8'), { timeout: 10_000 })
        .toMatch(/file system: ext2\/3\/4 label "ironic-os"/);
      expect(lab.systems.get('node-0').lastBootOverride).not.toBe('Pxe');

      // step: undeploy: Ironic tears the instance down and cleans the disk through esi agent.
      await api('PUT', `/nodes/${node}/states/provision`, { target: 'deleted' });
      await waitState('available');
      expect((await inspectDisk(lab.agents!.diskPath('node-0'))).blank).toBe(true);
    },
    3 * LONG,
  );
});
