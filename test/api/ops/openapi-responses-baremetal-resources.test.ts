/**
 * The documented answers of the baremetal resources other than nodes and ports
 * (src/api/baremetal/response-schemas-resources.ts, response-schemas-services.ts) compared with
 * real answers at the newest microversion: an owner's node with a port, a portgroup, a volume
 * connector and target, leased to a lessee (lease active), read as admin, owner and lessee; a
 * chassis, an allocation and a deploy template (created, shown, listed, updated); the discovery
 * documents, drivers, conductors, shards; and, with a lab node and no agent, the ramdisk's
 * lookup, heartbeat and continue_inspection. Each is checked against its documented schema with
 * TypeBox (`expectValid`); the schemas are strict where the wire format is fixed.
 */
import type { TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createPersonas, ManualClock, startTestServer, type Persona, type Personas, type TestServer } from '../../helpers/harness.ts';
import { formatLeaseTime } from '../../../src/domain/leasing/time.ts';
import { NodeCollection, NodeDetailCollection, PortCollection, PortDetailCollection } from '../../../src/api/baremetal/response-schemas.ts';
import {
  AllocationCollection,
  AllocationResponse,
  ChassisCollection,
  ChassisDetailCollection,
  ChassisResponse,
  DeployTemplateCollection,
  DeployTemplateResponse,
  PortgroupCollection,
  PortgroupDetailCollection,
  PortgroupResponse,
  VolumeConnectorCollection,
  VolumeConnectorResponse,
  VolumeRootResponse,
  VolumeTargetCollection,
  VolumeTargetResponse,
} from '../../../src/api/baremetal/response-schemas-resources.ts';
import {
  ConductorCollection,
  ConductorResponse,
  ContinueInspectionResponse,
  DriverCollection,
  DriverPropertiesResponse,
  DriverResponse,
  LookupResponse,
  RootResponse,
  ShardCollection,
  V1Response,
} from '../../../src/api/baremetal/response-schemas-services.ts';
import { VendorCallResponse, VendorMethodsResponse } from '../../../src/api/baremetal/response-schemas-node.ts';
import { forceNode } from '../baremetal/helpers.ts';
import { bm, enrollRedfish, provision, startConductorEnv, waitNode, type ConductorEnv } from '../conductor/support.ts';
import { agentNode, AGENT_VERSION } from '../deploy/support.ts';
import { asDocumented, expectValid } from './openapi-support.ts';

const T0 = Date.UTC(2030, 0, 1, 12);
const HOUR = 3_600_000;
const IRONIC = { 'x-openstack-ironic-api-version': '1.82' };

let ts: TestServer;
let p: Personas;
/** What the world holds: the node, its port, portgroup, volume connector and target, a chassis. */
const w = { node: '', port: '', portgroup: '', connector: '', target: '', chassis: '' };

/** An answer that must succeed, as parsed JSON. */
async function ok(who: Persona, method: string, url: string, body?: unknown, expected?: number): Promise<unknown> {
  const r = await call(ts, who, method, url, body, IRONIC);
  if (expected !== undefined) expect(r.status, `${who.name} ${method} ${url}: ${r.text}`).toBe(expected);
  else expect(r.status, `${who.name} ${method} ${url}: ${r.text}`).toBeLessThan(300);
  return r.body;
}

/** Check each `[url, schema]` read by `who`. */
async function reads(who: Persona, cases: Array<[string, TSchema]>): Promise<void> {
  for (const [url, schema] of cases) expectValid(schema, await ok(who, 'GET', url), `${who.name} GET ${url}`);
}

beforeAll(async () => {
  const clock = new ManualClock(T0);
  ts = await startTestServer({ clock, env: { ESI_TOKEN_TTL: String(7 * 24 * 3600) } });
  p = await createPersonas(ts);
  const node = (await ok(p.admin, 'POST', '/baremetal/v1/nodes', {
    driver: 'fake-hardware',
    name: 'doc-res',
    owner: p.owner.projectId,
  })) as {
    uuid: string;
  };
  w.node = node.uuid;
  const pg = (await ok(p.admin, 'POST', '/baremetal/v1/portgroups', { node_uuid: w.node, address: '52:54:00:00:99:01', name: 'pg0' })) as {
    uuid: string;
  };
  expectValid(PortgroupResponse, pg, 'POST /portgroups');
  w.portgroup = pg.uuid;
  const port = (await ok(p.admin, 'POST', '/baremetal/v1/ports', {
    address: '52:54:00:00:99:02',
    node_uuid: w.node,
    portgroup_uuid: w.portgroup,
  })) as { uuid: string };
  w.port = port.uuid;
  const connector = (await ok(p.admin, 'POST', '/baremetal/v1/volume/connectors', {
    node_uuid: w.node,
    type: 'iqn',
    connector_id: 'iqn.2030-01.org.example:doc',
  })) as { uuid: string };
  expectValid(VolumeConnectorResponse, connector, 'POST /volume/connectors');
  w.connector = connector.uuid;
  const target = (await ok(p.admin, 'POST', '/baremetal/v1/volume/targets', {
    node_uuid: w.node,
    volume_type: 'iscsi',
    volume_id: 'vol-doc',
    boot_index: 0,
    properties: { target_iqn: 'iqn.2030-01.org.example:vol', auth_password: 'secret' },
  })) as { uuid: string };
  expectValid(VolumeTargetResponse, target, 'POST /volume/targets');
  w.target = target.uuid;
  const chassis = await ok(p.admin, 'POST', '/baremetal/v1/chassis', { description: 'rack 1' });
  expectValid(ChassisResponse, chassis, 'POST /chassis');
  w.chassis = (chassis as { uuid: string }).uuid;
  await ok(p.admin, 'PATCH', `/baremetal/v1/nodes/${w.node}`, [{ op: 'add', path: '/chassis_uuid', value: w.chassis }]);
  const offer = (await ok(p.owner, 'POST', '/lease/v1/offers', {
    resource_uuid: w.node,
    start_time: formatLeaseTime(T0),
    end_time: formatLeaseTime(T0 + 4 * HOUR),
  })) as { uuid: string };
  await ok(p.lessee, 'POST', `/lease/v1/offers/${offer.uuid}/claim`, {
    start_time: formatLeaseTime(T0),
    end_time: formatLeaseTime(T0 + 2 * HOUR),
  });
  clock.advance(1000);
  await ts.server.services.leaseManager.runDue();
});
afterAll(async () => ts?.close());

describe('documented answers of the baremetal resources match real ones', () => {
  it('portgroups, their ports, volume connectors and targets (list, detail, show) as admin, owner and lessee', async () => {
    for (const who of [p.admin, p.owner, p.lessee]) {
      const pgs = await ok(who, 'GET', '/baremetal/v1/portgroups');
      expect(JSON.stringify(pgs), `${who.name} sees the portgroup`).toContain(w.portgroup);
      await reads(who, [
        ['/baremetal/v1/portgroups', PortgroupCollection],
        ['/baremetal/portgroups.json', PortgroupCollection],
        ['/baremetal/v1/portgroups/detail', PortgroupDetailCollection],
        [`/baremetal/v1/portgroups/${w.portgroup}`, PortgroupResponse],
        [`/baremetal/v1/portgroups/${w.portgroup}/ports`, PortCollection],
        [`/baremetal/v1/portgroups/${w.portgroup}/ports/detail`, PortDetailCollection],
        ['/baremetal/v1/portgroups?limit=1', PortgroupCollection],
        ['/baremetal/v1/volume/connectors', VolumeConnectorCollection],
        [`/baremetal/v1/volume/connectors/${w.connector}`, VolumeConnectorResponse],
        ['/baremetal/v1/volume/targets', VolumeTargetCollection],
        [`/baremetal/v1/volume/targets/${w.target}`, VolumeTargetResponse],
        ['/baremetal/v1/volume/targets?limit=1', VolumeTargetCollection],
      ]);
      const targets = await ok(who, 'GET', '/baremetal/v1/volume/targets');
      expect(JSON.stringify(targets), `${who.name} sees the target`).toContain(w.target);
    }
  });

  it('the volume root as admin', async () => {
    await reads(p.admin, [
      ['/baremetal/v1/volume', VolumeRootResponse],
      ['/baremetal/volume.json', VolumeRootResponse],
    ]);
  });

  it('portgroup, connector and target updates (the node powered off); deletes answer 204 without a body', async () => {
    await forceNode(ts, w.node, { power_state: 'power off' });
    const patch = (path: string) => [{ op: 'add', path, value: 'v' }];
    expectValid(PortgroupResponse, await ok(p.owner, 'PATCH', `/baremetal/v1/portgroups/${w.portgroup}`, patch('/extra/k')), 'PATCH pg');
    const connector = await ok(p.admin, 'PATCH', `/baremetal/v1/volume/connectors/${w.connector}`, patch('/extra/k'));
    expectValid(VolumeConnectorResponse, connector, 'PATCH connector');
    expectValid(
      VolumeTargetResponse,
      await ok(p.admin, 'PATCH', `/baremetal/v1/volume/targets/${w.target}`, patch('/extra/k')),
      'PATCH target',
    );
    const extra = (await ok(p.admin, 'POST', '/baremetal/v1/volume/connectors', {
      node_uuid: w.node,
      type: 'ip',
      connector_id: '192.0.2.9',
    })) as { uuid: string };
    const gone = await call(ts, p.admin, 'DELETE', `/baremetal/v1/volume/connectors/${extra.uuid}`, undefined, IRONIC);
    expect([gone.status, gone.text]).toEqual([204, '']);
  });

  it('chassis (list, detail, show, its nodes) as admin; an update', async () => {
    await reads(p.admin, [
      ['/baremetal/v1/chassis', ChassisCollection],
      ['/baremetal/v1/chassis/detail', ChassisDetailCollection],
      [`/baremetal/v1/chassis/${w.chassis}`, ChassisResponse],
      [`/baremetal/v1/chassis/${w.chassis}/nodes`, NodeCollection],
      [`/baremetal/v1/chassis/${w.chassis}/nodes/detail`, NodeDetailCollection],
    ]);
    const nodes = await ok(p.admin, 'GET', `/baremetal/v1/chassis/${w.chassis}/nodes`);
    expect(JSON.stringify(nodes)).toContain(w.node);
    const patched = await ok(p.admin, 'PATCH', `/baremetal/v1/chassis/${w.chassis}`, [
      { op: 'replace', path: '/description', value: 'r2' },
    ]);
    expectValid(ChassisResponse, patched, 'PATCH chassis');
  });

  it('allocations (create, show, list, update) by the owner and admin', async () => {
    const mine = await ok(p.owner, 'POST', '/baremetal/v1/allocations', { resource_class: 'doc-rc', name: 'doc-alloc' }, 201);
    expectValid(AllocationResponse, mine, 'POST /allocations (owner)');
    const uuid = (mine as { uuid: string }).uuid;
    const any = await ok(p.admin, 'POST', '/baremetal/allocations.json', {
      resource_class: 'doc-rc',
      traits: ['CUSTOM_DOC'],
      extra: { a: 1 },
    });
    expectValid(AllocationResponse, any, 'POST /allocations (admin)');
    for (const who of [p.admin, p.owner]) {
      await reads(who, [
        ['/baremetal/v1/allocations', AllocationCollection],
        [`/baremetal/v1/allocations/${uuid}`, AllocationResponse],
        ['/baremetal/v1/allocations?limit=1', AllocationCollection],
      ]);
    }
    const patched = await ok(p.owner, 'PATCH', `/baremetal/v1/allocations/${uuid}`, [{ op: 'add', path: '/extra/k', value: 'v' }]);
    expectValid(AllocationResponse, patched, 'PATCH /allocations');
  });

  it('deploy templates (create, show, list, update) as admin, with a secret in a step masked', async () => {
    const body = {
      name: 'CUSTOM_DOC_TEMPLATE',
      steps: [{ interface: 'bios', step: 'apply_configuration', args: { settings: [], password: 'x' }, priority: 10 }],
      extra: { k: 'v' },
    };
    const created = await ok(p.admin, 'POST', '/baremetal/v1/deploy_templates', body, 201);
    expectValid(DeployTemplateResponse, created, 'POST /deploy_templates');
    const uuid = (created as { uuid: string }).uuid;
    await reads(p.admin, [
      ['/baremetal/v1/deploy_templates', DeployTemplateCollection],
      [`/baremetal/v1/deploy_templates/${uuid}`, DeployTemplateResponse],
      ['/baremetal/v1/deploy_templates/CUSTOM_DOC_TEMPLATE', DeployTemplateResponse],
    ]);
    const patched = await ok(p.admin, 'PATCH', `/baremetal/v1/deploy_templates/${uuid}`, [{ op: 'add', path: '/extra/j', value: 1 }]);
    expectValid(DeployTemplateResponse, patched, 'PATCH /deploy_templates');
    const unchanged = await ok(p.admin, 'PATCH', `/baremetal/v1/deploy_templates/${uuid}`, []);
    expectValid(DeployTemplateResponse, unchanged, 'PATCH [] /deploy_templates');
  });

  it('the discovery documents, anonymous and at the newest version', async () => {
    expectValid(RootResponse, await ok(p.anonymous, 'GET', '/baremetal'), 'GET /baremetal');
    expectValid(V1Response, await ok(p.anonymous, 'GET', '/baremetal/v1'), 'GET /baremetal/v1');
    expectValid(V1Response, await ok(p.admin, 'GET', '/baremetal/v1.json'), 'GET /baremetal/v1.json');
  });

  it('drivers, their properties and vendor methods, conductors and shards as admin', async () => {
    const drivers = (await ok(p.admin, 'GET', '/baremetal/v1/drivers')) as { drivers: Array<{ name: string }> };
    expectValid(DriverCollection, drivers, 'GET /drivers');
    expect(drivers.drivers.length).toBeGreaterThan(0);
    for (const { name } of drivers.drivers) {
      await reads(p.admin, [
        [`/baremetal/v1/drivers/${name}`, DriverResponse],
        [`/baremetal/v1/drivers/${name}/properties`, DriverPropertiesResponse],
        [`/baremetal/v1/drivers/${name}/raid/logical_disk_properties`, DriverPropertiesResponse],
        [`/baremetal/v1/drivers/${name}/vendor_passthru/methods`, VendorMethodsResponse],
      ]);
    }
    const conductors = (await ok(p.admin, 'GET', '/baremetal/v1/conductors')) as { conductors: Array<{ hostname: string }> };
    expectValid(ConductorCollection, conductors, 'GET /conductors');
    expectValid(ConductorCollection, await ok(p.admin, 'GET', '/baremetal/v1/conductors?limit=1'), 'GET /conductors?limit=1');
    const hostname = conductors.conductors[0]!.hostname;
    expectValid(ConductorResponse, await ok(p.admin, 'GET', `/baremetal/v1/conductors/${hostname}`), 'GET /conductors/{hostname}');
    const shards = (await ok(p.admin, 'GET', '/baremetal/v1/shards')) as { shards: unknown[] };
    expectValid(ShardCollection, shards, 'GET /shards');
    await ok(p.admin, 'PATCH', `/baremetal/v1/nodes/${w.node}`, [{ op: 'add', path: '/shard', value: 'doc-shard' }]);
    const one = (await ok(p.admin, 'GET', '/baremetal/v1/shards')) as { shards: unknown[] };
    expectValid(ShardCollection, one, 'GET /shards');
    expect(one.shards).toContainEqual({ name: 'doc-shard', count: 1 });
  });

  it('a synchronous vendor passthru call answers its result (the renderer drivers share with nodes)', async () => {
    const r = await ok(p.admin, 'POST', `/baremetal/v1/nodes/${w.node}/vendor_passthru/third_method_sync`, { bar: 'meow' }, 200);
    expectValid(VendorCallResponse, r, 'POST vendor_passthru');
  });

  it('events: 204 without a body', async () => {
    const r = await call(
      ts,
      p.admin,
      'POST',
      '/baremetal/v1/events',
      {
        events: [
          {
            event: 'network.bind_port',
            port_id: '11111111-2222-3333-4444-555555555555',
            mac_address: '52:54:00:00:99:03',
            status: 'ACTIVE',
            device_id: null,
          },
        ],
      },
      IRONIC,
    );
    expect([r.status, r.text]).toEqual([204, '']);
  });

  it('refuse an answer with a field they do not know, or without one they require', async () => {
    const pg = (await ok(p.owner, 'GET', `/baremetal/v1/portgroups/${w.portgroup}`)) as Record<string, unknown>;
    expect(Value.Check(PortgroupResponse, pg)).toBe(true);
    expect(Value.Check(PortgroupResponse, { ...pg, is_smartnic: false })).toBe(false);
    const { standalone_ports_supported: _, ...missing } = pg;
    expect(Value.Check(PortgroupResponse, missing)).toBe(false);
    const v1 = (await ok(p.anonymous, 'GET', '/baremetal/v1')) as Record<string, unknown>;
    const { shards: __, ...older } = v1;
    expect(Value.Check(V1Response, older), 'the newest version lists shards').toBe(false);
    const target = (await ok(p.admin, 'GET', `/baremetal/v1/volume/targets/${w.target}`)) as Record<string, unknown>;
    expect(Value.Check(VolumeTargetResponse, { ...target, boot_index: '0' })).toBe(false);
  });

  it('are in the document, as the 2XX answer of their routes', async () => {
    const doc = (await call(ts, p.anonymous, 'GET', '/openapi.json')).body;
    const cases: Array<[string, string, TSchema]> = [
      ['get', '/baremetal/v1/portgroups', PortgroupCollection],
      ['patch', '/baremetal/v1/portgroups/{ident}', PortgroupResponse],
      ['post', '/baremetal/v1/chassis', ChassisResponse],
      ['get', '/baremetal/chassis/detail', ChassisDetailCollection],
      ['get', '/baremetal/v1/volume/targets/{uuid}', VolumeTargetResponse],
      ['post', '/baremetal/v1/allocations', AllocationResponse],
      ['get', '/baremetal/v1/deploy_templates', DeployTemplateCollection],
      ['get', '/baremetal', RootResponse],
      ['get', '/baremetal/v1', V1Response],
      ['get', '/baremetal/v1/drivers/{name}', DriverResponse],
      ['get', '/baremetal/v1/conductors', ConductorCollection],
      ['get', '/baremetal/v1/shards', ShardCollection],
      ['get', '/baremetal/v1/lookup', LookupResponse],
      ['post', '/baremetal/v1/continue_inspection', ContinueInspectionResponse],
    ];
    for (const [method, path, schema] of cases) {
      const answers = doc.paths[path]?.[method]?.responses;
      const documented = Object.entries<any>(answers ?? {}).find(([code]) => code.startsWith('2'))?.[1];
      expect(documented?.content?.['application/json']?.schema, `${method} ${path}`).toEqual(asDocumented(schema));
    }
  });
});

describe('documented answers of the ramdisk endpoints (a lab node, no agent)', () => {
  let env: ConductorEnv;

  beforeAll(async () => {
    env = await startConductorEnv(2);
  }, 60_000);
  afterAll(async () => env?.close());

  it('lookup (first and later), heartbeat (202 without a body)', async () => {
    const { node, mac } = await agentNode(env, 'node-0');
    await waitNode(env, node.uuid, (n) => n.provision_state === 'clean wait' && n.reservation === null);
    const first = await bm(env.ts, null, 'GET', `/v1/lookup?addresses=${mac}`, undefined, AGENT_VERSION);
    expect(first.status, first.text).toBe(200);
    expectValid(LookupResponse, first.body, 'first lookup');
    const again = await bm(env.ts, env.p.admin, 'GET', `/v1/lookup?node_uuid=${node.uuid}`, undefined, AGENT_VERSION);
    expectValid(LookupResponse, again.body, 'later lookup');
    const hb = await bm(
      env.ts,
      null,
      'POST',
      `/v1/heartbeat/${node.uuid}`,
      { callback_url: 'http://192.0.2.10:9999', agent_token: first.body.config.agent_token, agent_version: '9.0.0' },
      AGENT_VERSION,
    );
    expect([hb.status, hb.text]).toEqual([202, '']);
  });

  it('continue_inspection: 202 with the node UUID', async () => {
    const node = await enrollRedfish(
      env,
      'node-1',
      { inspect_interface: 'agent', boot_interface: 'pxe' },
      { deploy_iso: 'http://lab/a.iso' },
    );
    const mac = env.lab.systems.get('node-1').mac;
    expect((await bm(env.ts, env.p.admin, 'POST', '/v1/ports', { node_uuid: node.uuid, address: mac })).status).toBe(201);
    await provision(env, node.uuid, 'manage');
    await waitNode(env, node.uuid, (n) => n.provision_state === 'manageable' && n.reservation === null);
    await provision(env, node.uuid, 'inspect');
    await waitNode(env, node.uuid, (n) => n.provision_state === 'inspect wait' && n.reservation === null);
    const r = await bm(env.ts, null, 'POST', '/v1/continue_inspection', {
      inventory: {
        cpu: { count: 2, architecture: 'x86_64' },
        memory: { physical_mb: 4096 },
        interfaces: [{ name: 'eth0', mac_address: mac }],
        disks: [{ name: '/dev/sda', size: 10 * 1024 ** 3 }],
      },
      root_disk: null,
    });
    expect(r.status, r.text).toBe(202);
    expectValid(ContinueInspectionResponse, r.body, 'POST /continue_inspection');
    expect(r.body.uuid).toBe(node.uuid);
  });
});
