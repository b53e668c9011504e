/**
 * Response schemas of the network API (TypeBox), for the document (`/openapi/network.json`):
 * the network, subnet, port, trunk, router and floating IP as Neutron shows them (the Neutron
 * API reference's attributes with the `provider`, `external-net`, `binding`, `trunk-details`,
 * `ext-gw-mode` and `fip-port-details` extensions; ./render.ts, routes-routers.ts and
 * routes-floatingips.ts write them), each in its wrapper (`{"network": {...}}`), and their collections.
 *
 * Attributes the caller may not read are left out, as Neutron's policy engine does (provider
 * attributes and bindings for admins only), so those are optional; every other attribute is
 * required. The wire format is fixed: `additionalProperties: false`
 * (test/api/ops/openapi-responses.test.ts checks real answers against them). `fields` in a query
 * shows a chosen few, which these schemas do not describe.
 */
import { Type, type TObject } from '@sinclair/typebox';

const Str = Type.String();
const StrOrNull = Type.Union([Type.String(), Type.Null()]);
const Dict = Type.Object({}, { additionalProperties: true });
/** Neutron's time: ISO 8601 in seconds with `Z`. */
const Time = Type.String({ description: 'ISO 8601, seconds, Z' });
const strict = { additionalProperties: false } as const;

/** The standard attributes of a Neutron resource. */
const standard = {
  id: Str,
  name: Str,
  tenant_id: Str,
  project_id: Str,
  description: Str,
  tags: Type.Array(Str),
  created_at: Time,
  updated_at: Time,
  revision_number: Type.Integer(),
};

/** A network. */
export const NetworkObject = Type.Object(
  {
    ...standard,
    admin_state_up: Type.Boolean(),
    status: Str,
    mtu: Type.Integer(),
    shared: Type.Boolean(),
    subnets: Type.Array(Str),
    availability_zone_hints: Type.Array(Str),
    availability_zones: Type.Array(Str),
    ipv4_address_scope: StrOrNull,
    ipv6_address_scope: StrOrNull,
    'router:external': Type.Boolean(),
    l2_adjacency: Type.Boolean(),
    'provider:network_type': Type.Optional(Str),
    'provider:physical_network': Type.Optional(StrOrNull),
    'provider:segmentation_id': Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
  },
  strict,
);

/** A sub-port of a trunk (`trunk_details.sub_ports`). */
const SubPort = Type.Object({ segmentation_id: Type.Integer(), segmentation_type: Str, port_id: Str, mac_address: Str }, strict);

/** A port. */
export const PortObject = Type.Object(
  {
    ...standard,
    network_id: Str,
    mac_address: Str,
    admin_state_up: Type.Boolean(),
    status: Str,
    device_owner: Str,
    device_id: Str,
    fixed_ips: Type.Array(Type.Object({ subnet_id: Str, ip_address: Str }, strict)),
    allowed_address_pairs: Type.Array(Dict),
    extra_dhcp_opts: Type.Array(Dict),
    security_groups: Type.Array(Str),
    'binding:vnic_type': Str,
    'binding:host_id': Type.Optional(Str),
    'binding:profile': Type.Optional(Dict),
    'binding:vif_type': Type.Optional(Str),
    'binding:vif_details': Type.Optional(Dict),
    trunk_details: Type.Optional(Type.Object({ trunk_id: Str, sub_ports: Type.Array(SubPort) }, strict)),
  },
  strict,
);

/** A subnet (esi serves no IPv6 modes, subnet pools, segments or service types: their neutral values). */
export const SubnetObject = Type.Object(
  {
    ...standard,
    network_id: Str,
    ip_version: Type.Union([Type.Literal(4), Type.Literal(6)]),
    cidr: Str,
    gateway_ip: StrOrNull,
    allocation_pools: Type.Array(Type.Object({ start: Str, end: Str }, strict)),
    enable_dhcp: Type.Boolean(),
    dns_nameservers: Type.Array(Str),
    host_routes: Type.Array(Type.Object({ destination: Str, nexthop: Str }, strict)),
    ipv6_address_mode: Type.Null(),
    ipv6_ra_mode: Type.Null(),
    subnetpool_id: Type.Null(),
    segment_id: Type.Null(),
    service_types: Type.Array(Str),
  },
  strict,
);

/** A trunk: its parent port and its sub-ports (VLAN ids). */
export const TrunkObject = Type.Object(
  {
    ...standard,
    port_id: Str,
    admin_state_up: Type.Boolean(),
    status: Str,
    sub_ports: Type.Array(Type.Object({ port_id: Str, segmentation_type: Str, segmentation_id: Type.Integer() }, strict)),
  },
  strict,
);

/** A router: its external gateway (null without one); esi has no extra routes or zones. */
export const RouterObject = Type.Object(
  {
    ...standard,
    admin_state_up: Type.Boolean(),
    status: Str,
    external_gateway_info: Type.Union([
      Type.Object(
        {
          network_id: Str,
          enable_snat: Type.Boolean(),
          external_fixed_ips: Type.Array(Type.Object({ subnet_id: Str, ip_address: Str }, strict)),
        },
        strict,
      ),
      Type.Null(),
    ]),
    routes: Type.Array(Dict),
    availability_zone_hints: Type.Array(Str),
    availability_zones: Type.Array(Str),
  },
  strict,
);

/** A port forwarding as a floating IP shows it (one-port forwards only name their ports). */
const ForwardInFip = Type.Object(
  {
    id: Str,
    internal_ip_address: Str,
    protocol: Str,
    internal_port: Type.Optional(Type.Integer()),
    external_port: Type.Optional(Type.Integer()),
    internal_port_id: Str,
  },
  strict,
);

/** A floating IP (`fip-port-details`: its port's summary, null when not associated). */
export const FloatingIpObject = Type.Object(
  {
    id: Str,
    tenant_id: Str,
    project_id: Str,
    floating_ip_address: Str,
    floating_network_id: Str,
    router_id: StrOrNull,
    port_id: StrOrNull,
    fixed_ip_address: StrOrNull,
    status: Str,
    description: Str,
    port_details: Type.Union([
      Type.Object(
        { name: Str, network_id: Str, mac_address: Str, admin_state_up: Type.Boolean(), status: Str, device_id: Str, device_owner: Str },
        strict,
      ),
      Type.Null(),
    ]),
    tags: Type.Array(Str),
    created_at: Time,
    updated_at: Time,
    revision_number: Type.Integer(),
    port_forwardings: Type.Array(ForwardInFip),
  },
  strict,
);

/** `{"<resource>": object}`: the answer of show, create and update. */
function wrapped(resource: string, object: TObject): TObject {
  return Type.Object({ [resource]: object }, strict);
}

/** `{"<collection>": [...], "<collection>_links"?: [{rel, href}]}`: the answer of a list. */
function listOf(collection: string, object: TObject): TObject {
  const link = Type.Object({ rel: Str, href: Str }, strict);
  return Type.Object({ [collection]: Type.Array(object), [`${collection}_links`]: Type.Optional(Type.Array(link)) }, strict);
}

/** The answers of the network collection: one network, a list. */
export const NETWORK_RESPONSES = { one: wrapped('network', NetworkObject), list: listOf('networks', NetworkObject) };

/** The answers of the port collection: one port, a list. */
export const PORT_RESPONSES = { one: wrapped('port', PortObject), list: listOf('ports', PortObject) };

/** The answers of the subnet collection. */
export const SUBNET_RESPONSES = { one: wrapped('subnet', SubnetObject), list: listOf('subnets', SubnetObject) };

/** The answers of the trunk collection. */
export const TRUNK_RESPONSES = { one: wrapped('trunk', TrunkObject), list: listOf('trunks', TrunkObject) };

/** The answers of the router collection. */
export const ROUTER_RESPONSES = { one: wrapped('router', RouterObject), list: listOf('routers', RouterObject) };

/** The answers of the floating IP collection. */
export const FLOATINGIP_RESPONSES = { one: wrapped('floatingip', FloatingIpObject), list: listOf('floatingips', FloatingIpObject) };
