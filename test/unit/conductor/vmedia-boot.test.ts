/**
 * Booting the deploy agent from virtual media on a redfish node (src/conductor/agent/session.ts
 * `bootAgent`) against the real lab: the ISO of `driver_info.deploy_iso` is inserted into the
 * BMC's virtual CD, the next boot is overridden to it, and the node reboots from it; the node's
 * own ISO is inserted for a kernel/ramdisk pair; a node with nothing to insert is not booted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootAgent } from '../../../src/conductor/agent/session.ts';
import { openNode } from '../../../src/conductor/tasks/context.ts';
import { startLab, type Lab } from '../../../src/lab/index.ts';
import { makeEnv, makeNode } from './fixtures.ts';
import type { BootMediaEnv } from '../../../src/conductor/tasks/context.ts';
import type { Node } from '../../../src/domain/inventory/model.ts';

let lab: Lab;
beforeAll(async () => {
  lab = await startLab({ nodes: 2, port: 0 });
});

/** A direct redfish node of lab system `system` with the agent keys `ramdisk`. */
function vmediaNode(system: string, ramdisk: Record<string, string>): Node {
  return makeNode({
    driver: 'redfish',
    deploy_interface: 'direct',
    boot_interface: 'redfish-virtual-media',
    driver_info: {
      redfish_address: lab.url,
      redfish_system_id: `/redfish/v1/Systems/${system}`,
      redfish_username: 'admin',
      redfish_password: 'password',
      ...ramdisk,
    },
  });
}
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

  it("inserts the node's own ISO, built by the boot media service, for a kernel and ramdisk", async () => {
    const built: string[] = [];
    const bootMedia: BootMediaEnv = {
      nodeIso: async (n, purpose) => {
        built.push(`${n.uuid}:${purpose}`);
        return `http://127.0.0.1:9/boot/media/${n.uuid}?temp_url_sig=s`;
      },
      discard: async () => undefined,
    };
    const env = { ...makeEnv(), bootMedia };
    const node = vmediaNode('node-1', { deploy_kernel: 'file:///srv/k', deploy_ramdisk: 'file:///srv/r' });
    await bootAgent(env, openNode(env, node), node, 'inspect');
    expect(built).toEqual([`${node.uuid}:inspect`]);
    expect(lab.systems.get('node-1').virtualMedia).toEqual({
      image: `http://127.0.0.1:9/boot/media/${node.uuid}?temp_url_sig=s`,
      inserted: true,
    });
    expect(lab.systems.get('node-1').lastBootOverride).toBe('Cd');
    await env.hardware.close();
  });

  it('refuses to boot an empty virtual CD: nothing is inserted, the boot device and power stay as they were', async () => {
    lab.systems.setPowerState('node-1', 'Off');
    const cases: Array<[Record<string, string>, RegExp, boolean]> = [
      [{ deploy_iso: 'file:///tmp/x.iso' }, /driver_info\.deploy_iso is not an http\(s\) URL the BMC can fetch/, true],
      [{ redfish_deploy_iso: '/srv/agent.iso' }, /driver_info\.redfish_deploy_iso is not an http\(s\) URL/, true],
      [
        { deploy_kernel: 'file:///srv/k', deploy_ramdisk: 'file:///srv/r' },
        /cannot build the node's agent ISO .* no boot media service/,
        false,
      ],
      [{ deploy_kernel: 'file:///srv/k' }, /names no agent ramdisk to insert/, true],
    ];
    for (const [ramdisk, message, withMedia] of cases) {
      const base = makeEnv();
      const env = withMedia
        ? { ...base, bootMedia: { nodeIso: async () => 'http://127.0.0.1:9/x.iso', discard: async () => undefined } }
        : base;
      const before = lab.systems.get('node-1');
      const node = vmediaNode('node-1', ramdisk);
      await expect(bootAgent(env, openNode(env, node), node, 'deploy'), JSON.stringify(ramdisk)).rejects.toThrow(message);
      const after = lab.systems.get('node-1');
      expect(after.powerState).toBe('Off');
      expect(after.bootCount).toBe(before.bootCount);
      expect(after.boot).toEqual(before.boot);
      expect(after.virtualMedia).toEqual(before.virtualMedia);
      await env.hardware.close();
    }
  });
});
