/**
 * Helpers of the L3 API tests (external networks, routers, DHCP ports): the network tests'
 * server and personas (../network/support.ts) with a wide VLAN pool, an admin's external
 * network with a subnet, and a recorder of the dataplane wake-ups.
 */
import { expect } from 'vitest';
import type { DataplaneWake } from '../../../src/domain/networking/ports.ts';
import { create, net, startNetEnv, type NetEnv } from '../network/support.ts';

export {
  bm,
  cabledNode,
  create,
  createSwitch,
  expectNeutronError,
  net,
  portAsAdmin,
  rows,
  settle,
  type NetEnv,
} from '../network/support.ts';

/** A server with the personas, a pool of 100 VLANs and `extra` settings. */
export function startL3Env(extra: Record<string, string> = {}): Promise<NetEnv> {
  return startNetEnv({ env: { ESI_NETWORK_VLAN_RANGES: 'physnet1:100:199,physnet2', ...extra } });
}

/**
 * An external network of the admin with one subnet (`cidr`, optional pool and gateway).
 * @returns the network and subnet JSON
 */
export async function externalNet(
  env: NetEnv,
  name: string,
  cidr: string,
  subnet: Record<string, unknown> = {},
): Promise<{ network: any; subnet: any }> {
  const network = await create(env, env.p.admin, 'networks', 'network', { name, 'router:external': true });
  expect(network['router:external']).toBe(true);
  const s = await create(env, env.p.admin, 'subnets', 'subnet', { network_id: network.id, cidr, enable_dhcp: false, ...subnet });
  return { network, subnet: s };
}

/** A project network with one subnet, as `persona` (`owner` by default). */
export async function tenantNet(
  env: NetEnv,
  name: string,
  cidr: string,
  persona = env.p.owner,
  subnet: Record<string, unknown> = {},
): Promise<{ network: any; subnet: any }> {
  const network = await create(env, persona, 'networks', 'network', { name });
  const s = await create(env, persona, 'subnets', 'subnet', { network_id: network.id, cidr, ...subnet });
  return { network, subnet: s };
}

/** Ids of a list answer, sorted. */
export function ids(res: { body: any }, key: string): string[] {
  return res.body[key].map((x: any) => x.id).sort();
}

/** A router as admin sees it. */
export async function routerAsAdmin(env: NetEnv, id: string): Promise<any> {
  const res = await net(env, env.p.admin, 'GET', `/routers/${id}`);
  expect(res.status, res.text).toBe(200);
  return res.body.router;
}

/** Every wake-up the dataplane relay passed on, in order. */
export class WakeRecorder implements DataplaneWake {
  readonly events: string[] = [];

  notifyDhcp(networkId: string): void {
    this.events.push(`dhcp:${networkId}`);
  }

  notifyRouter(routerId: string): void {
    this.events.push(`router:${routerId}`);
  }

  notifyAll(): void {
    this.events.push('all');
  }

  /** Forget what was recorded. */
  clear(): void {
    this.events.length = 0;
  }
}
