/**
 * Interop: Debian's `openstack` CLI (python3-openstackclient 6.0 over openstacksdk 0.101)
 * drives esi's floating IPs and their port forwardings against a real `esi server` process:
 *
 * floating ip create [--port] | list [--port|--status|--long] | show (by address and by id) |
 * set --port [--description] | unset --port | delete, and floating ip port forwarding create |
 * list [--protocol|--external-protocol-port|--port] | show | set | delete. A lessee project
 * uses the admin's external network through its own router; what it may not do (a chosen
 * address, another project's floating IP, a colliding forward, a port on a floating IP with
 * forwards) fails with the API's message.
 *
 * Needs `/usr/bin/openstack` (a failure when missing, see test/helpers/tools.ts).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeNeeding, TOOLS } from '../helpers/tools.ts';
import { json, ok, openstack, startEsi, userEnv, type EsiProcess } from './cli-driver.ts';

describeNeeding([TOOLS.openstack], 'openstack floating ip CLI', () => {
  let server: EsiProcess;
  let admin: Record<string, string>;
  let lessee: Record<string, string>;
  let other: Record<string, string>;

  beforeAll(async () => {
    server = await startEsi({ env: { ESI_NETWORK_VLAN_RANGES: 'physnet1:610:619' } });
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
  it('creates, associates, lists, shows, forwards ports of, disassociates and deletes floating IPs', async () => {
    // step: the admin's external network; the lessee's network behind its router.
    const pub = await json(openstack(admin, 'network', 'create', '-f', 'json', '--external', 'public'));
    await ok(
      openstack(
        admin,
        'subnet',
        'create',
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
    await ok(openstack(lessee, 'network', 'create', 'lnet'));
    await ok(openstack(lessee, 'subnet', 'create', '--network', 'lnet', '--subnet-range', '10.9.0.0/24', 'lsub'));
    const r = await json(openstack(lessee, 'router', 'create', '-f', 'json', '--external-gateway', 'public', 'lr'));
    await ok(openstack(lessee, 'router', 'add', 'subnet', 'lr', 'lsub'));
    const lport = await json(openstack(lessee, 'port', 'create', '-f', 'json', '--network', 'lnet', 'lport'));
    const lip = lport.fixed_ips[0].ip_address as string;
    const web = await json(openstack(lessee, 'port', 'create', '-f', 'json', '--network', 'lnet', 'web'));
    const webIp = web.fixed_ips[0].ip_address as string;

    // step: a floating IP, then associated with the lessee's port.
    const f = await json(openstack(lessee, 'floating', 'ip', 'create', '-f', 'json', '--description', 'ssh in', 'public'));
    expect(f).toMatchObject({
      floating_ip_address: '203.0.113.11',
      floating_network_id: pub.id,
      status: 'DOWN',
      port_id: null,
      router_id: null,
      description: 'ssh in',
    });
    const chosen = await openstack(lessee, 'floating', 'ip', 'create', '--floating-ip-address', '203.0.113.15', 'public');
    expect(chosen.code).not.toBe(0);
    expect(chosen.stderr).toMatch(/create_floatingip:floating_ip_address/);
    await ok(openstack(lessee, 'floating', 'ip', 'set', '--port', 'lport', '203.0.113.11'));
    const shown = await json(openstack(lessee, 'floating', 'ip', 'show', '-f', 'json', '203.0.113.11'));
    expect(shown).toMatchObject({ id: f.id, port_id: lport.id, fixed_ip_address: lip, router_id: r.id, status: 'ACTIVE' });
    // The CLI prints port_details as `key='value', …`.
    expect(shown.port_details).toContain(`mac_address='${lport.mac_address}'`);
    expect(shown.port_details).toContain(`network_id='${lport.network_id}'`);

    // step: list (own only), with filters and --long; another project sees nothing.
    const list = await json<any[]>(openstack(lessee, 'floating', 'ip', 'list', '-f', 'json'));
    expect(list.map((x) => [x['Floating IP Address'], x['Fixed IP Address'], x.Port])).toEqual([['203.0.113.11', lip, lport.id]]);
    expect((await json<any[]>(openstack(lessee, 'floating', 'ip', 'list', '--port', 'lport', '-f', 'json'))).length).toBe(1);
    expect(await json<any[]>(openstack(lessee, 'floating', 'ip', 'list', '--status', 'DOWN', '-f', 'json'))).toEqual([]);
    const long = await json<any[]>(openstack(lessee, 'floating', 'ip', 'list', '--long', '-f', 'json'));
    expect(long[0]).toMatchObject({ Router: r.id, Status: 'ACTIVE', Description: 'ssh in' });
    expect(await json<any[]>(openstack(other, 'floating', 'ip', 'list', '-f', 'json'))).toEqual([]);
    const hidden = await openstack(other, 'floating', 'ip', 'show', f.id);
    expect(hidden.code).not.toBe(0);

    // step: disassociate; a second floating IP carries port forwards instead.
    await ok(openstack(lessee, 'floating', 'ip', 'unset', '--port', f.id));
    expect(await json(openstack(lessee, 'floating', 'ip', 'show', '-f', 'json', f.id))).toMatchObject({ port_id: null, status: 'DOWN' });
    const g = await json(openstack(lessee, 'floating', 'ip', 'create', '-f', 'json', 'public'));
    const pf = await json(
      openstack(
        lessee,
        'floating',
        'ip',
        'port',
        'forwarding',
        'create',
        '-f',
        'json',
        '--internal-ip-address',
        webIp,
        '--port',
        'web',
        '--internal-protocol-port',
        '80',
        '--external-protocol-port',
        '8080',
        '--protocol',
        'tcp',
        '--description',
        'http',
        g.floating_ip_address,
      ),
    );
    expect(pf).toMatchObject({ internal_ip_address: webIp, internal_port: 80, external_port: 8080, protocol: 'tcp', description: 'http' });
    expect(pf.internal_port_id).toBe(web.id);
    await ok(
      openstack(
        lessee,
        'floating',
        'ip',
        'port',
        'forwarding',
        'create',
        '--internal-ip-address',
        webIp,
        '--port',
        web.id,
        '--internal-protocol-port',
        '53',
        '--external-protocol-port',
        '5353',
        '--protocol',
        'udp',
        g.id,
      ),
    );
    const pfs = await json<any[]>(openstack(lessee, 'floating', 'ip', 'port', 'forwarding', 'list', '-f', 'json', g.id));
    expect(pfs.map((x) => [x['External Port'], x.Protocol]).sort()).toEqual([
      [5353, 'udp'],
      [8080, 'tcp'],
    ]);
    const tcp = await json<any[]>(
      openstack(lessee, 'floating', 'ip', 'port', 'forwarding', 'list', '--protocol', 'tcp', '-f', 'json', g.id),
    );
    expect(tcp.map((x) => x.ID)).toEqual([pf.id]);
    const byPort = await json<any[]>(
      openstack(
        lessee,
        'floating',
        'ip',
        'port',
        'forwarding',
        'list',
        '--external-protocol-port',
        '5353',
        '--port',
        'web',
        '-f',
        'json',
        g.id,
      ),
    );
    expect(byPort.map((x) => x['Internal Port'])).toEqual([53]);
    await ok(
      openstack(
        lessee,
        'floating',
        'ip',
        'port',
        'forwarding',
        'set',
        '--external-protocol-port',
        '8081',
        '--description',
        'web',
        g.id,
        pf.id,
      ),
    );
    expect(await json(openstack(lessee, 'floating', 'ip', 'port', 'forwarding', 'show', '-f', 'json', g.id, pf.id))).toMatchObject({
      external_port: 8081,
      internal_port: 80,
      description: 'web',
    });
    expect((await json(openstack(lessee, 'floating', 'ip', 'show', '-f', 'json', g.id))).router_id).toBe(r.id);

    // step: what is refused — a colliding forward, a port on a floating IP with forwards, others.
    const clash = await openstack(
      lessee,
      'floating',
      'ip',
      'port',
      'forwarding',
      'create',
      '--internal-ip-address',
      lip,
      '--port',
      'lport',
      '--internal-protocol-port',
      '22',
      '--external-protocol-port',
      '8081',
      '--protocol',
      'tcp',
      g.id,
    );
    expect(clash.code).not.toBe(0);
    expect(clash.stderr).toMatch(/port collision/);
    const busy = await openstack(lessee, 'floating', 'ip', 'set', '--port', 'lport', g.id);
    expect(busy.code).not.toBe(0);
    expect(busy.stderr).toMatch(/in use by Port Forwarding resources/);
    const theirs = await openstack(other, 'floating', 'ip', 'port', 'forwarding', 'list', g.id);
    expect(theirs.code).not.toBe(0);

    // step: forwards deleted, then the floating IPs; the router can then go.
    const ids = (await json<any[]>(openstack(lessee, 'floating', 'ip', 'port', 'forwarding', 'list', '-f', 'json', g.id))).map((x) => x.ID);
    await ok(openstack(lessee, 'floating', 'ip', 'port', 'forwarding', 'delete', g.id, ...ids));
    expect(await json<any[]>(openstack(lessee, 'floating', 'ip', 'port', 'forwarding', 'list', '-f', 'json', g.id))).toEqual([]);
    expect((await json(openstack(lessee, 'floating', 'ip', 'show', '-f', 'json', g.id))).status).toBe('DOWN');
    await ok(openstack(lessee, 'floating', 'ip', 'delete', f.id, '203.0.113.12'));
    expect(await json<any[]>(openstack(lessee, 'floating', 'ip', 'list', '-f', 'json'))).toEqual([]);
    await ok(openstack(lessee, 'router', 'remove', 'subnet', 'lr', 'lsub'));
    await ok(openstack(lessee, 'router', 'delete', 'lr'));
    await ok(openstack(lessee, 'port', 'delete', 'lport', 'web'));
    await ok(openstack(lessee, 'network', 'delete', 'lnet'));
    await ok(openstack(admin, 'network', 'delete', 'public'));
  });
});
