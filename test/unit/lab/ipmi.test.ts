/**
 * The lab's IPMI nodes: `esi lab --lab-ipmi M` starts M ipmi_sim BMCs, prints each one's
 * driver_info, the BMCs answer ipmitool with those credentials, and they are gone (process and
 * configuration) after SIGTERM. Also startIpmiSim's own clean-up and argument checks.
 */
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { startIpmiLab } from '../../../src/lab/ipmi.ts';
import { startIpmiSim } from '../../helpers/ipmi-sim.ts';
import { describeNeeding, IPMI_TOOLS } from '../../helpers/tools.ts';
import { waitFor } from '../../helpers/wait-for.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const run = promisify(execFile);

/** `ipmitool chassis power status` against a BMC; resolves with stdout or rejects. */
async function powerStatus(port: number, password = 'password'): Promise<string> {
  const args = [
    '-I',
    'lanplus',
    '-C',
    '3',
    '-H',
    '127.0.0.1',
    '-p',
    String(port),
    '-U',
    'admin',
    '-E',
    '-N',
    '1',
    '-R',
    '1',
    'chassis',
    'power',
    'status',
  ];
  return (await run('ipmitool', args, { env: { PATH: '/usr/bin:/bin', IPMI_PASSWORD: password }, timeout: 10_000 })).stdout;
}

describeNeeding(IPMI_TOOLS, 'IPMI lab nodes', () => {
  it('esi lab --lab-ipmi 2 prints two enrolable BMCs that answer, and removes them on SIGTERM', async () => {
    // A data directory of its own: the lab keeps its nodes and IPMI ports there (src/lab/persist.ts).
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-lab-ipmi-'));
    const child = spawn(process.execPath, ['bin/esi.js', 'lab', '--nodes', '1', '--port', '0', '--lab-ipmi', '2', '--data-dir', dataDir], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    await waitFor(
      () => out,
      (text) => {
        if (child.exitCode !== null) throw new Error(`esi lab exited before printing two IPMI nodes:\n${text}`);
        return (text.match(/--driver ipmi/g) ?? []).length >= 2;
      },
      { timeoutMs: 30_000, intervalMs: 100, what: 'esi lab printing two IPMI nodes' },
    );
    const ports = [...out.matchAll(/ipmi_port=(\d+)/g)].map((m) => Number(m[1]));
    expect(ports).toHaveLength(2);
    expect(out).toMatch(/ipmi-0: ipmi_sim at 127\.0\.0\.1:\d+\/udp/);
    for (const port of ports) expect(await powerStatus(port)).toMatch(/Chassis Power is off/);
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    for (const port of ports) await expect(powerStatus(port)).rejects.toThrow();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  it('startIpmiLab refuses bad counts; startIpmiSim removes its directory on stop', async () => {
    await expect(startIpmiLab(0)).rejects.toThrow(/from 1 to 64/);
    await expect(startIpmiLab(1.5)).rejects.toThrow(/from 1 to 64/);
    await expect(startIpmiSim({ password: 'has"quote' })).rejects.toThrow(/passwords/);
    const bmc = await startIpmiSim({ password: 'Other-Pw-1', poweredOn: true });
    expect(await powerStatus(bmc.port, 'Other-Pw-1')).toMatch(/Chassis Power is on/);
    await expect(powerStatus(bmc.port, 'password')).rejects.toThrow();
    const log = await bmc.controlLog();
    expect(log).toContain('get power');
    expect(fs.readFileSync(path.join(bmc.dir, 'lan.conf'), 'utf8')).toMatch(new RegExp(`addr 127\\.0\\.0\\.1 ${bmc.port}`));
    await bmc.stop();
    await bmc.stop();
    await expect(powerStatus(bmc.port, 'Other-Pw-1')).rejects.toThrow();
    expect(fs.existsSync(bmc.dir)).toBe(false);
  }, 60_000);
});
