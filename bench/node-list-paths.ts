/**
 * The `node-list` benchmark's other Ironic paths (issue 22, item 1): ports, a node's ports,
 * node lists without `detail` and with `fields=`, allocations, conductors, chassis, deploy
 * templates, portgroups, volume connectors and targets — each list and each show, timed on a
 * fresh connection per request (as a CLI call makes), with the same client code on esi and on
 * the real Ironic 21.4.
 *
 * {@link seedResources} creates one of each resource through the API (same bodies on both
 * servers); {@link checkPaths} checks every path's answer before anything is timed, so that a
 * fast wrong answer fails the benchmark instead of winning it.
 */
import type { Target } from './lib/target.ts';

/** What one timed operation returned. */
export interface OpResult {
  readonly bytes: number;
  readonly requests: number;
}

/** The resources the path cases read, created once per server (see {@link seedResources}). */
export interface Resources {
  /** The node the resources hang on (a node of the first 1,000, not leased). */
  readonly node: string;
  /** That node's port (the fleet's one port per node). */
  readonly port: string;
  readonly portgroup: string;
  readonly chassis: string;
  readonly deployTemplate: string;
  readonly volumeConnector: string;
  readonly volumeTarget: string;
  readonly allocation: string;
  /** Hostname of the server's (first) conductor. */
  readonly conductor: string;
}

/** Nodes and resources a size's cases read. */
export interface SizeNodes {
  /** A node in the middle of the fleet (not leased). */
  readonly sample: string;
  /** A leased node. */
  readonly leased: string;
  readonly res: Resources;
}

/** One timed case: how to run it against a target at a fleet size. */
export interface PathCase {
  readonly id: string;
  readonly title: string;
  readonly timing: 'list' | 'show';
  op(t: Target, nodes: SizeNodes): Promise<OpResult>;
}

/** GET on a fresh connection as admin, one request. */
const fresh = async (t: Target, path: string): Promise<OpResult> => ({ bytes: (await t.admin.getFresh(path)).bytes, requests: 1 });

/** The fields a `fields=` list asks for (what `openstack baremetal node list` shows, plus owner). */
export const LIST_FIELDS = 'uuid,name,instance_uuid,power_state,provision_state,maintenance,owner';

/** The path cases, in report order. */
export const PATH_CASES: readonly PathCase[] = [
  { id: 'nodes', title: 'GET /v1/nodes, admin, one page (no detail)', timing: 'list', op: (t) => fresh(t, '/v1/nodes') },
  {
    id: 'nodes-fields',
    title: `GET /v1/nodes?fields=${LIST_FIELDS}`,
    timing: 'list',
    op: (t) => fresh(t, `/v1/nodes?fields=${LIST_FIELDS}`),
  },
  { id: 'ports', title: 'GET /v1/ports, one page', timing: 'list', op: (t) => fresh(t, '/v1/ports') },
  { id: 'ports-detail', title: 'GET /v1/ports/detail, one page', timing: 'list', op: (t) => fresh(t, '/v1/ports/detail') },
  { id: 'port-show', title: 'GET /v1/ports/{uuid}', timing: 'show', op: (t, n) => fresh(t, `/v1/ports/${n.res.port}`) },
  { id: 'node-ports', title: 'GET /v1/nodes/{uuid}/ports', timing: 'show', op: (t, n) => fresh(t, `/v1/nodes/${n.res.node}/ports`) },
  { id: 'allocations', title: 'GET /v1/allocations', timing: 'show', op: (t) => fresh(t, '/v1/allocations') },
  {
    id: 'allocation-show',
    title: 'GET /v1/allocations/{uuid}',
    timing: 'show',
    op: (t, n) => fresh(t, `/v1/allocations/${n.res.allocation}`),
  },
  { id: 'conductors', title: 'GET /v1/conductors', timing: 'show', op: (t) => fresh(t, '/v1/conductors') },
  {
    id: 'conductor-show',
    title: 'GET /v1/conductors/{hostname}',
    timing: 'show',
    op: (t, n) => fresh(t, `/v1/conductors/${n.res.conductor}`),
  },
  { id: 'chassis', title: 'GET /v1/chassis/detail', timing: 'show', op: (t) => fresh(t, '/v1/chassis/detail') },
  { id: 'chassis-show', title: 'GET /v1/chassis/{uuid}', timing: 'show', op: (t, n) => fresh(t, `/v1/chassis/${n.res.chassis}`) },
  {
    id: 'templates',
    title: 'GET /v1/deploy_templates?detail=True',
    timing: 'show',
    op: (t) => fresh(t, '/v1/deploy_templates?detail=True'),
  },
  {
    id: 'template-show',
    title: 'GET /v1/deploy_templates/{uuid}',
    timing: 'show',
    op: (t, n) => fresh(t, `/v1/deploy_templates/${n.res.deployTemplate}`),
  },
  { id: 'portgroups', title: 'GET /v1/portgroups/detail', timing: 'show', op: (t) => fresh(t, '/v1/portgroups/detail') },
  { id: 'portgroup-show', title: 'GET /v1/portgroups/{uuid}', timing: 'show', op: (t, n) => fresh(t, `/v1/portgroups/${n.res.portgroup}`) },
  {
    id: 'connectors',
    title: 'GET /v1/volume/connectors?detail=True',
    timing: 'show',
    op: (t) => fresh(t, '/v1/volume/connectors?detail=True'),
  },
  {
    id: 'connector-show',
    title: 'GET /v1/volume/connectors/{uuid}',
    timing: 'show',
    op: (t, n) => fresh(t, `/v1/volume/connectors/${n.res.volumeConnector}`),
  },
  { id: 'vol-targets', title: 'GET /v1/volume/targets?detail=True', timing: 'show', op: (t) => fresh(t, '/v1/volume/targets?detail=True') },
  {
    id: 'vol-target-show',
    title: 'GET /v1/volume/targets/{uuid}',
    timing: 'show',
    op: (t, n) => fresh(t, `/v1/volume/targets/${n.res.volumeTarget}`),
  },
];

function fail(t: Target, what: string): never {
  throw new Error(`${t.label} answered wrongly: ${what}`);
}

/** POST as admin and return the created object's `uuid`. @throws Error on another status than 201 */
async function create(t: Target, path: string, body: unknown): Promise<string> {
  const r = await t.admin.send('POST', path, body);
  if (r.status !== 201) fail(t, `POST ${path} answered ${r.status}: ${JSON.stringify(r.body).slice(0, 300)}`);
  return (r.body as { uuid: string }).uuid;
}

/**
 * Create one chassis, deploy template, portgroup, volume connector and target (on `nodeUuid`)
 * and an allocation (of a resource class no node has, so that it matches nothing and changes no
 * node) through the API, with the same bodies on every server; find the node's port and the
 * first conductor.
 * @throws Error when a server refuses a creation or has no conductor
 */
export async function seedResources(t: Target, nodeUuid: string): Promise<Resources> {
  const tag = t.label.replace(/[^a-z]/g, '');
  const chassis = await create(t, '/v1/chassis', { description: 'bench chassis', extra: { room: 'b12' } });
  const deployTemplate = await create(t, '/v1/deploy_templates', {
    name: 'CUSTOM_BENCH_RAID',
    steps: [{ interface: 'raid', step: 'apply_configuration', args: { raid_config: { logical_disks: [] } }, priority: 10 }],
  });
  const portgroup = await create(t, '/v1/portgroups', { node_uuid: nodeUuid, name: `bench-pg-${tag}`, mode: 'active-backup' });
  const volumeConnector = await create(t, '/v1/volume/connectors', {
    node_uuid: nodeUuid,
    type: 'iqn',
    connector_id: 'iqn.2026-11.org.bench:node-500',
  });
  const volumeTarget = await create(t, '/v1/volume/targets', {
    node_uuid: nodeUuid,
    volume_type: 'iscsi',
    volume_id: 'bench-volume-1',
    boot_index: 0,
  });
  const allocation = await create(t, '/v1/allocations', { resource_class: 'bench-matches-nothing', name: 'bench-allocation' });
  const ports = await t.admin.getJson<{ ports: Array<{ uuid: string }> }>(`/v1/nodes/${nodeUuid}/ports`);
  if (ports.ports.length !== 1) fail(t, `node ${nodeUuid} has ${ports.ports.length} ports, expected 1`);
  const conductors = await t.admin.getJson<{ conductors: Array<{ hostname: string }> }>('/v1/conductors');
  if (conductors.conductors.length === 0) fail(t, 'no conductor listed');
  return {
    node: nodeUuid,
    port: ports.ports[0]!.uuid,
    portgroup,
    chassis,
    deployTemplate,
    volumeConnector,
    volumeTarget,
    allocation,
    conductor: conductors.conductors[0]!.hostname,
  };
}

/** A list answer's items under `key`. @throws Error when the key holds no array */
async function items(t: Target, path: string, key: string): Promise<Array<Record<string, unknown>>> {
  const body = await t.admin.getJson<Record<string, unknown>>(path);
  const list = body[key];
  if (!Array.isArray(list)) fail(t, `GET ${path} has no "${key}" array`);
  return list as Array<Record<string, unknown>>;
}

/** A show answer; its `field` must equal `value`. */
async function shows(t: Target, path: string, field: string, value: string): Promise<Record<string, unknown>> {
  const body = await t.admin.getJson<Record<string, unknown>>(path);
  if (body[field] !== value) fail(t, `GET ${path} shows ${field} ${JSON.stringify(body[field])}, expected ${value}`);
  return body;
}

/** The one-item list at `path` must hold exactly the item `uuid`. */
async function holdsOnly(t: Target, path: string, key: string, uuid: string): Promise<void> {
  const list = await items(t, path, key);
  if (list.length !== 1 || list[0]!.uuid !== uuid) fail(t, `GET ${path} lists ${list.length} items, expected only ${uuid}`);
}

/**
 * Check every path case's answer on one server at a fleet size: page sizes, the fields asked
 * for and no others, the shown objects, the node's port, the seeded resources.
 * @throws Error naming the server and the wrong answer
 */
export async function checkPaths(t: Target, size: number, n: SizeNodes): Promise<void> {
  const page = Math.min(size, 1000);
  const plain = await items(t, '/v1/nodes', 'nodes');
  if (plain.length !== page) fail(t, `GET /v1/nodes lists ${plain.length} nodes, expected ${page}`);
  if (plain.some((x) => 'driver_info' in x || !('provision_state' in x))) fail(t, 'GET /v1/nodes is not the plain list');
  const wanted = LIST_FIELDS.split(',');
  const picked = await items(t, `/v1/nodes?fields=${LIST_FIELDS}`, 'nodes');
  if (picked.length !== page) fail(t, `GET /v1/nodes?fields= lists ${picked.length} nodes, expected ${page}`);
  const extra = Object.keys(picked[0]!).filter((k) => !wanted.includes(k) && k !== 'links');
  if (extra.length > 0 || !wanted.every((k) => k in picked[0]!)) fail(t, `fields= list shows ${Object.keys(picked[0]!).join(',')}`);
  const ports = await items(t, '/v1/ports', 'ports');
  const detail = await items(t, '/v1/ports/detail', 'ports');
  if (ports.length !== page || detail.length !== page) fail(t, `port lists hold ${ports.length} / ${detail.length}, expected ${page}`);
  if (!('node_uuid' in detail[0]!) || 'node_uuid' in ports[0]!) fail(t, 'port list and port detail list do not differ as in Ironic');
  await shows(t, `/v1/ports/${n.res.port}`, 'node_uuid', n.res.node);
  await holdsOnly(t, `/v1/nodes/${n.res.node}/ports`, 'ports', n.res.port);
  await holdsOnly(t, '/v1/allocations', 'allocations', n.res.allocation);
  await shows(t, `/v1/allocations/${n.res.allocation}`, 'uuid', n.res.allocation);
  const conductors = await items(t, '/v1/conductors', 'conductors');
  if (!conductors.some((c) => c.hostname === n.res.conductor)) fail(t, `conductor ${n.res.conductor} not listed`);
  await shows(t, `/v1/conductors/${n.res.conductor}`, 'hostname', n.res.conductor);
  await holdsOnly(t, '/v1/chassis/detail', 'chassis', n.res.chassis);
  await shows(t, `/v1/chassis/${n.res.chassis}`, 'uuid', n.res.chassis);
  await holdsOnly(t, '/v1/deploy_templates?detail=True', 'deploy_templates', n.res.deployTemplate);
  await shows(t, `/v1/deploy_templates/${n.res.deployTemplate}`, 'uuid', n.res.deployTemplate);
  await holdsOnly(t, '/v1/portgroups/detail', 'portgroups', n.res.portgroup);
  await shows(t, `/v1/portgroups/${n.res.portgroup}`, 'node_uuid', n.res.node);
  await holdsOnly(t, '/v1/volume/connectors?detail=True', 'connectors', n.res.volumeConnector);
  await shows(t, `/v1/volume/connectors/${n.res.volumeConnector}`, 'node_uuid', n.res.node);
  await holdsOnly(t, '/v1/volume/targets?detail=True', 'targets', n.res.volumeTarget);
  await shows(t, `/v1/volume/targets/${n.res.volumeTarget}`, 'node_uuid', n.res.node);
}
