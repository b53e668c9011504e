/**
 * Helpers of the inspection API tests: a lab whose first nodes are the shipped server models
 * (gpu, storage, small; the rest the default node) running esi's deploy agent against a test
 * server with inspection rules, and the truth a node's inspection must find (its lab
 * hardware description).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { parseModelSpec, startLab, type LabHardware } from '../../../src/lab/index.ts';
import { createPersonas, startTestServer, type TestServerOptions } from '../../helpers/harness.ts';
import { bm, enrollRedfish, provision, waitNode, type ConductorEnv } from '../conductor/support.ts';

/** The inspection rules of the tests (docs/inspection.md format). */
export const RULES_YAML = `
- description: GPU nodes
  conditions: gpus >= 1
  actions:
    - {action: add-trait, trait: CUSTOM_GPU}
    - {action: set-resource-class, value: baremetal.gpu}
- description: storage nodes
  conditions: disks >= 12 and memory_mb >= 131072
  actions:
    - {action: add-trait, trait: CUSTOM_STORAGE}
    - {action: set-resource-class, value: baremetal.storage}
- description: legacy boot
  conditions: boot_mode == bios
  actions:
    - {action: add-trait, trait: CUSTOM_LEGACY_BIOS}
`;

/** The node models of the lab, in order: node-0 gpu, node-1 storage, node-2 small, the rest default. */
export const MODEL_SPEC = 'gpu:1,storage:1,small:1';

/** A lab of `labNodes` systems (models as {@link MODEL_SPEC}) with agents, and a test server with the rules. */
export async function startInspectionEnv(labNodes: number, options: TestServerOptions = {}): Promise<ConductorEnv> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-insp-'));
  const rules = path.join(dir, 'rules.yaml');
  fs.writeFileSync(rules, RULES_YAML);
  const ts = await startTestServer({ ...options, env: { ESI_INSPECTION_RULES: rules, ...options.env } });
  const lab = await startLab({
    nodes: labNodes,
    port: 0,
    hardware: { diskGiB: 1 },
    models: parseModelSpec(MODEL_SPEC).slice(0, labNodes),
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
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Enrol lab system `system` for in-band inspection (inspect_interface `agent`, an agent ISO,
 * a port with the PXE MAC — how the agent's data finds its node, as in Ironic) and `manage` it.
 */
export async function inspectableNode(env: ConductorEnv, system: string, iface = 'agent', withPort = true): Promise<any> {
  const node = await enrollRedfish(
    env,
    system,
    { inspect_interface: iface, boot_interface: 'pxe' },
    { deploy_iso: 'http://lab/esi-agent.iso' },
  );
  if (withPort) {
    const port = await bm(env.ts, env.p.admin, 'POST', '/v1/ports', { node_uuid: node.uuid, address: env.lab.systems.get(system).mac });
    expect(port.status, port.text).toBe(201);
  }
  await provision(env, node.uuid, 'manage');
  await waitNode(env, node.uuid, (n) => n.provision_state === 'manageable' && n.reservation === null);
  return node;
}

/** The node's ports (admin, detail). */
export async function portsOf(env: ConductorEnv, uuid: string): Promise<any[]> {
  const res = await bm(env.ts, env.p.admin, 'GET', `/v1/ports/detail?node=${uuid}`, undefined, '1.53');
  expect(res.status, res.text).toBe(200);
  return res.body.ports;
}

/**
 * The properties inspection must set for `hw`. `local_gb`: the root device's size in GiB − 1,
 * the root device being the smallest disk of at least 4 GiB — what IPA reports as `root_disk`
 * in band and what Ironic 21.4's redfish inspect picks out of band (the lab has no RAID volumes).
 */
export function expectedProperties(hw: LabHardware): Record<string, unknown> {
  const root = Math.min(...hw.disks.map((d) => d.sizeBytes).filter((s) => s >= 4 * 1024 ** 3), Infinity);
  return {
    cpus: hw.cpu.sockets * hw.cpu.coresPerSocket * hw.cpu.threadsPerCore,
    cpu_arch: hw.cpu.arch,
    memory_mb: hw.memoryMiB,
    local_gb: root < Infinity ? Math.floor(root / 1024 ** 3) - 1 : 0,
  };
}

/** The `local_link_connection` a NIC of `hw` must get ({} when not cabled). */
export function expectedLlc(nic: LabHardware['nics'][number]): Record<string, string> {
  return nic.lldp === null ? {} : { switch_id: nic.lldp.chassisId, port_id: nic.lldp.portId, switch_info: nic.lldp.systemName };
}
