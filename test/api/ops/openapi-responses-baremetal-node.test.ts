/**
 * The documented answers of a node's sub-resources (src/api/baremetal/response-schemas-node.ts,
 * in `/openapi.json` through each route's `config.doc.response`) compared with real answers at
 * the newest microversion: a fake-hardware node owned by the owner and leased to the lessee
 * (its `lessee` field), cabled to a switch, with a VIF attached, traits, BIOS settings and an
 * inventory in its records, a maintenance history and an enabled console; each read as admin,
 * owner and lessee where the policy lets them (the lessee reads no history), and each write's
 * answer (202/204 without a body) checked as documented. The schemas are strict where the
 * wire format is fixed, so an answer with a field the schema does not know, or without one it
 * requires, fails here.
 */
import type { TSchema } from '@sinclair/typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PortCollection, PortDetailCollection } from '../../../src/api/baremetal/response-schemas.ts';
import {
  BootDeviceResponse,
  NodeBiosResponse,
  NodeBiosSettingResponse,
  NodeConsoleResponse,
  NodeHistoryCollection,
  NodeHistoryDetailCollection,
  NodeHistoryEvent,
  NodeIndicatorsResponse,
  NodeIndicatorStateResponse,
  NodeInventoryResponse,
  NodeStatesResponse,
  NodeTraitsResponse,
  NodeValidateResponse,
  NodeVifsResponse,
  SupportedBootDevicesResponse,
  VendorCallResponse,
  VendorMethodsResponse,
} from '../../../src/api/baremetal/response-schemas-node.ts';
import {
  AllocationResponse,
  PortgroupCollection,
  PortgroupDetailCollection,
  VolumeConnectorCollection,
  VolumeRootResponse,
  VolumeTargetCollection,
} from '../../../src/api/baremetal/response-schemas-resources.ts';
import { KyselyBiosSettingsRepository } from '../../../src/store/hardware/bios-repository.ts';
import { KyselyInspectionRepository } from '../../../src/store/inspection/repository.ts';
import type { Persona, TestResponse } from '../../helpers/harness.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import { forceNode } from '../baremetal/helpers.ts';
import { bm as bmAt, cabledNode, create, createSwitch, startNetEnv, type NetEnv } from '../network/support.ts';
import { expectValid } from './openapi-support.ts';

/** The newest microversion. */
const NEWEST = '1.82';

let env: NetEnv;
let node: { uuid: string; name: string };

/** A baremetal request at the newest microversion. */
function bm(who: Persona, method: string, path: string, body?: unknown): Promise<TestResponse> {
  return bmAt(env, who, method, path, body, NEWEST);
}

/** An answer that must succeed, as parsed JSON. */
async function ok(who: Persona, method: string, path: string, body?: unknown): Promise<unknown> {
  const r = await bm(who, method, path, body);
  expect(r.status, `${who.name} ${method} ${path}: ${r.text}`).toBeLessThan(300);
  return r.body;
}

/**
 * A write documented as answering without a body: 202 or 204, empty. Retried while the
 * conductor holds the node (409: its power sync or a previous write's work).
 */
async function noBody(who: Persona, method: string, path: string, status: 202 | 204, body?: unknown): Promise<void> {
  const r = await waitFor(
    () => bm(who, method, path, body),
    (res) => res.status !== 409,
    { what: `${method} ${path} without the node locked` },
  );
  expect(r.status, `${who.name} ${method} ${path}: ${r.text}`).toBe(status);
  expect(r.text, `${method} ${path}`).toBe('');
}

beforeAll(async () => {
  env = await startNetEnv();
  await createSwitch(env, 'doc-node-sw');
  ({ node } = await cabledNode(env, 'doc-node', 'doc-node-sw', ['52:54:00:00:71:00', '52:54:00:00:71:01'], {
    vendor_interface: 'fake',
    console_interface: 'fake',
  }));
  const stored = (await env.ts.server.services.inventory.nodeRepository.get(node.uuid))!;
  const db = env.ts.server.services.store.db;
  const now = env.ts.server.services.clock.now();
  await new KyselyBiosSettingsRepository(db).replace(
    stored.id,
    [
      {
        name: 'ProcVirtualization',
        value: 'Enabled',
        attribute_type: 'Enumeration',
        allowable_values: ['Enabled', 'Disabled'],
        lower_bound: null,
        upper_bound: null,
        min_length: null,
        max_length: null,
        read_only: false,
        reset_required: true,
        unique: false,
      },
      {
        name: 'AssetTag',
        value: null,
        attribute_type: null,
        allowable_values: null,
        lower_bound: null,
        upper_bound: null,
        min_length: null,
        max_length: null,
        read_only: null,
        reset_required: null,
        unique: null,
      },
    ],
    now,
  );
  await new KyselyInspectionRepository(db).putInventory(
    stored.id,
    { cpu: { count: 8, architecture: 'x86_64' }, memory: { physical_mb: 16384 }, interfaces: [], disks: [] },
    { root_disk: null },
    now,
  );
});
afterAll(async () => env?.ts.close());

describe('documented answers of node sub-resources match real ones', () => {
  it('states, boot device, traits, validation, indicators, BIOS and ports as admin, owner and lessee; the inventory as admin and owner; vendor methods as admin', async () => {
    const { admin, owner, lessee } = env.p;
    await noBody(owner, 'PUT', `/v1/nodes/${node.uuid}/traits`, 204, { traits: ['CUSTOM_DOC', 'CUSTOM_DOC2'] });
    const n = node.uuid;
    const cases: Array<[string, TSchema]> = [
      [`/v1/nodes/${n}/states`, NodeStatesResponse],
      [`/v1/nodes/${n}/states/console`, NodeConsoleResponse],
      [`/v1/nodes/states/console/${n}`, NodeConsoleResponse],
      [`/v1/nodes/${n}/management/boot_device`, BootDeviceResponse],
      [`/v1/nodes/${n}/management/boot_device/supported`, SupportedBootDevicesResponse],
      [`/v1/nodes/${n}/traits`, NodeTraitsResponse],
      [`/v1/nodes/${n}/validate`, NodeValidateResponse],
      [`/v1/nodes/validate?node=${n}`, NodeValidateResponse],
      [`/v1/nodes/${n}/management/indicators`, NodeIndicatorsResponse],
      [`/v1/nodes/${n}/management/indicators/led@system`, NodeIndicatorStateResponse],
      [`/v1/nodes/${n}/bios`, NodeBiosResponse],
      [`/v1/nodes/${n}/bios/ProcVirtualization`, NodeBiosSettingResponse],
      [`/v1/nodes/${n}/bios/AssetTag`, NodeBiosSettingResponse],
      [`/v1/nodes/${n}/ports`, PortCollection],
      [`/v1/nodes/${n}/ports/detail`, PortDetailCollection],
      [`/v1/nodes/${n}/ports?limit=1`, PortCollection],
    ];
    for (const who of [admin, owner, lessee]) {
      for (const [url, schema] of cases) expectValid(schema, await ok(who, 'GET', url), `${who.name} GET ${url}`);
      expect(await ok(who, 'GET', `/v1/nodes/${n}/traits`)).toEqual({ traits: ['CUSTOM_DOC', 'CUSTOM_DOC2'] });
      const bios = (await ok(who, 'GET', `/v1/nodes/${n}/bios`)) as { bios: unknown[] };
      expect(bios.bios, who.name).toHaveLength(2);
    }
    // The inventory is the admin's and the owner's (`baremetal:node:inventory:get`).
    for (const who of [admin, owner]) {
      const inventory = await ok(who, 'GET', `/v1/nodes/${n}/inventory`);
      expectValid(NodeInventoryResponse, inventory, `${who.name} GET inventory`);
      expect(inventory).toMatchObject({ inventory: { cpu: { count: 8 } } });
    }
    expect((await bm(lessee, 'GET', `/v1/nodes/${n}/inventory`)).status).toBe(403);
    // Vendor passthru is the admin's (policy `baremetal:node:vendor_passthru`).
    const methods = await ok(admin, 'GET', `/v1/nodes/${n}/vendor_passthru/methods`);
    expectValid(VendorMethodsResponse, methods, 'admin GET vendor_passthru/methods');
    expect(Object.keys(methods as object).sort()).toEqual(['fourth_method_shared_lock', 'second_method', 'third_method_sync']);
    // Older microversions show fewer fields; the document describes the newest.
    const detail = await ok(admin, 'GET', `/v1/nodes/${n}/bios?detail=true`);
    expect(Object.keys((detail as { bios: Array<Record<string, unknown>> }).bios[0]!)).toContain('allowable_values');
  });

  it('VIFs: an attached Neutron port, listed as admin, owner and lessee; detached', async () => {
    const { admin, owner, lessee } = env.p;
    const network = await create(env, lessee, 'networks', 'network', { name: 'doc-vif-net' });
    await create(env, lessee, 'subnets', 'subnet', { network_id: network.id, cidr: '10.71.0.0/24', ip_version: 4 });
    const port = await create(env, lessee, 'ports', 'port', { network_id: network.id, name: 'doc-vif' });
    await noBody(lessee, 'POST', `/v1/nodes/${node.uuid}/vifs`, 204, { id: port.id });
    for (const who of [admin, owner, lessee]) {
      const vifs = await ok(who, 'GET', `/v1/nodes/${node.uuid}/vifs`);
      expectValid(NodeVifsResponse, vifs, `${who.name} GET vifs`);
      expect(vifs, who.name).toEqual({ vifs: [{ id: port.id }] });
    }
    await noBody(lessee, 'DELETE', `/v1/nodes/${node.uuid}/vifs/${port.id}`, 204);
    expectValid(NodeVifsResponse, await ok(admin, 'GET', `/v1/nodes/${node.uuid}/vifs`), 'after detach');
  });

  it('history: maintenance set and cleared, listed (short and detailed) and shown as admin and owner', async () => {
    const { admin, owner, lessee } = env.p;
    await noBody(owner, 'PUT', `/v1/nodes/${node.uuid}/maintenance`, 202, { reason: 'doc check' });
    await noBody(owner, 'DELETE', `/v1/nodes/${node.uuid}/maintenance`, 202);
    for (const who of [admin, owner]) {
      const list = (await ok(who, 'GET', `/v1/nodes/${node.uuid}/history`)) as { history: Array<{ uuid: string }> };
      expectValid(NodeHistoryCollection, list, `${who.name} history`);
      expect(list.history.length, who.name).toBeGreaterThanOrEqual(2);
      expectValid(NodeHistoryDetailCollection, await ok(who, 'GET', `/v1/nodes/${node.uuid}/history/detail`), `${who.name} detail`);
      expectValid(NodeHistoryDetailCollection, await ok(who, 'GET', `/v1/nodes/${node.uuid}/history?detail=true`), `${who.name} ?detail`);
      const paged = await ok(who, 'GET', `/v1/nodes/${node.uuid}/history?limit=1`);
      expectValid(NodeHistoryCollection, paged, `${who.name} page`);
      expect(paged, who.name).toHaveProperty('next');
      const event = await ok(who, 'GET', `/v1/nodes/${node.uuid}/history/${list.history[0]!.uuid}`);
      expectValid(NodeHistoryEvent, event, `${who.name} event`);
    }
    expect((await bm(lessee, 'GET', `/v1/nodes/${node.uuid}/history`)).status).toBe(403);
  });

  it('vendor passthru (admin): a synchronous call answers its result as JSON, an asynchronous one 202 without a body', async () => {
    const { admin, owner } = env.p;
    const sync = await ok(admin, 'POST', `/v1/nodes/${node.uuid}/vendor_passthru/third_method_sync`, { bar: 'meow' });
    expectValid(VendorCallResponse, sync, 'sync call');
    expect(sync).toBe(true);
    expect(await ok(admin, 'POST', `/v1/nodes/${node.uuid}/vendor_passthru?method=third_method_sync`, { bar: 'woof' })).toBe(false);
    expect((await bm(owner, 'POST', `/v1/nodes/${node.uuid}/vendor_passthru/third_method_sync`, { bar: 'meow' })).status).toBe(403);
    await noBody(admin, 'POST', `/v1/nodes/${node.uuid}/vendor_passthru/fourth_method_shared_lock`, 202, { bar: 'woof' });
  });

  it('writes without an answer body: power, boot device, traits, RAID, console and delete', async () => {
    const { admin, owner } = env.p;
    const n = node.uuid;
    await noBody(owner, 'PUT', `/v1/nodes/${n}/management/boot_device`, 204, { boot_device: 'pxe', persistent: true });
    expect(await ok(owner, 'GET', `/v1/nodes/${n}/management/boot_device`)).toEqual({ boot_device: 'pxe', persistent: true });
    await noBody(owner, 'PUT', `/v1/nodes/${n}/traits/CUSTOM_ONE`, 204);
    await noBody(owner, 'DELETE', `/v1/nodes/${n}/traits/CUSTOM_ONE`, 204);
    await noBody(owner, 'DELETE', `/v1/nodes/${n}/traits`, 204);
    await noBody(admin, 'PUT', `/v1/nodes/${n}/states/raid`, 204, { logical_disks: [{ size_gb: 'MAX', raid_level: '1' }] });
    expect(((await ok(admin, 'GET', `/v1/nodes/${n}/states`)) as { target_raid_config: unknown }).target_raid_config).toEqual({
      logical_disks: [{ size_gb: 'MAX', raid_level: '1' }],
    });
    await noBody(owner, 'PUT', `/v1/nodes/${n}/states/power`, 202, { target: 'power on' });
    await noBody(owner, 'PUT', `/v1/nodes/${n}/states/console`, 202, { enabled: true });
    const enabled = await waitFor(
      () => ok(owner, 'GET', `/v1/nodes/${n}/states/console`),
      (c) => (c as { console_enabled: boolean }).console_enabled,
      { what: 'the console to be enabled' },
    );
    expectValid(NodeConsoleResponse, enabled, 'enabled console');
    expect((enabled as { console_info: { type: string } }).console_info.type).toBe('websocket');
    await noBody(owner, 'PUT', `/v1/nodes/states/console/${n}`, 202, { enabled: false });
    const spare = await ok(admin, 'POST', '/v1/nodes', { driver: 'fake-hardware' });
    await noBody(admin, 'DELETE', `/v1/nodes/${(spare as { uuid: string }).uuid}`, 204);
  });

  it("the node's portgroups and volume objects as admin, owner and lessee; writes and single objects below a node are refused (403)", async () => {
    const { admin, owner, lessee } = env.p;
    const n = node.uuid;
    const pg = (await ok(admin, 'POST', '/v1/portgroups', { node_uuid: n, name: 'doc-bond', address: '52:54:00:00:71:ff' })) as {
      uuid: string;
    };
    await ok(admin, 'POST', '/v1/volume/connectors', { node_uuid: n, type: 'iqn', connector_id: 'iqn.2030-01.org.example:doc' });
    await ok(admin, 'POST', '/v1/volume/targets', { node_uuid: n, volume_type: 'iscsi', volume_id: 'doc-vol', boot_index: 0 });
    const cases: Array<[string, TSchema, string]> = [
      [`/v1/nodes/${n}/portgroups`, PortgroupCollection, pg.uuid],
      [`/v1/nodes/${n}/portgroups/detail`, PortgroupDetailCollection, pg.uuid],
      [`/v1/nodes/${n}/volume`, VolumeRootResponse, n],
      [`/v1/nodes/${n}/volume/connectors`, VolumeConnectorCollection, 'iqn'],
      [`/v1/nodes/${n}/volume/targets`, VolumeTargetCollection, 'doc-vol'],
    ];
    for (const who of [admin, owner, lessee]) {
      for (const [url, schema, shows] of cases) {
        const body = await ok(who, 'GET', url);
        expectValid(schema, body, `${who.name} GET ${url}`);
        expect(JSON.stringify(body), `${who.name} GET ${url}`).toContain(shows);
      }
    }
    // Ironic allows these only at the top-level collections; the document says so (no success answer).
    expect((await bm(admin, 'POST', `/v1/nodes/${n}/portgroups`, { node_uuid: n })).status).toBe(403);
    for (const method of ['GET', 'PATCH', 'DELETE']) {
      expect((await bm(admin, method, `/v1/nodes/${n}/portgroups/${pg.uuid}`)).status, method).toBe(403);
    }
  });

  it("a node's allocation, read as admin and the lessee that made it, and removed through the node", async () => {
    const { admin, lessee } = env.p;
    const created = (await ok(admin, 'POST', '/v1/nodes', {
      driver: 'fake-hardware',
      owner: env.p.owner.projectId,
      lessee: lessee.projectId,
      resource_class: 'doc-gold',
    })) as { uuid: string };
    await forceNode(env.ts, created.uuid, { provision_state: 'available', power_state: 'power off' });
    const alloc = (await ok(lessee, 'POST', '/v1/allocations', { resource_class: 'doc-gold', name: 'doc-alloc' })) as { uuid: string };
    await waitFor(
      () => ok(lessee, 'GET', `/v1/allocations/${alloc.uuid}`),
      (a) => (a as { state: string }).state !== 'allocating',
      { what: 'the allocation to settle' },
    );
    for (const who of [admin, lessee]) {
      const viaNode = await ok(who, 'GET', `/v1/nodes/${created.uuid}/allocation`);
      expectValid(AllocationResponse, viaNode, `${who.name} GET node allocation`);
      expect(viaNode, who.name).toMatchObject({ uuid: alloc.uuid, state: 'active', node_uuid: created.uuid });
    }
    await noBody(lessee, 'DELETE', `/v1/nodes/${created.uuid}/allocation`, 204);
  });
});
