/**
 * Interop: Debian's `openstack baremetal` CLI (python3-ironicclient 5.0.1, microversion 1.78)
 * against esi's chassis, port group and volume connector/target endpoints (issue 18), as the
 * admin and as the owner, the lessee and another project: `baremetal chassis …` (and nodes in a
 * chassis), `baremetal port group …` (and member ports), `baremetal volume connector …` and
 * `baremetal volume target …`.
 *
 * One server for the file; each test enrols the nodes it works on under names of its own. 409s
 * (duplicates) are left to the API tests: the client retries each 409 five times, 2 s apart.
 * Needs `/usr/bin/openstack` and python3-ironicclient (a failure when missing, see test/helpers/tools.ts).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createNode, forceNode } from '../api/baremetal/helpers.ts';
import { createPersonas, startTestServer, type Personas, type TestServer } from '../helpers/harness.ts';
import { describeNeeding, OPENSTACK_BAREMETAL } from '../helpers/tools.ts';
import { personaCli } from './persona-cli.ts';

let ts: TestServer;
let p: Personas;
const { os, osJson } = personaCli(() => ts.url);

describeNeeding(OPENSTACK_BAREMETAL, 'openstack baremetal chassis, port group and volume commands', () => {
  beforeAll(async () => {
    // The tests set power states and provision states themselves; no conductor may act meanwhile.
    ts = await startTestServer({ env: { ESI_CONDUCTOR_WORKERS: '0' } });
    p = await createPersonas(ts);
  });
  afterAll(async () => ts?.close());

  it('chassis: create, list, show, set, unset as admin; nodes in a chassis; not deleted while it has nodes; projects refused', async () => {
    const c = await osJson('admin', ['baremetal', 'chassis', 'create', '--description', 'rack-1', '--extra', 'row=A']);
    expect(c).toMatchObject({ description: 'rack-1', extra: { row: 'A' }, updated_at: null });
    expect(await osJson('admin', ['baremetal', 'chassis', 'list'])).toEqual([{ UUID: c.uuid, Description: 'rack-1' }]);
    const long = await osJson('admin', ['baremetal', 'chassis', 'list', '--long']);
    expect(long[0]).toMatchObject({ UUID: c.uuid, Description: 'rack-1', Extra: { row: 'A' } });
    await os('admin', ['baremetal', 'chassis', 'set', c.uuid, '--description', 'rack-2', '--extra', 'slot=4']);
    await os('admin', ['baremetal', 'chassis', 'unset', c.uuid, '--extra', 'row']);
    expect(await osJson('admin', ['baremetal', 'chassis', 'show', c.uuid])).toMatchObject({ description: 'rack-2', extra: { slot: 4 } });

    const node = await osJson('admin', [
      'baremetal',
      'node',
      'create',
      '--driver',
      'fake-hardware',
      '--name',
      'cli-cn1',
      '--chassis-uuid',
      c.uuid,
    ]);
    expect(node.chassis_uuid).toBe(c.uuid);
    expect((await osJson('admin', ['baremetal', 'node', 'list', '--chassis', c.uuid])).map((n: any) => n.Name)).toEqual(['cli-cn1']);
    await expect(os('admin', ['baremetal', 'chassis', 'delete', c.uuid])).rejects.toThrow(/contains nodes/);
    await expect(
      os('admin', ['baremetal', 'node', 'create', '--driver', 'fake-hardware', '--chassis-uuid', '0d9b4a24-5c2c-4c8e-8f6e-2a7c2b1e0404']),
    ).rejects.toThrow(/Chassis .* could not be found/);

    for (const who of ['owner', 'lessee', 'other'] as const) {
      await expect(os(who, ['baremetal', 'chassis', 'list'])).rejects.toThrow(/baremetal:chassis:get/);
      await expect(os(who, ['baremetal', 'chassis', 'create', '--description', 'x'])).rejects.toThrow(/baremetal:chassis:create/);
    }

    await os('admin', ['baremetal', 'node', 'unset', 'cli-cn1', '--chassis-uuid']);
    await os('admin', ['baremetal', 'chassis', 'delete', c.uuid]);
    expect(await osJson('admin', ['baremetal', 'chassis', 'list'])).toEqual([]);
  });

  it('port groups: the owner creates and rewires; the lessee sees and tags but may not rewire; another project sees nothing', async () => {
    const n = await createNode(ts, p, { name: 'cli-gn1' });
    const pg = await osJson('owner', [
      'baremetal', 'port', 'group', 'create', '--node', n.uuid, '--name', 'cli-pg1', '--address', '52:54:00:AA:BB:01',
      '--mode', '802.3ad', '--property', 'miimon=100', '--support-standalone-ports',
    ]); // prettier-ignore
    expect(pg).toMatchObject({ name: 'cli-pg1', address: '52:54:00:aa:bb:01', mode: '802.3ad', properties: { miimon: 100 } });
    expect(pg.standalone_ports_supported).toBe(true);
    for (const who of ['owner', 'lessee'] as const) {
      expect((await osJson(who, ['baremetal', 'port', 'group', 'list'])).map((g: any) => g.Name)).toEqual(['cli-pg1']);
    }
    expect(await osJson('other', ['baremetal', 'port', 'group', 'list'])).toEqual([]);
    await expect(os('other', ['baremetal', 'port', 'group', 'show', 'cli-pg1'])).rejects.toThrow(/could not be found/);
    const long = await osJson('admin', ['baremetal', 'port', 'group', 'list', '--node', 'cli-gn1', '--long']);
    expect(long[0]).toMatchObject({ Name: 'cli-pg1', Mode: '802.3ad', 'Node UUID': n.uuid });
    expect(await osJson('lessee', ['baremetal', 'port', 'group', 'show', 'cli-pg1'])).toMatchObject({ uuid: pg.uuid, node_uuid: n.uuid });

    await os('lessee', ['baremetal', 'port', 'group', 'set', 'cli-pg1', '--extra', 'team=l1']);
    await expect(os('lessee', ['baremetal', 'port', 'group', 'set', 'cli-pg1', '--mode', 'balance-rr'])).rejects.toThrow(
      /baremetal:portgroup:update:mode/,
    );
    await os('owner', ['baremetal', 'port', 'group', 'set', 'cli-pg1', '--mode', 'balance-rr']);
    expect(await osJson('owner', ['baremetal', 'port', 'group', 'show', 'cli-pg1'])).toMatchObject({
      mode: 'balance-rr',
      extra: { team: 'l1' },
    });

    const port = await osJson('admin', ['baremetal', 'port', 'create', '52:54:00:aa:bb:02', '--node', n.uuid, '--port-group', pg.uuid]);
    expect(port.portgroup_uuid).toBe(pg.uuid);
    expect((await osJson('lessee', ['baremetal', 'port', 'list', '--port-group', 'cli-pg1'])).map((x: any) => x.Address)).toEqual([
      '52:54:00:aa:bb:02',
    ]);
    await expect(os('owner', ['baremetal', 'port', 'group', 'delete', 'cli-pg1'])).rejects.toThrow(/contains ports/);
    await expect(os('lessee', ['baremetal', 'port', 'delete', port.uuid])).rejects.toThrow(/baremetal:port:delete/);
    await os('owner', ['baremetal', 'port', 'delete', port.uuid]);
    await expect(os('lessee', ['baremetal', 'port', 'group', 'delete', 'cli-pg1'])).rejects.toThrow(/baremetal:portgroup:delete/);
    await os('owner', ['baremetal', 'port', 'group', 'delete', 'cli-pg1']);
    expect(await osJson('admin', ['baremetal', 'port', 'group', 'list'])).toEqual([]);
  });

  it('volume connectors and targets: the lessee attaches its boot volume; properties redacted but for the admin; changes need the node off', async () => {
    const n = await createNode(ts, p, { name: 'cli-vn1' });
    await forceNode(ts, n.uuid, { power_state: 'power off' });
    const c = await osJson('lessee', [
      'baremetal', 'volume', 'connector', 'create', '--node', n.uuid, '--type', 'iqn', '--connector-id', 'iqn.2024-01.org.example:cli-vn1',
    ]); // prettier-ignore
    expect(c).toMatchObject({ node_uuid: n.uuid, type: 'iqn', connector_id: 'iqn.2024-01.org.example:cli-vn1' });
    const list = await osJson('owner', ['baremetal', 'volume', 'connector', 'list', '--node', 'cli-vn1', '--long']);
    expect(list).toEqual([expect.objectContaining({ UUID: c.uuid, Type: 'iqn', 'Node UUID': n.uuid })]);
    expect(await osJson('other', ['baremetal', 'volume', 'connector', 'list'])).toEqual([]);
    await expect(os('other', ['baremetal', 'volume', 'connector', 'show', c.uuid])).rejects.toThrow(/could not be found/);
    await os('lessee', ['baremetal', 'volume', 'connector', 'set', c.uuid, '--extra', 'by=l1']);
    expect(await osJson('admin', ['baremetal', 'volume', 'connector', 'show', c.uuid])).toMatchObject({ extra: { by: 'l1' } });

    const t = await osJson('lessee', [
      'baremetal', 'volume', 'target', 'create', '--node', n.uuid, '--type', 'iscsi', '--boot-index', '0', '--volume-id', 'vol-cli-1',
      '--property', 'target_iqn=iqn.2024-01.org.example:t1', '--property', 'auth_password=cli-secret',
    ]); // prettier-ignore
    expect(t).toMatchObject({ boot_index: 0, volume_type: 'iscsi', volume_id: 'vol-cli-1' });
    expect(t.properties.auth_password).toBe('******');
    expect((await osJson('admin', ['baremetal', 'volume', 'target', 'show', t.uuid])).properties).toEqual({
      target_iqn: 'iqn.2024-01.org.example:t1',
      auth_password: '******',
    });
    expect((await osJson('owner', ['baremetal', 'volume', 'target', 'show', t.uuid])).properties).toEqual({
      redacted_contents: expect.stringMatching(/baremetal:volume:view_target_properties/),
    });
    expect((await osJson('lessee', ['baremetal', 'volume', 'target', 'list', '--node', n.uuid])).map((x: any) => x.UUID)).toEqual([t.uuid]);

    // Changes need the node powered off.
    await forceNode(ts, n.uuid, { power_state: 'power on' });
    await expect(os('lessee', ['baremetal', 'volume', 'target', 'set', t.uuid, '--volume-id', 'vol-cli-3'])).rejects.toThrow(/power on/);
    await expect(os('lessee', ['baremetal', 'volume', 'connector', 'delete', c.uuid])).rejects.toThrow(/power on/);
    await forceNode(ts, n.uuid, { power_state: 'power off' });
    await os('lessee', ['baremetal', 'volume', 'target', 'set', t.uuid, '--volume-id', 'vol-cli-3']);
    expect((await osJson('admin', ['baremetal', 'volume', 'target', 'show', t.uuid])).volume_id).toBe('vol-cli-3');
    await os('lessee', ['baremetal', 'volume', 'target', 'delete', t.uuid]);
    await os('lessee', ['baremetal', 'volume', 'connector', 'delete', c.uuid]);
    expect(await osJson('admin', ['baremetal', 'volume', 'connector', 'list'])).toEqual([]);
    expect(await osJson('admin', ['baremetal', 'volume', 'target', 'list'])).toEqual([]);
  });
});
