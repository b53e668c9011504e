/**
 * A VIF through the ssh-cli driver end to end: the API records the attachment, the switch
 * reconciler logs in to an NX-OS-like switch over SSH and configures the port; the switch then
 * loses its configuration and `resync` (admin) restores it from the database.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startSshSwitch, type SshSwitch } from '../../helpers/ssh-switch.ts';
import { bm, cabledNode, create, createSwitch, net, portAsAdmin, settle, startNetEnv, type NetEnv } from './support.ts';

let env: NetEnv;
let sw: SshSwitch;
beforeAll(async () => {
  sw = await startSshSwitch({ vendor: 'cisco_nxos' });
  env = await startNetEnv();
});
afterAll(async () => {
  await env?.ts.close();
  await sw?.close();
});

it('programs the port over SSH and resync restores a switch that lost its configuration', async () => {
  const { lessee, admin } = env.p;
  await createSwitch(env, 'nx', 'ssh-cli', {
    address: '127.0.0.1',
    port: sw.port,
    username: 'admin',
    password: 'switch-pw',
    vendor: 'cisco_nxos',
    host_key_sha256: sw.hostKeySha256,
  });
  const { node, ports } = await cabledNode(env, 'sshnode', 'nx', ['52:54:00:00:05:00']);
  await bm(env, admin, 'PATCH', `/v1/ports/${ports[0].uuid}`, [
    { op: 'replace', path: '/local_link_connection/port_id', value: 'Ethernet1/5' },
  ]);
  const n = await create(env, lessee, 'networks', 'network', { name: 'over-ssh' });
  const vlan = (await net(env, admin, 'GET', `/networks/${n.id}`)).body.network['provider:segmentation_id'];
  const p = await create(env, lessee, 'ports', 'port', { network_id: n.id });
  expect((await bm(env, lessee, 'POST', `/v1/nodes/${node.uuid}/vifs`, { id: p.id })).status).toBe(204);
  expect(
    (
      await settle(
        env,
        () => portAsAdmin(env, p.id),
        (x) => x.status === 'ACTIVE',
      )
    ).status,
  ).toBe('ACTIVE');
  expect(sw.running.ifaces.get('Ethernet1/5')).toMatchObject({ l2: true, mode: 'access', access: vlan, shutdown: false });
  expect(sw.startup.ifaces.get('Ethernet1/5')?.access).toBe(vlan);

  sw.wipe();
  expect(sw.running.ifaces.size).toBe(0);
  expect((await net(env, admin, 'POST', '/switches/nx/resync')).body.resynced).toBe(1);
  await settle(
    env,
    async () => sw.running.ifaces.get('Ethernet1/5'),
    (i) => i?.access === vlan,
  );
  expect(sw.running.ifaces.get('Ethernet1/5')).toMatchObject({ l2: true, mode: 'access', access: vlan, shutdown: false });
  expect(sw.running.vlans.has(vlan)).toBe(true);

  expect((await bm(env, lessee, 'DELETE', `/v1/nodes/${node.uuid}/vifs/${p.id}`)).status).toBe(204);
  await settle(
    env,
    async () => sw.running.ifaces.get('Ethernet1/5'),
    (i) => i?.shutdown === true,
  );
  expect(sw.running.ifaces.get('Ethernet1/5')).toMatchObject({ shutdown: true, allowed: [] });
});
