/**
 * The crash suite's networks, made once before its rounds (as admin): a fake switch, a network
 * with a subnet, an external network with a subnet, and a router joining them — what the VIF and
 * port forward flows (flows-network.ts) use.
 */
import type { FlowContext } from './flow-kit.ts';
import type { CrashCloud } from './cloud.ts';

/** POST as admin; @returns the body's `key` object @throws unless 201 */
async function make(cloud: CrashCloud, p: string, key: string, attrs: Record<string, unknown>): Promise<any> {
  const r = await cloud.call('POST', `/network/v2.0${p}`, { [key]: attrs });
  if (r.status !== 201) throw new Error(`POST ${p}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body[key];
}

/**
 * Make the suite's switch, networks and router on the running process.
 * @returns what the flows need ({@link FlowContext.net})
 * @throws when a call is refused
 */
export async function setUpNetworks(cloud: CrashCloud): Promise<FlowContext['net']> {
  await make(cloud, '/switches', 'switch', { name: 'crash-tor', switch_id: '02:00:00:00:c0:01', driver: 'fake', driver_info: {} });
  const network = await make(cloud, '/networks', 'network', { name: 'crash-net' });
  const subnet = await make(cloud, '/subnets', 'subnet', { network_id: network.id, cidr: '10.77.0.0/16', name: 'crash-sub' });
  const external = await make(cloud, '/networks', 'network', { name: 'crash-ext', 'router:external': true });
  await make(cloud, '/subnets', 'subnet', { network_id: external.id, cidr: '198.18.0.0/16', enable_dhcp: false });
  const router = await make(cloud, '/routers', 'router', { name: 'crash-router', external_gateway_info: { network_id: external.id } });
  const joined = await cloud.call('PUT', `/network/v2.0/routers/${router.id}/add_router_interface`, { subnet_id: subnet.id });
  if (joined.status !== 200) throw new Error(`router interface: ${joined.status} ${JSON.stringify(joined.body)}`);
  return { switchName: 'crash-tor', network: network.id as string, external: external.id as string };
}
