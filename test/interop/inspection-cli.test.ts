/**
 * Interop: Debian's `openstack baremetal node inspect --wait` (python-ironicclient 5.0.1)
 * inspects a lab GPU node in band through esi's agent; `node show` then reports what the lab
 * description holds, and `port list --node` the discovered ports. python-ironicclient 5.0.1
 * has no `node inventory save` (it predates API 1.81; `openstack baremetal node --help` lists
 * none), so the inventory is read over HTTP with the client's token instead.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { bm, type ConductorEnv } from '../api/conductor/support.ts';
import { expectedProperties, inspectableNode, startInspectionEnv } from '../api/inspection/support.ts';
import { describeNeeding, OPENSTACK_BAREMETAL } from '../helpers/tools.ts';
import { personaCli } from './persona-cli.ts';

/** Fails, naming the Debian packages, when one is missing (ESI_TEST_ALLOW_MISSING_TOOLS=1 skips instead). */
const NEEDS = OPENSTACK_BAREMETAL;

describeNeeding(NEEDS, 'openstack baremetal node inspect', () => {
  let env: ConductorEnv;

  /** `openstack <args>` as the admin; stdout. */
  const cli = personaCli(() => env.ts.url, 90_000);
  const os = (args: string[]): Promise<string> => cli.os('admin', args);

  beforeAll(async () => {
    env = await startInspectionEnv(1);
  }, 60_000);
  afterAll(async () => {
    await env?.close();
  });

  it("inspect --wait ends manageable with the GPU node's properties, ports and traits", async () => {
    const node = await inspectableNode(env, 'node-0');
    await os(['baremetal', 'node', 'inspect', '--wait', '60', node.uuid]);
    const shown = JSON.parse(await os(['baremetal', 'node', 'show', node.uuid, '-f', 'json']));
    const hw = env.lab.systems.get('node-0').machine;
    expect(shown.provision_state).toBe('manageable');
    expect(shown.properties).toMatchObject(expectedProperties(hw));
    expect(shown.resource_class).toBe('baremetal.gpu');
    const traits = await os(['--os-baremetal-api-version', '1.37', 'baremetal', 'node', 'trait', 'list', node.uuid, '-f', 'value']);
    expect(traits.trim().split('\n')).toEqual(['CUSTOM_GPU']);
    const ports = JSON.parse(await os(['baremetal', 'port', 'list', '--node', node.uuid, '--long', '-f', 'json']));
    expect(ports.map((p: any) => p.Address).sort()).toEqual(hw.nics.map((n) => n.mac).sort());
    const inv = await bm(env.ts, env.p.admin, 'GET', `/v1/nodes/${node.uuid}/inventory`, undefined, '1.81');
    expect(inv.status).toBe(200);
    expect(inv.body.inventory.disks).toHaveLength(hw.disks.length);
  }, 120_000);
});
