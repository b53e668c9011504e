/**
 * Interop: Debian's `openstack baremetal` CLI (python3-ironicclient, microversion 1.78) deploys
 * a lab node through the agent flow — `node deploy --config-drive '{"meta_data": …}'`, then
 * `node undeploy` — against an in-process esi server whose lab boots a real agent process.
 *
 * Skipped, with a message, when `/usr/bin/openstack` or python3-ironicclient is missing.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inspectDisk } from '../../src/lab/disk-report.ts';
import { bm, waitNode, type ConductorEnv } from '../api/conductor/support.ts';
import { agentNode, startDeployEnv, uploadImage } from '../api/deploy/support.ts';
import { ADMIN_PASSWORD } from '../helpers/harness.ts';
import { haveOpenstackCli, OPENSTACK } from './cli-driver.ts';

const run = promisify(execFile);
const available = haveOpenstackCli();
if (!available) console.warn('deploy-cli interop tests skipped: install python3-openstackclient and python3-ironicclient');

describe.runIf(available)('openstack baremetal node deploy / undeploy with the agent', () => {
  let env: ConductorEnv;
  let node: any;

  /** `openstack <args>` as the admin; stdout. */
  async function os(args: string[]): Promise<string> {
    const clean: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('OS_')) clean[k] = v;
    Object.assign(clean, {
      OS_AUTH_URL: `${env.ts.url}/identity/v3`,
      OS_AUTH_TYPE: 'password',
      OS_IDENTITY_API_VERSION: '3',
      OS_USERNAME: 'admin',
      OS_PASSWORD: ADMIN_PASSWORD,
      OS_PROJECT_NAME: 'admin',
      OS_USER_DOMAIN_NAME: 'Default',
      OS_PROJECT_DOMAIN_NAME: 'Default',
      OS_INTERFACE: 'public',
    });
    const { stdout } = await run(OPENSTACK, args, { env: clean, timeout: 60_000 });
    return stdout;
  }

  beforeAll(async () => {
    env = await startDeployEnv(1);
    const imageId = await uploadImage(env, Buffer.alloc(2 * 1024 * 1024, 7));
    ({ node } = await agentNode(env, 'node-0'));
    await waitNode(env, node.uuid, (n) => n.provision_state === 'available', 60_000);
    const r = await bm(env.ts, env.p.admin, 'PATCH', `/v1/nodes/${node.uuid}`, [{ op: 'add', path: '/instance_info', value: { image_source: imageId } }]);
    expect(r.status, r.text).toBe(200);
  }, 120_000);
  afterAll(async () => {
    await env?.close();
  });

  it('deploys with a JSON config drive, then undeploys (cleaning wipes the disk)', async () => {
    await os(['baremetal', 'node', 'deploy', node.uuid, '--config-drive', '{"meta_data": {"hostname": "h1"}}']);
    const active = await waitNode(env, node.uuid, (n) => n.provision_state === 'active' || / failed$/.test(n.provision_state), 60_000);
    expect(active.provision_state, active.last_error).toBe('active');
    const shown = JSON.parse(await os(['baremetal', 'node', 'show', node.uuid, '-f', 'json', '-c', 'provision_state', '-c', 'instance_info']));
    expect(shown.provision_state).toBe('active');
    expect(shown.instance_info.configdrive).toBe('******');
    expect((await inspectDisk(env.lab.agents!.diskPath('node-0'))).metaData?.hostname).toBe('h1');

    await os(['baremetal', 'node', 'undeploy', node.uuid]);
    const back = await waitNode(env, node.uuid, (n) => n.provision_state === 'available' || / failed$/.test(n.provision_state), 60_000);
    expect(back.provision_state, back.last_error).toBe('available');
    expect((await inspectDisk(env.lab.agents!.diskPath('node-0'))).blank).toBe(true);
  });
});
