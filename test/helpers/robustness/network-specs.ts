/**
 * Body specs of the network API's write routes (Neutron v2.0 subset and esi's additions,
 * docs/networking.md) and of the baremetal VIF attach, for the robustness test: a valid body
 * for the fixtures and the JSON kinds each attribute accepts (Neutron's attribute validators as
 * implemented in src/domain/networking/attributes.ts: names and descriptions take strings or
 * null, booleans only booleans — or the strings "true"/"false" —, integers integers or digit
 * strings, and `null` means "not given" where Neutron has a default).
 */
import type { JsonKind } from './generators.ts';
import type { BodySpec, Fixtures } from './specs.ts';

/** The network resources created before the bad requests. */
export interface NetworkFixtures {
  /** A network of o1 with a subnet, shared with l1 by {@link rbac}. */
  readonly network: string;
  readonly subnet: string;
  /** A port of o1 on it (not in a trunk, not bound). */
  readonly port: string;
  /** A trunk of o1: parent {@link trunkParent}, one sub-port {@link subPort}. */
  readonly trunk: string;
  readonly trunkParent: string;
  readonly subPort: string;
  readonly rbac: string;
  /** A switch (fake driver) of the admin. */
  readonly switch: string;
  /** A router of o1 (no gateway, no interface). */
  readonly router: string;
  /** An external network of the admin with a subnet. */
  readonly extNetwork: string;
  /** A port of o1 behind a router of o1 whose gateway is on {@link extNetwork}. */
  readonly routedPort: string;
  /** A floating IP of o1 on {@link extNetwork} (no port) with one port forwarding {@link portForwarding}. */
  readonly floatingip: string;
  readonly portForwarding: string;
}

const S: readonly JsonKind[] = ['string'];
const SN: readonly JsonKind[] = ['string', 'null'];
const B: readonly JsonKind[] = ['boolean'];
const BN: readonly JsonKind[] = ['boolean', 'null'];
const IN: readonly JsonKind[] = ['integer', 'null'];
const A: readonly JsonKind[] = ['array'];
const AN: readonly JsonKind[] = ['array', 'null'];
const O: readonly JsonKind[] = ['object'];
const ON: readonly JsonKind[] = ['object', 'null'];
const NULL: readonly JsonKind[] = ['null'];

const net = (f: Fixtures): NetworkFixtures => {
  if (!f.network) throw new Error('network fixtures missing');
  return f.network;
};
const wrapped = (resource: string, fields: Record<string, readonly JsonKind[]>): Record<string, readonly JsonKind[]> => ({
  [resource]: O,
  ...Object.fromEntries(Object.entries(fields).map(([k, v]) => [`${resource}.${k}`, v])),
});
const std = { name: SN, description: SN };
const project = { project_id: SN, tenant_id: SN };

const networkCreate: BodySpec = {
  kind: 'json',
  valid: () => ({ network: { name: 'rb-net' } }),
  fields: wrapped('network', {
    ...std,
    ...project,
    admin_state_up: B,
    shared: B,
    mtu: IN,
    'router:external': B,
    'provider:network_type': SN,
    'provider:physical_network': SN,
    'provider:segmentation_id': IN,
  }),
  strict: ['', 'network'],
  alsoKnown: ['id', 'status', 'subnets', 'created_at', 'updated_at', 'revision_number'],
};
const subnetCreate: BodySpec = {
  kind: 'json',
  valid: (f) => ({ subnet: { network_id: net(f).network, cidr: '10.99.0.0/24', ip_version: 4 } }),
  fields: wrapped('subnet', {
    ...std,
    ...project,
    network_id: S,
    cidr: S,
    ip_version: ['integer'],
    gateway_ip: SN,
    allocation_pools: AN,
    enable_dhcp: B,
    dns_nameservers: AN,
    host_routes: AN,
    ipv6_address_mode: NULL,
    ipv6_ra_mode: NULL,
    subnetpool_id: NULL,
    segment_id: NULL,
    use_default_subnetpool: B,
    service_types: A,
  }),
  strict: ['', 'subnet'],
  alsoKnown: ['id', 'created_at', 'updated_at', 'revision_number'],
};
const portFields = {
  ...std,
  admin_state_up: B,
  mac_address: S,
  fixed_ips: AN,
  device_owner: SN,
  device_id: SN,
  'binding:host_id': SN,
  'binding:profile': ON,
  'binding:vnic_type': SN,
};
const portCreate: BodySpec = {
  kind: 'json',
  valid: (f) => ({ port: { network_id: net(f).network } }),
  fields: wrapped('port', { ...portFields, ...project, network_id: S, security_groups: AN }),
  strict: ['', 'port'],
  alsoKnown: ['id', 'status', 'created_at', 'updated_at', 'revision_number', 'binding:vif_type', 'binding:vif_details', 'trunk_details'],
};
const trunkCreate: BodySpec = {
  kind: 'json',
  valid: (f) => ({ trunk: { port_id: net(f).port } }),
  fields: wrapped('trunk', { ...std, ...project, port_id: S, admin_state_up: B, sub_ports: AN }),
  strict: ['', 'trunk'],
  alsoKnown: ['id', 'status', 'created_at', 'updated_at', 'revision_number'],
};
const rbacCreate: BodySpec = {
  kind: 'json',
  valid: (f) => ({
    rbac_policy: {
      object_type: 'network',
      object_id: net(f).network,
      action: 'access_as_shared',
      target_tenant: f.personas.other.projectId,
    },
  }),
  fields: wrapped('rbac_policy', { object_type: S, object_id: S, action: S, target_tenant: S, target_project: S, ...project }),
  strict: ['', 'rbac_policy'],
  alsoKnown: ['id'],
};
const routerCreate: BodySpec = {
  kind: 'json',
  valid: () => ({ router: { name: 'rb-router' } }),
  fields: wrapped('router', {
    ...std,
    ...project,
    admin_state_up: B,
    external_gateway_info: ON,
    routes: A,
    distributed: BN,
    ha: BN,
    availability_zone_hints: A,
    flavor_id: NULL,
  }),
  strict: ['', 'router'],
  alsoKnown: ['id', 'status', 'created_at', 'updated_at', 'revision_number', 'availability_zones', 'tags'],
};
const floatingipCreate: BodySpec = {
  kind: 'json',
  valid: (f) => ({ floatingip: { floating_network_id: net(f).extNetwork } }),
  fields: wrapped('floatingip', {
    description: SN,
    ...project,
    floating_network_id: S,
    floating_ip_address: SN,
    subnet_id: SN,
    port_id: SN,
    fixed_ip_address: SN,
  }),
  strict: ['', 'floatingip'],
  alsoKnown: ['id', 'status', 'router_id', 'created_at', 'updated_at', 'revision_number', 'tags', 'port_details', 'port_forwardings'],
};
const portForwardingFields = {
  protocol: S,
  internal_port_id: S,
  internal_ip_address: SN,
  internal_port: IN,
  external_port: IN,
  internal_port_range: ['string', 'integer', 'null'] as readonly JsonKind[],
  external_port_range: ['string', 'integer', 'null'] as readonly JsonKind[],
  description: SN,
};
const switchCreate: BodySpec = {
  kind: 'json',
  valid: () => ({ switch: { name: 'rb-sw', switch_id: '02:00:00:00:00:7b', driver: 'fake', driver_info: {} } }),
  fields: wrapped('switch', { name: S, switch_id: S, driver: S, driver_info: ON, flat_vlan: IN, description: SN }),
  strict: ['', 'switch'],
  alsoKnown: ['id', 'created_at', 'updated_at'],
};

/** Every network write route's spec, and the VIF attach of the baremetal API. */
export const NETWORK_SPECS: Readonly<Record<string, BodySpec>> = {
  'POST /network/v2.0/networks': networkCreate,
  'POST /network/v2.0/networks.json': networkCreate,
  'PUT /network/v2.0/networks/{}': {
    kind: 'json',
    valid: () => ({ network: { name: 'rb-renamed' } }),
    fields: wrapped('network', { ...std, admin_state_up: B, shared: B, mtu: IN, 'router:external': B }),
    strict: ['', 'network'],
    alsoKnown: ['id', 'status', 'subnets', 'created_at', 'updated_at', 'revision_number', 'project_id', 'tenant_id'],
  },
  'POST /network/v2.0/subnets': subnetCreate,
  'POST /network/v2.0/subnets.json': subnetCreate,
  'PUT /network/v2.0/subnets/{}': {
    kind: 'json',
    valid: () => ({ subnet: { name: 'rb-renamed' } }),
    fields: wrapped('subnet', { ...std, gateway_ip: SN, allocation_pools: AN, enable_dhcp: B, dns_nameservers: AN, host_routes: AN }),
    strict: ['', 'subnet'],
    alsoKnown: ['id', 'created_at', 'updated_at', 'revision_number', 'network_id', 'cidr', 'ip_version', 'project_id', 'tenant_id'],
  },
  'POST /network/v2.0/ports': portCreate,
  'POST /network/v2.0/ports.json': portCreate,
  'PUT /network/v2.0/ports/{}': {
    kind: 'json',
    valid: () => ({ port: { name: 'rb-renamed' } }),
    fields: wrapped('port', portFields),
    strict: ['', 'port'],
    alsoKnown: [
      'id',
      'status',
      'created_at',
      'updated_at',
      'revision_number',
      'binding:vif_type',
      'binding:vif_details',
      'trunk_details',
      'network_id',
      'project_id',
      'tenant_id',
    ],
  },
  'POST /network/v2.0/trunks': trunkCreate,
  'POST /network/v2.0/trunks.json': trunkCreate,
  'PUT /network/v2.0/trunks/{}': {
    kind: 'json',
    valid: () => ({ trunk: { name: 'rb-renamed' } }),
    fields: wrapped('trunk', { ...std, admin_state_up: B }),
    strict: ['', 'trunk'],
    alsoKnown: ['id', 'status', 'created_at', 'updated_at', 'revision_number', 'port_id', 'sub_ports', 'project_id', 'tenant_id'],
  },
  'PUT /network/v2.0/trunks/{}/add_subports': {
    kind: 'json',
    valid: (f) => ({ sub_ports: [{ port_id: net(f).port, segmentation_type: 'vlan', segmentation_id: 3999 }] }),
    fields: {
      sub_ports: A,
      'sub_ports.0': O,
      'sub_ports.0.port_id': S,
      'sub_ports.0.segmentation_type': SN,
      'sub_ports.0.segmentation_id': ['integer'],
    },
    strict: [''],
  },
  'PUT /network/v2.0/trunks/{}/remove_subports': {
    kind: 'json',
    valid: (f) => ({ sub_ports: [{ port_id: net(f).subPort }] }),
    fields: { sub_ports: AN, 'sub_ports.0': O, 'sub_ports.0.port_id': S },
    strict: [''],
  },
  'POST /network/v2.0/rbac-policies': rbacCreate,
  'POST /network/v2.0/rbac-policies.json': rbacCreate,
  'PUT /network/v2.0/rbac-policies/{}': {
    kind: 'json',
    valid: (f) => ({ rbac_policy: { target_tenant: f.personas.other.projectId } }),
    fields: wrapped('rbac_policy', { target_tenant: S, target_project: S }),
    strict: ['', 'rbac_policy'],
    alsoKnown: ['id', 'object_type', 'object_id', 'action', 'project_id', 'tenant_id'],
  },
  'POST /network/v2.0/routers': routerCreate,
  'POST /network/v2.0/routers.json': routerCreate,
  'PUT /network/v2.0/routers/{}': {
    kind: 'json',
    valid: () => ({ router: { name: 'rb-renamed' } }),
    fields: wrapped('router', { ...std, admin_state_up: B, external_gateway_info: ON, routes: A, distributed: BN, ha: BN }),
    strict: ['', 'router'],
    alsoKnown: ['id', 'status', 'created_at', 'updated_at', 'revision_number', 'project_id', 'tenant_id', 'availability_zones', 'tags'],
  },
  'PUT /network/v2.0/routers/{}/add_router_interface': {
    kind: 'json',
    valid: (f) => ({ subnet_id: net(f).subnet }),
    fields: { subnet_id: SN, port_id: SN },
    strict: [''],
  },
  'PUT /network/v2.0/routers/{}/remove_router_interface': {
    kind: 'json',
    valid: (f) => ({ subnet_id: net(f).subnet }),
    fields: { subnet_id: SN, port_id: SN },
    strict: [''],
  },
  'POST /network/v2.0/floatingips': floatingipCreate,
  'POST /network/v2.0/floatingips.json': floatingipCreate,
  'PUT /network/v2.0/floatingips/{}': {
    kind: 'json',
    valid: () => ({ floatingip: { description: 'rb' } }),
    fields: wrapped('floatingip', { description: SN, port_id: SN, fixed_ip_address: SN }),
    strict: ['', 'floatingip'],
    alsoKnown: [
      'id',
      'status',
      'router_id',
      'created_at',
      'updated_at',
      'revision_number',
      'tags',
      'port_details',
      'port_forwardings',
      'floating_network_id',
      'floating_ip_address',
      'subnet_id',
      'project_id',
      'tenant_id',
    ],
  },
  'POST /network/v2.0/floatingips/{}/port_forwardings': {
    kind: 'json',
    valid: (f) => ({
      port_forwarding: { protocol: 'tcp', internal_port_id: net(f).routedPort, internal_port: 2200, external_port: 2200 },
    }),
    fields: wrapped('port_forwarding', portForwardingFields),
    strict: ['', 'port_forwarding'],
    alsoKnown: ['id', 'floatingip_id', 'floating_ip_address', 'router_id'],
  },
  'PUT /network/v2.0/floatingips/{}/port_forwardings/{}': {
    kind: 'json',
    valid: () => ({ port_forwarding: { description: 'rb' } }),
    fields: wrapped('port_forwarding', portForwardingFields),
    strict: ['', 'port_forwarding'],
    alsoKnown: ['id', 'floatingip_id', 'floating_ip_address', 'router_id'],
  },
  'PUT /network/v2.0/quotas/{}': {
    kind: 'json',
    valid: () => ({ quota: { router: 10, floatingip: 50, check_limit: false, force: false } }),
    fields: wrapped('quota', { router: ['integer'], floatingip: ['integer'], check_limit: B, force: B }),
    strict: ['', 'quota'],
    // Neutron quota resources esi does not limit: known, refused with their own message.
    alsoKnown: ['network', 'subnet', 'subnetpool', 'port', 'security_group', 'security_group_rule', 'rbac_policy'],
  },
  'POST /network/v2.0/esi/node-networks': {
    kind: 'json',
    valid: (f) => ({ node: f.node, network: net(f).network }),
    fields: { node: S, network: SN, port: SN, trunk: SN, mac_address: SN },
  },
  'POST /network/v2.0/esi/node-networks/detach': {
    kind: 'json',
    valid: (f) => ({ node: f.node, all: true }),
    fields: { node: S, ports: AN, all: B },
  },
  'POST /network/v2.0/esi/trunks': {
    kind: 'json',
    valid: (f) => ({ name: 'rb-esi-trunk', native_network: net(f).network }),
    fields: { name: S, native_network: S, tagged_networks: AN },
  },
  'POST /network/v2.0/esi/trunks/{}/add-networks': {
    kind: 'json',
    valid: (f) => ({ tagged_networks: [net(f).network] }),
    fields: { tagged_networks: A },
  },
  'POST /network/v2.0/esi/trunks/{}/remove-networks': {
    kind: 'json',
    valid: (f) => ({ tagged_networks: [net(f).network] }),
    fields: { tagged_networks: A },
  },
  'POST /network/v2.0/switches': switchCreate,
  'PUT /network/v2.0/switches/{}': {
    kind: 'json',
    valid: () => ({ switch: { description: 'rb' } }),
    fields: wrapped('switch', { name: S, switch_id: S, description: SN, flat_vlan: IN, driver_info: O }),
    strict: ['', 'switch'],
    alsoKnown: ['id', 'created_at', 'updated_at', 'driver'],
  },
  'POST /network/v2.0/switches/{}/resync': { kind: 'none' },
  'POST /network/v2.0/switches/{}/ports': {
    kind: 'json',
    valid: (f) => ({ switch_port: { port_id: 'rb-port', node: f.node } }),
    fields: wrapped('switch_port', { port_id: S, node: S }),
  },
  'POST /baremetal/v1/nodes/{}/vifs': {
    kind: 'json',
    valid: (f) => ({ id: net(f).port }),
    fields: { id: S, port_uuid: S },
    strict: [''],
  },
};

/**
 * The network API answers 405 (with `Allow`) for the other methods of its paths; those refusal
 * routes read no body. Paths and their served methods, as registered by src/api/network/.
 */
const SERVED: ReadonlyArray<readonly [string, readonly string[]]> = [
  ...['networks', 'subnets', 'ports', 'trunks', 'rbac-policies', 'routers', 'floatingips'].flatMap((c) => [
    [`/network/v2.0/${c}`, ['GET', 'POST']] as const,
    [`/network/v2.0/${c}.json`, ['GET', 'POST']] as const,
    [`/network/v2.0/${c}/{}`, ['GET', 'PUT', 'DELETE']] as const,
  ]),
  ['/network/v2.0/trunks/{}/add_subports', ['PUT']],
  ['/network/v2.0/trunks/{}/remove_subports', ['PUT']],
  ['/network/v2.0/trunks/{}/get_subports', ['GET']],
  ['/network/v2.0/routers/{}/add_router_interface', ['PUT']],
  ['/network/v2.0/routers/{}/remove_router_interface', ['PUT']],
  ['/network/v2.0/floatingips/{}/port_forwardings', ['GET', 'POST']],
  ['/network/v2.0/floatingips/{}/port_forwardings/{}', ['GET', 'PUT', 'DELETE']],
  ['/network/v2.0/quotas', ['GET']],
  ['/network/v2.0/quotas/project', ['GET']],
  ['/network/v2.0/quotas/tenant', ['GET']],
  ['/network/v2.0/quotas/{}', ['GET', 'PUT', 'DELETE']],
  ['/network/v2.0/quotas/{}/default', ['GET']],
  ['/network/v2.0/quotas/{}/details', ['GET']],
  ['/network/v2.0/esi/node-networks', ['GET', 'POST']],
  ['/network/v2.0/esi/node-networks/detach', ['POST']],
  ['/network/v2.0/esi/trunks', ['GET', 'POST']],
  ['/network/v2.0/esi/trunks/{}', ['DELETE']],
  ['/network/v2.0/esi/switch-ports', ['GET']],
  ['/network/v2.0/switches', ['GET', 'POST']],
  ['/network/v2.0/switches/{}', ['GET', 'PUT', 'DELETE']],
  ['/network/v2.0/switches/{}/resync', ['POST']],
  ['/network/v2.0/switches/{}/ports', ['GET', 'POST']],
  ['/network/v2.0/switches/{}/ports/{}', ['DELETE']],
];

/** The 405 refusal routes' specs (no body read). */
export const NETWORK_REFUSALS: Readonly<Record<string, BodySpec>> = Object.fromEntries(
  SERVED.flatMap(([path, served]) =>
    ['POST', 'PUT', 'PATCH'].filter((m) => !served.includes(m)).map((m) => [`${m} ${path}`, { kind: 'none' }]),
  ),
);
