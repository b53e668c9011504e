/**
 * Booting the deploy agent from virtual media on a redfish node (src/conductor/agent/session.ts
 * `bootAgent`) against the real lab: the ISO of `driver_info.deploy_iso` is inserted into the
 * BMC's virtual CD, the next boot is overridden to it, and the node reboots from it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootAgent } from '../../../src/conductor/agent/session.ts';
import { openNode } from '../../../src/conductor/tasks/context.ts';
import { startLab, type Lab } from '../../../src/lab/index.ts';
import { makeEnv, makeNode } from './fixtures.ts';

let lab: Lab;
beforeAll(async () => {
  lab = await startLab({ nodes: 1, port: 0 });
});
afterAll(async () => lab.close());

describe('bootAgent on a redfish node', () => {
  it('inserts the deploy ISO and boots from the virtual CD once', async () => {
    const env = makeEnv();
    const node = makeNode({
      driver: 'redfish',
      deploy_interface: 'direct',
      boot_interface: 'pxe',
      driver_info: {
        redfish_address: lab.url,
        redfish_system_id: '/redfish/v1/Systems/node-0',
        redfish_username: 'admin',
        redfish_password: 'password',
        deploy_iso: 'http://127.0.0.1:9/esi-agent.iso',
      },
    });
    const dii = await bootAgent(env, openNode(env, node), node, 'clean');
    expect(dii.agent_boot).toBe('clean');
    const sys = lab.systems.get('node-0');
    expect(sys.virtualMedia).toEqual({ image: 'http://127.0.0.1:9/esi-agent.iso', inserted: true });
    expect(sys.powerState).toBe('On');
    expect(sys.lastBootOverride).toBe('Cd');
    await env.hardware.close();
  });
});
