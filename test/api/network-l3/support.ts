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

/** An external network, a project network and a router joining them (gateway and interface). */
export interface RoutedNet {
  readonly ext: any;
  readonly extSubnet: any;
  readonly network: any;
  readonly subnet: any;
  readonly router: any;
}

/**
 * An admin's external network (`extCidr`, pool `.10`–`.40`), a network of `persona` with a
 * subnet (`cidr`), and a router of `persona` with its gateway on the first and an interface on
 * the second — what a floating IP needs.
 */
export async function routedNet(env: NetEnv, name: string, extCidr: string, cidr: string, persona = env.p.lessee): Promise<RoutedNet> {
  const base = extCidr.split('/')[0]!.split('.').slice(0, 3).join('.');
  const { network: ext, subnet: extSubnet } = await externalNet(env, `${name}-ext`, extCidr, {
    allocation_pools: [{ start: `${base}.10`, end: `${base}.40` }],
  });
  const { network, subnet } = await tenantNet(env, `${name}-net`, cidr, persona);
  const router = await create(env, persona, 'routers', 'router', { name: `${name}-r`, external_gateway_info: { network_id: ext.id } });
  const res = await net(env, persona, 'PUT', `/routers/${router.id}/add_router_interface`, { subnet_id: subnet.id });
  expect(res.status, res.text).toBe(200);
  return { ext, extSubnet, network, subnet, router };
}

/** Count the rows of the floating IP tables (to prove a refused request wrote nothing). */
export async function fipRows(env: NetEnv): Promise<{ fips: number; forwards: number; ports: number }> {
  const db = env.ts.server.services.store.db;
  const count = async (t: 'floatingips' | 'port_forwardings' | 'network_ports') =>
    Number(
      (
        await db
          .selectFrom(t)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  return { fips: await count('floatingips'), forwards: await count('port_forwardings'), ports: await count('network_ports') };
}
