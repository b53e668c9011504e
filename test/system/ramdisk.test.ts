/**
 * esi's deploy ramdisk (src/ramdisk/, docs/ramdisk.md) on a real virtual machine: the ramdisk is
 * built (or taken from the cache), a per-node ISO made with `buildNodeIso` whose kernel
 * parameters point `ipa-api-url` and `ipa-inspection-callback-url` at a small recording HTTP
 * server of the test on 127.0.0.1 (the guest reaches it at 10.0.2.2, QEMU's user network), and
 * the ISO booted in QEMU — once with UEFI (OVMF), once with legacy BIOS (SeaBIOS) — with a
 * virtio NIC of a known MAC and an empty 4 GiB qcow2 virtio disk.
 *
 * The recording server stands in for esi's baremetal API in this test only: `GET /baremetal/`
 * and `/baremetal/v1` answer as esi does (src/api/baremetal/routes-root.ts), `GET
 * /v1/lookup` answers a node and an agent token (src/api/baremetal/routes-ramdisk.ts), and
 * `POST /v1/heartbeat/<uuid>` and `POST /v1/continue_inspection` are recorded. Each test checks
 * that the agent started on the serial console, posted the VM's real inventory (CPU count,
 * memory, the 4 GiB /dev/vda, the NIC's MAC, the boot mode), looked itself up by the VM's MAC,
 * and heartbeats with a callback URL on its DHCP address, port 9999; and prints the time from
 * power-on to the first heartbeat (not asserted). Then, through the agent's command API
 * (port 9999 forwarded from 127.0.0.1), the agent works on the real block device /dev/vda:
 * `erase_devices_metadata`, `standby.prepare_image` of an image the recording server serves
 * (qcow2 for UEFI, converted by the ramdisk's qemu-img; raw for BIOS), and `standby.power_off`,
 * after which the machine is off (QEMU ended) and the disk holds the image. KVM is used when
 * it works, else TCG (`ESI_TEST_QEMU_ACCEL=kvm|tcg` forces one).
 */
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cacheRoot } from '../../src/osimage/cache.ts';
import { OVMF_CODE, buildNodeIso, buildRamdisk, qemuAccel, startVm, type Accel, type Ramdisk } from '../../src/ramdisk/index.ts';
import { commandTool, describeNeeding, fileTool, type Tool } from '../helpers/tools.ts';
import { waitFor } from '../helpers/wait-for.ts';

/** A kernel of Debian's linux-image-amd64 in /boot. */
const kernelTool: Tool = {
  what: '/boot/vmlinuz-*',
  pkg: 'linux-image-amd64',
  get present() {
    return fs.readdirSync('/boot').some((f) => f.startsWith('vmlinuz-'));
  },
};

const TOOLS: readonly Tool[] = [
  commandTool('qemu-system-x86_64', 'qemu-system-x86'),
  commandTool('qemu-img', 'qemu-utils'),
  fileTool(OVMF_CODE, 'ovmf'),
  kernelTool,
  fileTool('/bin/busybox', 'busybox-static'),
  commandTool('sfdisk', 'fdisk'),
  commandTool('grub-mkrescue', 'grub-common'),
  fileTool('/usr/lib/grub/i386-pc/boot_hybrid.img', 'grub-pc-bin'),
  fileTool('/usr/lib/grub/x86_64-efi/linux.mod', 'grub-efi-amd64-bin'),
  commandTool('xorriso', 'xorriso'),
  commandTool('mformat', 'mtools'),
  commandTool('zstd', 'zstd'),
];

const NODE_UUID = '7b0a4f6e-3c1d-4e2b-9a8f-5d6c7e8f9a01';
const TOKEN = 'ramdisk-test-agent-token-0123456789abcdef';
const GIB = 1024 ** 3;
const MEMORY_MIB = 1024;
const CPUS = 2;
/**
 * The image the agent writes: 4 MiB of random bytes with an MBR boot signature (0x55AA at byte
 * 510; the agent refuses to leave a disk without one, src/agent/boot-sector.ts), served at
 * `/image.raw` and as qcow2 at `/image.qcow2`.
 */
const IMAGE = randomBytes(4 * 1024 * 1024);
IMAGE[510] = 0x55;
IMAGE[511] = 0xaa;

/** A free TCP port on 127.0.0.1 (closed again; QEMU binds it right after). */
async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as AddressInfo).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

/** Run an agent command and wait for its result (IPA command API, `wait=true`). */
async function command(agentUrl: string, name: string, params: Record<string, unknown>): Promise<Record<string, any>> {
  const res = await fetch(`${agentUrl}/v1/commands/?wait=true&agent_token=${TOKEN}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name, params }),
  });
  expect(res.status, name).toBe(200);
  const result = (await res.json()) as Record<string, any>;
  expect(result, `${name}: ${JSON.stringify(result.command_error)}`).toMatchObject({ command_status: 'SUCCEEDED' });
  return result;
}

/** What the recording server saw. */
interface Recorded {
  readonly lookups: URLSearchParams[];
  readonly heartbeats: Array<{ at: number; body: Record<string, unknown> }>;
  readonly inspections: Array<Record<string, unknown>>;
}

/** The recording stand-in of esi's baremetal API (see the module documentation). */
async function recordingApi(qcow2: Buffer): Promise<{ port: number; seen: Recorded; close(): Promise<void> }> {
  const seen: Recorded = { lookups: [], heartbeats: [], inspections: [] };
  const version = { id: 'v1', links: [], status: 'CURRENT', min_version: '1.1', version: '1.82' };
  const json = (res: http.ServerResponse, status: number, body: unknown) =>
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const body = Buffer.concat(chunks).toString('utf8');
      if (req.method === 'GET' && url.pathname === '/baremetal/')
        return json(res, 200, { name: 'OpenStack Ironic API', description: 'esi', default_version: version, versions: [version] });
      if (req.method === 'GET' && url.pathname === '/baremetal/v1') return json(res, 200, { id: 'v1', links: [], version });
      if (req.method === 'GET' && url.pathname === '/baremetal/v1/lookup') {
        seen.lookups.push(url.searchParams);
        return json(res, 200, {
          node: { uuid: NODE_UUID, properties: {}, instance_info: {}, driver_internal_info: {}, links: [] },
          config: { heartbeat_timeout: 30, agent_token: TOKEN, agent_token_required: true },
        });
      }
      if (req.method === 'POST' && url.pathname === `/baremetal/v1/heartbeat/${NODE_UUID}`) {
        seen.heartbeats.push({ at: performance.now(), body: JSON.parse(body) as Record<string, unknown> });
        return res.writeHead(202).end();
      }
      if (req.method === 'GET' && (url.pathname === '/image.raw' || url.pathname === '/image.qcow2')) {
        const data = url.pathname === '/image.raw' ? IMAGE : qcow2;
        return res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': data.length }).end(data);
      }
      if (req.method === 'POST' && url.pathname === '/baremetal/v1/continue_inspection') {
        seen.inspections.push(JSON.parse(body) as Record<string, unknown>);
        return json(res, 202, { uuid: NODE_UUID });
      }
      return json(res, 404, { error_message: '{"faultstring": "not found"}' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

describeNeeding(TOOLS, 'deploy ramdisk (esi ramdisk build) boots in QEMU and runs the agent', () => {
  let ramdisk: Ramdisk;
  let accel: Accel;
  let dir: string;
  let qcow2: Buffer;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-ramdisk-test-'));
    fs.writeFileSync(path.join(dir, 'image.raw'), IMAGE);
    execFileSync('qemu-img', ['convert', '-q', '-f', 'raw', '-O', 'qcow2', path.join(dir, 'image.raw'), path.join(dir, 'image.qcow2')]);
    qcow2 = fs.readFileSync(path.join(dir, 'image.qcow2'));
    ramdisk = await buildRamdisk({ cacheDir: cacheRoot(process.env), log: (l) => console.log(`[ramdisk] ${l}`) });
    console.log(
      `ramdisk ${ramdisk.key.slice(0, 12)}: kernel ${ramdisk.sizes.kernel} B, initramfs ${ramdisk.sizes.initramfs} B, ISO ${ramdisk.sizes.iso} B, ` +
        (ramdisk.built ? `built in ${ramdisk.buildSeconds?.toFixed(1)} s` : 'from the cache'),
    );
    accel = await qemuAccel(process.env.ESI_TEST_QEMU_ACCEL);
    console.log(`QEMU accelerator: ${accel}`);
  });

  afterAll(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  describe.each([
    { firmware: 'uefi' as const, mac: '52:54:00:e5:20:01', format: 'qcow2' as const },
    { firmware: 'bios' as const, mac: '52:54:00:e5:20:02', format: 'raw' as const },
  ])('$firmware firmware, $format image', ({ firmware, mac, format }) => {
    it('boots, posts its inventory, looks itself up by its MAC, heartbeats from its DHCP address, writes the image to /dev/vda and powers off', async () => {
      const work = fs.mkdtempSync(path.join(dir, `${firmware}-`));
      const api = await recordingApi(qcow2);
      const base = `http://10.0.2.2:${api.port}/baremetal`;
      const iso = path.join(work, 'node.iso');
      const disk = path.join(work, 'disk.qcow2');
      let vm: ReturnType<typeof startVm> | null = null;
      try {
        await buildNodeIso(ramdisk, {
          kernelParams: `ipa-api-url=${base} ipa-inspection-callback-url=${base}/v1/continue_inspection`,
          out: iso,
        });
        execFileSync('qemu-img', ['create', '-q', '-f', 'qcow2', disk, '4G']);
        const agentPort = await freePort();
        vm = startVm({
          iso,
          firmware,
          accel,
          disks: [disk],
          macs: [mac],
          forwards: [{ host: agentPort, guest: 9999 }],
          dir: work,
          memoryMiB: MEMORY_MIB,
          cpus: CPUS,
        });
        const running = vm;
        const first = await waitFor(
          () => api.seen.heartbeats[0],
          (h) => h !== undefined,
          { timeoutMs: 600_000, intervalMs: 500, what: `a heartbeat from the ${firmware} VM`, show: () => running.serial().slice(-4000) },
        );
        const seconds = (first!.at - running.startedAt) / 1000;
        console.log(`${firmware} (${accel}): power-on → first heartbeat ${seconds.toFixed(1)} s`);

        const serial = running.serial();
        expect(serial).toContain('esi-init: starting the deploy agent');
        expect(serial).toMatch(/esi-agent: esi deploy agent \S+ starting; disk \/dev\/vda \(4294967296 bytes\)/);
        expect(serial).not.toContain(TOKEN);

        // Inspection came first, with the machine's own inventory.
        expect(api.seen.inspections).toHaveLength(1);
        const data = api.seen.inspections[0]!;
        const inv = data.inventory as Record<string, any>;
        expect(inv.cpu.count).toBe(CPUS);
        expect(inv.cpu.architecture).toBe('x86_64');
        expect(inv.memory.physical_mb).toBeGreaterThanOrEqual(MEMORY_MIB * 0.9);
        expect(inv.memory.physical_mb).toBeLessThanOrEqual(MEMORY_MIB * 1.1);
        expect(inv.memory.total).toBeGreaterThan(MEMORY_MIB * 0.8 * 1024 * 1024);
        expect(inv.disks).toEqual([expect.objectContaining({ name: '/dev/vda', size: 4 * GIB })]);
        expect((data.root_disk as Record<string, unknown>).name).toBe('/dev/vda');
        expect(inv.boot.current_boot_mode).toBe(firmware);
        expect(inv.system_vendor.manufacturer).toBe('QEMU');
        const nic = (inv.interfaces as Array<Record<string, unknown>>).find((i) => i.mac_address === mac);
        expect(nic).toMatchObject({ has_carrier: true, driver: 'virtio_net' });
        expect(nic!.ipv4_address).toMatch(/^10\.0\.2\.\d+$/);

        // The lookup named the VM's MAC, the heartbeat the DHCP address and port 9999.
        expect(api.seen.lookups.length).toBeGreaterThan(0);
        expect(api.seen.lookups[0]!.get('addresses')?.split(',')).toContain(mac);
        expect(first!.body).toMatchObject({ callback_url: `http://${String(nic!.ipv4_address)}:9999`, agent_token: TOKEN });

        // The agent on the real block device: clean, write an image, power off.
        const agentUrl = `http://127.0.0.1:${agentPort}`;
        const erased = await command(agentUrl, 'clean.execute_clean_step', {
          step: { step: 'erase_devices_metadata', interface: 'deploy', priority: 99 },
          node: {},
          ports: [],
        });
        expect(erased.command_result.clean_result).toEqual({ ranges: 2, bytes: 2 * 1024 * 1024 });
        const sha = createHash('sha256')
          .update(format === 'raw' ? IMAGE : qcow2)
          .digest('hex');
        const written = await command(agentUrl, 'standby.prepare_image', {
          image_info: {
            id: 'ramdisk-test-image',
            urls: [`http://10.0.2.2:${api.port}/image.${format}`],
            disk_format: format,
            os_hash_algo: 'sha256',
            os_hash_value: sha,
          },
          configdrive: null,
        });
        expect(written.command_result).toMatchObject({ bytes_written: IMAGE.length, disk_format: format, os_hash_value: sha });
        await command(agentUrl, 'standby.power_off', {});
        const code = await waitFor(
          () => running.process.exitCode,
          (c) => c !== null,
          { timeoutMs: 120_000, intervalMs: 200, what: `the ${firmware} VM to power off`, show: () => running.serial().slice(-2000) },
        );
        expect(code).toBe(0);
        expect(running.serial()).toContain('esi-init: the agent asked to power off');
        const raw = path.join(work, 'disk.raw');
        execFileSync('qemu-img', ['convert', '-f', 'qcow2', '-O', 'raw', disk, raw]);
        const fd = fs.openSync(raw, 'r');
        const head = Buffer.alloc(IMAGE.length);
        fs.readSync(fd, head, 0, head.length, 0);
        fs.closeSync(fd);
        expect(head.equals(IMAGE)).toBe(true);
      } finally {
        await vm?.kill();
        await api.close();
        fs.rmSync(work, { recursive: true, force: true });
      }
    });
  });
});
