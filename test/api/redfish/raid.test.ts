/**
 * RAID through the baremetal API against the lab's Redfish Storage/Volumes: the target
 * (`PUT /v1/nodes/{id}/states/raid`, schema checked) for the five personas, manual cleaning
 * with `raid.delete_configuration` / `raid.create_configuration` (volumes visible in the lab,
 * `raid_config` recorded on the node), and an impossible layout failing the clean with a
 * clear `last_error` on a node that can be recovered.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bm, enrollRedfish, expectError, pick, provision, settled, startConductorEnv, type ConductorEnv } from '../conductor/support.ts';

let env: ConductorEnv;
const GIB = 1024 ** 3;

beforeAll(async () => {
  // 4 drives of 20 GiB per lab system (src/lab/raid.ts labDrives). Each test manages a node on a
  // lab system of its own (node-0 … node-5): its target and volumes are only what it made.
  env = await startConductorEnv(6, { env: { ESI_POWER_TIMEOUT: '5' } });
});
afterAll(async () => env?.close());

async function managed(system: string): Promise<any> {
  const n = await enrollRedfish(env, system);
  await provision(env, n.uuid, 'manage');
  expect((await settled(env, n.uuid)).provision_state).toBe('manageable');
  return n;
}

const setRaid = (uuid: string, body: unknown, who = env.p.admin, version = '1.78') =>
  bm(env.ts, who, 'PUT', `/v1/nodes/${uuid}/states/raid`, body, version);
async function clean(uuid: string, steps: unknown[]): Promise<any> {
  await provision(env, uuid, 'clean', { clean_steps: steps });
  return settled(env, uuid);
}

const LAYOUT = {
  logical_disks: [
    { size_gb: 10, raid_level: '1', is_root_volume: true, volume_name: 'root' },
    { size_gb: 'MAX', raid_level: '0', volume_name: 'scratch' },
  ],
};

describe('target_raid_config', () => {
  it('admin and owner may set it (204), the lessee may not (403), another project gets 404, anonymous 401', async () => {
    const node = await managed('node-0');
    expect(node.raid_interface).toBe('redfish');
    const ok = await setRaid(node.uuid, LAYOUT);
    expect(ok.status, ok.text).toBe(204);
    expect((await bm(env.ts, env.p.admin, 'GET', `/v1/nodes/${node.uuid}`)).body.target_raid_config).toEqual(LAYOUT);
    expect((await setRaid(node.uuid, LAYOUT, env.p.owner)).status).toBe(204);
    expectError(await setRaid(node.uuid, LAYOUT, env.p.lessee), 403);
    expectError(await setRaid(node.uuid, LAYOUT, env.p.other), 404);
    expect((await setRaid(node.uuid, LAYOUT, env.p.anonymous)).status).toBe(401);
    const states = await bm(env.ts, env.p.lessee, 'GET', `/v1/nodes/${node.uuid}/states`);
    expect(states.body.target_raid_config).toEqual(LAYOUT);
    // Before 1.12: 406 for who may see the node, 404 for who may not (Ironic checks the node first).
    expectError(await setRaid(node.uuid, LAYOUT, env.p.admin, '1.11'), 406);
    expectError(await setRaid(node.uuid, LAYOUT, env.p.other, '1.11'), 404);
  });

  it('refuses invalid layouts with 400 and keeps the old target', async () => {
    const node = await managed('node-1');
    expect((await setRaid(node.uuid, LAYOUT)).status).toBe(204);
    const bad = [
      [{ logical_disks: [{ size_gb: 10, raid_level: '7' }] }, /raid_level/],
      [{ logical_disks: [{ size_gb: -1, raid_level: '1' }] }, /size_gb/],
      [{ logical_disks: [{ size_gb: 'BIG', raid_level: '1' }] }, /size_gb/],
      [{ logical_disks: [{ raid_level: '1' }] }, /size_gb/],
      [{ logical_disks: [{ size_gb: 10, raid_level: '1', colour: 'red' }] }, /unexpected key\(s\) colour/],
      [{ logical_disks: [] }, /non-empty list/],
      [
        {
          logical_disks: [
            { size_gb: 1, raid_level: '0', is_root_volume: true },
            { size_gb: 1, raid_level: '0', is_root_volume: true },
          ],
        },
        /only one logical disk/,
      ],
      [{ disks: [] }, /unexpected key/],
      [[1, 2], /must be a JSON object/],
      [{ logical_disks: [{ size_gb: 10, raid_level: '1', physical_disks: [] }] }, /physical_disks/],
    ] as const;
    for (const [body, msg] of bad) expectError(await setRaid(node.uuid, body), 400, msg);
    expect((await bm(env.ts, env.p.admin, 'GET', `/v1/nodes/${node.uuid}`)).body.target_raid_config).toEqual(LAYOUT);
  });

  it('{} clears it; a node whose raid interface is no-raid answers 404', async () => {
    const node = await managed('node-2');
    expect((await setRaid(node.uuid, LAYOUT)).status).toBe(204);
    expect((await setRaid(node.uuid, {})).status).toBe(204);
    expect((await bm(env.ts, env.p.admin, 'GET', `/v1/nodes/${node.uuid}`)).body.target_raid_config).toEqual({});
    const plain = await enrollRedfish(env, 'node-2', { name: 'no-raid-node', raid_interface: 'no-raid' });
    expectError(await setRaid(plain.uuid, LAYOUT), 404, /does not support RAID/);
  });
});

describe('raid clean steps', () => {
  it('create_configuration builds the target at the BMC and records raid_config; delete_configuration removes it', async () => {
    const node = await managed('node-3');
    expect((await setRaid(node.uuid, LAYOUT)).status).toBe(204);
    const done = await clean(node.uuid, [
      { interface: 'raid', step: 'delete_configuration' },
      { interface: 'raid', step: 'create_configuration' },
    ]);
    expect(pick(done)).toMatchObject({ provision_state: 'manageable', last_error: null, maintenance: false });
    const vols = env.lab.raid.volumes('node-3');
    expect(vols.map((v) => ({ name: v.name, type: v.raidType, drives: v.driveIds.length }))).toEqual([
      { name: 'root', type: 'RAID1', drives: 2 },
      { name: 'scratch', type: 'RAID0', drives: 2 },
    ]);
    expect(vols[0]!.capacityBytes).toBe(10 * GIB);
    expect(vols[1]!.capacityBytes).toBe(40 * GIB);
    expect(new Set(vols.flatMap((v) => v.driveIds)).size).toBe(4);
    const disks = done.raid_config.logical_disks;
    expect(disks).toHaveLength(2);
    expect(disks[0]).toMatchObject({
      size_gb: 10,
      raid_level: '1',
      is_root_volume: true,
      volume_name: 'root',
      controller: '/redfish/v1/Systems/node-3/Storage/RAID.Integrated.1-1',
    });
    expect(disks[0].physical_disks).toHaveLength(2);
    expect(disks[1]).toMatchObject({ size_gb: 40, raid_level: '0', is_root_volume: false, volume_name: 'scratch' });
    // Readers see it too (states, ≥ 1.12).
    expect((await bm(env.ts, env.p.lessee, 'GET', `/v1/nodes/${node.uuid}/states`)).body.raid_config).toEqual(done.raid_config);

    // Running create again replaces the volumes (delete_existing defaults to true).
    const again = await clean(node.uuid, [{ interface: 'raid', step: 'create_configuration', args: { create_nonroot_volumes: false } }]);
    expect(pick(again)).toMatchObject({ provision_state: 'manageable', last_error: null });
    expect(env.lab.raid.volumes('node-3').map((v) => v.name)).toEqual(['root']);
    expect(again.raid_config.logical_disks.map((d: any) => d.volume_name)).toEqual(['root']);

    const gone = await clean(node.uuid, [{ interface: 'raid', step: 'delete_configuration' }]);
    expect(pick(gone)).toMatchObject({ provision_state: 'manageable', last_error: null });
    expect(env.lab.raid.volumes('node-3')).toEqual([]);
    expect(gone.raid_config).toEqual({});
  });

  it('an impossible layout fails the clean with the BMC reason in last_error; the node recovers', async () => {
    const node = await managed('node-4');
    expect((await setRaid(node.uuid, { logical_disks: [{ size_gb: 500, raid_level: '6' }] })).status).toBe(204);
    const failed = await clean(node.uuid, [{ interface: 'raid', step: 'create_configuration' }]);
    expect(pick(failed)).toMatchObject({
      provision_state: 'clean failed',
      maintenance: true,
      fault: 'clean failure',
      power_state: 'power off',
    });
    expect(failed.last_error).toMatch(/raid\.create_configuration/);
    expect(failed.last_error).toMatch(/logical disk 0 \(RAID 6, 500 GiB\) on 4 drive\(s\)/);
    expect(failed.last_error).toMatch(/HTTP 400.*CapacityBytes is not in the supported range/);
    expect(env.lab.raid.volumes('node-4')).toEqual([]);

    // Recovery: leave maintenance, fix the target, manage, clean again.
    expect((await bm(env.ts, env.p.admin, 'DELETE', `/v1/nodes/${node.uuid}/maintenance`)).status).toBe(202);
    expect((await setRaid(node.uuid, { logical_disks: [{ size_gb: 'MAX', raid_level: '5' }] })).status).toBe(204);
    await provision(env, node.uuid, 'manage');
    expect(pick(await settled(env, node.uuid))).toMatchObject({ provision_state: 'manageable', maintenance: false, fault: null });
    const ok = await clean(node.uuid, [{ interface: 'raid', step: 'create_configuration' }]);
    expect(pick(ok)).toMatchObject({ provision_state: 'manageable', last_error: null });
    expect(ok.raid_config.logical_disks).toEqual([expect.objectContaining({ raid_level: '5', size_gb: 60 })]);
    expect(env.lab.raid.volumes('node-4').map((v) => [v.raidType, v.driveIds.length])).toEqual([['RAID5', 4]]);
  });

  it('too few drives for the level, or a drive the controller lacks, fail clearly', async () => {
    const node = await managed('node-5');
    expect((await setRaid(node.uuid, { logical_disks: [{ size_gb: 10, raid_level: '1', number_of_physical_disks: 1 }] })).status).toBe(204);
    const few = await clean(node.uuid, [{ interface: 'raid', step: 'create_configuration' }]);
    expect(pick(few)).toMatchObject({ provision_state: 'clean failed' });
    expect(few.last_error).toMatch(/Links\/Drives could not be written because its value would conflict with the value of the RAIDType/);
    expect((await bm(env.ts, env.p.admin, 'DELETE', `/v1/nodes/${node.uuid}/maintenance`)).status).toBe(202);
    await provision(env, node.uuid, 'manage');
    await settled(env, node.uuid);

    expect(
      (await setRaid(node.uuid, { logical_disks: [{ size_gb: 10, raid_level: '1', physical_disks: ['Disk.Bay.0', 'Disk.Bay.9'] }] }))
        .status,
    ).toBe(204);
    const missing = await clean(node.uuid, [{ interface: 'raid', step: 'create_configuration' }]);
    expect(pick(missing)).toMatchObject({ provision_state: 'clean failed', maintenance: false });
    expect(missing.last_error).toMatch(/names drive Disk\.Bay\.9, which controller RAID\.Integrated\.1-1 does not have/);
    await provision(env, node.uuid, 'manage');
    expect((await settled(env, node.uuid)).provision_state).toBe('manageable');
  });
});
