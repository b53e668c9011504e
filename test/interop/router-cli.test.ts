/**
 * Interop: Debian's `openstack` CLI (python3-openstackclient 6.0 over openstacksdk 0.101)
 * drives esi's routers and external networks against a real `esi server` process:
 *
 * network create --external | show | list --external, router create [--external-gateway] |
 * set --external-gateway [--disable-snat] | unset --external-gateway | add subnet | add port |
 * remove subnet | remove port | show (with its interfaces, which the CLI reads from
 * `port list --device-id`) | list [--long] | delete. A lessee project uses the admin's external
 * network and its own subnet; what it may not do (SNAT off, another project's router, deleting a
 * router that has interfaces, a port on the external network) fails with the API's message.
 *
 * Needs `/usr/bin/openstack` (a failure when missing, see test/helpers/tools.ts).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeNeeding, TOOLS } from '../helpers/tools.ts';
import { json, ok, openstack, startEsi, userEnv, type EsiProcess } from './cli-driver.ts';

describeNeeding([TOOLS.openstack], 'openstack router CLI', () => {
  let server: EsiProcess;
  let admin: Record<string, string>;
  let lessee: Record<string, string>;
  let other: Record<string, string>;

  beforeAll(async () => {
    server = await startEsi({ env: { ESI_NETWORK_VLAN_RANGES: 'physnet1:600:609' } });
    admin = server.adminEnv;
    await Promise.all([
      ok(openstack(admin, 'project', 'create', 'l1')),
      ok(openstack(admin, 'project', 'create', 'x1')),
      ok(openstack(admin, 'role', 'create', 'lessee')),
    ]);
    await Promise.all([
      ok(openstack(admin, 'user', 'create', '--project', 'l1', '--password', 'pw-l1', 'lessee1')),
      ok(openstack(admin, 'user', 'create', '--project', 'x1', '--password', 'pw-x1', 'other1')),
    ]);
    await Promise.all([
      ok(openstack(admin, 'role', 'add', '--user', 'lessee1', '--project', 'l1', 'lessee')),
      ok(openstack(admin, 'role', 'add', '--user', 'other1', '--project', 'x1', 'lessee')),
    ]);
    lessee = userEnv(admin, 'lessee1', 'pw-l1', 'l1');
    other = userEnv(admin, 'other1', 'pw-x1', 'x1');
  });
  afterAll(async () => server?.stop());

  // One scenario, in the order an operator and a lessee would go.
  it('creates an external network, routers with gateways and interfaces, shows, lists and deletes them', async () => {
    // step: the admin's external network with an allocation pool; everyone sees it.
    const pub = await json(openstack(admin, 'network', 'create', '-f', 'json', '--external', 'public'));
    expect(pub['router:external']).toBe(true);
    const pubSub = await json(
      openstack(
        admin,
        'subnet',
        'create',
        '-f',
        'json',
        '--network',
        'public',
        '--subnet-range',
        '203.0.113.0/24',
        '--allocation-pool',
        'start=203.0.113.10,end=203.0.113.19',
        '--no-dhcp',
        'public-sub',
      ),
    );
    const seen = await json(openstack(lessee, 'network', 'show', '-f', 'json', 'public'));
    expect(seen).toMatchObject({ id: pub.id, 'router:external': true, subnets: [pubSub.id] });
    const external = await json<any[]>(openstack(other, 'network', 'list', '--external', '-f', 'json'));
    expect(external.map((n) => n.Name)).toEqual(['public']);
    const noPort = await openstack(lessee, 'port', 'create', '--network', 'public', 'sneaky');
    expect(noPort.code).not.toBe(0);
    expect(noPort.stderr).toMatch(/external network/);

    // step: the lessee's network and a router with its gateway on the external network.
    await ok(openstack(lessee, 'network', 'create', 'lnet'));
    const lsub = await json(
      openstack(lessee, 'subnet', 'create', '-f', 'json', '--network', 'lnet', '--subnet-range', '10.7.0.0/24', 'lsub'),
    );
    const r = await json(openstack(lessee, 'router', 'create', '-f', 'json', '--external-gateway', 'public', 'lr'));
    expect(r).toMatchObject({ name: 'lr', status: 'ACTIVE', admin_state_up: true });
    expect(r.external_gateway_info).toMatchObject({
      network_id: pub.id,
      enable_snat: true,
      external_fixed_ips: [{ subnet_id: pubSub.id, ip_address: '203.0.113.10' }],
    });
    // SNAT off is the admin's: the lessee's CLI shows the policy refusal, the admin's succeeds.
    const snat = await openstack(lessee, 'router', 'set', '--external-gateway', 'public', '--disable-snat', 'lr');
    expect(snat.code).not.toBe(0);
    expect(snat.stderr).toMatch(/external_gateway_info:enable_snat/);
    await ok(openstack(admin, 'router', 'set', '--external-gateway', 'public', '--disable-snat', 'lr'));
    expect((await json(openstack(lessee, 'router', 'show', '-f', 'json', 'lr'))).external_gateway_info.enable_snat).toBe(false);
    await ok(openstack(lessee, 'router', 'set', '--external-gateway', 'public', 'lr'));

    // step: interfaces — by subnet (the subnet's gateway address) and by port.
    await ok(openstack(lessee, 'router', 'add', 'subnet', 'lr', 'lsub'));
    await ok(openstack(lessee, 'network', 'create', 'lnet2'));
    await ok(openstack(lessee, 'subnet', 'create', '--network', 'lnet2', '--subnet-range', '10.8.0.0/24', 'lsub2'));
    const p = await json(
      openstack(lessee, 'port', 'create', '-f', 'json', '--network', 'lnet2', '--fixed-ip', 'ip-address=10.8.0.254', 'leg2'),
    );
    await ok(openstack(lessee, 'router', 'add', 'port', 'lr', 'leg2'));
    const shown = await json(openstack(lessee, 'router', 'show', '-f', 'json', 'lr'));
    expect(shown.interfaces_info.map((i: any) => i.ip_address).sort()).toEqual(['10.7.0.1', '10.8.0.254']);
    expect(shown.interfaces_info.find((i: any) => i.ip_address === '10.7.0.1').subnet_id).toBe(lsub.id);
    expect(shown.interfaces_info.find((i: any) => i.ip_address === '10.8.0.254').port_id).toBe(p.id);
    const twice = await openstack(lessee, 'router', 'add', 'subnet', 'lr', 'lsub');
    expect(twice.code).not.toBe(0);
    expect(twice.stderr).toMatch(/already has a port on subnet/);

    // step: list (own routers only), --long with the gateway; another project sees nothing.
    const mine = await json<any[]>(openstack(lessee, 'router', 'list', '--long', '-f', 'json'));
    expect(mine.map((x) => [x.Name, x.Status, x.State])).toEqual([['lr', 'ACTIVE', true]]);
    expect(mine[0]['External gateway info']).toMatchObject({ network_id: pub.id });
    expect(await json<any[]>(openstack(other, 'router', 'list', '-f', 'json'))).toEqual([]);
    const hidden = await openstack(other, 'router', 'show', r.id);
    expect(hidden.code).not.toBe(0);
    expect(hidden.stderr).toMatch(/No Router found|could not be found/);

    // step: a router with interfaces is not deleted; remove them, clear the gateway, delete.
    const inUse = await openstack(lessee, 'router', 'delete', 'lr');
    expect(inUse.code).not.toBe(0);
    expect(inUse.stderr).toMatch(/still has ports/);
    await ok(openstack(lessee, 'router', 'remove', 'subnet', 'lr', 'lsub'));
    await ok(openstack(lessee, 'router', 'remove', 'port', 'lr', 'leg2'));
    expect((await json(openstack(lessee, 'router', 'show', '-f', 'json', 'lr'))).interfaces_info).toEqual([]);
    await ok(openstack(lessee, 'router', 'unset', '--external-gateway', 'lr'));
    expect((await json(openstack(lessee, 'router', 'show', '-f', 'json', 'lr'))).external_gateway_info).toBeNull();
    await ok(openstack(lessee, 'router', 'delete', 'lr'));
    expect(await json<any[]>(openstack(lessee, 'router', 'list', '-f', 'json'))).toEqual([]);

    // step: a router created bare, then given a gateway (`router set --external-gateway`).
    await ok(openstack(lessee, 'router', 'create', 'lr2'));
    await ok(openstack(lessee, 'router', 'set', '--external-gateway', 'public', 'lr2'));
    expect((await json(openstack(lessee, 'router', 'show', '-f', 'json', 'lr2'))).external_gateway_info.external_fixed_ips).toEqual([
      { subnet_id: pubSub.id, ip_address: '203.0.113.10' },
    ]);
    await ok(openstack(lessee, 'router', 'delete', 'lr2'));
    await ok(openstack(lessee, 'network', 'delete', 'lnet', 'lnet2'));
    await ok(openstack(admin, 'network', 'delete', 'public'));
  });
});
