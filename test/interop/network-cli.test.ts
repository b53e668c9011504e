/**
 * Interop: Debian's `openstack` CLI (python3-openstackclient 6.0 over openstacksdk 0.101 for
 * networks, subnets, ports and RBAC; python3-neutronclient 8.1 for trunks; ironicclient for
 * VIFs) and our `esi` CLI against a real `esi server` process:
 *
 * network create (provider, shared, pool) | list | show | delete, subnet create, port create |
 * list, network trunk create | set | unset | delete, network rbac create, baremetal node vif
 * attach | list | detach, router create | add subnet, floating ip create and floating ip port
 * forwarding create; esi node network list (with the floating columns) | show | attach |
 * detach, esi trunk create | list | delete, esi switch create | port list. The switch is the
 * `fake` driver (isolation with real frames is test/interop/network-isolation.test.ts).
 *
 * Needs `/usr/bin/openstack` and neutronclient (a failure when missing, see test/helpers/tools.ts).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeNeeding, TOOLS } from '../helpers/tools.ts';
import { esi as esiCli, json, ok, openstack, startEsi, userEnv, type EsiProcess } from './cli-driver.ts';

/** Fails, naming the Debian packages, when one is missing (ESI_TEST_ALLOW_MISSING_TOOLS=1 skips instead). */
const NEEDS = [TOOLS.openstack, TOOLS.neutronClient];

describeNeeding(NEEDS, 'openstack network CLI and esi node network CLI', () => {
  let server: EsiProcess;
  let admin: Record<string, string>;
  let lessee: Record<string, string>;
  let lesseeProject = '';

  beforeAll(async () => {
    server = await startEsi({ env: { ESI_NETWORK_VLAN_RANGES: 'physnet1:500:509' } });
    admin = server.adminEnv;
    // Independent CLI calls run side by side (each is mostly Python start-up).
    const [project] = await Promise.all([
      json(openstack(admin, 'project', 'create', '-f', 'json', 'l1')),
      ok(openstack(admin, 'role', 'create', 'lessee')),
    ]);
    lesseeProject = project.id;
    await ok(openstack(admin, 'user', 'create', '--project', 'l1', '--password', 'pw-l1', 'lessee1'));
    await ok(openstack(admin, 'role', 'add', '--user', 'lessee1', '--project', 'l1', 'lessee'));
    lessee = userEnv(admin, 'lessee1', 'pw-l1', 'l1');
  });
  afterAll(async () => server?.stop());

  // One scenario (so that no step leans on another test): the node's VIFs go on the networks and
  // the port the first steps make. Its timeout covers the two tests it was and the floating IP
  // step, on a loaded machine (each CLI call is mostly Python start-up).
  it('creates, lists, shows and deletes networks, subnets, ports, trunks and RBAC policies, then attaches VIFs to them with openstack baremetal and esi node network commands', async () => {
    // step: networks (provider, shared, a lessee's own, the admin's), a subnet, ports.
    const [pub, lnet] = await Promise.all([
      json(
        openstack(
          admin,
          'network',
          'create',
          '-f',
          'json',
          '--share',
          '--provider-network-type',
          'vlan',
          '--provider-physical-network',
          'physnet1',
          '--provider-segment',
          '3000',
          'pub',
        ),
      ),
      json(openstack(lessee, 'network', 'create', '-f', 'json', 'lnet')),
      ok(openstack(admin, 'network', 'create', 'adminnet')),
    ]);
    expect(pub).toMatchObject({ shared: true, 'provider:segmentation_id': 3000 });
    expect(lnet['provider:segmentation_id']).toBeNull();
    const sub = await json(
      openstack(lessee, 'subnet', 'create', '-f', 'json', '--network', 'lnet', '--subnet-range', '10.5.0.0/24', 'lsub'),
    );
    expect(sub).toMatchObject({ cidr: '10.5.0.0/24', gateway_ip: '10.5.0.1' });
    const lport = await json(openstack(lessee, 'port', 'create', '-f', 'json', '--network', 'lnet', 'lport'));
    // .2 is the network's DHCP port (network:dhcp), as Neutron's agent port takes the first address.
    expect(lport.fixed_ips).toEqual([{ subnet_id: sub.id, ip_address: '10.5.0.3' }]);
    const lportId = lport.id;
    await Promise.all([
      ok(openstack(lessee, 'port', 'create', '--network', 'lnet', 'tparent')),
      ok(openstack(lessee, 'port', 'create', '--network', 'pub', 'tsub')),
      ok(openstack(lessee, 'port', 'create', '--network', 'pub', 'tsub2')),
    ]);
    const ports = (await json<any[]>(openstack(lessee, 'port', 'list', '-f', 'json'))).map((p) => p.Name).sort();
    expect(ports).toEqual(['', 'lport', 'tparent', 'tsub', 'tsub2']); // '' is lnet's DHCP port (l1 owns lnet)

    // step: a neutron trunk. The trunk's sub-ports are checked in esi's own view after unset (one sub-port left).
    const trunk = await json(
      openstack(
        lessee,
        'network',
        'trunk',
        'create',
        '-f',
        'json',
        '--parent-port',
        'tparent',
        '--subport',
        'port=tsub,segmentation-type=vlan,segmentation-id=3000',
        'tk',
      ),
    );
    expect(trunk.status).toBe('DOWN');
    await ok(openstack(lessee, 'network', 'trunk', 'set', '--subport', 'port=tsub2,segmentation-type=vlan,segmentation-id=3001', 'tk'));
    expect((await json(openstack(lessee, 'network', 'trunk', 'show', '-f', 'json', 'tk'))).sub_ports).toHaveLength(2);
    await ok(openstack(lessee, 'network', 'trunk', 'unset', '--subport', 'tsub2', 'tk'));
    expect((await json<any[]>(esiCli(lessee, 'trunk', 'list', '-f', 'json')))[0]['Sub Ports']).toBe('tsub');
    await ok(openstack(lessee, 'network', 'trunk', 'delete', 'tk'));

    // step: RBAC — the admin shares a private network with l1 (by project name); l1 sees it, may not delete it.
    const rbac = await json(
      openstack(
        admin,
        'network',
        'rbac',
        'create',
        '-f',
        'json',
        '--target-project',
        'l1',
        '--action',
        'access_as_shared',
        '--type',
        'network',
        'adminnet',
      ),
    );
    expect(rbac).toMatchObject({ action: 'access_as_shared', object_type: 'network', target_project_id: lesseeProject });
    expect((await json<any[]>(openstack(lessee, 'network', 'list', '-f', 'json'))).map((n) => n.Name).sort()).toEqual([
      'adminnet',
      'lnet',
      'pub',
    ]);
    const refused = await openstack(lessee, 'network', 'delete', 'adminnet');
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/disallowed by policy/);
    await ok(openstack(lessee, 'port', 'delete', 'tparent', 'tsub', 'tsub2'));

    // step: a node cabled to a switch, leased to l1; a VIF on lport (openstack baremetal).
    const [, node] = await Promise.all([
      ok(esiCli(admin, 'switch', 'create', 'tor', '--switch-id', '02:00:00:00:00:99', '--driver', 'fake')),
      json(openstack(admin, 'baremetal', 'node', 'create', '-f', 'json', '--driver', 'fake-hardware', '--name', 'bm1')),
    ]);
    await ok(openstack(admin, 'baremetal', 'node', 'set', '--lessee', lesseeProject, 'bm1'));
    // One port after the other: their order on the node is the order esi picks free ports in.
    for (const [mac, sp] of [
      ['52:54:00:12:00:01', 'eth1'],
      ['52:54:00:12:00:02', 'eth2'],
    ]) {
      await ok(
        openstack(
          admin,
          'baremetal',
          'port',
          'create',
          '--node',
          node.uuid,
          '--local-link-connection',
          'switch_id=02:00:00:00:00:99',
          '--local-link-connection',
          'switch_info=tor',
          '--local-link-connection',
          `port_id=${sp}`,
          mac!,
        ),
      );
    }
    // The lessee may not re-cable the node it holds (issue 14): the CLI shows the 403.
    const bmPorts = await json<any[]>(openstack(admin, 'baremetal', 'port', 'list', '--node', node.uuid, '-f', 'json'));
    const recable = await openstack(lessee, 'baremetal', 'port', 'set', '--local-link-connection', 'port_id=eth9', bmPorts[0].UUID);
    expect(recable.code).not.toBe(0);
    expect(recable.stderr).toMatch(/baremetal:port:update:local_link_connection|Forbidden|403/);
    await ok(openstack(lessee, 'baremetal', 'node', 'vif', 'attach', 'bm1', lportId));
    const vifs = await json<any[]>(openstack(lessee, 'baremetal', 'node', 'vif', 'list', '-f', 'json', 'bm1'));
    expect(vifs.map((v) => v.ID)).toEqual([lportId]);

    // step: esi node network — one request each.
    const attached = await json(esiCli(lessee, 'node', 'network', 'attach', 'bm1', '--network', 'pub', '-f', 'json'));
    expect(attached).toMatchObject({ Node: 'bm1', 'MAC Address': '52:54:00:12:00:02', Port: 'esi-bm1-pub', Network: 'pub' });
    const again = await esiCli(lessee, 'node', 'network', 'attach', 'bm1', '--network', 'pub', '-f', 'json');
    expect(again.code, again.stderr).toBe(0);
    const rows = await json<any[]>(esiCli(lessee, 'node', 'network', 'list', '-f', 'json'));
    expect(rows.map((r) => [r.Node, r.Port, r.Network, r['Fixed IP']])).toEqual([
      ['bm1', 'lport', 'lnet', '10.5.0.3'],
      ['bm1', 'esi-bm1-pub', 'pub', ''],
    ]);
    const asAdmin = await json<any[]>(esiCli(admin, 'node', 'network', 'list', '-f', 'json', '--node', 'bm1'));
    expect(asAdmin.map((r) => r.Network)).toEqual([expect.stringMatching(/^lnet \(50[01]\)$/), 'pub (3000)']);
    const sp = await json<any[]>(esiCli(admin, 'switch', 'port', 'list', 'tor', '-f', 'json'));
    expect(sp.map((r) => [r.Port, r.Node, r.VLANs])).toEqual([
      ['eth1', 'bm1', asAdmin[0].Network],
      ['eth2', 'bm1', 'pub (3000)'],
    ]);
    const many = await esiCli(lessee, 'node', 'network', 'detach', 'bm1');
    expect(many.code).not.toBe(0);
    expect(many.stderr).toMatch(/multiple ports/);
    await ok(esiCli(lessee, 'node', 'network', 'detach', 'bm1', '--port', 'esi-bm1-pub'));
    await ok(openstack(lessee, 'baremetal', 'node', 'vif', 'detach', 'bm1', lportId));
    expect((await json<any[]>(esiCli(lessee, 'node', 'network', 'list', '-f', 'json'))).map((r) => r.Port)).toEqual(['', '']);

    // step: floating IPs on the node's rows — the admin's external network, the lessee's router to
    // lnet; lport (first NIC) with an associated floating IP, a second lnet port (second NIC)
    // reached through port forwards of a floating IP without a port.
    const ext = await json(openstack(admin, 'network', 'create', '-f', 'json', '--external', 'ext'));
    await ok(
      openstack(
        admin,
        'subnet',
        'create',
        '--network',
        'ext',
        '--subnet-range',
        '203.0.113.0/24',
        '--allocation-pool',
        'start=203.0.113.10,end=203.0.113.19',
        '--no-dhcp',
        'ext-sub',
      ),
    );
    await Promise.all([
      ok(openstack(lessee, 'router', 'create', '--external-gateway', 'ext', 'lr')).then(() =>
        ok(openstack(lessee, 'router', 'add', 'subnet', 'lr', 'lsub')),
      ),
      ok(esiCli(lessee, 'node', 'network', 'attach', 'bm1', '--port', 'lport')),
    ]);
    const second = await json(esiCli(lessee, 'node', 'network', 'attach', 'bm1', '--network', 'lnet', '-f', 'json'));
    expect(second).toMatchObject({ 'MAC Address': '52:54:00:12:00:02', Port: 'esi-bm1-lnet', 'Floating IP': '' });
    const secondIp = second['Fixed IP'] as string;
    const [fa, fb, token] = await Promise.all([
      json(openstack(lessee, 'floating', 'ip', 'create', '-f', 'json', '--port', 'lport', 'ext')),
      json(openstack(lessee, 'floating', 'ip', 'create', '-f', 'json', 'ext')),
      json(openstack(lessee, 'token', 'issue', '-f', 'json')).then((t) => t.id as string),
    ]);
    const ssh = await json(
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
        secondIp,
        '--port',
        'esi-bm1-lnet',
        '--internal-protocol-port',
        '22',
        '--external-protocol-port',
        '2222',
        '--protocol',
        'tcp',
        fb.id,
      ),
    );
    // A range, through the API: openstackclient 6.0 takes single ports only.
    const webRes = await fetch(`${server.url}/network/v2.0/floatingips/${fb.id}/port_forwardings`, {
      method: 'POST',
      headers: { 'x-auth-token': token, 'content-type': 'application/json' },
      body: JSON.stringify({
        port_forwarding: {
          protocol: 'tcp',
          internal_port_id: ssh.internal_port_id,
          internal_ip_address: secondIp,
          internal_port_range: '8000:8010',
          external_port_range: '9000:9010',
        },
      }),
    });
    expect(webRes.status).toBe(201);
    const web = ((await webRes.json()) as any).port_forwarding;
    // Forwards show in the order Neutron lists them (by id).
    const forwards = [
      [ssh.id as string, '22:2222'],
      [web.id as string, '8000-8010:9000-9010'],
    ]
      .sort(([a], [b]) => (a! < b! ? -1 : 1))
      .map(([, text]) => text)
      .join(',');
    // The four reads side by side.
    const [withFips, adminFips, shown, table] = await Promise.all([
      json<any[]>(esiCli(lessee, 'node', 'network', 'list', '--long', '-f', 'json')),
      json<any[]>(esiCli(admin, 'node', 'network', 'list', '-f', 'json', '--node', 'bm1')),
      json(esiCli(lessee, 'node', 'network', 'show', 'bm1', '-f', 'json')),
      ok(esiCli(lessee, 'node', 'network', 'show', 'bm1')),
    ]);
    expect(withFips.map((r) => [r.Port, r.Network, r['Floating Network'], r['Floating IP']])).toEqual([
      ['lport', 'lnet', 'ext', fa.floating_ip_address],
      ['esi-bm1-lnet', 'lnet', 'ext', `${fb.floating_ip_address} (${forwards})`],
    ]);
    expect(withFips.map((r) => [r['Floating Network UUID'], r['Floating IP UUID']])).toEqual([
      [ext.id, fa.id],
      [ext.id, fb.id],
    ]);
    expect(adminFips.map((r) => r['Floating Network'])).toEqual([
      `ext (${ext['provider:segmentation_id']})`,
      `ext (${ext['provider:segmentation_id']})`,
    ]);
    // esi node network show: esiclient's Node Ports objects.
    const lnetRef = { name: 'lnet', uuid: lnet.id, vlan_id: null };
    const extRef = { name: 'ext', uuid: ext.id, vlan_id: null };
    expect(shown).toEqual({
      Node: 'bm1',
      'Node UUID': node.uuid,
      'Node Ports': [
        {
          mac_address: '52:54:00:12:00:01',
          baremetal_port_uuid: bmPorts.find((p) => p.Address === '52:54:00:12:00:01').UUID,
          network_port: { name: 'lport', uuid: lportId, fixed_ips: ['10.5.0.3'] },
          network: lnetRef,
          floating_network: extRef,
        },
        {
          mac_address: '52:54:00:12:00:02',
          baremetal_port_uuid: bmPorts.find((p) => p.Address === '52:54:00:12:00:02').UUID,
          network_port: { name: 'esi-bm1-lnet', uuid: ssh.internal_port_id, fixed_ips: [secondIp] },
          network: lnetRef,
          floating_network: extRef,
        },
      ],
    });
    expect(table).toMatch(/\| Node Ports \| \[ +\|/);
    expect(table).toContain('"floating_network": {');
    await ok(esiCli(lessee, 'node', 'network', 'detach', 'bm1', '--all'));

    // step: an esi trunk on lnet (native) and pub (tagged), attached and detached.
    const t = await json(esiCli(lessee, 'trunk', 'create', 'et', '--native-network', 'lnet', '--tagged-networks', 'pub', '-f', 'json'));
    expect(t).toMatchObject({ Trunk: 'et', Port: 'esi-et-lnet-trunk-port', 'Sub Ports': 'esi-et-pub-sub-port', Networks: 'lnet\npub' });
    await ok(esiCli(lessee, 'node', 'network', 'attach', 'bm1', '--trunk', 'et'));
    expect((await json<any[]>(esiCli(lessee, 'node', 'network', 'list', '-f', 'json')))[0].Network).toBe('lnet\npub');
    await ok(esiCli(lessee, 'node', 'network', 'detach', 'bm1', '--all'));
    await ok(esiCli(lessee, 'trunk', 'delete', 'et'));
    expect(await json<any[]>(esiCli(lessee, 'trunk', 'list', '-f', 'json'))).toEqual([]);
  }, 900_000);
});
