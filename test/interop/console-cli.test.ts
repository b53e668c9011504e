/**
 * Interop: Debian's `openstack baremetal node console enable|show|disable` (python3-ironicclient)
 * against esi's console API, on a lab node (redfish driver, `redfish-serial` console set with
 * `openstack baremetal node set --console-interface`), as owner, lessee and another project; and
 * the `console_info.url` the real client shows is a working websocket for the caller's own token.
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
  let uuid = '';

  beforeAll(async () => {
    lab = await startLab({ nodes: 1 });
    ts = await startTestServer();
    p = await createPersonas(ts);
    const created = await osJson('admin', [
      'baremetal',
      'node',
      'create',
      '--driver',
      'redfish',
      '--name',
      'con1',
      '--driver-info',
      `redfish_address=${lab.url}`,
      '--driver-info',
      'redfish_system_id=/redfish/v1/Systems/node-0',
      '--driver-info',
      'redfish_username=admin',
      '--driver-info',
      'redfish_password=password',
    ]);
    uuid = created.uuid;
    await os('admin', ['baremetal', 'node', 'set', '--owner', p.owner.projectId!, '--lessee', p.lessee.projectId!, 'con1']);
  }, 120_000);
  afterAll(async () => {
    await ts?.close();
    await lab?.close();
  });

  it('the owner picks the redfish-serial console interface; enable is refused while it is no-console', async () => {
    await expect(os('owner', ['baremetal', 'node', 'console', 'enable', 'con1'])).rejects.toThrow(/does not support the console/);
    await os('owner', ['baremetal', 'node', 'set', '--console-interface', 'redfish-serial', 'con1']);
    expect((await osJson('lessee', ['baremetal', 'node', 'show', 'con1', '-c', 'console_interface'])).console_interface).toBe(
      'redfish-serial',
    );
  });

  it('enable (owner), show (lessee) with a websocket URL on esi that works with the caller token, disable (lessee)', async () => {
    expect(await osJson('lessee', ['baremetal', 'node', 'console', 'show', 'con1'])).toEqual({
      console_enabled: false,
      console_info: null,
    });
    await os('owner', ['baremetal', 'node', 'console', 'enable', 'con1']);
    const shown = await osJson('lessee', ['baremetal', 'node', 'console', 'show', 'con1']);
    const url = `${ts.url.replace(/^http/, 'ws')}/baremetal/v1/nodes/${uuid}/states/console/stream`;
    expect(shown).toEqual({ console_enabled: true, console_info: { type: 'websocket', url } });
    expect(JSON.stringify(shown)).not.toContain(lab.url);

    lab.systems.setPowerState('node-0', 'On');
    const s = connect(shown.console_info.url, { 'x-auth-token': p.lessee.token! });
    await s.waitFor(/esi-lab firmware: POST node-0/);

    await os('lessee', ['baremetal', 'node', 'console', 'disable', 'con1']);
    expect(await osJson('owner', ['baremetal', 'node', 'console', 'show', 'con1'])).toEqual({ console_enabled: false, console_info: null });
    expect((await closedWithin(s)).code).toBe(4409);
  });

  it('another project: not found for show, enable and disable', async () => {
    for (const verb of ['show', 'enable', 'disable']) {
      await expect(os('other', ['baremetal', 'node', 'console', verb, 'con1'])).rejects.toThrow(/could not be found/);
    }
  });
});
