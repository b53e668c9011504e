/**
 * Interop: Debian's python3-sushy against the lab's BIOS (attributes, attribute registry,
 * pending settings applied at reset), virtual media under the manager (InsertMedia /
 * EjectMedia) and storage (controller, drives, volumes) — the resources Ironic's redfish BIOS,
 * boot and RAID code reads through sushy. `sushy_bios_vmedia.py` does the work; this test
 * checks its observations against the lab's own state.
 *
 * Runs `/usr/bin/python3`; a failure when it cannot import sushy (see test/helpers/tools.ts).
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startLab, type Lab } from '../../src/lab/index.ts';
import { describeNeeding, TOOLS } from '../helpers/tools.ts';

const PYTHON = '/usr/bin/python3';
const SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'sushy_bios_vmedia.py');

/** Fails, naming the Debian packages, when one is missing (ESI_TEST_ALLOW_MISSING_TOOLS=1 skips instead). */
const NEEDS = [TOOLS.sushy];

describeNeeding(NEEDS, 'python3-sushy: BIOS, virtual media and storage of the lab', () => {
  let lab: Lab;
  beforeAll(async () => {
    lab = await startLab({ nodes: 1, port: 0 });
  });
  afterAll(async () => lab?.close());

  it('reads and applies BIOS settings, inserts and ejects virtual media, lists storage', async () => {
    const run = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(PYTHON, [SCRIPT, lab.url, '/redfish/v1/Systems/node-0'], { timeout: 120_000, encoding: 'utf8' }, (err, stdout, stderr) =>
        resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, stdout, stderr }),
      );
    });
    expect(run.code, `sushy_bios_vmedia.py failed:\n${run.stderr}\n${run.stdout}`).toBe(0);
    const { out } = JSON.parse(run.stdout.trim().split('\n').pop()!);
    expect(out.attributes_before.ProcVirtualization).toBe('Enabled');
    expect(out.registry_values).toEqual(['Enabled', 'Disabled']);
    expect(out.registry_type).toBe('Integer');
    expect(out.pending).toEqual({ ProcVirtualization: 'Disabled', NumaNodesPerSocket: 3 });
    expect(out.attributes_after).toMatchObject({ ProcVirtualization: 'Disabled', NumaNodesPerSocket: 3 });
    expect(lab.bios.attributes('node-0')).toMatchObject({ ProcVirtualization: 'Disabled', NumaNodesPerSocket: 3 });
    expect(out.vmedia_inserted).toEqual({ image: 'http://127.0.0.1:9/ipa.iso', inserted: true });
    expect(out.vmedia_ejected).toEqual({ image: null, inserted: false });
    expect(lab.systems.get('node-0').virtualMedia.inserted).toBe(false);
    expect(out.storage).toMatchObject({ id: 'RAID.Integrated.1-1', drives: 4, volumes: 0 });
    expect(out.storage.raid_types.length).toBe(5);
  });
});
