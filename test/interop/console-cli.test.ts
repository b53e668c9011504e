/**
 * Interop: Debian's `openstack baremetal node console enable|show|disable` (python3-ironicclient)
 * against esi's console API, on a lab node (redfish driver, `redfish-serial` console set with
 * `openstack baremetal node set --console-interface`), as owner, lessee and another project; and
 * the `console_info.url` the real client shows is a working websocket for the caller's own token.
 *
 * Each test enrols its own node on a lab system of its own, so the tests do not depend on their order.
 *
 * Needs `/usr/bin/openstack` and python3-ironicclient (a failure when missing, see test/helpers/tools.ts).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startLab, type Lab } from '../../src/lab/index.ts';
import { closedWithin, connect } from '../api/console/support.ts';
import { createPersonas, startTestServer, type Personas, type TestServer } from '../helpers/harness.ts';
import { describeNeeding, OPENSTACK_BAREMETAL } from '../helpers/tools.ts';
import { personaCli } from './persona-cli.ts';

let ts: TestServer;
let lab: Lab;
let p: Personas;

const { os, osJson } = personaCli(() => ts.url);

/** Fails, naming the Debian packages, when one is missing (ESI_TEST_ALLOW_MISSING_TOOLS=1 skips instead). */
const NEEDS = OPENSTACK_BAREMETAL;

describeNeeding(NEEDS, 'openstack baremetal node console', () => {
  beforeAll(async () => {
    // A lab system per test (see `enrol`).
    lab = await startLab({ nodes: 3 });
    ts = await startTestServer();
    p = await createPersonas(ts);
  }, 120_000);
  afterAll(async () => {
    await ts?.close();
    await lab?.close();
  });

  /** Lab systems handed out so far (one per test: `node-0`, `node-1`, …). */
  let systems = 0;

  /**
   * Enrols node `name` (redfish driver) on the next lab system with the openstack CLI as the
   * admin, owned by o1 and leased to l1; its UUID and lab system.
   */
  async function enrol(name: string): Promise<{ uuid: string; system: string }> {
    const system = `node-${systems++}`;
    const created = await osJson('admin', [
      'baremetal',
      'node',
      'create',
      '--driver',
      'redfish',
      '--name',
      name,
      '--driver-info',
      `redfish_address=${lab.url}`,
      '--driver-info',
      `redfish_system_id=/redfish/v1/Systems/${system}`,
      '--driver-info',
      'redfish_username=admin',
      '--driver-info',
      'redfish_password=password',
    ]);
    await os('admin', ['baremetal', 'node', 'set', '--owner', p.owner.projectId!, '--lessee', p.lessee.projectId!, name]);
    return { uuid: created.uuid, system };
  }

  it('the owner picks the redfish-serial console interface; enable is refused while it is no-console', async () => {
    await enrol('con1');
    await expect(os('owner', ['baremetal', 'node', 'console', 'enable', 'con1'])).rejects.toThrow(/does not support the console/);
    await os('owner', ['baremetal', 'node', 'set', '--console-interface', 'redfish-serial', 'con1']);
    expect((await osJson('lessee', ['baremetal', 'node', 'show', 'con1', '-c', 'console_interface'])).console_interface).toBe(
      'redfish-serial',
    );
  });

  it('enable (owner), show (lessee) with a websocket URL on esi that works with the caller token, disable (lessee)', async () => {
    const { uuid, system } = await enrol('con2');
    await os('owner', ['baremetal', 'node', 'set', '--console-interface', 'redfish-serial', 'con2']);
    expect(await osJson('lessee', ['baremetal', 'node', 'console', 'show', 'con2'])).toEqual({
      console_enabled: false,
      console_info: null,
    });
    await os('owner', ['baremetal', 'node', 'console', 'enable', 'con2']);
    const shown = await osJson('lessee', ['baremetal', 'node', 'console', 'show', 'con2']);
    const url = `${ts.url.replace(/^http/, 'ws')}/baremetal/v1/nodes/${uuid}/states/console/stream`;
    expect(shown).toEqual({ console_enabled: true, console_info: { type: 'websocket', url } });
    expect(JSON.stringify(shown)).not.toContain(lab.url);

    lab.systems.setPowerState(system, 'On');
    const s = connect(shown.console_info.url, { 'x-auth-token': p.lessee.token! });
    await s.waitFor(new RegExp(`esi-lab firmware: POST ${system}`));

    await os('lessee', ['baremetal', 'node', 'console', 'disable', 'con2']);
    expect(await osJson('owner', ['baremetal', 'node', 'console', 'show', 'con2'])).toEqual({ console_enabled: false, console_info: null });
    expect((await closedWithin(s)).code).toBe(4409);
  });

  it('another project: not found for show, enable and disable', async () => {
    await enrol('con3');
    for (const verb of ['show', 'enable', 'disable']) {
      await expect(os('other', ['baremetal', 'node', 'console', verb, 'con3'])).rejects.toThrow(/could not be found/);
    }
  });
});
