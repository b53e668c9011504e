/**
 * Interop: Debian's `openstack baremetal` CLI (python3-ironicclient 5.0.1, microversion 1.78)
 * against esi's deploy templates, driver properties, RAID logical disk properties, node traits
 * and vendor passthru: `deploy template create|list|show|set|unset|delete`, `driver property
 * list`, `driver raid property list`, `node trait add|list|remove`, `node passthru list|call` —
 * as the admin, and refused to the owner (system-level resources, node vendor passthru).
 * Templates the CLI made are applied by deploys of a node whose instance traits name them.
 *
 * Needs `/usr/bin/openstack` and python3-ironicclient (a failure when missing, see test/helpers/tools.ts).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createNode } from '../api/baremetal/helpers.ts';
import { createPersonas, startTestServer, type Personas, type TestServer } from '../helpers/harness.ts';
import { describeNeeding, OPENSTACK_BAREMETAL } from '../helpers/tools.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { personaCli } from './persona-cli.ts';

let ts: TestServer;
let p: Personas;
const { os: cli, osJson } = personaCli(() => ts.url);
const STEPS = [
  { interface: 'bios', step: 'apply_configuration', args: { settings: [{ name: 'LogicalProc', value: 'Disabled' }] }, priority: 150 },
];

describeNeeding(OPENSTACK_BAREMETAL, 'openstack baremetal deploy template, driver property and node trait commands', () => {
  beforeAll(async () => {
    ts = await startTestServer();
    p = await createPersonas(ts);
  });
  afterAll(async () => ts?.close());

  it('deploy template create, list, show, set, unset, delete; refused to a project', async () => {
    const created = await osJson('admin', [
      'baremetal',
      'deploy',
      'template',
      'create',
      'CUSTOM_CLI',
      '--steps',
      JSON.stringify(STEPS),
      '--extra',
      'rack=7',
    ]);
    expect(created).toMatchObject({ name: 'CUSTOM_CLI', extra: { rack: 7 }, steps: STEPS });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-tpl-'));
    const file = path.join(dir, 'steps.yaml');
    fs.writeFileSync(file, '- interface: raid\n  step: delete_configuration\n  args: {}\n  priority: 5\n');
    await cli('admin', ['baremetal', 'deploy', 'template', 'create', 'CUSTOM_CLI_YAML', '--steps', file]);
    fs.rmSync(dir, { recursive: true, force: true });
    const list = await osJson('admin', ['baremetal', 'deploy', 'template', 'list']);
    expect(list.map((t: any) => t.Name).sort()).toEqual(['CUSTOM_CLI', 'CUSTOM_CLI_YAML']);
    const long = await osJson('admin', ['baremetal', 'deploy', 'template', 'list', '--long']);
    expect(long.find((t: any) => t.Name === 'CUSTOM_CLI_YAML').Steps).toEqual([
      { interface: 'raid', step: 'delete_configuration', args: {}, priority: 5 },
    ]);
    const shown = await osJson('admin', ['baremetal', 'deploy', 'template', 'show', created.uuid]);
    expect(shown).toMatchObject({ uuid: created.uuid, name: 'CUSTOM_CLI', steps: STEPS });
    await cli('admin', ['baremetal', 'deploy', 'template', 'set', 'CUSTOM_CLI', '--name', 'CUSTOM_CLI_RENAMED', '--extra', 'row=b']);
    await cli('admin', ['baremetal', 'deploy', 'template', 'unset', 'CUSTOM_CLI_RENAMED', '--extra', 'rack']);
    expect(await osJson('admin', ['baremetal', 'deploy', 'template', 'show', 'CUSTOM_CLI_RENAMED'])).toMatchObject({ extra: { row: 'b' } });
    await expect(
      cli('admin', ['baremetal', 'deploy', 'template', 'create', 'not-a-trait', '--steps', JSON.stringify(STEPS)]),
    ).rejects.toThrow(/valid trait/);
    await expect(cli('owner', ['baremetal', 'deploy', 'template', 'list'])).rejects.toThrow(/403|Forbidden|denied/i);
    await expect(cli('owner', ['baremetal', 'deploy', 'template', 'delete', 'CUSTOM_CLI_YAML'])).rejects.toThrow(/403|Forbidden|denied/i);
    await cli('admin', ['baremetal', 'deploy', 'template', 'delete', 'CUSTOM_CLI_YAML']);
    await expect(cli('admin', ['baremetal', 'deploy', 'template', 'show', 'CUSTOM_CLI_YAML'])).rejects.toThrow(/could not be found/);
  });

  it('driver property list and driver raid property list', async () => {
    const props = await osJson('admin', ['baremetal', 'driver', 'property', 'list', 'redfish']);
    const byName = Object.fromEntries(props.map((r: any) => [r.Property, r.Description]));
    expect(byName.redfish_address).toMatch(/Required/);
    expect(Object.keys(byName)).toEqual(expect.arrayContaining(['deploy_kernel', 'deploy_ramdisk', 'redfish_username']));
    const fake = await osJson('admin', ['baremetal', 'driver', 'property', 'list', 'fake-hardware']);
    expect(fake.map((r: any) => r.Property).sort()).toEqual(['B1', 'B2']);
    const raid = await osJson('admin', ['baremetal', 'driver', 'raid', 'property', 'list', 'fake-hardware']);
    expect(raid.map((r: any) => r.Property).sort()).toEqual([
      'controller',
      'disk_type',
      'interface_type',
      'is_root_volume',
      'number_of_physical_disks',
      'physical_disks',
      'raid_level',
      'share_physical_disks',
      'size_gb',
      'volume_name',
    ]);
    await expect(cli('admin', ['baremetal', 'driver', 'property', 'list', 'idrac'])).rejects.toThrow(/unknown/);
    await expect(cli('owner', ['baremetal', 'driver', 'raid', 'property', 'list', 'redfish'])).rejects.toThrow(/403|Forbidden|denied/i);
  });

  it('node trait add, list, remove; node passthru list and call; a CLI-made template applied by a deploy', async () => {
    const n = await createNode(ts, p, { name: 'cli-traits', automated_clean: false });
    await cli('owner', ['baremetal', 'node', 'add', 'trait', 'cli-traits', 'CUSTOM_CLI_DEPLOY', 'CUSTOM_OTHER']);
    expect((await osJson('lessee', ['baremetal', 'node', 'trait', 'list', 'cli-traits'])).map((r: any) => r.Traits).sort()).toEqual([
      'CUSTOM_CLI_DEPLOY',
      'CUSTOM_OTHER',
    ]);
    await cli('owner', ['baremetal', 'node', 'remove', 'trait', 'cli-traits', 'CUSTOM_OTHER']);
    await expect(cli('lessee', ['baremetal', 'node', 'add', 'trait', 'cli-traits', 'CUSTOM_X'])).rejects.toThrow(/403|Forbidden|denied/i);
    expect((await osJson('admin', ['baremetal', 'node', 'trait', 'list', 'cli-traits'])).map((r: any) => r.Traits)).toEqual([
      'CUSTOM_CLI_DEPLOY',
    ]);

    const methods = await osJson('admin', ['baremetal', 'node', 'passthru', 'list', 'cli-traits']);
    expect(methods.map((m: any) => m.Name).sort()).toEqual(['fourth_method_shared_lock', 'second_method', 'third_method_sync']);
    // An async method (202, no body): python-ironicclient 5.0.1 can only print a JSON object result,
    // so a sync method's `true` (Ironic's answer too) is not something its `call` can show.
    await cli('admin', ['baremetal', 'node', 'passthru', 'call', 'cli-traits', 'second_method', '--arg', 'bar=kazoo']);
    await expect(cli('admin', ['baremetal', 'node', 'passthru', 'call', 'cli-traits', 'second_method'])).rejects.toThrow(
      /Parameter 'bar' not passed/,
    );
    await expect(cli('owner', ['baremetal', 'node', 'passthru', 'list', 'cli-traits'])).rejects.toThrow(/403|Forbidden|denied/i);

    // A template made with the CLI runs when the instance traits name it: one with a step the node
    // does not offer fails the deploy, naming it; once the template is fixed, the deploy succeeds.
    const bad = [{ interface: 'deploy', step: 'not_there', args: {}, priority: 50 }];
    await cli('admin', ['baremetal', 'deploy', 'template', 'create', 'CUSTOM_CLI_DEPLOY', '--steps', JSON.stringify(bad)]);
    await cli('owner', ['baremetal', 'node', 'set', 'cli-traits', '--instance-info', 'traits=["CUSTOM_CLI_DEPLOY"]']);
    for (const verb of ['manage', 'provide']) await cli('admin', ['baremetal', 'node', verb, 'cli-traits', '--wait', '30']);
    await expect(cli('lessee', ['baremetal', 'node', 'deploy', 'cli-traits', '--wait', '30'])).rejects.toThrow(/deploy failed/);
    const failed = await osJson('admin', ['baremetal', 'node', 'show', n.uuid]);
    expect(failed.last_error).toMatch(
      /Matching deploy templates: CUSTOM_CLI_DEPLOY\. Errors: node does not support this deploy step: .*not_there/,
    );
    await cli('admin', ['baremetal', 'deploy', 'template', 'set', 'CUSTOM_CLI_DEPLOY', '--steps', JSON.stringify(STEPS)]);
    await cli('lessee', ['baremetal', 'node', 'deploy', 'cli-traits', '--wait', '30']);
    const node = await waitFor(
      () => osJson('admin', ['baremetal', 'node', 'show', n.uuid]),
      (x) => x.provision_state === 'active',
      { timeoutMs: 30_000 },
    );
    expect(node.last_error).toBeNull();
  });
});
