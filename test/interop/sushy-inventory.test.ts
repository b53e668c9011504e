/**
 * Interop: Debian's python3-sushy reads the lab's hardware inventory resources (Processors,
 * Memory, EthernetInterfaces, SimpleStorage, Storage/Drives) of each shipped server model the
 * way Ironic's redfish inspection does; what it reports must equal the lab description. A
 * system read through its path in lower case is the same system (paths are case-insensitive).
 * A failure when `/usr/bin/python3` cannot import sushy (see test/helpers/tools.ts).
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseModelSpec, startLab, type Lab } from '../../src/lab/index.ts';
import { describeNeeding, TOOLS } from '../helpers/tools.ts';

const PYTHON = '/usr/bin/python3';
const SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'sushy_inventory.py');

/** Fails, naming the Debian packages, when one is missing (ESI_TEST_ALLOW_MISSING_TOOLS=1 skips instead). */
const NEEDS = [TOOLS.sushy];

describeNeeding(NEEDS, 'python3-sushy reads the lab hardware inventory', () => {
  let lab: Lab;
  beforeAll(async () => {
    lab = await startLab({ nodes: 4, port: 0, models: parseModelSpec('gpu,storage,small') });
  });
  afterAll(async () => {
    await lab?.close();
  });

  it('reports CPUs, memory, NICs, disks and GPUs equal to each model description', async () => {
    const run = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(PYTHON, [SCRIPT, lab.url], { timeout: 120_000, encoding: 'utf8' }, (err, stdout, stderr) =>
        resolve({ code: err === null ? 0 : 1, stdout, stderr }),
      );
    });
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as Record<string, any>;
    expect(Object.keys(report).sort()).toEqual(lab.systems.ids.slice().sort());
    for (const id of lab.systems.ids) {
      const hw = lab.systems.get(id).machine;
      const r = report[id];
      expect(r.cpus, id).toBe(hw.cpu.sockets * hw.cpu.coresPerSocket * hw.cpu.threadsPerCore);
      expect(r.arch, id).toBe('x86');
      expect(r.memory_gib, id).toBe(hw.memoryMiB / 1024);
      expect(
        r.dimm_mib.reduce((a: number, b: number) => a + b, 0),
        id,
      ).toBe(hw.memoryMiB);
      expect(r.macs, id).toEqual(hw.nics.map((n) => n.mac).sort());
      const sizes = hw.disks.map((d) => d.sizeBytes).sort((a, b) => a - b);
      expect(r.simple_storage_sizes, id).toEqual(sizes);
      expect(r.storage_drive_sizes, id).toEqual(sizes);
      expect(
        r.drives.map((d: any) => [d.name, d.size, d.media, d.serial]),
        id,
      ).toEqual(hw.disks.map((d) => [d.name, d.sizeBytes, d.rotational ? 'HDD' : 'SSD', d.serial]));
      expect(r.gpus, id).toHaveLength(hw.gpus.length);
      expect([r.manufacturer, r.model, r.serial], id).toEqual([hw.system.manufacturer, hw.system.product, hw.system.serial]);
      expect(r.boot_mode, id).toBe(hw.bootMode === 'bios' ? 'Legacy' : 'UEFI');
      expect(r.lowercase_path_identity, id).toBe(id);
    }
    expect(lab.systems.get('node-0').machine.gpus).toHaveLength(8);
    expect(lab.systems.get('node-1').machine.disks).toHaveLength(26);
  }, 150_000);
});
