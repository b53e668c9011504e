/**
 * A lab that stays put (src/lab/persist.ts, persist-plan.ts, status.ts; docs/lab.md): a lab
 * started again on the same data directory has the same node identities and models; a model
 * spec that would change a kept node is refused (node, old → new) unless forced; more nodes add
 * nodes, fewer keep the others in the file; `labStatus` reports nodes, BMCs, models and sparse
 * disk files honestly (checked against qemu-img's own figures). Started in-process, as the other
 * lab tests are.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LabModelChangeError, parseModelSpec, readLabState, startLab, type Lab } from '../../../src/lab/index.ts';
import { defaultLabModel, loadLabModel } from '../../../src/lab/hardware.ts';
import { labStatePath, writeLabState, emptyLabState } from '../../../src/lab/persist.ts';
import { planLabNodes } from '../../../src/lab/persist-plan.ts';
import { describeDisk, diskUsage, labStatus } from '../../../src/lab/status.ts';
import { DEFAULT_HARDWARE } from '../../../src/lab/state.ts';
import { describeNeeding, TOOLS } from '../../helpers/tools.ts';
import { call } from './helpers.ts';

const dirs: string[] = [];
const labs: Lab[] = [];
afterEach(async () => {
  await Promise.all(labs.splice(0).map((l) => l.close()));
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-lab-persist-'));
  dirs.push(d);
  return d;
}

async function start(dataDir: string, nodes: number, models?: string, force = false): Promise<Lab> {
  const lab = await startLab({ nodes, persist: { dataDir, force }, ...(models !== undefined ? { models: parseModelSpec(models) } : {}) });
  labs.push(lab);
  return lab;
}

/** What an operator enrols of each node: its identity and hardware. */
function identities(lab: Lab) {
  return lab.systems.ids.map((id) => {
    const s = lab.systems.get(id);
    return { id, uuid: s.uuid, mac: s.mac, model: s.machine.model, machine: s.machine };
  });
}

describe('restart on the same data directory', () => {
  it('gives the same UUIDs, MACs, models and hardware, over Redfish too', async () => {
    const dir = tempDir();
    const first = await start(dir, 3, 'gpu:1,small:1');
    const before = identities(first);
    expect(before.map((n) => n.model)).toEqual(['gpu', 'small', 'default']);
    await first.close();
    expect(readLabState(dir)!.redfish!.pid).toBeNull();

    // No model spec at the restart: the kept models, not the default one.
    const second = await start(dir, 3);
    expect(identities(second)).toEqual(before);
    expect(second.modelChanges).toEqual([]);
    const sys = await call(second, 'GET', '/redfish/v1/Systems/node-0');
    expect(sys.body.UUID).toBe(before[0]!.uuid);
    const nics = await call(second, 'GET', '/redfish/v1/Systems/node-0/EthernetInterfaces');
    expect(nics.body['Members@odata.count']).toBe(before[0]!.machine.nics.length);

    // The same spec again changes nothing either.
    await second.close();
    const third = await start(dir, 3, 'gpu:1,small:1');
    expect(identities(third)).toEqual(before);
    expect(fs.readdirSync(path.dirname(labStatePath(dir))).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('a larger count adds nodes; a smaller one runs the first N and keeps the others listed', async () => {
    const dir = tempDir();
    const before = identities(await start(dir, 2));
    await labs[0]!.close();
    const more = await start(dir, 4);
    expect(identities(more).slice(0, 2)).toEqual(before);
    expect(more.systems.ids).toEqual(['node-0', 'node-1', 'node-2', 'node-3']);
    const four = identities(more);
    await more.close();
    const fewer = await start(dir, 1);
    expect(fewer.systems.ids).toEqual(['node-0']);
    expect(identities(fewer)).toEqual(four.slice(0, 1));
    const file = readLabState(dir)!;
    expect(file.nodes.map((n) => [n.id, n.uuid])).toEqual(four.map((n) => [n.id, n.uuid]));
    expect(file.redfish!.running).toEqual(['node-0']);
    const status = labStatus(dir);
    expect(status.nodes.map((n) => [n.id, n.running])).toEqual([
      ['node-0', true],
      ['node-1', false],
      ['node-2', false],
      ['node-3', false],
    ]);
    await fewer.close();
    // Back to four: the kept nodes return as they were.
    expect(identities(await start(dir, 4))).toEqual(four);
  });
});

describe('model changes of kept nodes', () => {
  it('are refused without force, naming each node and its old → new model, and nothing changes', async () => {
    const dir = tempDir();
    const before = identities(await start(dir, 3, 'gpu:1'));
    await labs[0]!.close();
    const file = fs.readFileSync(labStatePath(dir), 'utf8');
    const refused = start(dir, 3, 'small:1,gpu:1');
    await expect(refused).rejects.toBeInstanceOf(LabModelChangeError);
    const err = (await refused.catch((e: unknown) => e)) as LabModelChangeError;
    expect(err.changes.map((c) => c.id)).toEqual(['node-0', 'node-1']);
    expect(err.message).toContain(labStatePath(dir));
    expect(err.message).toMatch(/node-0: gpu \(simulated, 2×40 cores, 1024 GiB RAM, .*\) → small \(simulated, 6 cores, 32 GiB RAM, .*\)/);
    expect(err.message).toMatch(/node-1: default \(simulated, .*\) → gpu \(simulated, .*\)/);
    expect(err.message).toContain('--force');
    expect(fs.readFileSync(labStatePath(dir), 'utf8')).toBe(file);
    // The refused start left nothing running: the kept lab starts as before.
    expect(identities(await start(dir, 3))).toEqual(before);
  });

  it('are applied with force, which reports them and keeps the nodes’ UUIDs and MACs', async () => {
    const dir = tempDir();
    const before = identities(await start(dir, 2, 'gpu:1'));
    await labs[0]!.close();
    const forced = await start(dir, 2, 'small:1', true);
    expect(forced.modelChanges).toEqual([{ id: 'node-0', from: expect.stringMatching(/^gpu \(/), to: expect.stringMatching(/^small \(/) }]);
    const after = identities(forced);
    expect(after[0]).toMatchObject({ uuid: before[0]!.uuid, mac: before[0]!.mac, model: 'small' });
    expect(after[1]).toEqual(before[1]);
    expect(readLabState(dir)!.nodes[0]!.model.name).toBe('small');
    await forced.close();
    // The forced model is the kept one from now on.
    expect((await start(dir, 2)).systems.get('node-0').machine.model).toBe('small');
  });

  it('a node that changes kind (simulated ↔ QEMU) or QEMU settings is a change too', () => {
    const def = defaultLabModel(DEFAULT_HARDWARE);
    const qemu = { ...loadLabModel('small'), name: 'qemu' };
    const kept = {
      ...emptyLabState(),
      nodes: [{ id: 'node-0', backing: 'simulated' as const, uuid: 'u0', macs: ['52:54:00:00:00:01'], model: def }],
    };
    const request = { total: 1, qemu: 1, requested: undefined, defaultModel: () => def, qemuModel: qemu, force: false };
    expect(() => planLabNodes(kept, request, 'f')).toThrow(/node-0: default \(simulated, .*\) → qemu \(qemu, .*\)/);
    const plan = planLabNodes(kept, { ...request, force: true }, 'f');
    expect(plan.identities).toEqual([{ uuid: 'u0', macs: ['52:54:00:00:00:01'] }]);
    const keptQemu = { ...kept, nodes: [{ ...kept.nodes[0]!, backing: 'qemu' as const, model: qemu }] };
    expect(planLabNodes(keptQemu, request, 'f').changes).toEqual([]);
    expect(() => planLabNodes(keptQemu, { ...request, qemuModel: { ...qemu, memoryMiB: 4096 } }, 'f')).toThrow(
      /32 GiB RAM.* → qemu \(qemu, 6 cores, 4 GiB RAM/,
    );
    // Same description, other details: the differing fields are named.
    const flags = { ...qemu, cpu: { ...qemu.cpu, flags: ['fpu'] } };
    expect(() => planLabNodes(keptQemu, { ...request, qemuModel: flags }, 'f')).toThrow(/ with other cpu$/m);
  });
});

describe('the state file and esi lab status', () => {
  it('an unreadable state file is an error naming it, and the lab does not start', async () => {
    const dir = tempDir();
    fs.mkdirSync(path.join(dir, 'lab'));
    fs.writeFileSync(labStatePath(dir), '{"version": 1, "seed": "x", "nodes": [{"id": "node-7"}]}');
    await expect(start(dir, 1)).rejects.toThrow(`the lab state ${labStatePath(dir)} is invalid: nodes[0].id must be node-0`);
    fs.writeFileSync(labStatePath(dir), 'not json');
    await expect(start(dir, 1)).rejects.toThrow(/is not JSON/);
    expect(() => labStatus(tempDir())).toThrow(/no lab has been started with data directory/);
  });

  it('lists nodes, BMC addresses, models, IPMI ports, and sparse disks by virtual, apparent and allocated size', async () => {
    const dir = tempDir();
    const lab = await start(dir, 2, 'storage:1');
    const state = readLabState(dir)!;
    // A QEMU node and an IPMI node as a lab with them would have kept them, with their disk files.
    const qemuModel = { ...loadLabModel('small'), name: 'qemu' };
    writeLabState(dir, {
      ...state,
      nodes: [...state.nodes, { id: 'node-2', backing: 'qemu', uuid: 'u2', macs: ['52:54:00:00:00:02'], model: qemuModel }],
      ipmi: [{ name: 'ipmi-0', host: '127.0.0.1', port: 40623 }],
    });
    fs.mkdirSync(path.join(dir, 'lab', 'node-2'), { recursive: true });
    const qcow = path.join(dir, 'lab', 'node-2', 'disk.qcow2');
    const header = Buffer.alloc(4096);
    header.writeUInt32BE(0x514649fb, 0);
    header.writeUInt32BE(3, 4);
    header.writeBigUInt64BE(8n * 1024n ** 3n, 24);
    fs.writeFileSync(qcow, header);
    fs.mkdirSync(path.join(dir, 'lab', 'node-0'), { recursive: true });
    const img = path.join(dir, 'lab', 'node-0', 'disk.img');
    const fd = fs.openSync(img, 'w');
    fs.ftruncateSync(fd, 1024 ** 3);
    fs.writeSync(fd, Buffer.alloc(64 * 1024, 1), 0, 64 * 1024, 0);
    fs.closeSync(fd);

    const status = labStatus(dir);
    expect(status).toMatchObject({ url: lab.url, pid: process.pid, stateFile: labStatePath(dir) });
    expect(status.nodes.map((n) => [n.id, n.kind, n.running, n.bmc])).toEqual([
      ['node-0', 'simulated', true, `${lab.url}/redfish/v1/Systems/node-0`],
      ['node-1', 'simulated', true, `${lab.url}/redfish/v1/Systems/node-1`],
      ['node-2', 'qemu', false, `${lab.url}/redfish/v1/Systems/node-2`],
      ['ipmi-0', 'ipmi', false, 'ipmi 127.0.0.1:40623/udp'],
    ]);
    expect(status.nodes[0]!.model).toMatch(/^storage \(simulated, /);
    expect(status.nodes[0]).toMatchObject({ uuid: lab.systems.get('node-0').uuid, mac: lab.systems.get('node-0').mac });
    const raw = status.nodes[0]!.disk!;
    expect(raw).toMatchObject({ file: img, virtualBytes: 1024 ** 3, apparentBytes: 1024 ** 3 });
    expect(raw.allocatedBytes).toBeGreaterThanOrEqual(64 * 1024);
    expect(raw.allocatedBytes).toBeLessThan(64 * 1024 ** 2);
    const q = status.nodes[2]!.disk!;
    expect(q).toMatchObject({ virtualBytes: 8 * 1024 ** 3, apparentBytes: 4096 });
    expect(describeDisk(q)).toMatch(/^8 GiB virtual, 4 KiB file, \d+(\.\d)? KiB allocated$/);
    expect(status.nodes[1]!.disk).toBeNull();
    expect(describeDisk(null)).toBe('-');
    expect(diskUsage(path.join(dir, 'none'))).toBeNull();

    await lab.close();
    const stopped = labStatus(dir);
    expect(stopped.pid).toBeNull();
    expect(stopped.nodes.every((n) => !n.running)).toBe(true);
  });
});

describeNeeding([TOOLS.qemuImg], 'esi lab status and a real qcow2', () => {
  it('tells a fresh 8 GiB qcow2 as 8 GiB virtual and a few hundred KiB on disk', () => {
    const file = path.join(tempDir(), 'disk.qcow2');
    execFileSync('qemu-img', ['create', '-q', '-f', 'qcow2', file, '8G']);
    const info = JSON.parse(execFileSync('qemu-img', ['info', '--output=json', file], { encoding: 'utf8' })) as Record<string, number>;
    const d = diskUsage(file)!;
    expect(d.virtualBytes).toBe(info['virtual-size']);
    expect(d.allocatedBytes).toBe(info['actual-size']);
    expect(d.allocatedBytes).toBeLessThan(1024 ** 2);
    expect(describeDisk(d)).toMatch(/^8 GiB virtual, \d+(\.\d)? KiB file, \d+(\.\d)? KiB allocated$/);
  });
});
