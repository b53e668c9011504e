/**
 * Interop: Debian's `openstack baremetal` CLI (python3-ironicclient) enrols an `ipmi` node
 * whose BMC is a real openipmi `ipmi_sim`, validates it, powers it on (owner) and off (lessee)
 * and sets/reads its boot device, while esi's conductor drives the BMC with Debian's ipmitool.
 * The BMC password never appears in any CLI output.
 *
 * Each test enrols its own node on a BMC of its own (started for the test), so the tests do not
 * depend on their order.
 *
 * Needs the openstack CLI, ipmi_sim and ipmitool (a failure when missing, see test/helpers/tools.ts).
 */
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { createPersonas, startTestServer, type Personas, type TestServer } from '../helpers/harness.ts';
import { ipmiSims, type IpmiSimBmc } from '../helpers/ipmi-sim.ts';
import { describeNeeding, IPMI_TOOLS, OPENSTACK_BAREMETAL } from '../helpers/tools.ts';
import { personaCli, type CliPersona } from './persona-cli.ts';
import { waitFor } from '../helpers/wait-for.ts';

const PASSWORD = 'Cli-Ipmi-Pw-7';
let ts: TestServer;
let p: Personas;

/** Polls `node show` (as admin) until the node has no pending power change and no lock. */
async function settledPower(name: string): Promise<any> {
  const uuid = (await osJson('admin', ['baremetal', 'node', 'show', name, '-c', 'uuid'])).uuid;
  return waitFor(
    () => ts.server.services.inventory.nodeRepository.get(uuid),
    (n) => n!.target_power_state === null && n!.reservation === null,
    { timeoutMs: 60_000, intervalMs: 200, what: `node ${name} settled` },
  );
}

const cli = personaCli(() => ts.url);
/** `openstack` as a persona; no output may hold the BMC password. */
async function os(who: CliPersona, args: string[]): Promise<string> {
  const out = await cli.os(who, args);
  expect(out).not.toContain(PASSWORD);
  return out;
}
const osJson = async (who: CliPersona, args: string[]): Promise<any> => JSON.parse(await os(who, [...args, '-f', 'json']));

/** Fails, naming the Debian packages, when one is missing (ESI_TEST_ALLOW_MISSING_TOOLS=1 skips instead). */
const NEEDS = [...OPENSTACK_BAREMETAL, ...IPMI_TOOLS];

describeNeeding(NEEDS, 'openstack baremetal CLI with an ipmi node (ipmi_sim)', () => {
  const sims = ipmiSims();
  let bmc: IpmiSimBmc;

  beforeAll(async () => {
    ts = await startTestServer({ env: { ESI_POWER_SYNC_INTERVAL: '3600' } });
    p = await createPersonas(ts);
  });
  afterAll(async () => ts?.close());
  beforeEach(async () => {
    [bmc] = (await sims.start(1, { password: PASSWORD })) as [IpmiSimBmc];
  });
  afterEach(async () => sims.stop());

  /**
   * `openstack baremetal node create --driver ipmi` of node `name` on this test's BMC, then
   * `node set` of its owner (o1) and lessee (l1), as the admin; the create command's output.
   */
  async function enrol(name: string): Promise<any> {
    const info = Object.entries(bmc.driverInfo).flatMap(([k, v]) => ['--driver-info', `${k}=${v}`]);
    const created = await osJson('admin', ['baremetal', 'node', 'create', '--driver', 'ipmi', '--name', name, ...info]);
    await os('admin', ['baremetal', 'node', 'set', '--owner', p.owner.projectId!, '--lessee', p.lessee.projectId!, name]);
    return created;
  }

  it('enrols the node with --driver ipmi and shows the password masked', async () => {
    const created = await enrol('ipmi-cli');
    expect(created).toMatchObject({ driver: 'ipmi', power_interface: 'ipmitool', management_interface: 'ipmitool' });
    expect(created.driver_info.ipmi_password).toBe('******');
    const shown = await osJson('owner', ['baremetal', 'node', 'show', 'ipmi-cli']);
    // ironicclient sends a numeric --driver-info value as a JSON number.
    expect(shown.driver_info).toEqual({ ...bmc.driverInfo, ipmi_port: bmc.port, ipmi_password: '******' });
    const validate = await osJson('admin', ['baremetal', 'node', 'validate', 'ipmi-cli']);
    expect(validate.find((r: any) => r.Interface === 'power')).toMatchObject({ Result: true });
    expect(validate.find((r: any) => r.Interface === 'management')).toMatchObject({ Result: true });
  });

  it('powers the node on (owner) and off (lessee) on the simulated BMC', async () => {
    await enrol('ipmi-power');
    await settledPower('ipmi-power');
    await os('owner', ['baremetal', 'node', 'power', 'on', 'ipmi-power']);
    const on = await settledPower('ipmi-power');
    expect(on.last_error).toBeNull();
    expect(on.power_state).toBe('power on');
    expect(await bmc.power()).toBe('on');
    expect((await osJson('lessee', ['baremetal', 'node', 'show', 'ipmi-power', '-c', 'power_state'])).power_state).toBe('power on');
    await os('lessee', ['baremetal', 'node', 'power', 'off', 'ipmi-power']);
    const off = await settledPower('ipmi-power');
    expect(off.power_state).toBe('power off');
    expect(await bmc.power()).toBe('off');
  });

  it('sets and shows the boot device', async () => {
    await enrol('ipmi-boot');
    await os('owner', ['baremetal', 'node', 'boot', 'device', 'set', 'ipmi-boot', 'pxe', '--persistent']);
    expect(await bmc.bootDevice()).toBe('pxe');
    const dev = await osJson('owner', ['baremetal', 'node', 'boot', 'device', 'show', 'ipmi-boot']);
    expect(dev.boot_device).toBe('pxe');
    await os('admin', ['baremetal', 'node', 'boot', 'device', 'set', 'ipmi-boot', 'disk']);
    expect(await bmc.bootDevice()).toBe('default');
    expect((await osJson('admin', ['baremetal', 'node', 'boot', 'device', 'show', 'ipmi-boot'])).boot_device).toBe('disk');
  });
});
