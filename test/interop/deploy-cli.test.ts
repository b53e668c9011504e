/**
 * Interop: Debian's `openstack baremetal` CLI (python3-ironicclient, microversion 1.78) deploys
 * a lab node through the agent flow — `node deploy --config-drive '{"meta_data": …}'`, then
 * `node undeploy` — against an in-process esi server whose lab boots a real agent process.
 *
 * Needs `/usr/bin/openstack` and python3-ironicclient (a failure when missing, see test/helpers/tools.ts).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { inspectDisk } from '../../src/lab/disk-report.ts';
import { bm, waitNode, type ConductorEnv } from '../api/conductor/support.ts';
import { agentNode, startDeployEnv, uploadImage } from '../api/deploy/support.ts';
import { describeNeeding, OPENSTACK_BAREMETAL } from '../helpers/tools.ts';
import { personaCli } from './persona-cli.ts';

/** Fails, naming the Debian packages, when one is missing (ESI_TEST_ALLOW_MISSING_TOOLS=1 skips instead). */
const NEEDS = OPENSTACK_BAREMETAL;

describeNeeding(NEEDS, 'openstack baremetal node deploy / undeploy with the agent', () => {
  let env: ConductorEnv;
  let node: any;

  /** `openstack <args>` as the admin; stdout. */
  const cli = personaCli(() => env.ts.url, 60_000);
  const os = (args: string[]): Promise<string> => cli.os('admin', args);

  beforeAll(async () => {
    env = await startDeployEnv(1);
    const imageId = await uploadImage(env, Buffer.alloc(2 * 1024 * 1024, 7));
    ({ node } = await agentNode(env, 'node-0'));
    await waitNode(env, node.uuid, (n) => n.provision_state === 'available', 60_000);
    const r = await bm(env.ts, env.p.admin, 'PATCH', `/v1/nodes/${node.uuid}`, [
      { op: 'add', path: '/instance_info', value: { image_source: imageId } },
    ]);
    expect(r.status, r.text).toBe(200);
  }, 120_000);
  afterAll(async () => {
    await env?.close();
  });

  it('deploys with a JSON config drive, then undeploys (cleaning wipes the disk)', async () => {
    await os(['baremetal', 'node', 'deploy', node.uuid, '--config-drive', '{"meta_data": {"hostname": "h1"}}']);
    const active = await waitNode(env, node.uuid, (n) => n.provision_state === 'active' || / failed$/.test(n.provision_state), 60_000);
    expect(active.provision_state, active.last_error).toBe('active');
    const shown = JSON.parse(
      await os(['baremetal', 'node', 'show', node.uuid, '-f', 'json', '-c', 'provision_state', '-c', 'instance_info']),
    );
    expect(shown.provision_state).toBe('active');
    expect(shown.instance_info.configdrive).toBe('******');
    expect((await inspectDisk(env.lab.agents!.diskPath('node-0'))).metaData?.hostname).toBe('h1');

    await os(['baremetal', 'node', 'undeploy', node.uuid]);
    const back = await waitNode(env, node.uuid, (n) => n.provision_state === 'available' || / failed$/.test(n.provision_state), 60_000);
    expect(back.provision_state, back.last_error).toBe('available');
    expect((await inspectDisk(env.lab.agents!.diskPath('node-0'))).blank).toBe(true);
  });
});
