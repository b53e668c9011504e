/**
 * What each Neutron collection may be listed by (networks, subnets, ports, trunks, routers, RBAC
 * policies): its table, the columns a query may filter and
 * sort on, the rows a project may see (its own, and networks shared with it by RBAC), and the
 * filters that are not plain columns (`shared`, `fixed_ip_address`, `fixed_ip_subnet`). Read by
 * `listRows` (./list.ts) for `NeutronQueries`' list calls. Filters and sort keys follow the
 * Neutron API reference (https://docs.openstack.org/api-ref/network/v2/).
 */
import { sql } from 'kysely';
import { WILDCARD } from '../../domain/networking/model.ts';
import type { ListSpec } from './list.ts';

const COMMON = ['id', 'name', 'description', 'project_id', 'created_at', 'updated_at', 'revision_number'];

/** Networks a project may see: its own, and those shared with it (or with everyone) by RBAC. */
function sharedWith(eb: any, projectId: string) {
  return eb(
    'networks.id',
    'in',
    eb
      .selectFrom('network_rbac')
      .select('object_id')
      .where('action', '=', 'access_as_shared')
      .where('target_tenant', 'in', [projectId, WILDCARD]),
  );
}

/** Networks (`GET /v2.0/networks`); external ones (`router:external`) are visible to every project. */
export const NETWORK_SPEC: ListSpec = {
  table: 'networks',
  columns: new Set([...COMMON, 'admin_state_up', 'mtu', 'network_type', 'physical_network', 'segmentation_id', 'router_external']),
  sortable: new Set([...COMMON, 'admin_state_up', 'mtu', 'network_type', 'physical_network']),
  visible: (eb, p) => eb.or([eb('networks.project_id', '=', p), sharedWith(eb, p), eb('networks.router_external', '=', 1)]),
  special: {
    shared: (eb, values, q) => {
      const targets = q.visibleTo === null ? [WILDCARD] : [q.visibleTo, WILDCARD];
      const isShared = eb(
        'networks.id',
        'in',
        eb.selectFrom('network_rbac').select('object_id').where('action', '=', 'access_as_shared').where('target_tenant', 'in', targets),
      );
      const wants = new Set(values.map((v) => v === true || v === 'true' || v === 'True'));
      if (wants.size === 2) return sql<boolean>`1 = 1`;
      return wants.has(true) ? isShared : eb.not(isShared);
    },
  },
};

/** Subnets, visible with their network (those of external networks to every project). */
export const SUBNET_SPEC: ListSpec = {
  table: 'network_subnets',
  columns: new Set([...COMMON, 'network_id', 'ip_version', 'cidr', 'gateway_ip', 'enable_dhcp']),
  sortable: new Set([...COMMON, 'network_id', 'ip_version', 'cidr', 'enable_dhcp']),
  visible: (eb, p) =>
    eb.or([
      eb('network_subnets.project_id', '=', p),
      eb('network_subnets.network_id', 'in', eb.selectFrom('networks').select('id').where('project_id', '=', p)),
      eb(
        'network_subnets.network_id',
        'in',
        eb
          .selectFrom('network_rbac')
          .select('object_id')
          .where('action', '=', 'access_as_shared')
          .where('target_tenant', 'in', [p, WILDCARD]),
      ),
      eb('network_subnets.network_id', 'in', eb.selectFrom('networks').select('id').where('router_external', '=', 1)),
    ]),
};

/** Ports, visible to their project and the network's. */
export const PORT_SPEC: ListSpec = {
  table: 'network_ports',
  columns: new Set([
    ...COMMON,
    'network_id',
    'mac_address',
    'admin_state_up',
    'status',
    'device_owner',
    'device_id',
    'binding_host_id',
    'binding_vnic_type',
  ]),
  sortable: new Set([...COMMON, 'network_id', 'mac_address', 'admin_state_up', 'status', 'device_owner', 'device_id']),
  visible: (eb, p) =>
    eb.or([
      eb('network_ports.project_id', '=', p),
      eb('network_ports.network_id', 'in', eb.selectFrom('networks').select('id').where('project_id', '=', p)),
    ]),
  special: {
    fixed_ip_address: (eb, values) =>
      eb('network_ports.id', 'in', eb.selectFrom('network_ip_allocations').select('port_id').where('ip_address', 'in', values.map(String))),
    fixed_ip_subnet: (eb, values) =>
      eb('network_ports.id', 'in', eb.selectFrom('network_ip_allocations').select('port_id').where('subnet_id', 'in', values.map(String))),
  },
};

/** Trunks, visible to their project. */
export const TRUNK_SPEC: ListSpec = {
  table: 'network_trunks',
  columns: new Set([...COMMON, 'port_id', 'admin_state_up', 'status']),
  sortable: new Set([...COMMON, 'port_id', 'admin_state_up', 'status']),
  visible: (eb, p) => eb('network_trunks.project_id', '=', p),
};

/** Routers, visible to their project. */
export const ROUTER_SPEC: ListSpec = {
  table: 'routers',
  columns: new Set([...COMMON, 'admin_state_up', 'status']),
  sortable: new Set([...COMMON, 'admin_state_up', 'status']),
  visible: (eb, p) => eb('routers.project_id', '=', p),
};

/** RBAC policies, visible to their project. */
export const RBAC_SPEC: ListSpec = {
  table: 'network_rbac',
  columns: new Set(['id', 'project_id', 'object_type', 'object_id', 'action', 'target_tenant']),
  sortable: new Set(['id', 'project_id', 'object_type', 'object_id', 'action', 'target_tenant']),
  visible: (eb, p) => eb('network_rbac.project_id', '=', p),
};
