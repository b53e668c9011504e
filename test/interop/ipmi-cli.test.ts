/**
 * Interop: Debian's `openstack baremetal` CLI (python3-ironicclient) enrols an `ipmi` node
 * whose BMC is a real openipmi `ipmi_sim`, validates it, powers it on (owner) and off (lessee)
 * and sets/reads its boot device, while esi's conductor drives the BMC with Debian's ipmitool.
 * The BMC password never appears in any CLI output.
 *
 * Skipped, with a message, when the openstack CLI, ipmi_sim or ipmitool is missing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPersonas, startTestServer, type Personas, type TestServer } from '../helpers/harness.ts';
import { IPMI_SKIP, ipmiSims, type IpmiSimBmc } from '../helpers/ipmi-sim.ts';
import { haveOpenstackCli } from './cli-driver.ts';
import { personaCli, type CliPersona } from './persona-cli.ts';

const available = haveOpenstackCli() && IPMI_SKIP === null;
if (!haveOpenstackCli()) console.warn('ipmi-cli interop tests skipped: install python3-openstackclient and python3-ironicclient');

const PASSWORD = 'Cli-Ipmi-Pw-7';
let ts: TestServer;
let p: Personas;

/** Polls `node show` (as admin) until the node has no pending power change and no lock. */
async function settledPower(name: string): Promise<any> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const n = await ts.server.services.inventory.nodeRepository.get(
      (await osJson('admin', ['baremetal', 'node', 'show', name, '-c', 'uuid'])).uuid,
    );
    if (n!.target_power_state === null && n!.reservation === null) return n;
    if (Date.now() > deadline) throw new Error(`node ${name} did not settle`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const cli = personaCli(() => ts.url);
/** `openstack` as a persona; no output may hold the BMC password. */
async function os(who: CliPersona, args: string[]): Promise<string> {
  const out = await cli.os(who, args);
  expect(out).not.toContain(PASSWORD);
  return out;
}
const osJson = async (who: CliPersona, args: string[]): Promise<any> => JSON.parse(await os(who, [...args, '-f', 'json']));

describe.skipIf(!available)('openstack baremetal CLI with an ipmi node (ipmi_sim)', () => {
  const sims = ipmiSims();
  let bmc: IpmiSimBmc;

  beforeAll(async () => {
    [bmc] = (await sims.start(1, { password: PASSWORD })) as [IpmiSimBmc];
    ts = await startTestServer({ env: { ESI_POWER_SYNC_INTERVAL: '3600' } });
    p = await createPersonas(ts);
  });
  afterAll(async () => {
    await ts?.close();
    await sims.stop();
  });

  it('enrols the node with --driver ipmi and shows the password masked', async () => {
    const info = Object.entries(bmc.driverInfo).flatMap(([k, v]) => ['--driver-info', `${k}=${v}`]);
    const created = await osJson('admin', ['baremetal', 'node', 'create', '--driver', 'ipmi', '--name', 'ipmi-cli', ...info]);
    expect(created).toMatchObject({ driver: 'ipmi', power_interface: 'ipmitool', management_interface: 'ipmitool' });
    expect(created.driver_info.ipmi_password).toBe('******');
    await os('admin', ['baremetal', 'node', 'set', '--owner', p.owner.projectId!, '--lessee', p.lessee.projectId!, 'ipmi-cli']);
    const shown = await osJson('owner', ['baremetal', 'node', 'show', 'ipmi-cli']);
    // ironicclient sends a numeric --driver-info value as a JSON number.
    expect(shown.driver_info).toEqual({ ...bmc.driverInfo, ipmi_port: bmc.port, ipmi_password: '******' });
    const validate = await osJson('admin', ['baremetal', 'node', 'validate', 'ipmi-cli']);
    expect(validate.find((r: any) => r.Interface === 'power')).toMatchObject({ Result: true });
    expect(validate.find((r: any) => r.Interface === 'management')).toMatchObject({ Result: true });
  });

  it('powers the node on (owner) and off (lessee) on the simulated BMC', async () => {
    await settledPower('ipmi-cli');
    await os('owner', ['baremetal', 'node', 'power', 'on', 'ipmi-cli']);
    const on = await settledPower('ipmi-cli');
    expect(on.last_error).toBeNull();
    expect(on.power_state).toBe('power on');
    expect(await bmc.power()).toBe('on');
    expect((await osJson('lessee', ['baremetal', 'node', 'show', 'ipmi-cli', '-c', 'power_state'])).power_state).toBe('power on');
    await os('lessee', ['baremetal', 'node', 'power', 'off', 'ipmi-cli']);
    const off = await settledPower('ipmi-cli');
    expect(off.power_state).toBe('power off');
    expect(await bmc.power()).toBe('off');
  });

  it('sets and shows the boot device', async () => {
    await os('owner', ['baremetal', 'node', 'boot', 'device', 'set', 'ipmi-cli', 'pxe', '--persistent']);
    expect(await bmc.bootDevice()).toBe('pxe');
    const dev = await osJson('owner', ['baremetal', 'node', 'boot', 'device', 'show', 'ipmi-cli']);
    expect(dev.boot_device).toBe('pxe');
    await os('admin', ['baremetal', 'node', 'boot', 'device', 'set', 'ipmi-cli', 'disk']);
    expect(await bmc.bootDevice()).toBe('default');
    expect((await osJson('admin', ['baremetal', 'node', 'boot', 'device', 'show', 'ipmi-cli'])).boot_device).toBe('disk');
  });
});
