/**
 * Benchmark `ramdisk-boot`: esi's deploy ramdisk (src/ramdisk/, docs/ramdisk.md) booted in QEMU
 * (KVM when it works, else TCG; `ESI_BENCH_QEMU_ACCEL=kvm|tcg` forces one) with UEFI (OVMF) and
 * legacy BIOS (SeaBIOS), 3 boots each (`--quick`: 1), a 4 GiB qcow2 disk and a virtio NIC.
 *
 * Reported: the ramdisk's sizes and how long `buildRamdisk` took (a cache hit when it was built
 * before), the time to write a per-node ISO (`buildNodeIso`), and per boot the milestones from
 * power-on (QEMU started): the kernel's first console line, /init's first line, the agent's
 * first line (all read from the serial console, polled every 50 ms), the agent's first lookup
 * and first heartbeat at a minimal stand-in of the baremetal API on 127.0.0.1. No peer: an
 * ironic-python-agent ramdisk is not available offline.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { cacheRoot } from '../src/osimage/cache.ts';
import { buildNodeIso, buildRamdisk, qemuAccel, startVm } from '../src/ramdisk/index.ts';
import { onCleanup } from './lib/cleanup.ts';
import type { Benchmark, BenchOptions } from './lib/options.ts';
import { busyWarning, formatBytes, formatMs, printTable, writeResults } from './lib/report.ts';
import { summarize } from './lib/stats.ts';

const NODE_UUID = '0d6c5b4a-3928-4716-a5b4-c3d2e1f0a9b8';
const MILESTONES = ['kernel', 'init', 'agent', 'lookup', 'heartbeat'] as const;
type Milestone = (typeof MILESTONES)[number];

/** A minimal baremetal API: records when the first lookup and heartbeat arrive (performance.now()). */
async function stubApi(): Promise<{ port: number; firstAt: Partial<Record<'lookup' | 'heartbeat', number>>; close(): Promise<void> }> {
  const firstAt: Partial<Record<'lookup' | 'heartbeat', number>> = {};
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname === '/baremetal/') return res.end(JSON.stringify({ default_version: { id: 'v1', version: '1.82' } }));
      if (url.pathname === '/baremetal/v1/lookup') {
        firstAt.lookup ??= performance.now();
        return res.end(
          JSON.stringify({ node: { uuid: NODE_UUID, properties: {} }, config: { agent_token: 'bench-token', heartbeat_timeout: 30 } }),
        );
      }
      if (url.pathname === `/baremetal/v1/heartbeat/${NODE_UUID}`) {
        firstAt.heartbeat ??= performance.now();
        return res.writeHead(202).end();
      }
      return res.writeHead(404).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    firstAt,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** One boot: milliseconds from power-on to each milestone. */
async function boot(
  ramdisk: Awaited<ReturnType<typeof buildRamdisk>>,
  firmware: 'uefi' | 'bios',
  accel: 'kvm' | 'tcg',
  dir: string,
): Promise<{ isoMs: number; at: Record<Milestone, number> }> {
  const api = await stubApi();
  const iso = path.join(dir, `${firmware}.iso`);
  const disk = path.join(dir, `${firmware}.qcow2`);
  const isoStart = performance.now();
  await buildNodeIso(ramdisk, { kernelParams: `ipa-api-url=http://10.0.2.2:${api.port}/baremetal`, out: iso });
  const isoMs = performance.now() - isoStart;
  execFileSync('qemu-img', ['create', '-q', '-f', 'qcow2', disk, '4G']);
  const vm = startVm({ iso, firmware, accel, disks: [disk], macs: ['52:54:00:be:00:01'], dir });
  const releaseVm = onCleanup(`${firmware} virtual machine`, () => vm.kill());
  const seen: Partial<Record<Milestone, number>> = {};
  const markers: Array<[Milestone, string]> = [
    ['kernel', 'Linux version'],
    ['init', 'esi-init: '],
    ['agent', 'esi-agent: '],
  ];
  try {
    const deadline = performance.now() + 900_000;
    while (api.firstAt.heartbeat === undefined) {
      if (performance.now() > deadline) throw new Error(`${firmware}: no heartbeat within 15 minutes:\n${vm.serial().slice(-2000)}`);
      const serial = vm.serial();
      for (const [m, text] of markers) if (seen[m] === undefined && serial.includes(text)) seen[m] = performance.now();
      await new Promise((r) => setTimeout(r, 50));
    }
    const at = {} as Record<Milestone, number>;
    for (const m of MILESTONES) {
      const t = m === 'lookup' || m === 'heartbeat' ? api.firstAt[m] : seen[m];
      at[m] = t === undefined ? NaN : t - vm.startedAt;
    }
    return { isoMs, at };
  } finally {
    await releaseVm();
    await api.close();
    fs.rmSync(disk, { force: true });
    fs.rmSync(iso, { force: true });
  }
}

/** The `ramdisk-boot` benchmark. */
export const ramdiskBootBenchmark: Benchmark = {
  name: 'ramdisk-boot',
  description:
    "esi's deploy ramdisk in QEMU, UEFI and BIOS: build and per-node ISO time, power-on → kernel, /init, agent, lookup, heartbeat",
  async run(options: BenchOptions): Promise<void> {
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-bench-ramdisk-'));
    const release = onCleanup('ramdisk-boot files', async () => fs.rmSync(work, { recursive: true, force: true }));
    try {
      const started = performance.now();
      const ramdisk = await buildRamdisk({ cacheDir: cacheRoot(process.env), log: options.log });
      const buildMs = performance.now() - started;
      const accel = await qemuAccel(process.env.ESI_BENCH_QEMU_ACCEL);
      const boots = options.quick ? 1 : 3;
      const results: Record<string, Array<{ isoMs: number; at: Record<Milestone, number> }>> = { uefi: [], bios: [] };
      for (const firmware of ['uefi', 'bios'] as const) {
        for (let i = 0; i < boots; i++) {
          options.log(`ramdisk-boot: ${firmware} boot ${i + 1} of ${boots} (${accel})`);
          results[firmware]!.push(await boot(ramdisk, firmware, accel, work));
        }
      }
      printTable(
        `ramdisk ${ramdisk.key.slice(0, 12)} (${ramdisk.built ? 'built' : 'cached'} in ${formatMs(buildMs)})`,
        ['kernel', 'initramfs', 'ISO'],
        [[formatBytes(ramdisk.sizes.kernel), formatBytes(ramdisk.sizes.initramfs), formatBytes(ramdisk.sizes.iso)]],
      );
      const rows: Array<Array<string | number>> = [];
      for (const [firmware, runs] of Object.entries(results)) {
        rows.push([
          `${firmware} (${accel})`,
          formatMs(summarize(runs.map((r) => r.isoMs)).medianMs),
          ...MILESTONES.map((m) => formatMs(summarize(runs.map((r) => r.at[m])).medianMs)),
        ]);
      }
      printTable(`power-on → milestone, median of ${boots}`, ['boot', 'node ISO', ...MILESTONES], rows);
      const warning = busyWarning('during the boots');
      if (warning !== null) process.stdout.write(`warning: ${warning}\n`);
      const file = writeResults('ramdisk-boot', {
        accel,
        boots,
        ramdisk: { key: ramdisk.key, sizes: ramdisk.sizes, built: ramdisk.built, buildMs },
        results,
      });
      options.log(`results: ${file}`);
    } finally {
      await release();
    }
  },
};
