/**
 * `esi lab enroll` (src/cli/commands/lab-enroll.ts) against a test server and the lab's real
 * Redfish service, whose systems say what is behind them (`Oem.EsiLab`, src/lab/render-system.ts):
 * a simulated system gets the lab's simulated agent media; a QEMU system gets esi's deploy ramdisk
 * as `file://` kernel and ramdisk (the ramdisk is the test's: no build) and, on the lab's switch,
 * a port cabled to the esi `linux-bridge` switch of that bridge; the flags override the ramdisk
 * for every system; bad flags, a failing ramdisk and a non-admin are refused. One run goes through
 * the real `esi` binary.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enrollLabSystems, type EnrollFlags, type RamdiskFiles } from '../../../src/cli/commands/lab-enroll.ts';
import { CliError, withSession } from '../../../src/cli/session.ts';
import { createLabHttp } from '../../../src/lab/http.ts';
import { registerLabRoutes } from '../../../src/lab/routes.ts';
import { LabError, LabState, type LabSwitchPort } from '../../../src/lab/state.ts';
import { call, createPersonas, startTestServer, type Personas, type TestServer } from '../../helpers/harness.ts';
import { esiJson, personaEnv } from './support.ts';

let ts: TestServer;
let p: Personas;
let lab: FastifyInstance;
let labUrl: string;
let state: LabState;

const RAMDISK: RamdiskFiles = { kernel: '/var/cache/esi/ramdisk/k1/vmlinuz', initramfs: '/var/cache/esi/ramdisk/k1/initramfs' };
const BM = { 'x-openstack-ironic-api-version': '1.82' };
const SWITCH_PORTS: Record<string, LabSwitchPort> = {
  'node-5': { bridge: 't1br', netns: 't1-sw', port: 't1p5' },
  'node-7': { bridge: 'other-br', netns: '', port: 'op7' },
};

beforeAll(async () => {
  ts = await startTestServer();
  p = await createPersonas(ts);
  // node-0…node-4 simulated, node-5…node-9 QEMU-backed (each test uses its own systems: tests
  // run in any order); node-5's NIC is on the lab switch esi knows, node-7's on another.
  state = new LabState({ nodes: 10, qemu: 5, username: 'admin', password: 'password', seed: 'lab-enroll' });
  const noVm = async (): Promise<void> => {
    throw new LabError(400, 'ActionNotSupported', ['no VM in this test']);
  };
  state.machines = {
    reset: noVm,
    insertMedia: noVm,
    ejectMedia: noVm,
    switchPort: (id) => SWITCH_PORTS[id] ?? null,
  };
  lab = createLabHttp(state);
  registerLabRoutes(lab, state);
  await lab.listen({ host: '127.0.0.1', port: 0 });
  const a = lab.server.address();
  labUrl = `http://127.0.0.1:${typeof a === 'object' && a !== null ? a.port : 0}`;
  const sw = await call(ts, p.admin, 'POST', '/network/v2.0/switches', {
    switch: { name: 'labqemu', switch_id: '02:00:00:00:00:02', driver: 'linux-bridge', driver_info: { bridge: 't1br', netns: 't1-sw' } },
  });
  expect(sw.status, sw.text).toBe(201);
});
afterAll(async () => {
  await lab?.close();
  await ts?.close();
});

/** The flags of `esi lab enroll` with `extra`. */
function flags(extra: Partial<EnrollFlags> = {}): EnrollFlags {
  return { labUrl, username: 'admin', password: 'password', system: [], prefix: '', format: 'table', column: [], ...extra };
}

/** A node and its ports as admin. */
async function nodeAndPorts(name: string): Promise<{ node: any; ports: any[] }> {
  const node = await call(ts, p.admin, 'GET', `/baremetal/v1/nodes/${name}`, undefined, BM);
  expect(node.status, node.text).toBe(200);
  const ports = await call(ts, p.admin, 'GET', `/baremetal/v1/ports?node=${node.body.uuid}&detail=true`, undefined, BM);
  expect(ports.status, ports.text).toBe(200);
  return { node: node.body, ports: ports.body.ports };
}

describe('esi lab enroll', () => {
  it("reads each system's backing: simulated media for simulated systems, esi's ramdisk and the switch cabling for QEMU ones", async () => {
    let asked = 0;
    const ramdisk = async () => {
      asked++;
      return RAMDISK;
    };
    const rows = await withSession(
      (s) => enrollLabSystems(s, flags({ system: ['node-1', 'node-5', 'node-6'], prefix: 'a-', owner: 'o1' }), { ramdisk }),
      personaEnv(ts, 'admin'),
    );
    expect(asked).toBe(1);
    expect(rows.map((r) => [r[0], r[3]])).toEqual([
      ['a-node-1', 'enrolled'],
      ['a-node-5', 'enrolled, port cabled to labqemu t1p5'],
      ['a-node-6', 'enrolled'],
    ]);

    const sim = await nodeAndPorts('a-node-1');
    expect(sim.node).toMatchObject({
      driver: 'redfish',
      deploy_interface: 'direct',
      boot_interface: 'redfish-virtual-media',
      owner: p.owner.projectId,
    });
    expect(sim.node.driver_info).toMatchObject({
      redfish_system_id: '/redfish/v1/Systems/node-1',
      deploy_iso: `${labUrl}/media/esi-agent.iso`,
    });
    expect(sim.node.driver_info.deploy_kernel).toBeUndefined();
    expect(sim.ports.map((x) => x.address)).toEqual([state.system('node-1').mac]);

    const vm = await nodeAndPorts('a-node-5');
    expect(vm.node).toMatchObject({ deploy_interface: 'direct', boot_interface: 'redfish-virtual-media' });
    expect(vm.node.driver_info).toMatchObject({
      redfish_system_id: '/redfish/v1/Systems/node-5',
      deploy_kernel: 'file:///var/cache/esi/ramdisk/k1/vmlinuz',
      deploy_ramdisk: 'file:///var/cache/esi/ramdisk/k1/initramfs',
    });
    expect(vm.node.driver_info.deploy_iso).toBeUndefined();
    expect(vm.ports).toHaveLength(1);
    expect(vm.ports[0]).toMatchObject({
      address: state.system('node-5').mac,
      local_link_connection: { switch_id: '02:00:00:00:00:02', switch_info: 'labqemu', port_id: 't1p5' },
    });

    // A QEMU system with no switch port: the ramdisk, an uncabled port.
    const hub = await nodeAndPorts('a-node-6');
    expect(hub.node.driver_info.deploy_kernel).toBe('file:///var/cache/esi/ramdisk/k1/vmlinuz');
    expect(hub.ports[0].local_link_connection).toEqual({});

    // The same systems again: left alone.
    const again = await withSession(
      (s) => enrollLabSystems(s, flags({ system: ['node-5'], prefix: 'a-' }), { ramdisk }),
      personaEnv(ts, 'admin'),
    );
    expect(again).toEqual([['a-node-5', vm.node.uuid, state.system('node-5').mac, 'exists (left alone)']]);
    expect(asked).toBe(1);
  });

  it('without the esi switch of its bridge, a QEMU system is enrolled with its port uncabled and says so', async () => {
    const rows = await withSession(
      (s) => enrollLabSystems(s, flags({ system: ['node-7'], prefix: 'b-' }), { ramdisk: async () => RAMDISK }),
      personaEnv(ts, 'admin'),
    );
    expect(rows[0]![3]).toBe('enrolled, port not cabled: no esi linux-bridge switch for bridge other-br (docs/lab.md)');
    expect((await nodeAndPorts('b-node-7')).ports[0].local_link_connection).toEqual({});
  });

  it('--deploy-iso and --deploy-kernel/--deploy-ramdisk name the agent of every system; the ramdisk is then not asked for', async () => {
    const ramdisk = async (): Promise<RamdiskFiles> => {
      throw new Error('the ramdisk must not be asked for');
    };
    await withSession(
      (s) => enrollLabSystems(s, flags({ system: ['node-8'], prefix: 'c-', deployIso: 'http://10.0.0.1/agent.iso' }), { ramdisk }),
      personaEnv(ts, 'admin'),
    );
    expect((await nodeAndPorts('c-node-8')).node.driver_info).toMatchObject({ deploy_iso: 'http://10.0.0.1/agent.iso' });
    await withSession(
      (s) =>
        enrollLabSystems(
          s,
          flags({ system: ['node-0'], prefix: 'c-', deployKernel: 'http://10.0.0.1/k', deployRamdisk: 'http://10.0.0.1/r' }),
          {
            ramdisk,
          },
        ),
      personaEnv(ts, 'admin'),
    );
    const di = (await nodeAndPorts('c-node-0')).node.driver_info;
    expect(di).toMatchObject({ deploy_kernel: 'http://10.0.0.1/k', deploy_ramdisk: 'http://10.0.0.1/r' });
    expect(di.deploy_iso).toBeUndefined();
  });

  it('refuses half a kernel/ramdisk pair before reading the lab, passes on a ramdisk failure, and a non-admin gets the API refusal', async () => {
    const none = { ramdisk: async () => RAMDISK };
    const run = (extra: Partial<EnrollFlags>, deps = none, who: 'admin' | 'owner' = 'admin') =>
      withSession((s) => enrollLabSystems(s, flags(extra), deps), personaEnv(ts, who));
    await expect(run({ deployKernel: 'http://x/k', labUrl: 'http://127.0.0.1:9' })).rejects.toThrow(
      '--deploy-kernel and --deploy-ramdisk go together',
    );
    await expect(run({ system: ['node-99'] })).rejects.toThrow('the lab has no system node-99');
    const failing = {
      ramdisk: async (): Promise<RamdiskFiles> => {
        throw new CliError("QEMU and real systems boot esi's deploy ramdisk, and it could not be built: no kernel");
      },
    };
    await expect(run({ system: ['node-9'], prefix: 'd-' }, failing)).rejects.toThrow(/could not be built: no kernel/);
    const missing = await call(ts, p.admin, 'GET', '/baremetal/v1/nodes/d-node-9', undefined, BM);
    expect(missing.status).toBe(404);
    const refused = run({ system: ['node-2'], prefix: 'e-' }, none, 'owner');
    await expect(refused).rejects.toBeInstanceOf(CliError);
    await expect(refused).rejects.toMatchObject({ status: 403 });
  });

  it('runs as the esi command: -f json rows', async () => {
    const rows = await esiJson(['lab', 'enroll', '--lab-url', labUrl, '--system', 'node-3', '--name', 'cli-node'], personaEnv(ts, 'admin'));
    expect(rows).toEqual([{ Name: 'cli-node', UUID: expect.any(String), MACs: state.system('node-3').mac, Result: 'enrolled' }]);
    expect((await nodeAndPorts('cli-node')).node.driver_info.deploy_iso).toBe(`${labUrl}/media/esi-agent.iso`);
  });
});
