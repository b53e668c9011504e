/**
 * Helpers of the deploy API tests: lab nodes enrolled for the agent flows (redfish driver,
 * `deploy_interface` `direct`, an agent ISO in `driver_info`, a port with the lab system's MAC).
 */
import fs from 'node:fs';
import { expect } from 'vitest';
import { startLab } from '../../../src/lab/index.ts';
import { call, createPersonas, startTestServer, type Persona, type TestServerOptions } from '../../helpers/harness.ts';
import { bm, enrollRedfish, provision, waitNode, type ConductorEnv } from '../conductor/support.ts';

/** The API version the agent uses for lookup and heartbeat (IPA: min(server max, 1.68)). */
export const AGENT_VERSION = '1.68';

/**
 * Enrol lab system `system` as an agent node with a port, then `manage` and `provide` it
 * (automated cleaning boots the agent: the node ends in `clean wait` unless an agent answers).
 * @returns the node JSON and its MAC
 */
export async function agentNode(
  env: ConductorEnv,
  system: string,
  extra: Record<string, unknown> = {},
  info: Record<string, unknown> = {},
): Promise<{ node: any; mac: string }> {
  const node = await enrollRedfish(
    env,
    system,
    { deploy_interface: 'direct', boot_interface: 'pxe', properties: { local_gb: 1, cpus: 2, memory_mb: 4096 }, ...extra },
    { deploy_iso: 'http://lab/esi-agent.iso', ...info },
  );
  const mac = env.lab.systems.get(system).mac;
  const port = await bm(env.ts, env.p.admin, 'POST', '/v1/ports', { node_uuid: node.uuid, address: mac });
  expect(port.status, port.text).toBe(201);
  await provision(env, node.uuid, 'manage');
  await waitNode(env, node.uuid, (n) => n.provision_state === 'manageable' && n.reservation === null);
  await provision(env, node.uuid, 'provide');
  return { node, mac };
}

/**
 * A test server (SQLite or PostgreSQL) and a lab of `labNodes` systems with 1 GiB disks whose
 * systems run esi's deploy agent (`esi agent`, src/agent/) against that server (src/lab/agents.ts).
 */
export async function startDeployEnv(labNodes: number, options: TestServerOptions = {}): Promise<ConductorEnv> {
  const ts = await startTestServer(options);
  const lab = await startLab({
    nodes: labNodes,
    port: 0,
    hardware: { diskGiB: 1 },
    agents: { apiUrl: `${ts.url}/baremetal`, dataDir: ts.dataDir, heartbeatIntervalS: 1 },
  });
  const p = await createPersonas(ts);
  return {
    ts,
    p,
    lab,
    async close() {
      await lab.close();
      await ts.close();
    },
  };
}

/** Options of {@link uploadImage}. */
export interface UploadOptions {
  readonly as?: Persona;
  readonly diskFormat?: 'raw' | 'qcow2';
  readonly visibility?: 'public' | 'private' | 'shared' | 'community';
}

/** Create an image (default: public raw, as admin) and upload `data`; returns its id. */
export async function uploadImage(env: ConductorEnv, data: Uint8Array, name = 'deploy-test', o: UploadOptions = {}): Promise<string> {
  const who = o.as ?? env.p.admin;
  const created = await call(env.ts, who, 'POST', '/image/v2/images', {
    name,
    disk_format: o.diskFormat ?? 'raw',
    container_format: 'bare',
    visibility: o.visibility ?? (who === env.p.admin ? 'public' : 'private'),
  });
  expect(created.status, created.text).toBe(201);
  const id = created.body.id as string;
  const res = await fetch(`${env.ts.url}/image/v2/images/${id}/file`, {
    method: 'PUT',
    headers: { 'x-auth-token': who.token!, 'content-type': 'application/octet-stream' },
    body: data,
  });
  expect(res.status, await res.text()).toBe(204);
  return id;
}

/** The node's serial console log in the lab ('' when none yet). */
export function consoleLog(env: ConductorEnv, system: string): string {
  const file = env.lab.agents!.consoleLogPath(system);
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
}

/**
 * Cables the node's first NIC to a fake-driver switch `tor1` (switch port `Ethernet1/1`), with
 * the maintenance round trip Ironic needs to change an available node's connectivity, and gives
 * the lessee a network `lnet`, so that a network can be attached to the node.
 */
export async function cableToFakeSwitch(env: ConductorEnv, nodeUuid: string): Promise<void> {
  const sw = await call(env.ts, env.p.admin, 'POST', '/network/v2.0/switches', {
    switch: { name: 'tor1', switch_id: '02:00:00:00:00:01', driver: 'fake', driver_info: {} },
  });
  expect(sw.status, sw.text).toBe(201);
  const nic = (await bm(env.ts, env.p.admin, 'GET', `/v1/nodes/${nodeUuid}/ports`)).body.ports[0];
  expect((await bm(env.ts, env.p.admin, 'PUT', `/v1/nodes/${nodeUuid}/maintenance`, { reason: 'cabling' })).status).toBe(202);
  const cabled = await bm(env.ts, env.p.admin, 'PATCH', `/v1/ports/${nic.uuid}`, [
    { op: 'add', path: '/local_link_connection', value: { switch_id: '02:00:00:00:00:01', switch_info: 'tor1', port_id: 'Ethernet1/1' } },
  ]);
  expect(cabled.status, cabled.text).toBe(200);
  expect((await bm(env.ts, env.p.admin, 'DELETE', `/v1/nodes/${nodeUuid}/maintenance`)).status).toBe(202);
  const lnet = await call(env.ts, env.p.lessee, 'POST', '/network/v2.0/networks', { network: { name: 'lnet' } });
  expect(lnet.status, lnet.text).toBe(201);
}
