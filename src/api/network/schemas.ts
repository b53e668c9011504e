/**
 * Request body schemas of the Neutron collections (TypeBox): the attributes each resource
 * accepts on create (`POST /v2.0/<collection>`) and update (`PUT /v2.0/<collection>/{id}`),
 * inside the resource's wrapper (`{"network": {...}}`). ./body.ts checks bodies against them
 * (Neutron's messages on refusal) and the document (`/openapi/network.json`) shows them.
 *
 * They mirror neutron-lib's `RESOURCE_ATTRIBUTE_MAP` (api/definitions/*.py): the attributes
 * `allow_post` / `allow_put` admit, each by the shape its converter accepts (Neutron's booleans
 * are also `"true"`/`"false"`/`0`/`1`, its integers also strings of digits). Values are checked
 * here for shape only; meaning (UUIDs, CIDRs, MACs, ranges, what esi does not support) is the
 * domain's job (src/domain/networking), with Neutron's messages.
 */
import { Type, type TObject, type TSchema } from '@sinclair/typebox';
import {
  DESCRIPTION_MAX,
  FLOATINGIP_NOT_SETTABLE,
  NAME_MAX,
  NETWORK_NOT_SETTABLE,
  PORT_NOT_SETTABLE,
  RBAC_NOT_SETTABLE,
  ROUTER_NOT_SETTABLE,
  SUBNET_NOT_SETTABLE,
  TRUNK_NOT_SETTABLE,
} from '../../domain/networking/index.ts';

const Str = Type.String();
const StrOrNull = Type.Union([Type.String(), Type.Null()]);
/** The description of an attribute that holds a resource id; ./body.ts words a refusal of it so. */
export const UUID_DESCRIPTION = 'a UUID';
/** A resource id (a UUID; checked by the domain, which also finds the resource). */
const Id = Type.String({ description: UUID_DESCRIPTION });
const IdOrNull = Type.Union([Id, Type.Null()]);
const NameAttr = Type.Union([Type.String({ maxLength: NAME_MAX }), Type.Null()]);
const DescriptionAttr = Type.Union([Type.String({ maxLength: DESCRIPTION_MAX }), Type.Null()]);
/** Neutron's `convert_to_boolean`: a boolean, `"true"`/`"false"`/`"1"`/`"0"` (any case), `1`/`0`. */
const BoolAttr = Type.Union([Type.Boolean(), Type.String(), Type.Literal(0), Type.Literal(1)]);
/** Neutron's `convert_to_int`: an integer or a string of digits; null for "the default". */
const IntAttr = Type.Union([Type.Integer(), Type.String({ pattern: '^-?\\d+$' }), Type.Null()]);
const Dict = Type.Object({}, { additionalProperties: true });
/** An attribute esi does not support: absent, null or empty (the domain says why otherwise). */
const Unsupported = (what: string): TSchema => Type.Unknown({ description: `not supported by esi: ${what}` });

/** `fixed_ips` of a port and `external_fixed_ips` of a gateway: `[{subnet_id?, ip_address?}]`. */
const FixedIps = Type.Union([
  Type.Array(Type.Object({ subnet_id: Type.Optional(Id), ip_address: Type.Optional(Str) }, { additionalProperties: false })),
  Type.Null(),
]);

const common = { name: Type.Optional(NameAttr), description: Type.Optional(DescriptionAttr) };
const owner = { project_id: Type.Optional(StrOrNull), tenant_id: Type.Optional(StrOrNull) };
const adminState = { admin_state_up: Type.Optional(BoolAttr) };

/** One resource's bodies: its wrapper key, and the attributes of create and update. */
export interface NeutronBodies<C extends TObject = TObject, U extends TObject = TObject> {
  /** The wrapper key (`network`). */
  readonly resource: string;
  /** The attributes `POST` accepts. */
  readonly create: C;
  /** The attributes `PUT` accepts. */
  readonly update: U;
  /** Attributes a body may name but not set (the domain's lists): "Attribute 'x' not allowed in POST". */
  readonly notSettable: { readonly POST: ReadonlySet<string>; readonly PUT: ReadonlySet<string> };
  /** The whole `POST` body, as documented: `{"<resource>": create}`. */
  readonly createBody: TObject;
  /** The whole `PUT` body, as documented: `{"<resource>": update}`. */
  readonly updateBody: TObject;
}

/** A resource's bodies: its attribute schemas, and the wrapped ones the document shows. */
function neutronBodies<C extends TObject, U extends TObject>(
  resource: string,
  notSettable: NeutronBodies['notSettable'],
  create: C,
  update: U,
): NeutronBodies<C, U> {
  const wrap = (s: TObject): TObject => Type.Object({ [resource]: s }, { additionalProperties: false });
  return { resource, notSettable, create, update, createBody: wrap(create), updateBody: wrap(update) };
}

const strict = { additionalProperties: false } as const;

/** `network` (neutron-lib network, provider, external-net, mtu-writable). */
export const NETWORK = neutronBodies(
  'network',
  NETWORK_NOT_SETTABLE,
  Type.Object(
    {
      ...common,
      ...adminState,
      shared: Type.Optional(BoolAttr),
      mtu: Type.Optional(IntAttr),
      'router:external': Type.Optional(BoolAttr),
      ...owner,
      'provider:network_type': Type.Optional(StrOrNull),
      'provider:physical_network': Type.Optional(StrOrNull),
      'provider:segmentation_id': Type.Optional(IntAttr),
    },
    strict,
  ),
  Type.Object(
    {
      ...common,
      ...adminState,
      shared: Type.Optional(BoolAttr),
      mtu: Type.Optional(IntAttr),
      'router:external': Type.Optional(BoolAttr),
      'provider:network_type': Type.Optional(Unsupported('updating provider attributes')),
      'provider:physical_network': Type.Optional(Unsupported('updating provider attributes')),
      'provider:segmentation_id': Type.Optional(Unsupported('updating provider attributes')),
    },
    strict,
  ),
);

const AllocationPools = Type.Union([Type.Array(Type.Object({ start: Str, end: Str }, strict)), Type.Null()]);
const HostRoutes = Type.Union([Type.Array(Type.Object({ destination: Str, nexthop: Str }, strict)), Type.Null()]);
const subnetMutable = {
  ...common,
  gateway_ip: Type.Optional(StrOrNull),
  allocation_pools: Type.Optional(AllocationPools),
  enable_dhcp: Type.Optional(BoolAttr),
  dns_nameservers: Type.Optional(Type.Union([Type.Array(Str), Type.Null()])),
  host_routes: Type.Optional(HostRoutes),
};

/** `subnet` (neutron-lib subnet). */
export const SUBNET = neutronBodies(
  'subnet',
  SUBNET_NOT_SETTABLE,
  Type.Object(
    {
      network_id: Id,
      ...subnetMutable,
      ip_version: Type.Optional(IntAttr),
      cidr: Type.Optional(StrOrNull),
      ...owner,
      ipv6_address_mode: Type.Optional(Unsupported('IPv6 address modes')),
      ipv6_ra_mode: Type.Optional(Unsupported('IPv6 router advertisement modes')),
      subnetpool_id: Type.Optional(Unsupported('subnet pools')),
      use_default_subnetpool: Type.Optional(Unsupported('subnet pools')),
      segment_id: Type.Optional(Unsupported('segments')),
      service_types: Type.Optional(Unsupported('service types')),
    },
    strict,
  ),
  Type.Object(subnetMutable, strict),
);

const portMutable = {
  ...common,
  ...adminState,
  mac_address: Type.Optional(Str),
  fixed_ips: Type.Optional(FixedIps),
  device_owner: Type.Optional(StrOrNull),
  device_id: Type.Optional(StrOrNull),
  'binding:host_id': Type.Optional(Type.Union([Str, Type.Null()], { description: 'esi binds by VIF attach: empty or null only' })),
  'binding:profile': Type.Optional(Type.Union([Dict, Type.Null()], { description: 'esi binds by VIF attach: empty or null only' })),
  'binding:vnic_type': Type.Optional(Type.String({ description: 'normal or baremetal' })),
};

/** `port` (neutron-lib port, portbindings). */
export const PORT = neutronBodies(
  'port',
  PORT_NOT_SETTABLE,
  Type.Object(
    { network_id: Id, ...portMutable, ...owner, security_groups: Type.Optional(Unsupported('security groups (empty list or null)')) },
    strict,
  ),
  Type.Object(portMutable, strict),
);

const GatewayInfo = Type.Union([
  Type.Object(
    { network_id: Type.Optional(Id), enable_snat: Type.Optional(Type.Boolean()), external_fixed_ips: Type.Optional(FixedIps) },
    strict,
  ),
  Type.Null(),
]);
const routerMutable = {
  ...common,
  ...adminState,
  external_gateway_info: Type.Optional(GatewayInfo),
  routes: Type.Optional(Unsupported('extra routes (empty list or null)')),
  distributed: Type.Optional(Unsupported('distributed routers (false or null)')),
  ha: Type.Optional(Unsupported('HA routers (false or null)')),
};

/** `router` (neutron-lib l3, ext-gw-mode, extraroute, dvr, l3-ha). */
export const ROUTER = neutronBodies(
  'router',
  ROUTER_NOT_SETTABLE,
  Type.Object(
    {
      ...routerMutable,
      ...owner,
      availability_zone_hints: Type.Optional(Unsupported('availability zones (empty list or null)')),
      flavor_id: Type.Optional(Unsupported('router flavors (null)')),
    },
    strict,
  ),
  Type.Object(routerMutable, strict),
);

/** `floatingip` (neutron-lib l3 floating IPs, fip-port-details). */
export const FLOATINGIP = neutronBodies(
  'floatingip',
  FLOATINGIP_NOT_SETTABLE,
  Type.Object(
    {
      floating_network_id: Id,
      floating_ip_address: Type.Optional(StrOrNull),
      subnet_id: Type.Optional(IdOrNull),
      port_id: Type.Optional(IdOrNull),
      fixed_ip_address: Type.Optional(StrOrNull),
      description: Type.Optional(DescriptionAttr),
      ...owner,
    },
    strict,
  ),
  Type.Object(
    { port_id: Type.Optional(IdOrNull), fixed_ip_address: Type.Optional(StrOrNull), description: Type.Optional(DescriptionAttr) },
    strict,
  ),
);

/** A sub-port of a trunk: its port, `vlan` (an id in 1–4094) or `inherit`. */
const SubPort = Type.Object(
  { port_id: Id, segmentation_type: Type.Optional(Str), segmentation_id: Type.Optional(IntAttr) },
  { additionalProperties: true },
);

/** `trunk` (neutron-lib trunk). */
export const TRUNK = neutronBodies(
  'trunk',
  TRUNK_NOT_SETTABLE,
  Type.Object(
    { port_id: Id, ...common, ...adminState, sub_ports: Type.Optional(Type.Union([Type.Array(SubPort), Type.Null()])), ...owner },
    strict,
  ),
  Type.Object({ ...common, ...adminState }, strict),
);

/** `rbac_policy` (neutron-lib rbac). */
export const RBAC_POLICY = neutronBodies(
  'rbac_policy',
  RBAC_NOT_SETTABLE,
  Type.Object(
    {
      object_type: Str,
      object_id: Id,
      action: Str,
      target_tenant: Type.Optional(Str),
      target_project: Type.Optional(Str),
      ...owner,
    },
    strict,
  ),
  Type.Object({ target_tenant: Type.Optional(Str), target_project: Type.Optional(Str) }, strict),
);
