/**
 * Interop: Debian's python3-sushy (the Redfish library Ironic's redfish driver uses) against
 * the lab's BMC emulator. `sushy_check.py` connects with session, Basic and automatic auth,
 * reads the service root, systems, managers (virtual media) and chassis, powers a system on
 * and sets a one-time PXE boot override; this test then checks the lab's state.
 *
 * Runs `/usr/bin/python3` (Debian's interpreter; the first `python3` on PATH cannot import
 * sushy). A failure when sushy cannot be imported (see test/helpers/tools.ts).
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startLab, type Lab } from '../../src/lab/index.ts';
import { describeNeeding, TOOLS } from '../helpers/tools.ts';

const PYTHON = '/usr/bin/python3';
const SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'sushy_check.py');

/** Runs the check script without blocking the event loop (the lab serves it meanwhile). */
function runCheck(url: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(PYTHON, [SCRIPT, url, 'admin', 'password'], { timeout: 120_000, encoding: 'utf8' }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : 1;
      resolve({ code, stdout, stderr });
    });
  });
}

/** Fails, naming the Debian packages, when one is missing (ESI_TEST_ALLOW_MISSING_TOOLS=1 skips instead). */
const NEEDS = [TOOLS.sushy];

describeNeeding(NEEDS, 'python3-sushy against the lab', () => {
  let lab: Lab;

  beforeAll(async () => {
    lab = await startLab({ nodes: 3, port: 0 });
  });
  afterAll(async () => {
    await lab?.close();
  });

  it('drives power, boot override, manager and chassis with session, basic and auto auth', async () => {
    const run = await runCheck(lab.url);
    expect(run.code, `sushy_check.py failed:\n${run.stderr}\n${run.stdout}`).toBe(0);
    const report = JSON.parse(run.stdout.trim().split('\n').pop()!) as {
      ok: boolean;
      results: { mode: string; system_uuid: string; power_state_before: string; inventory: { macs: string[] }; manager: { id: string } }[];
    };
    expect(report.ok).toBe(true);
    expect(report.results.map((r) => r.mode)).toEqual(['session', 'basic', 'auto']);

    report.results.forEach((r, i) => {
      const id = `node-${i}`;
      const sys = lab.systems.get(id);
      expect(r.power_state_before).toBe('Off');
      expect(r.system_uuid).toBe(sys.uuid);
      expect(r.inventory.macs).toEqual([sys.mac]);
      expect(r.manager.id).toBe(`bmc-${id}`);
      // The state sushy left behind, read from the lab itself.
      expect(sys.powerState).toBe('On');
      expect(sys.boot).toEqual({ target: 'Pxe', enabled: 'Once', mode: 'UEFI' });
      expect(sys.virtualMedia.inserted).toBe(false);
      expect(sys.bootCount).toBe(1);
    });
  });
});
