/**
 * Networks of compute servers (src/server/server-networks.ts) over the running server's
 * networking services: `release` (server delete, failed create) acts with the conductor's
 * service identity, so it must touch only the server's own project's ports — not ports another
 * project tagged with the server's UUID as `device_id` (a field any port owner writes) — and it
 * must detach the ports the request named (`networks[].port`), keeping them, as well as delete
 * the ports it made.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerNetworks } from '../../../src/domain/compute/index.ts';
import { serverNetworksOver, SERVER_PORT_OWNER } from '../../../src/server/server-networks.ts';
import { bm, cabledNode, create, createSwitch, net, portAsAdmin, startNetEnv, type NetEnv } from './support.ts';

let env: NetEnv;
let node: any;
let nics: any[];
let sn: ServerNetworks;
beforeAll(async () => {
  env = await startNetEnv();
  await createSwitch(env, 'tor-s');
  ({ node, ports: nics } = await cabledNode(env, 'sn1', 'tor-s', ['52:54:00:00:61:00', '52:54:00:00:61:01', '52:54:00:00:61:02']));
  sn = serverNetworksOver(() => env.ts.server.services.networking);
});
afterAll(async () => env?.ts.close());

const SERVER = '5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b';
const vifsOf = async (): Promise<string[]> =>
  ((await bm(env, env.p.admin, 'GET', `/v1/nodes/${node.uuid}/vifs`)).body.vifs as Array<{ id: string }>).map((v) => v.id).sort();

describe('release', () => {
  it('detaches the named port (kept) and deletes the made one; other projects’ ports are untouched', async () => {
    const { owner, lessee, other } = env.p;
    const lnet = await create(env, lessee, 'networks', 'network', { name: 'srv-net' });
    const named = await create(env, lessee, 'ports', 'port', { network_id: lnet.id, name: 'my-port' });
    const requested = [{ uuid: lnet.id }, { port: named.id }];
    const made = await sn.attach(lessee.context!, node.uuid, SERVER, requested);
    expect(made).toHaveLength(2);
    expect(made[1]).toBe(named.id);
    expect(await portAsAdmin(env, made[0]!)).toMatchObject({
      device_id: SERVER,
      device_owner: SERVER_PORT_OWNER,
      project_id: lessee.projectId,
    });

    // The node's owner attaches its own port to the third NIC and tags it with the server's
    // UUID; another project tags a port of its own as well.
    const onet = await create(env, owner, 'networks', 'network', { name: 'owner-infra-s' });
    const oport = await create(env, owner, 'ports', 'port', { network_id: onet.id, device_owner: SERVER_PORT_OWNER, device_id: SERVER });
    expect((await bm(env, owner, 'POST', `/v1/nodes/${node.uuid}/vifs`, { id: oport.id, port_uuid: nics[2].uuid })).status).toBe(204);
    const xnet = await create(env, other, 'networks', 'network', { name: 'o2-s' });
    const xport = await create(env, other, 'ports', 'port', { network_id: xnet.id, device_owner: SERVER_PORT_OWNER, device_id: SERVER });
    expect(await vifsOf()).toEqual([made[0], named.id, oport.id].sort());

    await sn.release(node.uuid, { uuid: SERVER, project_id: lessee.projectId!, networks: requested });

    expect(await vifsOf()).toEqual([oport.id]);
    expect((await net(env, lessee, 'GET', `/ports/${made[0]}`)).status).toBe(404);
    expect(await portAsAdmin(env, named.id)).toMatchObject({ name: 'my-port', 'binding:host_id': '' });
    expect(await portAsAdmin(env, oport.id)).toMatchObject({ device_id: SERVER, 'binding:host_id': node.uuid });
    expect(await portAsAdmin(env, xport.id)).toMatchObject({ device_id: SERVER });

    // Releasing again (the delete sweep repeats) changes nothing.
    await sn.release(node.uuid, { uuid: SERVER, project_id: lessee.projectId!, networks: requested });
    expect(await vifsOf()).toEqual([oport.id]);
  });
});
