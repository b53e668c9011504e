/**
 * Broken inputs on a real machine (issue 16): a QEMU VM (UEFI) behind the lab's Redfish BMC, on
 * esi's provisioning network, enrolled for `redfish-virtual-media` with esi's deploy ramdisk.
 * Each broken input is reported clearly in `last_error` and leaves nothing half-configured: the
 * node powered off, no provisioning port of the node left (Neutron `device_owner`
 * `baremetal:provisioning`), the BMC's virtual CD empty (read from the lab's Redfish
 * `VirtualMedia` resource), and the tenant's switch port as it was.
 *
 * a. `redfish_deploy_iso` an http URL nothing answers: `provide` fails at once (`clean failed`)
 *    naming the URL; a URL that serves 1 MiB of random bytes: the BMC refuses the medium (not an
 *    ISO 9660 image) and `inspect` fails (`inspect failed`) naming it.
 * b. `redfish_deploy_iso` an ISO 9660 image without a boot record (xorriso, no El Torito): the
 *    BMC takes it, the VM cannot boot it, no agent calls back, and the inspection fails at
 *    `ESI_INSPECT_WAIT_TIMEOUT` saying it timed out waiting for the deploy agent.
 * c. The owner deploys a 4 MiB raw image of random bytes (no boot signature) onto the node with
 *    its VIF attached: the agent writes it, finds no partition table or boot sector on /dev/vda,
 *    fails the write (IPA's FAILED command with an `ImageWriteError`) and zeroes the disk's head;
 *    the deploy ends `deploy failed` with that message, and the VIF's switch port (esi's view
 *    and the bridge's VLANs) is back to what it was before the deploy.
 *
 * One ordered `it`: each case starts from the node the one before left. Figures printed.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { qemuNetworkSupport } from '../../src/lab/qemu/index.ts';
import { call, type Persona } from '../helpers/harness.ts';
import { describeNeeding } from '../helpers/tools.ts';
import { waitFor } from '../helpers/wait-for.ts';
import {
  BM,
  consoleTail,
  enrolVm,
  provisioningSetup,
  REAL_MACHINE_TOOLS,
  startRealMachines,
  type RealMachines,
} from './real-machine-support.ts';

const support = await qemuNetworkSupport();
const MINUTES = 60_000;
const INSPECT_WAIT_S = 60;
const LAB_AUTH = `Basic ${Buffer.from('admin:password').toString('base64')}`;
const UNREACHABLE = 'http://127.0.0.1:9/none.iso';

describeNeeding(
  REAL_MACHINE_TOOLS,
  'broken inputs on a real machine: clear errors, nothing left half-configured',
  () => {
    let env: RealMachines;
    let media: http.Server;
    let mediaUrl: string;

    beforeAll(async () => {
      env = await startRealMachines({
        prefix: 'rfail',
        net: '10.44.0',
        vlan: 3900,
        count: 1,
        memoryMiB: 1536,
        env: {
          ESI_INSPECT_WAIT_TIMEOUT: String(INSPECT_WAIT_S),
          // Cleaning and the deploy boot the real agent here: generous under TCG on a busy host.
          ESI_CLEAN_CALLBACK_TIMEOUT: '300',
          ESI_DEPLOY_CALLBACK_TIMEOUT: '300',
          ESI_CHECK_PROVISION_STATE_INTERVAL: '2',
        },
      });
      await provisioningSetup(env);
      // The media server on the provisioning uplink's address: 1 MiB of random bytes, and an
      // ISO 9660 image without a boot record (a data disc: no El Torito catalogue).
      const root = path.join(env.dir, 'noboot');
      fs.mkdirSync(root);
      fs.writeFileSync(path.join(root, 'README.TXT'), 'a data disc: nothing here boots\n');
      const iso = path.join(env.dir, 'noboot.iso');
      execFileSync('xorriso', ['-as', 'mkisofs', '-quiet', '-V', 'NOBOOT', '-o', iso, root], { stdio: 'ignore' });
      const files = new Map([
        ['/random.iso', randomBytes(1024 * 1024)],
        ['/noboot.iso', fs.readFileSync(iso)],
      ]);
      media = http.createServer((req, res) => {
        const data = files.get(req.url ?? '');
        if (data === undefined) return void res.writeHead(404).end();
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(data.length) }).end(data);
      });
      await new Promise<void>((r) => media.listen(0, `${env.net}.1`, r));
      mediaUrl = `http://${env.net}.1:${(media.address() as AddressInfo).port}`;
    }, 30 * MINUTES);

    afterAll(async () => {
      await new Promise((r) => (media ? media.close(r) : r(undefined)));
      await env?.close();
    });

    it(
      'an unreachable ISO, a medium that is not an ISO, an ISO that does not boot, an image that cannot boot',
      async () => {
        const { ts, p, lab } = env;
        const api = (who: Persona, method: string, url: string, body?: unknown) => call(ts, who, method, url, body, BM);
        const vmId = lab.qemu!.ids[0]!;
        const system = lab.systems.get(vmId);
        const uuid = await enrolVm(env, 0, 'rfail0', { owner: p.owner.projectId });
        const node = async (): Promise<any> => (await api(p.admin, 'GET', `/baremetal/v1/nodes/${uuid}`)).body;
        const settle = (states: string[], what: string, timeoutMs = 15 * MINUTES) =>
          waitFor(node, (n) => states.includes(n.provision_state) && n.reservation === null, {
            timeoutMs,
            intervalMs: 1_000,
            what,
            show: (n) => `${n.provision_state} ${n.last_error ?? ''}\n--- console ---\n${consoleTail(env)}`,
          });
        const provision = async (who: Persona, target: string, extra: Record<string, unknown> = {}) => {
          const r = await api(who, 'PUT', `/baremetal/v1/nodes/${uuid}/states/provision`, { target, ...extra });
          expect(r.status, r.text).toBe(202);
        };
        const patch = async (ops: unknown[]) => {
          const r = await api(p.admin, 'PATCH', `/baremetal/v1/nodes/${uuid}`, ops);
          expect(r.status, r.text).toBe(200);
        };
        const redfish = async (uri: string): Promise<any> => {
          const r = await fetch(`${lab.url}${uri}`, { headers: { authorization: LAB_AUTH } });
          expect(r.status).toBe(200);
          return r.json();
        };
        const seconds = (since: number) => ((Date.now() - since) / 1000).toFixed(1);
        const report = (what: string, since: number, n?: { last_error: string | null }) =>
          void process.stdout.write(`real failures: ${what} in ${seconds(since)} s${n ? `; last_error: ${n.last_error}` : ''}\n`);

        /** The node powered off, no provisioning port, the BMC's CD empty. */
        const nothingLeft = async (what: string) => {
          const n = await node();
          expect(n.power_state, what).toBe('power off');
          expect((await redfish(system.path)).PowerState, what).toBe('Off');
          const ports = await call(ts, p.admin, 'GET', `/network/v2.0/ports?device_owner=baremetal:provisioning&device_id=${uuid}`);
          expect(ports.status).toBe(200);
          expect(ports.body.ports, what).toEqual([]);
          const cd = await redfish(`/redfish/v1/Managers/bmc-${vmId}/VirtualMedia/Cd`);
          expect({ inserted: cd.Inserted, image: cd.Image }, what).toEqual({ inserted: false, image: null });
          expect(n.driver_internal_info.agent_boot, what).toBeUndefined();
        };

        await provision(p.admin, 'manage');
        await settle(['manageable'], 'manageable', MINUTES);

        // a. An ISO URL nothing answers: cleaning cannot boot the agent.
        await patch([{ op: 'add', path: '/driver_info/redfish_deploy_iso', value: UNREACHABLE }]);
        let t0 = Date.now();
        await provision(p.admin, 'provide');
        const unreachable = await settle(['clean failed', 'available'], 'cleaning with an unreachable ISO', 5 * MINUTES);
        report('a. unreachable ISO → clean failed', t0, unreachable);
        expect(unreachable.provision_state).toBe('clean failed');
        expect(unreachable.last_error).toContain('booting the deploy agent failed');
        expect(unreachable.last_error).toContain(UNREACHABLE);
        expect(unreachable.maintenance).toBe(true);
        await nothingLeft('a. unreachable ISO');
        expect((await api(p.admin, 'DELETE', `/baremetal/v1/nodes/${uuid}/maintenance`)).status).toBe(202);
        await provision(p.admin, 'manage');
        await settle(['manageable'], 'manageable after clean failed', MINUTES);

        // a. A medium that is not an ISO image: the BMC refuses it; the inspection fails.
        await patch([{ op: 'replace', path: '/driver_info/redfish_deploy_iso', value: `${mediaUrl}/random.iso` }]);
        t0 = Date.now();
        await provision(p.admin, 'inspect');
        const notIso = await settle(['inspect failed', 'manageable'], 'inspection with random bytes as ISO', 5 * MINUTES);
        report('a. random bytes as ISO → inspect failed', t0, notIso);
        expect(notIso.provision_state).toBe('inspect failed');
        expect(notIso.last_error).toContain('booting the deploy agent failed');
        expect(notIso.last_error).toContain(`${mediaUrl}/random.iso`);
        await nothingLeft('a. random bytes as ISO');

        // b. An ISO that does not boot: the agent never calls back, the wait times out.
        await patch([{ op: 'replace', path: '/driver_info/redfish_deploy_iso', value: `${mediaUrl}/noboot.iso` }]);
        t0 = Date.now();
        await provision(p.admin, 'inspect');
        await waitFor(node, (n) => n.provision_state === 'inspect wait', { timeoutMs: 2 * MINUTES, what: 'inspect wait' });
        const inserted = await redfish(`/redfish/v1/Managers/bmc-${vmId}/VirtualMedia/Cd`);
        expect(inserted).toMatchObject({ Inserted: true, Image: `${mediaUrl}/noboot.iso` });
        const noCallback = await settle(['inspect failed', 'manageable'], 'the inspection to time out', 5 * MINUTES);
        report(`b. ISO without a boot record → inspect failed after the ${INSPECT_WAIT_S} s wait`, t0, noCallback);
        expect(noCallback.provision_state).toBe('inspect failed');
        expect(noCallback.last_error).toMatch(
          new RegExp(`^Timed out after ${INSPECT_WAIT_S} s in "inspect wait" waiting for the deploy agent of node ${uuid}`),
        );
        expect(Date.now() - t0).toBeGreaterThanOrEqual(INSPECT_WAIT_S * 1000);
        await nothingLeft('b. ISO without a boot record');

        // c. A good ramdisk again; cleaning with the real agent makes the node available.
        await patch([{ op: 'remove', path: '/driver_info/redfish_deploy_iso' }]);
        await provision(p.admin, 'manage');
        await settle(['manageable'], 'manageable after inspect failed', MINUTES);
        const net = await call(ts, p.owner, 'POST', '/network/v2.0/networks', { network: { name: 'rfail-net' } });
        expect(net.status, net.text).toBe(201);
        const vif = await call(ts, p.owner, 'POST', '/network/v2.0/ports', { port: { network_id: net.body.network.id } });
        expect(vif.status, vif.text).toBe(201);
        expect((await api(p.owner, 'POST', `/baremetal/v1/nodes/${uuid}/vifs`, { id: vif.body.port.id })).status).toBe(204);
        t0 = Date.now();
        await provision(p.admin, 'provide');
        const available = await settle(['available', 'clean failed'], 'cleaning');
        expect(available.provision_state, available.last_error).toBe('available');
        report('c. cleaning (the real agent) → available', t0);

        // The VIF's switch port as esi applied it, and the bridge's VLANs of the VM's tap.
        const tap = lab.qemu!.network!.ports.get(vmId)!;
        const switchPort = async (): Promise<any> => {
          const r = await call(ts, p.admin, 'GET', '/network/v2.0/switches/labtor/ports');
          expect(r.status, r.text).toBe(200);
          return (r.body.switch_ports as Array<{ port_id: string }>).find((s) => s.port_id === tap);
        };
        const bridgeView = () => bridgeOf(env, tap);
        const settled = (s: any) => s !== undefined && s.status === 'applied' && JSON.stringify(s.desired) === JSON.stringify(s.applied);
        const before = await waitFor(switchPort, settled, { timeoutMs: MINUTES, what: 'the tenant switch port applied' });
        expect(before.vif).toBe(vif.body.port.id);
        expect(before.desired.mode).toBe('access');
        expect(before.desired.vlan).not.toBe(env.vlan);
        const bridgeBefore = bridgeView();

        // The owner deploys a raw image of random bytes: it has no boot signature.
        const blob = randomBytes(4 * 1024 * 1024);
        blob[510] = 0;
        const img = await call(ts, p.owner, 'POST', '/image/v2/images', {
          name: 'not-bootable',
          disk_format: 'raw',
          container_format: 'bare',
          visibility: 'private',
        });
        expect(img.status, img.text).toBe(201);
        const put = await fetch(`${ts.url}/image/v2/images/${img.body.id}/file`, {
          method: 'PUT',
          headers: { 'x-auth-token': p.owner.token!, 'content-type': 'application/octet-stream' },
          body: blob,
        });
        expect(put.status, await put.text()).toBe(204);
        expect(
          (
            await api(p.owner, 'PATCH', `/baremetal/v1/nodes/${uuid}`, [
              { op: 'add', path: '/instance_info/image_source', value: img.body.id },
            ])
          ).status,
        ).toBe(200);
        t0 = Date.now();
        await provision(p.owner, 'active', { configdrive: { meta_data: { hostname: 'rfail0' } } });
        const failed = await settle(['deploy failed', 'active'], 'the deploy of an image that cannot boot');
        report('c. image without a boot sector → deploy failed', t0, failed);
        expect(failed.provision_state).toBe('deploy failed');
        expect(failed.last_error).toContain('Deploy step deploy.write_image failed');
        expect(failed.last_error).toContain('ImageWriteError');
        expect(failed.last_error).toContain('the image written to /dev/vda has no partition table or boot sector: it cannot boot');
        expect(consoleTail(env)).toContain('image write failed, zeroed the first MiB of the disk');
        await nothingLeft('c. image without a boot sector');
        const after = await waitFor(switchPort, settled, { timeoutMs: MINUTES, what: 'the tenant switch port applied again' });
        expect({ vif: after.vif, desired: after.desired, applied: after.applied }).toEqual({
          vif: before.vif,
          desired: before.desired,
          applied: before.applied,
        });
        await waitFor(bridgeView, (v) => v === bridgeBefore, { timeoutMs: 30_000, what: 'the bridge VLANs of the tap as before' });
        // Nothing half-written can boot: the disk's first MiB is zeros.
        const head = path.join(env.dir, 'head.raw');
        const disk = lab.qemu!.node(vmId).files.disk;
        execFileSync('qemu-img', ['dd', '-f', 'qcow2', '-O', 'raw', 'bs=1M', 'count=1', `if=${disk}`, `of=${head}`]);
        expect(fs.readFileSync(head).every((b) => b === 0)).toBe(true);
      },
      30 * MINUTES,
    );
  },
  support.ok ? null : support.reason,
);

/** The VLANs (bridge VLAN filtering) or the per-VLAN bridge (otherwise) of the lab's `tap`, as text. */
function bridgeOf(env: RealMachines, tap: string): string {
  const qn = env.lab.qemu!.network!;
  const run = (cmd: string, args: string[]) => execFileSync(cmd, args, { encoding: 'utf8' });
  if (qn.vlanFiltering) return run('bridge', ['-n', qn.netns, '-j', 'vlan', 'show', 'dev', tap]).trim();
  const link = JSON.parse(run('ip', ['-n', qn.netns, '-j', 'link', 'show', 'dev', tap])) as Array<{ master?: string }>;
  return link[0]?.master ?? '';
}
