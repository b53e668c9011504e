/**
 * Interop: Debian's `openstack baremetal` CLI (python3-ironicclient 5.0.1) for the redfish
 * hardware settings against esi and its lab: `node set --target-raid-config`, `node clean
 * --clean-steps` with BIOS and RAID steps (`--wait`), `node bios setting list|show`, and the
 * resulting `raid_config`, as the admin, the owner, the lessee and another project.
 *
 * Needs `/usr/bin/openstack` and python3-ironicclient (a failure when missing, see test/helpers/tools.ts).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { enrollRedfish, startConductorEnv, type ConductorEnv } from '../api/conductor/support.ts';
import { describeNeeding, OPENSTACK_BAREMETAL } from '../helpers/tools.ts';
import { personaCli } from './persona-cli.ts';

let env: ConductorEnv;

const { os, osJson } = personaCli(() => env.ts.url, 120_000);

/** Fails, naming the Debian packages, when one is missing (ESI_TEST_ALLOW_MISSING_TOOLS=1 skips instead). */
const NEEDS = OPENSTACK_BAREMETAL;

describeNeeding(NEEDS, 'openstack baremetal CLI: BIOS and RAID of a redfish node', () => {
  // Each test has a node of its own: the RAID and BIOS test leaves node-0 in `clean failed`,
  // the boot test changes node-1's boot settings.
  let uuid = '';
  let bootUuid = '';
  beforeAll(async () => {
    env = await startConductorEnv(2, { env: { ESI_POWER_TIMEOUT: '5' } });
    uuid = (await enrollRedfish(env, 'node-0')).uuid;
    bootUuid = (await enrollRedfish(env, 'node-1')).uuid;
  });
  afterAll(async () => env?.close());

  it('sets a target RAID config, cleans with BIOS and RAID steps, and lists the BIOS settings', async () => {
    await os('admin', ['baremetal', 'node', 'manage', uuid, '--wait', '60']);
    const target = { logical_disks: [{ size_gb: 10, raid_level: '1', is_root_volume: true }] };
    await os('owner', ['baremetal', 'node', 'set', uuid, '--target-raid-config', JSON.stringify(target)]);
    expect((await osJson('admin', ['baremetal', 'node', 'show', uuid, '-c', 'target_raid_config'])).target_raid_config).toEqual(target);
    await expect(os('lessee', ['baremetal', 'node', 'set', uuid, '--target-raid-config', JSON.stringify(target)])).rejects.toThrow(
      /403|Forbidden|denied/i,
    );

    const steps = [
      { interface: 'bios', step: 'apply_configuration', args: { settings: [{ name: 'ProcTurboMode', value: 'Disabled' }] } },
      { interface: 'raid', step: 'delete_configuration' },
      { interface: 'raid', step: 'create_configuration' },
    ];
    await os('owner', ['baremetal', 'node', 'clean', uuid, '--clean-steps', JSON.stringify(steps), '--wait', '60']);
    const shown = await osJson('admin', ['baremetal', 'node', 'show', uuid, '-c', 'provision_state', '-c', 'raid_config']);
    expect(shown.provision_state).toBe('manageable');
    expect(shown.raid_config.logical_disks).toEqual([expect.objectContaining({ raid_level: '1', size_gb: 10, is_root_volume: true })]);
    expect(env.lab.raid.volumes('node-0')).toHaveLength(1);

    const list = await osJson('lessee', ['baremetal', 'node', 'bios', 'setting', 'list', uuid]);
    // ironicclient's columns: "BIOS setting name", "BIOS setting value".
    const turbo = list.find((s: any) => s['BIOS setting name'] === 'ProcTurboMode');
    expect(turbo['BIOS setting value']).toBe('Disabled');
    expect(list.length).toBe(13);
    const one = await osJson('owner', ['baremetal', 'node', 'bios', 'setting', 'show', uuid, 'ProcTurboMode']);
    expect(one.value).toBe('Disabled');
    await expect(os('other', ['baremetal', 'node', 'bios', 'setting', 'list', uuid])).rejects.toThrow(/could not be found|404/i);

    // An unknown setting: the clean fails and says why.
    const bad = [{ interface: 'bios', step: 'apply_configuration', args: { settings: [{ name: 'NoSuchKnob', value: 'On' }] } }];
    await expect(os('admin', ['baremetal', 'node', 'clean', uuid, '--clean-steps', JSON.stringify(bad), '--wait', '60'])).rejects.toThrow(
      /clean failed|NoSuchKnob/,
    );
    const failed = await osJson('admin', ['baremetal', 'node', 'show', uuid, '-c', 'provision_state', '-c', 'last_error']);
    expect(failed.provision_state).toBe('clean failed');
    expect(failed.last_error).toMatch(/NoSuchKnob/);
  }, 240_000);

  it('sets the boot mode and a persistent boot device', async () => {
    await os('lessee', ['baremetal', 'node', 'boot', 'mode', 'set', bootUuid, 'bios']);
    expect(env.lab.systems.get('node-1').boot.mode).toBe('Legacy');
    expect((await osJson('admin', ['baremetal', 'node', 'show', bootUuid, '-c', 'boot_mode'])).boot_mode).toBe('bios');
    await os('owner', ['baremetal', 'node', 'boot', 'device', 'set', bootUuid, 'pxe', '--persistent']);
    expect(env.lab.systems.get('node-1').boot).toMatchObject({ target: 'Pxe', enabled: 'Continuous' });
    expect(await osJson('owner', ['baremetal', 'node', 'boot', 'device', 'show', bootUuid])).toEqual({
      boot_device: 'pxe',
      persistent: true,
    });
  }, 120_000);
});
