/**
 * Benchmark `deploy-fleet` (issue 4): N lab nodes (50; `--quick` 8) deployed at once with one raw
 * image (1 GiB; `--quick` 256 MiB) of random bytes, through the real path: esi in-process (API +
 * conductor, SQLite), the lab's Redfish BMCs, one `esi agent` process per node that downloads the
 * image through a temp URL of esi's image service and writes it to the node's disk file, fsyncs,
 * and the node reboots into its disk. `--sizes N` sets the node count. The agent processes run
 * at `nice 19`: they stand in for CPUs of other machines and must not starve the control plane
 * whose overhead is measured (they still share its cores and its disk).
 *
 * Reported:
 * - wall time from the deploy requests to the last node `active`;
 * - aggregate write rate: N × image size ÷ (last write end − first write start), and the same
 *   over the whole wall time, each as a ratio of this machine's sequential write rate measured
 *   in the same run by `dd of=<file> bs=4M conv=fsync` writing as many bytes as the fleet
 *   (N copies of the image in one stream; the rate a disk sustains for 50 GiB can be a
 *   third of what it takes in a 1 GiB burst, which is shown too) (goal ≥ 0.7);
 * - per node, from the timestamps on its serial console (lab and agent lines) and the API:
 *   `boot` (the BMC booted the agent → the agent looked itself up), `transfer` (download start
 *   → image written and verified), and `control plane` = (request → `active`) − boot −
 *   transfer: the time esi itself adds (API, conductor, BMC calls, heartbeats, commands, the
 *   reboot into the disk). Goal: under 1 s per node. `boot` is the lab's stand-in for a
 *   machine's boot of the ramdisk (here: starting a Node process), shown apart.
 *
 * - where the CPU went while deploying (`/proc/stat`: user, nice = the agents, system, …) and
 *   the esi process's own CPU seconds.
 *
 * The lab (Redfish BMCs, agent processes, serial logs) runs in a child process
 * (bench/lib/lab-child.ts), so the esi process holds only esi.
 *
 * Environment: `ESI_CONDUCTOR_WORKERS` is passed to esi when set; `ESI_BENCH_IMAGE_MIB` sets the
 * image size (MiB); `ESI_BENCH_KEEP_CONSOLES=<dir>`
 * copies every node's serial log there (timestamped agent and lab lines) before the files go.
 *
 * Correctness is checked: every node must end `active`, and every disk must start with the
 * image's bytes (SHA-256 of the first 4 MiB). Needs N × (size + 64 MiB) bytes of free disk; fewer
 * nodes are used (with a note) when there is not that much. The nodes skip automated cleaning
 * (`automated_clean` false), which is not what is measured.
 */
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { loadConfig } from '../src/server/config.ts';
import { startServer, type RunningServer } from '../src/server/main.ts';
import { onCleanup } from './lib/cleanup.ts';
import { cpuSnapshot, cpuSplit } from './lib/cpu.ts';
import { startLabProcess, type LabProcess } from './lib/lab-process.ts';
import { adminApi, waitNodes } from './lib/node-api.ts';
import type { Benchmark, BenchOptions } from './lib/options.ts';
import { busyWarning, printTable, writeResults } from './lib/report.ts';
import { summarize, type Summary } from './lib/stats.ts';

/** Goals of the issue. */
export const GOAL_AGGREGATE_RATIO = 0.7;
export const GOAL_OVERHEAD_MS = 1000;

const MIB = 1024 * 1024;

/** Run a command; resolves with its stderr (dd reports there). */
function run(cmd: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(err) : reject(new Error(`${cmd} exited ${code}: ${err.trim()}`))));
  });
}

/** Free bytes of the file system holding `dir`. */
function freeBytes(dir: string): number {
  const s = fs.statfsSync(dir);
  return s.bavail * s.bsize;
}

/** A random file of `bytes`; returns the SHA-256 of its first 4 MiB and its MD5. */
async function makeImage(file: string, bytes: number): Promise<{ head: string }> {
  const block = randomBytes(8 * MIB);
  const out = fs.createWriteStream(file);
  for (let written = 0; written < bytes; written += block.length) {
    if (!out.write(block.subarray(0, Math.min(block.length, bytes - written))))
      await new Promise<void>((r) => out.once('drain', () => r()));
  }
  out.end();
  await new Promise<void>((r) => out.once('close', () => r()));
  return {
    head: createHash('sha256')
      .update(fs.readFileSync(file).subarray(0, 4 * MIB))
      .digest('hex'),
  };
}

/** SHA-256 of the first 4 MiB of a disk file. */
function headOf(file: string): string {
  const fd = fs.openSync(file, 'r');
  try {
    const b = Buffer.alloc(4 * MIB);
    fs.readSync(fd, b, 0, b.length, 0);
    return createHash('sha256').update(b).digest('hex');
  } finally {
    fs.closeSync(fd);
  }
}

/** The epoch ms of the first console line matching `re` (lines start with an ISO time). */
function firstAt(log: string, re: RegExp, after = 0): number | null {
  for (const line of log.split('\n')) {
    if (!re.test(line)) continue;
    const t = Date.parse(line.slice(0, 24));
    if (Number.isFinite(t) && t >= after) return t;
  }
  return null;
}

interface NodeTimes {
  readonly totalMs: number;
  readonly bootMs: number;
  readonly transferMs: number;
  readonly controlMs: number;
  /** The control plane's parts: request → BMC boots the agent; lookup → write starts; written → active. */
  readonly toBootMs: number;
  readonly toWriteMs: number;
  readonly toActiveMs: number;
  readonly writeStart: number;
  readonly writeEnd: number;
}

/** The `deploy-fleet` benchmark. */
export const deployFleetBenchmark: Benchmark = {
  name: 'deploy-fleet',
  description:
    'N lab nodes (50) deployed at once with a 1 GiB raw image through the agent: wall time, aggregate write rate vs dd, control-plane overhead per node',
  async run(options: BenchOptions): Promise<void> {
    const size = process.env.ESI_BENCH_IMAGE_MIB ? Number(process.env.ESI_BENCH_IMAGE_MIB) * MIB : options.quick ? 256 * MIB : 1024 * MIB;
    let count = options.sizes?.[0] ?? (options.quick ? 8 : 50);
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-bench-deploy-'));
    const releaseWork = onCleanup('deploy-fleet files', async () => fs.rmSync(work, { recursive: true, force: true }));
    let note: string | null = null;
    try {
      // The fleet's disks, or the dd of as many bytes before them, plus the image and slack.
      const need = (n: number) => n * (size + 64 * MIB) + 2 * size + 512 * MIB;
      const free = freeBytes(work);
      if (need(count) > free) {
        const fit = Math.max(1, Math.floor((free - 2 * size - 512 * MIB) / (size + 64 * MIB)));
        note = `only ${(free / 1024 ** 3).toFixed(1)} GiB free: ${fit} nodes instead of ${count}`;
        options.log(note);
        count = fit;
      }
      const imageFile = path.join(work, 'image.raw');
      options.log(`writing a ${size / MIB} MiB image`);
      const { head } = await makeImage(imageFile, size);

      // The machine's sequential write rate, durable (fsync) like the agents' writes, for as
      // many bytes as the fleet writes (N × the image, one stream): the disks of shared machines
      // take a short burst several times faster than they sustain, so a 1 GiB dd (shown too)
      // says little about 50 GiB.
      const ddOut = path.join(work, 'dd.out');
      const timeDd = async (copies: number): Promise<number> => {
        const start = performance.now();
        await run('sh', [
          '-c',
          `i=0; while [ $i -lt ${copies} ]; do cat '${imageFile}'; i=$((i+1)); done | dd of='${ddOut}' bs=4M iflag=fullblock conv=fsync`,
        ]);
        const rate = (copies * size) / ((performance.now() - start) / 1000);
        fs.rmSync(ddOut, { force: true });
        return rate;
      };
      options.log('measuring dd (one image)');
      const ddBurst = await timeDd(1);
      options.log(`measuring dd (${count} images in one stream)`);
      const ddRate = await timeDd(count);
      const password = randomBytes(18).toString('base64url');
      const config = loadConfig(
        { port: 0, host: '127.0.0.1', dataDir: path.join(work, 'esi') },
        {
          ESI_ADMIN_PASSWORD: password,
          ESI_LOG_LEVEL: 'silent',
          ESI_POWER_SYNC_INTERVAL: '86400',
          ESI_CHECK_PROVISION_STATE_INTERVAL: '5',
          ...(process.env.ESI_CONDUCTOR_WORKERS ? { ESI_CONDUCTOR_WORKERS: process.env.ESI_CONDUCTOR_WORKERS } : {}),
        },
      );
      const server: RunningServer = await startServer(config);
      const releaseServer = onCleanup('deploy-fleet esi', () => server.close());
      // The lab and its agents run in a child process: spawning 50 agents and writing their
      // serial logs is the lab's work, not the control plane's.
      const lab: LabProcess = await startLabProcess(count, {
        hardware: { diskGiB: Math.ceil((size + 64 * MIB) / 1024 ** 3) },
        // The agents stand in for the nodes' own CPUs: they run when the control plane does not.
        agents: { apiUrl: `${server.url}/baremetal`, dataDir: work, heartbeatIntervalS: 1, niceness: 19 },
        proxy: false,
      });
      const consoleLogPath = (id: string) => path.join(work, 'lab', id, 'console.log');
      const diskPath = (id: string) => path.join(work, 'lab', id, 'disk.img');
      const releaseLab = onCleanup('deploy-fleet lab', () => lab.close());
      try {
        const { api, token } = await adminApi(server, password);

        options.log('uploading the image');
        const img = await api('POST', '/image/v2/images', {
          name: 'fleet',
          disk_format: 'raw',
          container_format: 'bare',
          visibility: 'public',
        });
        const up = await fetch(`${server.url}/image/v2/images/${img.id}/file`, {
          method: 'PUT',
          headers: { 'x-auth-token': token, 'content-type': 'application/octet-stream' },
          body: Readable.toWeb(fs.createReadStream(imageFile)) as ReadableStream<Uint8Array>,
          duplex: 'half',
        });
        if (up.status !== 204) throw new Error(`image upload answered ${up.status}`);

        options.log(`enrolling ${count} nodes`);
        const uuids: string[] = [];
        for (let i = 0; i < count; i++) {
          const id = `node-${i}`;
          const n = await api('POST', '/baremetal/v1/nodes', {
            name: `fleet-${i}`,
            driver: 'redfish',
            deploy_interface: 'direct',
            driver_info: {
              redfish_address: lab.url,
              redfish_system_id: `/redfish/v1/Systems/${id}`,
              redfish_username: 'admin',
              redfish_password: 'password',
              deploy_iso: 'http://lab/esi-agent.iso',
            },
            properties: { local_gb: Math.ceil((size + 64 * MIB) / 1024 ** 3) },
          });
          await api('POST', '/baremetal/v1/ports', { node_uuid: n.uuid, address: lab.macs[id] });
          await api('PATCH', `/baremetal/v1/nodes/${n.uuid}`, [
            { op: 'replace', path: '/automated_clean', value: false },
            { op: 'add', path: '/instance_info', value: { image_source: img.id } },
          ]);
          uuids.push(n.uuid);
        }
        const waitAll = (ok: (n: any) => boolean, what: string, timeoutMs: number): Promise<any[]> =>
          waitNodes(api, uuids, ok, what, timeoutMs);
        for (const u of uuids) await api('PUT', `/baremetal/v1/nodes/${u}/states/provision`, { target: 'manage' });
        await waitAll((n) => n.provision_state === 'manageable' && n.reservation === null, 'manage', 120_000);
        for (const u of uuids) await api('PUT', `/baremetal/v1/nodes/${u}/states/provision`, { target: 'provide' });
        await waitAll((n) => n.provision_state === 'available' && n.reservation === null, 'provide', 120_000);

        options.log(`deploying ${count} nodes at once`);
        const requested = new Map<string, number>();
        const cpu0 = cpuSnapshot();
        const t0 = Date.now();
        await Promise.all(
          uuids.map(async (u) => {
            requested.set(u, Date.now());
            await api('PUT', `/baremetal/v1/nodes/${u}/states/provision`, { target: 'active' });
          }),
        );
        const done = await waitAll((n) => n.provision_state === 'active', 'deploy', 1_800_000);
        const cpu = cpuSplit(cpu0, cpuSnapshot(), os.cpus().length);
        const wallMs = Math.max(...done.map((n: any) => Date.parse(n.provision_updated_at))) - t0;

        // Per-node phases from the serial consoles.
        if (process.env.ESI_BENCH_KEEP_CONSOLES)
          for (let i = 0; i < count; i++)
            fs.copyFileSync(consoleLogPath(`node-${i}`), path.join(process.env.ESI_BENCH_KEEP_CONSOLES, `node-${i}.log`));
        const times: NodeTimes[] = [];
        for (let i = 0; i < count; i++) {
          const n = done.find((x: any) => x.name === `fleet-${i}`);
          const log = fs.readFileSync(consoleLogPath(`node-${i}`), 'utf8');
          const since = requested.get(n.uuid)!;
          const boot = firstAt(log, /esi-lab: .* boots the deploy agent/, since - 1000);
          const looked = firstAt(log, /esi-agent: looked up as node/, since - 1000);
          const ws = firstAt(log, /esi-agent: downloading image/, since - 1000);
          const we = firstAt(log, /esi-agent: wrote \d+ bytes/, since - 1000);
          if (boot === null || looked === null || ws === null || we === null) throw new Error(`node-${i}: the console lacks a phase line`);
          if (headOf(diskPath(`node-${i}`)) !== head) throw new Error(`node-${i}: the disk does not hold the image`);
          const totalMs = Date.parse(n.provision_updated_at) - since;
          const bootMs = looked - boot;
          const transferMs = we - ws;
          const activeAt = Date.parse(n.provision_updated_at);
          times.push({
            totalMs,
            bootMs,
            transferMs,
            controlMs: totalMs - bootMs - transferMs,
            toBootMs: boot - since,
            toWriteMs: ws - looked,
            toActiveMs: activeAt - we,
            writeStart: ws,
            writeEnd: we,
          });
        }
        const writeWindowMs = Math.max(...times.map((t) => t.writeEnd)) - Math.min(...times.map((t) => t.writeStart));
        const aggregate = (count * size) / (writeWindowMs / 1000);
        const aggregateWall = (count * size) / (wallMs / 1000);
        const sum = (xs: number[]): Summary => summarize(xs);
        const s = {
          total: sum(times.map((t) => t.totalMs)),
          boot: sum(times.map((t) => t.bootMs)),
          transfer: sum(times.map((t) => t.transferMs)),
          control: sum(times.map((t) => t.controlMs)),
          toBoot: sum(times.map((t) => t.toBootMs)),
          toWrite: sum(times.map((t) => t.toWriteMs)),
          toActive: sum(times.map((t) => t.toActiveMs)),
        };
        const mibs = (b: number) => `${(b / MIB).toFixed(0)} MiB/s`;
        printTable(
          `deploy-fleet: ${count} nodes × ${size / MIB} MiB raw image, at once (esi/sqlite, Node ${process.version})`,
          ['measure', 'value'],
          [
            ['wall time (requests → last active)', `${(wallMs / 1000).toFixed(1)} s`],
            [`dd sequential write of ${count} × ${size / MIB} MiB (bs=4M, fsync)`, mibs(ddRate)],
            [`  (dd of one image: ${mibs(ddBurst)})`, ''],
            [
              'aggregate write over the write window',
              `${mibs(aggregate)} (${(aggregate / ddRate).toFixed(2)} × dd, goal ≥ ${GOAL_AGGREGATE_RATIO})`,
            ],
            ['aggregate write over the wall time', `${mibs(aggregateWall)} (${(aggregateWall / ddRate).toFixed(2)} × dd)`],
            [
              'CPU while deploying: user / nice (agents) / system / softirq / iowait / idle',
              (['user', 'nice', 'system', 'softirq', 'iowait', 'idle'] as const)
                .map((f) => `${(cpu.share[f] * 100).toFixed(0)} %`)
                .join(' / '),
            ],
            [
              'CPU of the esi process (API, conductor, image service)',
              `${cpu.selfS.toFixed(1)} s (${((cpu.selfS / (wallMs / 1000)) * 100).toFixed(0)} % of one CPU)`,
            ],
          ],
        );
        const ms = (v: number) => `${(v / 1000).toFixed(2)} s`;
        printTable(
          'per node (p50 / p90 / max)',
          ['phase', 'p50', 'p90', 'max'],
          [
            ['request → active', ms(s.total.medianMs), ms(s.total.p90Ms), ms(s.total.maxMs)],
            ['boot (lab boot → agent looked up)', ms(s.boot.medianMs), ms(s.boot.p90Ms), ms(s.boot.maxMs)],
            ['transfer (download → written, verified)', ms(s.transfer.medianMs), ms(s.transfer.p90Ms), ms(s.transfer.maxMs)],
            [
              `control plane (the rest; goal < ${GOAL_OVERHEAD_MS / 1000} s)`,
              ms(s.control.medianMs),
              ms(s.control.p90Ms),
              ms(s.control.maxMs),
            ],
            ['  of which: request → BMC boots the agent', ms(s.toBoot.medianMs), ms(s.toBoot.p90Ms), ms(s.toBoot.maxMs)],
            ['  of which: looked up → write starts', ms(s.toWrite.medianMs), ms(s.toWrite.p90Ms), ms(s.toWrite.maxMs)],
            ['  of which: written → active', ms(s.toActive.medianMs), ms(s.toActive.p90Ms), ms(s.toActive.maxMs)],
          ],
        );
        const goals = `aggregate ${aggregate / ddRate >= GOAL_AGGREGATE_RATIO ? 'met' : 'MISSED'}, control-plane overhead ${s.control.medianMs < GOAL_OVERHEAD_MS ? 'met' : 'MISSED'} (p50)`;
        process.stdout.write(`goals: ${goals}\n`);
        if (note) process.stdout.write(`note: ${note}\n`);
        const busy = busyWarning('after the run');
        if (busy) process.stdout.write(`note: ${busy}\n`);
        const file = writeResults('deploy-fleet', {
          count,
          sizeBytes: size,
          wallMs,
          cpu,
          ddRate,
          ddBurst,
          aggregate,
          aggregateWall,
          writeWindowMs,
          summaries: s,
          times,
          note,
          busy,
        });
        options.log(`results written to ${file}`);
      } finally {
        await releaseLab();
        await releaseServer();
      }
    } finally {
      await releaseWork();
    }
  },
};
