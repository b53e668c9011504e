/**
 * What the robustness test knows about request bodies, per write route, from the wire specs
 * (Keystone v3 JSON schemas, Ironic 21.4 schemas, esi-leap's WSME types): whether the route
 * reads a body, a valid body for the test fixtures, the known attributes with the JSON kinds
 * each accepts, and which objects refuse unknown attributes.
 *
 * Routes are keyed `METHOD /path` with every path parameter written `{}`. A write route
 * (POST/PUT/PATCH) missing here is reported by the test, so that new routes get a spec.
 */
import type { Personas } from '../harness.ts';
import type { JsonKind } from './generators.ts';
import { buildCatalog } from '../../../src/api/identity/catalog.ts';
import { COMPUTE_SPECS } from './compute-specs.ts';
import { IDENTITY_SPECS, type IdentityFixtures } from './identity-specs.ts';
import { NETWORK_REFUSALS, NETWORK_SPECS, type NetworkFixtures } from './network-specs.ts';

/** The resources created before the bad requests, and the ids used in paths and bodies. */
export interface Fixtures {
  readonly personas: Personas;
  /** Id of the role `owner`. */
  readonly ownerRoleId: string;
  /** A node owned by o1 with lessee l1, with trait {@link trait} and port {@link port}. */
  readonly node: string;
  readonly port: string;
  readonly trait: string;
  readonly conductor: string;
  /** A history entry of {@link node} (a maintenance set and cleared). */
  readonly historyEvent?: string;
  /** An offer of o1 on a second node, claimed by l1 into {@link lease} (both in the future). */
  readonly offer: string;
  readonly lease: string;
  /** An esi-leap time window inside the offer and free of leases: `[start, end]`. */
  readonly window: readonly [string, string];
  /** An owner lease policy on {@link node} and a disabled webhook of o1 (absent if not creatable). */
  readonly leasePolicy?: string;
  readonly webhook?: string;
  /** The network API's resources (./network-specs.ts). */
  readonly network?: NetworkFixtures;
  /** The identity API's group and application credential (./identity-specs.ts). */
  readonly identity?: IdentityFixtures;
  /** An allocation of the admin (in error: no node of its class). */
  readonly allocation: string;
  /** A chassis, and a portgroup, volume connector and volume target of {@link node}. */
  readonly chassis: string;
  readonly portgroup: string;
  readonly volumeConnector: string;
  readonly volumeTarget: string;
  /** A public flavor with the extra spec {@link extraSpec}, an image, o1's key pair and server. */
  readonly flavor: string;
  readonly extraSpec: string;
  readonly image: string;
  readonly keypair: string;
  readonly server: string;
}

/** The body a route reads. */
export interface BodySpec {
  /**
   * `json`: a JSON body with the fields below; `none`: the body is ignored; `empty`: any
   * non-empty body is refused.
   */
  readonly kind: 'json' | 'none' | 'empty';
  /** True when no body (or JSON `null`) is a valid request: `null` is then not bad input. */
  readonly optional?: boolean;
  /** A valid body for the fixtures (never sent as is: only mutated). */
  readonly valid?: (f: Fixtures) => unknown;
  /** Known attributes by dotted path (`project.name`, `0.op`) → the JSON kinds accepted. */
  readonly fields?: Readonly<Record<string, readonly JsonKind[]>>;
  /** Dotted paths of the objects that refuse unknown attributes (`''`: the top level). */
  readonly strict?: readonly string[];
  /** Other attribute names those objects know (read-only or ignored ones): never "unknown". */
  readonly alsoKnown?: readonly string[];
  /** String fields for which a 90 000-character value may be valid (no huge-string case). */
  readonly hugeOk?: readonly string[];
}

const S: readonly JsonKind[] = ['string'];
const SN: readonly JsonKind[] = ['string', 'null'];
const B: readonly JsonKind[] = ['boolean'];
const BOOL_LIKE: readonly JsonKind[] = ['boolean', 'string', 'null'];
const ON: readonly JsonKind[] = ['object', 'null'];
const O: readonly JsonKind[] = ['object'];
const A: readonly JsonKind[] = ['array'];

const none: BodySpec = { kind: 'none' };
const prefixed = (prefix: string, fields: Record<string, readonly JsonKind[]>): Record<string, readonly JsonKind[]> =>
  Object.fromEntries(Object.entries(fields).map(([k, v]) => [`${prefix}.${k}`, v]));

// Keystone (keystone/resource/schema.py, identity/schema.py, assignment/schema.py).
/**
 * Path ids of the read-only identity catalogue routes (`/v3/services/{id}`, `/v3/endpoints/{id}`):
 * the identity service and its first endpoint. Catalogue ids are stable (derived from the
 * service type, interface and region), so they do not depend on the server's URL.
 */
export const IDENTITY_CATALOG_PARAMS: Readonly<Record<'services' | 'endpoints', string>> = (() => {
  const [identity] = buildCatalog('http://esi.invalid', 'RegionOne');
  return { services: identity!.id, endpoints: identity!.endpoints[0]!.id };
})();

const projectFields = { name: S, description: SN, domain_id: SN, parent_id: SN, enabled: B, is_domain: B, tags: A, options: O };
const userFields = { name: S, password: SN, default_project_id: SN, description: SN, domain_id: S, enabled: B, options: O };

const IDENTITY: Record<string, BodySpec> = {
  'POST /identity/v3/auth/tokens': {
    kind: 'json',
    valid: (f) => ({
      auth: {
        identity: { methods: ['password'], password: { user: { name: 'owner1', domain: { id: 'default' }, password: 'pw-owner1' } } },
        scope: { project: { id: f.personas.owner.projectId } },
      },
    }),
    fields: {
      auth: O,
      'auth.identity': O,
      'auth.identity.methods': A,
      'auth.identity.password': O,
      'auth.identity.password.user': O,
      'auth.identity.password.user.name': S,
      'auth.identity.password.user.password': S,
      'auth.identity.password.user.domain': O,
      'auth.identity.password.user.domain.id': S,
      'auth.scope': ['string', 'object'],
      'auth.scope.project': O,
      'auth.scope.project.id': S,
    },
    strict: [''],
  },
  'POST /identity/v3/projects': {
    kind: 'json',
    valid: () => ({ project: { name: 'rb-new-project' } }),
    fields: prefixed('project', projectFields),
    strict: [''],
  },
  'PATCH /identity/v3/projects/{}': {
    kind: 'json',
    valid: () => ({ project: { description: 'rb' } }),
    fields: prefixed('project', projectFields),
    strict: [''],
  },
  'PUT /identity/v3/projects/{}/users/{}/roles/{}': none,
  'PUT /identity/v3/system/users/{}/roles/{}': none,
  'POST /identity/v3/users': {
    kind: 'json',
    valid: () => ({ user: { name: 'rb-new-user', password: 'rb-pw' } }),
    fields: prefixed('user', userFields),
    strict: [''],
  },
  'PATCH /identity/v3/users/{}': {
    kind: 'json',
    valid: () => ({ user: { description: 'rb' } }),
    fields: prefixed('user', { ...userFields, domain_id: SN }),
    strict: [''],
  },
  'POST /identity/v3/users/{}/password': {
    kind: 'json',
    valid: () => ({ user: { original_password: 'pw-owner1', password: 'rb-changed-pw' } }),
    fields: { user: O, 'user.original_password': S, 'user.password': S },
    strict: ['', 'user'],
  },
  'POST /identity/v3/roles': {
    kind: 'json',
    valid: () => ({ role: { name: 'rb-new-role' } }),
    fields: { role: O, 'role.name': S, 'role.description': SN, 'role.domain_id': ['null'], 'role.options': O },
    strict: ['', 'role'],
  },
};

// Ironic 21.4 (api/controllers/v1 schemas) at microversion 1.82.
const nodeFields: Record<string, readonly JsonKind[]> = {
  driver: S,
  automated_clean: BOOL_LIKE,
  boot_mode: SN,
  chassis_uuid: SN,
  conductor_group: SN,
  console_enabled: BOOL_LIKE,
  description: SN,
  driver_info: ON,
  extra: ON,
  instance_info: ON,
  instance_uuid: SN,
  lessee: SN,
  maintenance: BOOL_LIKE,
  name: SN,
  network_data: ON,
  owner: SN,
  properties: ON,
  resource_class: SN,
  retired: BOOL_LIKE,
  retired_reason: SN,
  secure_boot: BOOL_LIKE,
  shard: SN,
  uuid: SN,
  ...Object.fromEntries(
    ['bios', 'boot', 'console', 'deploy', 'inspect', 'management', 'network', 'power', 'raid', 'rescue', 'storage', 'vendor'].map((k) => [
      `${k}_interface`,
      SN,
    ]),
  ),
};
const patchSpec = (valid: unknown): BodySpec => ({
  kind: 'json',
  valid: () => valid,
  fields: { '0': O, '0.op': S, '0.path': S },
  strict: ['0'],
  alsoKnown: ['value'],
});
const portSpec: BodySpec = {
  kind: 'json',
  valid: (f) => ({ address: '52:54:00:12:34:56', node_uuid: f.node }),
  fields: {
    address: S,
    node_uuid: S,
    extra: ON,
    is_smartnic: BOOL_LIKE,
    local_link_connection: ON,
    physical_network: SN,
    portgroup_uuid: SN,
    pxe_enabled: BOOL_LIKE,
    uuid: SN,
  },
  strict: [''],
};
const nodeSpec: BodySpec = {
  kind: 'json',
  valid: () => ({ driver: 'fake-hardware', name: 'rb-new-node' }),
  fields: nodeFields,
  strict: [''],
};
const consoleSpec: BodySpec = { kind: 'json', valid: () => ({ enabled: true }), fields: { enabled: ['boolean', 'string'] }, strict: [''] };
const allocationSpec: BodySpec = {
  kind: 'json',
  valid: () => ({ resource_class: 'rb-new', name: 'rb-new-allocation' }),
  fields: {
    resource_class: SN,
    traits: ['array', 'null'],
    candidate_nodes: ['array', 'null'],
    name: SN,
    uuid: SN,
    extra: ON,
    owner: SN,
    node: SN,
  },
  strict: [''],
};

/** `POST /v1/deploy_templates` (Ironic `TEMPLATE_SCHEMA`). */
const deployTemplateSpec: BodySpec = {
  kind: 'json',
  valid: () => ({ name: 'CUSTOM_RB_NEW', steps: [{ interface: 'bios', step: 'factory_reset', args: {}, priority: 10 }] }),
  fields: { name: S, steps: A, extra: ON, description: SN, uuid: SN },
  strict: [''],
};

/** `POST /v1/events` (Ironic 21.4 `event.py` `EVENTS_SCHEMA`, `NETWORK_EVENT_VALIDATOR`). */
const eventSpec: BodySpec = {
  kind: 'json',
  valid: () => ({
    events: [
      { event: 'network.bind_port', port_id: '0b8ae4a2-6c61-4a5e-9f1e-3f4f7b1c2d3e', mac_address: '52:54:00:aa:bb:cc', status: 'ACTIVE' },
    ],
  }),
  fields: {
    events: A,
    'events.0': O,
    'events.0.event': S,
    'events.0.port_id': S,
    'events.0.mac_address': S,
    'events.0.status': S,
    'events.0.device_id': SN,
    'events.0.binding:host_id': SN,
    'events.0.binding:vnic_type': SN,
  },
  strict: ['', 'events.0'],
};

/** `POST /v1/chassis` (Ironic 21.4 `chassis.py` schema). */
const chassisSpec: BodySpec = {
  kind: 'json',
  valid: () => ({ description: 'rb-new-chassis' }),
  fields: { description: SN, extra: ON, uuid: SN },
  strict: [''],
};
/** `POST /v1/portgroups` (Ironic 21.4 `portgroup.py` schema). */
const portgroupSpec: BodySpec = {
  kind: 'json',
  valid: (f) => ({ node_uuid: f.node, address: '52:54:00:00:00:09', name: 'rb-new-pg' }),
  fields: { node_uuid: S, address: SN, name: SN, extra: ON, mode: SN, properties: ON, standalone_ports_supported: BOOL_LIKE, uuid: SN },
  strict: [''],
};
/** `POST /v1/volume/connectors` (Ironic 21.4 `volume_connector.py` schema). */
const connectorSpec: BodySpec = {
  kind: 'json',
  valid: (f) => ({ node_uuid: f.node, type: 'iqn', connector_id: 'iqn.2026-11.org.esi:rb-new' }),
  fields: { node_uuid: S, type: S, connector_id: S, extra: ON, uuid: SN },
  strict: [''],
};
/** `POST /v1/volume/targets` (Ironic 21.4 `volume_target.py` schema). */
const targetSpec: BodySpec = {
  kind: 'json',
  valid: (f) => ({ node_uuid: f.node, volume_type: 'iscsi', boot_index: 1, volume_id: 'rb-new-vol' }),
  fields: { node_uuid: S, volume_type: S, properties: ON, boot_index: ['integer', 'string'], volume_id: S, extra: ON, uuid: SN },
  strict: [''],
};

const BAREMETAL: Record<string, BodySpec> = {
  'POST /baremetal/v1/chassis': chassisSpec,
  'POST /baremetal/v1/chassis.json': chassisSpec,
  'PATCH /baremetal/v1/chassis/{}': patchSpec([{ op: 'replace', path: '/description', value: 'rb' }]),
  'POST /baremetal/v1/portgroups': portgroupSpec,
  'POST /baremetal/v1/portgroups.json': portgroupSpec,
  'PATCH /baremetal/v1/portgroups/{}': patchSpec([{ op: 'add', path: '/extra/rb', value: 'x' }]),
  'POST /baremetal/v1/volume/connectors': connectorSpec,
  'POST /baremetal/v1/volume/connectors.json': connectorSpec,
  'PATCH /baremetal/v1/volume/connectors/{}': patchSpec([{ op: 'add', path: '/extra/rb', value: 'x' }]),
  'POST /baremetal/v1/volume/targets': targetSpec,
  'POST /baremetal/v1/volume/targets.json': targetSpec,
  'PATCH /baremetal/v1/volume/targets/{}': patchSpec([{ op: 'add', path: '/extra/rb', value: 'x' }]),
  // Under a node, Ironic refuses every write (403, "only allowed on the top-level resource").
  'POST /baremetal/v1/nodes/{}/portgroups': none,
  'PATCH /baremetal/v1/nodes/{}/portgroups/{}': none,
  'POST /baremetal/v1/nodes/{}/volume/connectors': none,
  'PATCH /baremetal/v1/nodes/{}/volume/connectors/{}': none,
  'POST /baremetal/v1/nodes/{}/volume/targets': none,
  'PATCH /baremetal/v1/nodes/{}/volume/targets/{}': none,
  'POST /baremetal/v1': none,
  'PUT /baremetal/v1': none,
  'PATCH /baremetal/v1': none,
  'POST /baremetal/v1.json': none,
  'PUT /baremetal/v1.json': none,
  'PATCH /baremetal/v1.json': none,
  'POST /baremetal/v1/nodes': nodeSpec,
  'POST /baremetal/v1/nodes.json': nodeSpec,
  'PATCH /baremetal/v1/nodes/{}': patchSpec([{ op: 'replace', path: '/description', value: 'rb' }]),
  'PUT /baremetal/v1/nodes/{}/states/power': {
    kind: 'json',
    valid: () => ({ target: 'power on' }),
    fields: { target: S, timeout: ['integer', 'null'] },
    strict: [''],
  },
  'PUT /baremetal/v1/nodes/{}/states/provision': {
    kind: 'json',
    valid: () => ({ target: 'manage' }),
    fields: {
      target: S,
      configdrive: ['string', 'object', 'null'],
      clean_steps: ['array', 'null'],
      deploy_steps: ['array', 'null'],
      rescue_password: SN,
      disable_ramdisk: BOOL_LIKE,
    },
    strict: [''],
    hugeOk: ['configdrive'],
  },
  'PUT /baremetal/v1/nodes/{}/states/console': consoleSpec,
  'PUT /baremetal/v1/nodes/states/console/{}': consoleSpec,
  'PUT /baremetal/v1/nodes/{}/maintenance': {
    kind: 'json',
    optional: true,
    valid: () => ({ reason: 'rb' }),
    fields: { reason: SN },
    strict: [''],
    hugeOk: ['reason'],
  },
  'PUT /baremetal/v1/nodes/{}/management/boot_device': {
    kind: 'json',
    valid: () => ({ boot_device: 'pxe', persistent: false }),
    fields: { boot_device: S, persistent: BOOL_LIKE },
    strict: [''],
  },
  // Indicators and NMI (src/api/baremetal/routes-node-indicators.ts): a state string; no fields.
  'PUT /baremetal/v1/nodes/{}/management/indicators/{}': {
    kind: 'json',
    valid: () => ({ state: 'blinking' }),
    fields: { state: S },
    strict: [''],
  },
  'PUT /baremetal/v1/nodes/{}/management/inject_nmi': { kind: 'json', optional: true, valid: () => ({}), fields: {}, strict: [''] },
  // Redfish hardware settings (src/api/baremetal/routes-node-hardware.ts): the RAID target
  // (Ironic's RAID schema: unknown keys refused; no body clears it) and the boot mode.
  'PUT /baremetal/v1/nodes/{}/states/raid': {
    kind: 'json',
    optional: true,
    valid: () => ({ logical_disks: [{ size_gb: 10, raid_level: '1', is_root_volume: true }] }),
    fields: {
      logical_disks: A,
      'logical_disks.0': O,
      'logical_disks.0.size_gb': ['integer', 'string'],
      'logical_disks.0.raid_level': S,
      'logical_disks.0.is_root_volume': B,
    },
    strict: ['', 'logical_disks.0'],
  },
  'PUT /baremetal/v1/nodes/{}/states/boot_mode': { kind: 'json', valid: () => ({ target: 'uefi' }), fields: { target: S }, strict: [''] },
  'PUT /baremetal/v1/nodes/{}/traits': {
    kind: 'json',
    valid: () => ({ traits: ['CUSTOM_RB_OTHER'] }),
    fields: { traits: A },
    strict: [''],
  },
  'PUT /baremetal/v1/nodes/{}/traits/{}': { kind: 'empty' },
  'POST /baremetal/v1/heartbeat/{}': {
    kind: 'json',
    valid: () => ({ callback_url: 'http://127.0.0.1:9', agent_token: 'rb-token' }),
    fields: { callback_url: S, agent_token: S, agent_version: SN, agent_verify_ca: SN, agent_status: SN, agent_status_message: SN },
    strict: [''],
  },
  'POST /baremetal/v1/continue_inspection': {
    kind: 'json',
    valid: () => ({
      inventory: {
        cpu: { count: 1, architecture: 'x86_64' },
        memory: { physical_mb: 1024 },
        interfaces: [{ mac_address: '52:54:00:aa:bb:cc' }],
        disks: [],
      },
    }),
    fields: { inventory: O },
    strict: [],
  },
  'POST /baremetal/v1/nodes/{}/capture': {
    kind: 'json',
    valid: () => ({ image_id: '6a1c2e34-0000-4000-8000-00000000c0de' }),
    fields: { image_id: S },
    strict: [''],
  },
  'POST /baremetal/v1/ports': portSpec,
  'POST /baremetal/v1/ports.json': portSpec,
  'PATCH /baremetal/v1/ports/{}': patchSpec([{ op: 'add', path: '/extra/rb', value: 'x' }]),
  'POST /baremetal/v1/allocations': allocationSpec,
  // Issue 18 (part B): deploy templates, vendor passthru (a call without ?method= is refused
  // whatever its body), shards (read-only: other methods are 405).
  'POST /baremetal/v1/deploy_templates': deployTemplateSpec,
  'POST /baremetal/v1/deploy_templates.json': deployTemplateSpec,
  'PATCH /baremetal/v1/deploy_templates/{}': patchSpec([{ op: 'replace', path: '/extra', value: { rb: 1 } }]),
  ...Object.fromEntries(
    ['POST', 'PUT', 'PATCH'].flatMap((m) => [
      [`${m} /baremetal/v1/nodes/{}/vendor_passthru`, none],
      [`${m} /baremetal/v1/nodes/{}/vendor_passthru/{}`, none],
      [`${m} /baremetal/v1/drivers/{}/vendor_passthru`, none],
      [`${m} /baremetal/v1/drivers/{}/vendor_passthru/{}`, none],
      [`${m} /baremetal/v1/shards`, none],
      [`${m} /baremetal/v1/shards.json`, none],
    ]),
  ),
  'POST /baremetal/v1/allocations.json': allocationSpec,
  'POST /baremetal/v1/events': eventSpec,
  'PATCH /baremetal/v1/allocations/{}': patchSpec([{ op: 'add', path: '/extra/rb', value: 'x' }]),
};

// esi-leap (api/controllers/v1: Offer, Lease, ConsoleAuthToken WSME types). JSON null for an
// optional attribute means "not given" there, so every optional attribute accepts null.
const leaseTimes = { start_time: SN, end_time: SN };
const IN: readonly JsonKind[] = ['integer', 'null'];
const AN: readonly JsonKind[] = ['array', 'null'];
const policyFields = {
  max_lease_seconds: IN,
  min_gap_seconds: IN,
  allowed_projects: AN,
  erase_devices: ['boolean'] as readonly JsonKind[],
};
const policyReadOnly = ['uuid', 'project', 'resource', 'created_at', 'updated_at'];
const webhookFields = { url: SN, secret: SN, name: SN, event_types: AN, enabled: ['boolean', 'null'] as readonly JsonKind[] };
const LEASE: Record<string, BodySpec> = {
  'POST /lease/v1/offers': {
    kind: 'json',
    valid: (f) => ({ resource_uuid: f.node, start_time: f.window[0], end_time: f.window[1] }),
    fields: { resource_uuid: S, resource_type: SN, name: SN, lessee_id: SN, properties: ON, ...leaseTimes },
    strict: [''],
    alsoKnown: [
      'resource_class',
      'resource_properties',
      'uuid',
      'project_id',
      'project',
      'lessee',
      'resource',
      'status',
      'availabilities',
      'parent_lease_uuid',
    ],
  },
  'POST /lease/v1/offers/{}/claim': {
    kind: 'json',
    optional: true,
    valid: (f) => ({ start_time: f.window[0], end_time: f.window[1] }),
    fields: { name: SN, properties: ON, purpose: SN, ...leaseTimes },
    strict: [''],
    alsoKnown: [
      'uuid',
      'project_id',
      'project',
      'owner_id',
      'owner',
      'resource_type',
      'resource_uuid',
      'resource',
      'resource_class',
      'resource_properties',
      'fulfill_time',
      'expire_time',
      'status',
      'offer_uuid',
      'parent_lease_uuid',
    ],
  },
  'POST /lease/v1/leases': {
    kind: 'json',
    valid: (f) => ({ resource_uuid: f.node, project_id: f.personas.lessee.projectId, start_time: f.window[0], end_time: f.window[1] }),
    fields: { resource_uuid: S, project_id: S, resource_type: SN, name: SN, properties: ON, purpose: SN, ...leaseTimes },
    strict: [''],
    alsoKnown: [
      'resource_class',
      'resource_properties',
      'uuid',
      'project',
      'owner_id',
      'owner',
      'resource',
      'fulfill_time',
      'expire_time',
      'status',
      'offer_uuid',
      'parent_lease_uuid',
    ],
  },
  'PATCH /lease/v1/leases/{}': { kind: 'json', valid: (f) => ({ end_time: f.window[1] }), fields: { end_time: S }, strict: [''] },
  // esi additions to esi-leap (docs/leasing.md): quotas, owner lease policies, lease requests, webhooks.
  'PUT /lease/v1/quotas/{}': {
    kind: 'json',
    valid: () => ({ max_nodes: 5 }),
    fields: { max_nodes: IN, max_node_hours: IN, window_hours: IN },
    strict: [''],
    alsoKnown: ['project_id', 'project', 'usage'],
  },
  'POST /lease/v1/lease_policies': {
    kind: 'json',
    valid: (f) => ({ resource_uuid: f.node, project_id: f.personas.owner.projectId, max_lease_seconds: 3600 }),
    fields: { resource_uuid: SN, project_id: SN, ...policyFields },
    strict: [''],
    alsoKnown: policyReadOnly,
  },
  'PATCH /lease/v1/lease_policies/{}': {
    kind: 'json',
    valid: () => ({ max_lease_seconds: 7200 }),
    fields: policyFields,
    strict: [''],
    alsoKnown: [...policyReadOnly, 'project_id', 'resource_uuid'],
  },
  'POST /lease/v1/lease_requests': {
    kind: 'json',
    valid: (f) => ({ start_time: f.window[0], end_time: f.window[1], groups: [{ count: 1 }] }),
    fields: {
      groups: A,
      'groups.0': O,
      'groups.0.count': ['integer'],
      'groups.0.resource_class': SN,
      'groups.0.traits': AN,
      'groups.0.properties': ['string', 'array', 'null'],
      name: SN,
      purpose: SN,
      properties: ON,
      ...leaseTimes,
    },
    strict: ['', 'groups.0'],
    alsoKnown: ['leases', 'uuid', 'project_id', 'project', 'status'],
  },
  'POST /lease/v1/webhooks': {
    kind: 'json',
    valid: () => ({ url: 'http://127.0.0.1:9/rb', secret: 'rb-hook-secret', enabled: false }),
    fields: { ...webhookFields, url: S, secret: S, project_id: SN },
    strict: [''],
    alsoKnown: ['uuid', 'created_at', 'updated_at'],
  },
  'PATCH /lease/v1/webhooks/{}': {
    kind: 'json',
    valid: () => ({ name: 'rb' }),
    fields: webhookFields,
    strict: [''],
    alsoKnown: ['uuid', 'created_at', 'updated_at', 'project_id'],
  },
  'POST /lease/v1/console_auth_tokens': {
    kind: 'json',
    valid: (f) => ({ node_uuid_or_name: f.node }),
    fields: { node_uuid_or_name: S, token_ttl: ['integer', 'null'] },
    strict: [''],
    alsoKnown: ['node_uuid', 'token', 'access_url'],
  },
};

/** Every body spec, keyed `METHOD /path/{}`. */
export const BODY_SPECS: Readonly<Record<string, BodySpec>> = {
  ...IDENTITY,
  ...BAREMETAL,
  ...LEASE,
  ...NETWORK_SPECS,
  ...NETWORK_REFUSALS,
  ...IDENTITY_SPECS,
  ...COMPUTE_SPECS,
};

/** The spec key of a route: its method and pattern with parameters written `{}`. */
export function specKey(method: string, pattern: string): string {
  return `${method} ${pattern
    .split('/')
    .map((s) => (s.startsWith(':') || s === '*' ? '{}' : s))
    .join('/')}`;
}
