/**
 * BIOS settings through the baremetal API against the lab's Redfish BIOS (DSP2046 `Bios`,
 * attribute registry, pending settings applied at the next reset): the cache
 * (`GET /v1/nodes/{id}/bios[/{name}]`) for the five personas, manual cleaning with
 * `bios.apply_configuration` and `bios.factory_reset`, step validation at the API (400), and
 * unknown settings or invalid values failing the clean with a clear `last_error` and a node
 * that can be managed again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bm, enrollRedfish, expectError, pick, provision, settled, startConductorEnv, type ConductorEnv } from '../conductor/support.ts';

let env: ConductorEnv;

// Each test manages a node on a lab system of its own (node-0 … node-7): its BIOS starts from the
// factory settings and the cache holds only what the test did.
beforeAll(async () => {
  env = await startConductorEnv(8, { env: { ESI_POWER_TIMEOUT: '5' } });
});
afterAll(async () => env?.close());

async function clean(ident: string, steps: unknown[]): Promise<any> {
  await provision(env, ident, 'clean', { clean_steps: steps });
  return settled(env, ident);
}

async function managed(system: string): Promise<any> {
  const n = await enrollRedfish(env, system);
  await provision(env, n.uuid, 'manage');
  const m = await settled(env, n.uuid);
  expect(pick(m)).toMatchObject({ provision_state: 'manageable', last_error: null });
  return m;
}

const apply = (settings: unknown[]) => [{ interface: 'bios', step: 'apply_configuration', args: { settings } }];

/** {@link managed}, then `settings` applied by a clean (the cache then holds them). */
async function managedWith(system: string, settings: unknown[]): Promise<any> {
  const n = await managed(system);
  expect(pick(await clean(n.uuid, apply(settings)))).toMatchObject({ provision_state: 'manageable', last_error: null });
  return n;
}

describe('bios.apply_configuration and the settings cache', () => {
  it('applies settings at the BMC through its pending settings and a reboot, and caches them', async () => {
    const node = await managed('node-0');
    expect(node.bios_interface).toBe('redfish');
    // manage (verify) cached the factory settings already, as Ironic does.
    const before = await bm(env.ts, env.p.admin, 'GET', `/v1/nodes/${node.uuid}/bios`);
    expect(before.status, before.text).toBe(200);
    const initial = Object.fromEntries(before.body.bios.map((s: any) => [s.name, s]));
    expect(initial.ProcVirtualization.value).toBe('Enabled');
    expect(initial.ProcVirtualization.updated_at).toBeNull();
    const bootsBefore = env.lab.systems.get('node-0').bootCount;

    const done = await clean(
      node.uuid,
      apply([
        { name: 'ProcVirtualization', value: 'Disabled' },
        { name: 'NumaNodesPerSocket', value: '2' },
        { name: 'AssetTag', value: 'rack-7-u12' },
      ]),
    );
    expect(pick(done)).toMatchObject({ provision_state: 'manageable', last_error: null, maintenance: false, power_state: 'power off' });
    const lab = env.lab.bios.attributes('node-0');
    expect(lab).toMatchObject({ ProcVirtualization: 'Disabled', NumaNodesPerSocket: 2, AssetTag: 'rack-7-u12' });
    expect(env.lab.bios.pending('node-0')).toEqual({});
    expect(env.lab.systems.get('node-0').bootCount).toBeGreaterThan(bootsBefore);

    const list = await bm(env.ts, env.p.admin, 'GET', `/v1/nodes/${node.uuid}/bios`);
    expect(list.status).toBe(200);
    const byName = Object.fromEntries(list.body.bios.map((s: any) => [s.name, s]));
    expect(Object.keys(byName).sort()).toEqual(Object.keys(lab).sort());
    expect(byName.ProcVirtualization.value).toBe('Disabled');
    expect(byName.NumaNodesPerSocket.value).toBe('2');
    expect(byName.SystemServiceTag.value).toBe('ESILAB000000');
    expect(byName.ProcVirtualization.links[0].href).toMatch(new RegExp(`/v1/nodes/${node.uuid}/bios/ProcVirtualization$`));
    expect(byName.ProcVirtualization.created_at).toBe(initial.ProcVirtualization.created_at);
    expect(byName.ProcVirtualization.updated_at).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(byName.SriovGlobalEnable.updated_at).toBeNull();
    // Registry fields only with detail (1.74).
    expect(byName.ProcVirtualization.allowable_values).toBeUndefined();
    const detail = await bm(env.ts, env.p.admin, 'GET', `/v1/nodes/${node.uuid}/bios?detail=true`);
    const d = Object.fromEntries(detail.body.bios.map((s: any) => [s.name, s]));
    expect(d.ProcVirtualization).toMatchObject({
      attribute_type: 'Enumeration',
      allowable_values: ['Enabled', 'Disabled'],
      read_only: false,
      reset_required: true,
    });
    expect(d.NumaNodesPerSocket).toMatchObject({ attribute_type: 'Integer', lower_bound: 1, upper_bound: 4 });
    expect(d.SystemServiceTag).toMatchObject({ read_only: true, unique: true });
    // Before 1.74 detail and fields are unknown query parameters to Ironic (400).
    expectError(
      await bm(env.ts, env.p.admin, 'GET', `/v1/nodes/${node.uuid}/bios?detail=true`, undefined, '1.73'),
      400,
      /Invalid query parameter \?detail=True received\./,
    );
    expectError(
      await bm(env.ts, env.p.admin, 'GET', `/v1/nodes/${node.uuid}/bios?fields=name,value`, undefined, '1.73'),
      400,
      /Invalid query parameter \?fields=\['name', 'value'\] received\./,
    );
    const names = await bm(env.ts, env.p.admin, 'GET', `/v1/nodes/${node.uuid}/bios?fields=name,value`);
    expect(names.body.bios[0]).toEqual({ name: 'AssetTag', value: 'rack-7-u12' });
    expectError(await bm(env.ts, env.p.admin, 'GET', `/v1/nodes/${node.uuid}/bios?fields=name,colour`), 400, /colour/);
  });

  it('shows the cache to admin, owner and lessee; another project gets 404 and anonymous 401', async () => {
    const node = await managedWith('node-1', [{ name: 'ProcVirtualization', value: 'Disabled' }]);
    for (const who of [env.p.admin, env.p.owner, env.p.lessee]) {
      const list = await bm(env.ts, who, 'GET', `/v1/nodes/${node.uuid}/bios`);
      expect(list.status, `${who.name}: ${list.text}`).toBe(200);
      expect(list.body.bios.length).toBeGreaterThan(5);
      const one = await bm(env.ts, who, 'GET', `/v1/nodes/${node.uuid}/bios/ProcVirtualization`);
      expect(one.status, who.name).toBe(200);
      expect(one.body.ProcVirtualization).toMatchObject({ name: 'ProcVirtualization', value: 'Disabled' });
      expect(one.body.ProcVirtualization.allowable_values).toEqual(['Enabled', 'Disabled']);
    }
    expectError(await bm(env.ts, env.p.other, 'GET', `/v1/nodes/${node.uuid}/bios`), 404);
    expectError(await bm(env.ts, env.p.other, 'GET', `/v1/nodes/${node.uuid}/bios/ProcVirtualization`), 404);
    expect((await bm(env.ts, env.p.anonymous, 'GET', `/v1/nodes/${node.uuid}/bios`)).status).toBe(401);
    expectError(
      await bm(env.ts, env.p.admin, 'GET', `/v1/nodes/${node.uuid}/bios/NoSuchSetting`),
      404,
      /doesn't have a BIOS setting 'NoSuchSetting'/,
    );
    expectError(await bm(env.ts, env.p.admin, 'GET', `/v1/nodes/${node.uuid}/bios`, undefined, '1.39'), 404);
  });

  it('only admin, owner and lessee managers may clean; another project gets 404', async () => {
    const node = await managed('node-2');
    const steps = apply([{ name: 'ProcTurboMode', value: 'Disabled' }]);
    expectError(
      await bm(env.ts, env.p.other, 'PUT', `/v1/nodes/${node.uuid}/states/provision`, { target: 'clean', clean_steps: steps }),
      404,
    );
    expect(
      (await bm(env.ts, env.p.anonymous, 'PUT', `/v1/nodes/${node.uuid}/states/provision`, { target: 'clean', clean_steps: steps })).status,
    ).toBe(401);
    const done = await (async () => {
      await provision(env, node.uuid, 'clean', { clean_steps: steps }, env.p.owner);
      return settled(env, node.uuid);
    })();
    expect(pick(done)).toMatchObject({ provision_state: 'manageable', last_error: null });
    expect(env.lab.bios.attributes('node-2').ProcTurboMode).toBe('Disabled');
  });

  it('bios.factory_reset restores the defaults at the BMC and in the cache', async () => {
    // Settings away from the defaults first, so that the reset has something to restore.
    const node = await managedWith('node-3', [
      { name: 'ProcVirtualization', value: 'Disabled' },
      { name: 'NumaNodesPerSocket', value: '2' },
      { name: 'AssetTag', value: 'rack-7-u12' },
      { name: 'ProcTurboMode', value: 'Disabled' },
    ]);
    expect(env.lab.bios.attributes('node-3')).toMatchObject({
      ProcVirtualization: 'Disabled',
      NumaNodesPerSocket: 2,
      AssetTag: 'rack-7-u12',
      ProcTurboMode: 'Disabled',
    });
    const changed = await bm(env.ts, env.p.admin, 'GET', `/v1/nodes/${node.uuid}/bios/ProcVirtualization`);
    expect(changed.body.ProcVirtualization.value).toBe('Disabled');

    const done = await clean(node.uuid, [{ interface: 'bios', step: 'factory_reset' }]);
    expect(pick(done)).toMatchObject({ provision_state: 'manageable', last_error: null });
    expect(env.lab.bios.attributes('node-3')).toMatchObject({
      ProcVirtualization: 'Enabled',
      NumaNodesPerSocket: 1,
      AssetTag: '',
      ProcTurboMode: 'Enabled',
    });
    const one = await bm(env.ts, env.p.admin, 'GET', `/v1/nodes/${node.uuid}/bios/ProcVirtualization`);
    expect(one.body.ProcVirtualization.value).toBe('Enabled');
  });
});

describe('bad BIOS requests', () => {
  it('an unknown setting fails the clean with a clear last_error, changes nothing, and the node can be managed again', async () => {
    const node = await managed('node-4');
    const failed = await clean(
      node.uuid,
      apply([
        { name: 'ProcVirtualization', value: 'Disabled' },
        { name: 'HyperWarpDrive', value: 'Enabled' },
      ]),
    );
    expect(pick(failed)).toMatchObject({ provision_state: 'clean failed', maintenance: false });
    expect(failed.last_error).toMatch(/bios\.apply_configuration/);
    expect(failed.last_error).toMatch(/HyperWarpDrive/);
    expect(failed.last_error).toMatch(/no such BIOS setting/);
    expect(env.lab.bios.attributes('node-4').ProcVirtualization).toBe('Enabled');
    expect(env.lab.bios.pending('node-4')).toEqual({});
    await provision(env, node.uuid, 'manage');
    expect(pick(await settled(env, node.uuid))).toMatchObject({ provision_state: 'manageable', last_error: null });
  });

  it('an invalid value names the allowed values; a read-only setting and an out-of-range integer are refused too', async () => {
    const node = await managed('node-5');
    const bad = await clean(node.uuid, apply([{ name: 'SysProfile', value: 'Turbo' }]));
    expect(pick(bad)).toMatchObject({ provision_state: 'clean failed' });
    expect(bad.last_error).toMatch(/SysProfile.*allowed values are PerfPerWattOptimizedDapc, PerfOptimized, DenseCfgOptimized, Custom/);
    await provision(env, node.uuid, 'manage');
    await settled(env, node.uuid);
    const ro = await clean(node.uuid, apply([{ name: 'SystemServiceTag', value: 'X' }]));
    expect(ro.last_error).toMatch(/SystemServiceTag.*read-only/);
    await provision(env, node.uuid, 'manage');
    await settled(env, node.uuid);
    const range = await clean(node.uuid, apply([{ name: 'NumaNodesPerSocket', value: 9 }]));
    expect(range.last_error).toMatch(/between 1 and 4/);
    await provision(env, node.uuid, 'manage');
    expect((await settled(env, node.uuid)).provision_state).toBe('manageable');
  });

  it('the API refuses unknown steps, bad arguments and interfaces the node cannot clean with (400), leaving the node as it was', async () => {
    const node = await managed('node-6');
    const put = (steps: unknown) =>
      bm(env.ts, env.p.admin, 'PUT', `/v1/nodes/${node.uuid}/states/provision`, { target: 'clean', clean_steps: steps });
    expectError(await put([{ interface: 'bios', step: 'overclock' }]), 400, /bios\.overclock is not a clean step.*apply_configuration/);
    expectError(await put([{ interface: 'bios', step: 'apply_configuration' }]), 400, /needs "settings"/);
    expectError(await put(apply([])), 400, /non-empty list/);
    expectError(await put(apply([{ name: 'X' }])), 400, /settings\[0\] \(X\) needs a string, number or boolean "value"/);
    expectError(await put(apply([{ name: 'X', value: 1, extra: 2 }])), 400, /unexpected key/);
    expectError(await put([{ interface: 'bios', step: 'factory_reset', args: { now: true } }]), 400, /takes no arguments/);
    expectError(await put([{ interface: 'firmwarez', step: 'update' }]), 400, /interface must be one of/);
    expectError(await put([{ interface: 'raid', step: 'create_configuration' }]), 400, /no target_raid_config/);
    const n = (await bm(env.ts, env.p.admin, 'GET', `/v1/nodes/${node.uuid}`)).body;
    expect(pick(n)).toMatchObject({ provision_state: 'manageable', target_provision_state: null });

    const patched = await bm(env.ts, env.p.admin, 'PATCH', `/v1/nodes/${node.uuid}`, [
      { op: 'replace', path: '/bios_interface', value: 'no-bios' },
    ]);
    expect(patched.status, patched.text).toBe(200);
    expectError(
      await put(apply([{ name: 'ProcTurboMode', value: 'Disabled' }])),
      400,
      /cannot run bios\.apply_configuration: its bios interface is "no-bios"/,
    );
    expect(
      (await bm(env.ts, env.p.admin, 'PATCH', `/v1/nodes/${node.uuid}`, [{ op: 'replace', path: '/bios_interface', value: 'redfish' }]))
        .status,
    ).toBe(200);
  });
});

describe('the cache and the node', () => {
  it('goes with the node when the node is deleted', async () => {
    const node = await managed('node-7');
    const db = env.ts.server.services.store.db;
    const count = async (): Promise<number> =>
      Number(
        (
          await db
            .selectFrom('node_bios_settings')
            .select((eb) => eb.fn.countAll().as('n'))
            .where('node_id', '=', node.id ?? -1)
            .executeTakeFirst()
        )?.n ?? 0,
      );
    const row = await db.selectFrom('nodes').select('id').where('uuid', '=', node.uuid).executeTakeFirstOrThrow();
    node.id = row.id;
    expect(await count()).toBe(13);
    expect((await bm(env.ts, env.p.admin, 'DELETE', `/v1/nodes/${node.uuid}`)).status).toBe(204);
    expect(await count()).toBe(0);
  });
});
