/**
 * Out-of-band inspection and the BIOS cache as Ironic 21.4 computes them, against a vendor-style
 * Redfish mockup served by the lab's mockup server (test/fixtures/redfish-mockups/raid-2u,
 * src/lab/mockup.ts) — payloads the simulated lab does not produce:
 *
 * - system 1: RAID volumes of 1 GiB, 1.8 TB and 900 GB over drives of 2 GiB … 1.92 TB (and a
 *   SimpleStorage with only a 2 GiB and an absent device) → `local_gb` from the 900 GB volume
 *   (smallest of at least 4 GiB, volumes before drives; the largest disk or the smallest drive
 *   would give other numbers); four NICs of which one is Enabled and OK → one port; no
 *   `BootSourceOverrideMode` → no `boot_mode` capability; BIOS attributes with list and object
 *   values → JSON text; its storage links are written in lower case, which the mockup answers
 *   as real BMCs do;
 * - system 2: `ProcessorArchitecture` `IA-64` → `ia64`; SimpleStorage only (smallest enabled
 *   device of at least 4 GiB); legacy boot → `boot_mode:bios`; a `Bios` link the BMC cannot
 *   serve → `manage` succeeds (as Ironic) with the failure in `last_error`, not a silent
 *   empty settings list.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockupLab, type MockupLab } from '../../../src/lab/mockup.ts';
import { bm, enroll, provision, waitNode, type ConductorEnv } from '../conductor/support.ts';
import { portsOf, startInspectionEnv } from './support.ts';

const DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../fixtures/redfish-mockups/raid-2u');
const GIB = 1024 ** 3;

let env: ConductorEnv;
let mock: MockupLab;

beforeAll(async () => {
  env = await startInspectionEnv(1);
  mock = await startMockupLab({ dir: DIR });
}, 60_000);

afterAll(async () => {
  await mock?.close();
  await env?.close();
});

/** Enrol mockup system `n` for redfish inspection and `manage` it; returns the managed node. */
async function managed(n: number, name: string): Promise<any> {
  const node = await enroll(env, {
    driver: 'redfish',
    name,
    inspect_interface: 'redfish',
    driver_info: {
      redfish_address: mock.url,
      redfish_system_id: `/redfish/v1/Systems/${n}`,
      redfish_username: 'admin',
      redfish_password: 'password',
    },
  });
  await provision(env, node.uuid, 'manage');
  return waitNode(env, node.uuid, (x) => x.provision_state !== 'verifying' && x.provision_state !== 'enroll' && x.reservation === null);
}

/** Inspect `uuid` and wait for the outcome. */
async function inspected(uuid: string): Promise<any> {
  await provision(env, uuid, 'inspect');
  return waitNode(
    env,
    uuid,
    (n) => (n.provision_state === 'manageable' || n.provision_state === 'inspect failed') && n.reservation === null,
    30_000,
  );
}

async function inventoryOf(uuid: string): Promise<any> {
  const inv = await bm(env.ts, env.p.admin, 'GET', `/v1/nodes/${uuid}/inventory`, undefined, '1.81');
  expect(inv.status, inv.text).toBe(200);
  return inv.body;
}

describe('redfish inspection as Ironic 21.4 computes it (vendor mockup)', () => {
  it('RAID volumes before drives, smallest of at least 4 GiB; ports only for Enabled+OK NICs; no boot_mode without BootSourceOverrideMode', async () => {
    const node = await managed(1, 'raid-node');
    expect(node.provision_state).toBe('manageable');
    expect(node.last_error).toBeNull();
    const done = await inspected(node.uuid);
    expect(done.provision_state, JSON.stringify(done.last_error)).toBe('manageable');
    expect(done.last_error).toBeNull();
    // The 900 GB volume: floor(900e9 / GiB) - 1. Not the 1 GiB volume (under 4 GiB), not the
    // larger 1.8 TB one, not the smallest drive (480 GB → 446) nor the largest (1.92 TB → 1787).
    expect(done.properties).toMatchObject({ cpus: 32, cpu_arch: 'x86_64', memory_mb: 65536, local_gb: Math.floor(900e9 / GIB) - 1 });
    expect(done.properties.local_gb).toBe(837);
    expect(String(done.properties.capabilities ?? '')).not.toContain('boot_mode');
    // The inspection rules see no boot mode either (the legacy-boot rule does not match).
    expect(done.traits).toEqual([]);

    const ports = await portsOf(env, node.uuid);
    expect(ports.map((p) => p.address)).toEqual(['0c:c4:7a:10:00:01']);

    const { inventory, plugin_data } = await inventoryOf(node.uuid);
    expect(inventory.boot.current_boot_mode).toBeNull();
    expect(inventory.interfaces.map((i: any) => i.mac_address)).toEqual(['0c:c4:7a:10:00:01']);
    expect(plugin_data.skipped_interfaces).toEqual([
      { mac_address: '0c:c4:7a:10:00:02', state: 'Disabled', health: 'OK' },
      { mac_address: '0c:c4:7a:10:00:03', state: 'Enabled', health: 'Critical' },
      { mac_address: '0c:c4:7a:10:00:04', state: null, health: null },
    ]);
    expect(plugin_data.root_disk).toMatchObject({ name: 'os', size: 900e9 });
    expect(plugin_data.local_gb).toBe(837);
    // The drives (read through lower-case links) are the inventory's disks.
    expect(inventory.disks.map((d: any) => [d.name, d.size, d.rotational])).toEqual([
      ['boot flash', 2 * GIB, false],
      ['ssd0', 480e9, false],
      ['hdd0', 960e9, true],
      ['hdd1', 960e9, true],
      ['hdd2', 1920e9, true],
    ]);
    expect(plugin_data.unreadable_resources).toBeUndefined();
  }, 60_000);

  it('BIOS attributes whose values are lists or objects show as JSON text; the unreadable registry is skipped', async () => {
    const node = await managed(1, 'raid-bios');
    expect(node.last_error).toBeNull();
    const res = await bm(env.ts, env.p.owner, 'GET', `/v1/nodes/${node.uuid}/bios`, undefined, '1.74');
    expect(res.status, res.text).toBe(200);
    const by = Object.fromEntries(res.body.bios.map((s: any) => [s.name, s.value]));
    expect(by).toEqual({
      AssetTag: null,
      BootOrder: '["Pxe","Hdd"]',
      PowerProfile: 'MaxPerf',
      ProcCores: '8',
      ProcTurboMode: 'true',
      SlotBifurcation: '{"Slot1":"x16","Slot2":"x8x8"}',
    });
    expect(JSON.stringify(res.body)).not.toContain('[object Object]');
    expect(JSON.parse(by.SlotBifurcation)).toEqual({ Slot1: 'x16', Slot2: 'x8x8' });
  }, 60_000);

  it('IA-64 → ia64, SimpleStorage only, legacy boot; a BIOS resource the BMC cannot serve is an error in last_error', async () => {
    const node = await managed(2, 'itanium');
    // Ironic caches BIOS settings while verifying and does not fail the verification for it;
    // esi does the same but says why the settings list is empty.
    expect(node.provision_state).toBe('manageable');
    expect(node.last_error).toMatch(/Caching of BIOS settings failed on node .*: Redfish BMC at .* refused .*HTTP 404/);
    expect(node.last_error).not.toContain('password');
    const bios = await bm(env.ts, env.p.admin, 'GET', `/v1/nodes/${node.uuid}/bios`);
    expect(bios.status, bios.text).toBe(200);
    expect(bios.body.bios).toEqual([]);

    const done = await inspected(node.uuid);
    expect(done.provision_state, JSON.stringify(done.last_error)).toBe('manageable');
    expect(done.last_error).toBeNull();
    // disk0 (120 GB) is the smallest enabled device of at least 4 GiB (efi, 1 GiB, is too small).
    expect(done.properties).toMatchObject({ cpus: 4, cpu_arch: 'ia64', memory_mb: 16384, local_gb: Math.floor(120e9 / GIB) - 1 });
    expect(String(done.properties.capabilities)).toContain('boot_mode:bios');
    expect(done.traits).toEqual(['CUSTOM_LEGACY_BIOS']);
    const { inventory, plugin_data } = await inventoryOf(node.uuid);
    expect(inventory.cpu.architecture).toBe('ia64');
    expect(inventory.disks.map((d: any) => d.name)).toEqual(['disk1', 'disk0', 'efi']);
    expect(plugin_data.root_disk).toMatchObject({ name: 'disk0', size: 120e9 });
    expect((await portsOf(env, node.uuid)).map((p) => p.address)).toEqual(['0c:c4:7a:20:00:01']);
  }, 60_000);

  it('the mockup answers resource paths in any case, as real BMCs do', async () => {
    const auth = { authorization: `Basic ${Buffer.from('admin:password').toString('base64')}` };
    for (const p of [
      '/redfish/v1/Systems/1',
      '/redfish/v1/systems/1',
      '/REDFISH/V1/SYSTEMS/1/',
      '/redfish/v1/systems/1/storage/raid.1/volumes/3',
    ]) {
      const res = await fetch(`${mock.url}${p}`, { headers: auth });
      expect(res.status, p).toBe(200);
      const body = (await res.json()) as Record<string, unknown>;
      expect(body['@odata.id'], p).toMatch(/^\/redfish\/v1\/Systems\/1/);
    }
    expect((await fetch(`${mock.url}/redfish/v1/systems/9`, { headers: auth })).status).toBe(404);
    expect((await fetch(`${mock.url}/Redfish/V1/`)).status).toBe(200);
    expect((await fetch(`${mock.url}/redfish/v1/systems/1`)).status).toBe(401);
    const login = await fetch(`${mock.url}/redfish/v1/sessionservice/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ UserName: 'admin', Password: 'password' }),
    });
    expect(login.status).toBe(201);
    expect(login.headers.get('x-auth-token')).toBeTruthy();
  });
});
