/**
 * Issue 23's crash suite for image capture: a real `esi server` process on a fixed port, a lab
 * (src/lab/) whose system runs esi's deploy agent (`esi agent`) against that port, and the capture
 * flow (./flows-capture.ts) — clean, deploy with a config drive, capture into a new queued image,
 * again and again. esi is killed with SIGKILL during the capture (a seeded random instant after
 * the flow asked for it: booting the agent, the agent reading and uploading the disk, the node
 * booting back) or at a random instant of the whole cycle, then started again on the same data
 * directory (and PostgreSQL database in the api-pg project). After each restart the suite waits
 * for esi to settle and checks the invariants across records (./invariants.ts: among them no
 * node left `servicing` or `service wait`, no image left `saving`, every active image's data
 * whole, no temporary file in the image store). The agent lives on across the kill, as a real
 * machine's would. A separate file from ./crash.test.ts because each round waits for real agent
 * stages (seconds each): `ESI_CRASH_SEED=<n>` replays another sequence, `ESI_CRASH_CAPTURE_ROUNDS`
 * plays more rounds (default 4).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { rng } from '../../../bench/lib/random.ts';
import { startLab, type Lab } from '../../../src/lab/index.ts';
import { freePort } from '../../helpers/esi-process.ts';
import { osImage } from '../../helpers/os-image.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import { CrashCloud } from './cloud.ts';
import { captureFlow, type CaptureTarget } from './flows-capture.ts';
import type { FlowContext } from './flow-kit.ts';
import { loop } from './flows.ts';
import { violations } from './invariants.ts';

const SEED = Number(process.env.ESI_CRASH_SEED ?? 230023);
const ROUNDS = Number(process.env.ESI_CRASH_CAPTURE_ROUNDS ?? 4);
/** A kill during a capture lands up to this long after the capture was asked for, ms. */
const CAPTURE_KILL_TO_MS = 3000;
/** A kill of the whole cycle lands up to this long after the flow (re)starts, ms. */
const CYCLE_KILL_TO_MS = 20_000;
/** How long the flow may take to reach its capture step, ms (an agent clean and deploy first). */
const REACH_CAPTURE_MS = 240_000;
/** Size of the OS image deployed and captured, MiB (the capture's upload takes a while). */
const OS_MIB = 32;
/** How long esi may take to settle after a restart (as ./crash.test.ts). */
const SETTLE_MS = 45_000;

describe('esi killed with SIGKILL while it captures a node into an image', () => {
  let cloud: CrashCloud;
  let lab: Lab | null = null;
  const labDir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-crash-lab-'));
  afterAll(async () => {
    await lab?.close();
    await cloud?.close();
    fs.rmSync(labDir, { recursive: true, force: true });
  });

  it('restarts into records that agree, every time', async () => {
    const random = rng(SEED);
    const port = await freePort();
    cloud = new CrashCloud(port);
    await cloud.init();
    await cloud.start();
    lab = await startLab({
      nodes: 1,
      port: 0,
      hardware: { diskGiB: 1 },
      agents: { apiUrl: `http://127.0.0.1:${port}/baremetal`, dataDir: labDir, heartbeatIntervalS: 1 },
    });
    const admin = (await cloud.call('GET', '/identity/v3/projects?name=admin')).body.projects[0].id as string;
    const target = await enrolTarget(cloud, lab, admin);
    console.info(`capture crash suite: ESI_CRASH_SEED=${SEED}, ${ROUNDS} rounds, node ${target.node}`);

    const kills: string[] = [];
    let captures = 0;
    for (let round = 0; round < ROUNDS; round++) {
      let step = 'start';
      const ctx: FlowContext = {
        cloud,
        round,
        admin,
        lessee: { project: admin, token: cloud.token },
        quota: { project: admin, token: cloud.token },
        net: { switchName: '', network: '', external: '' },
        mark: (s) => {
          step = s;
          if (s.startsWith('captured: active')) captures++;
        },
      };
      const running = loop((c) => captureFlow(c, target), ctx, 'capture');
      const duringCapture = round % 4 !== 3;
      let at: number;
      if (duringCapture) {
        await waitFor(
          () => Promise.resolve(step),
          (s) => s.startsWith('capture ('),
          { timeoutMs: REACH_CAPTURE_MS, intervalMs: 50, what: `round ${round}: the flow to ask for a capture`, show: (s) => s },
        );
        at = Math.round(random() * CAPTURE_KILL_TO_MS);
      } else at = Math.round(500 + random() * (CYCLE_KILL_TO_MS - 500));
      await new Promise((r) => setTimeout(r, at));
      const where = `${step}; node ${await nodeState(cloud, target.node)}`;
      await cloud.kill();
      const refusals = await running;
      kills.push(`kill ${round + 1}: ${at} ms after ${duringCapture ? 'the capture request' : 'the round started'} — step ${where}`);
      if (refusals.length > 0) console.info(`round ${round}: refusals: ${refusals.slice(0, 5).join(' | ')}`);
      const restartAt = Date.now();
      await cloud.start();
      await waitFor(
        () => violations(cloud.dataDir, cloud.databaseUrl),
        (v) => v.length === 0,
        { timeoutMs: SETTLE_MS, intervalMs: 500, what: `round ${round}: the records to agree (seed ${SEED})`, show: (v) => v.join('\n') },
      ).catch((err: unknown) => {
        console.info(kills.join('\n'));
        console.info(cloud.output().slice(-4000));
        throw err;
      });
      const node = (await cloud.bm('GET', `/nodes/${target.node}`)).body;
      // A capture that failed (a take-over at start) keeps no agent session nor capture request:
      // a retry boots the agent afresh (as after a capture's own failure or a wait's timeout).
      if (node.provision_state === 'service failed')
        expect(Object.keys(node.driver_internal_info).filter((k) => k === 'capture' || k.startsWith('agent_'))).toEqual([]);
      console.info(
        `round ${round}: settled in ${((Date.now() - restartAt) / 1000).toFixed(1)} s; node ${node.provision_state}` +
          (node.last_error ? ` (${String(node.last_error).slice(0, 160)})` : ''),
      );
    }
    console.info(`capture crash suite (ESI_CRASH_SEED=${SEED}): ${captures} captures finished\n${kills.join('\n')}`);
    expect(kills).toHaveLength(ROUNDS);
  }, 1_800_000);
});

/** The node's provision state and capture progress as esi answers now ('gone' when it does not). */
async function nodeState(cloud: CrashCloud, uuid: string): Promise<string> {
  const n = await cloud.bm('GET', `/nodes/${uuid}`).catch(() => null);
  if (n === null || n.status !== 200) return 'unknown';
  const progress = n.body.deploy_step?.progress;
  return `${n.body.provision_state}${progress ? ` ${JSON.stringify(progress)}` : ''}`;
}

/**
 * Upload the OS image and enrol the lab's system as an agent node owned by `admin` (redfish,
 * `deploy_interface` `direct`, the agent ISO in `driver_info`, a port with the system's MAC).
 */
async function enrolTarget(cloud: CrashCloud, lab: Lab, admin: string): Promise<CaptureTarget> {
  const created = await cloud.call('POST', '/image/v2/images', {
    name: 'crash-capture-os',
    disk_format: 'raw',
    container_format: 'bare',
    visibility: 'public',
  });
  expect(created.status).toBe(201);
  const put = await fetch(`${cloud.url}/image/v2/images/${created.body.id}/file`, {
    method: 'PUT',
    headers: { 'x-auth-token': cloud.token, 'content-type': 'application/octet-stream' },
    body: osImage('crash-os', OS_MIB),
  });
  expect(put.status).toBe(204);
  const system = lab.systems.ids[0]!;
  const node = await cloud.bm('POST', '/nodes', {
    driver: 'redfish',
    name: 'crash-capture',
    owner: admin,
    deploy_interface: 'direct',
    boot_interface: 'pxe',
    properties: { local_gb: 1, cpus: 2, memory_mb: 4096 },
    driver_info: {
      redfish_address: lab.url,
      redfish_system_id: `/redfish/v1/Systems/${system}`,
      redfish_username: 'admin',
      redfish_password: 'password',
      deploy_iso: 'http://lab/esi-agent.iso',
    },
  });
  expect(node.status, JSON.stringify(node.body)).toBe(201);
  const port = await cloud.bm('POST', '/ports', { node_uuid: node.body.uuid, address: lab.systems.get(system).mac });
  expect(port.status, JSON.stringify(port.body)).toBe(201);
  return { node: node.body.uuid as string, image: created.body.id as string };
}
