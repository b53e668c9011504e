/**
 * What each Neutron collection may be listed by (networks, subnets, ports, trunks, routers,
 * floating IPs and their port forwardings, RBAC policies): its table, the columns a query may filter and
 * sort on, the rows a project may see (its own, and networks shared with it by RBAC), and the
 * filters that are not plain columns (`shared`, `fixed_ip_address`, `fixed_ip_subnet`,
 * `external_port`, `external_port_range`). Read by
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

/** Floating IPs, visible to their project (no name; the association columns are nullable, so not sortable). */
export const FLOATINGIP_SPEC: ListSpec = {
  table: 'floatingips',
  columns: new Set([
    'id',
    'description',
    'project_id',
    'revision_number',
    'floating_ip_address',
    'floating_network_id',
    'router_id',
    'fixed_port_id',
    'fixed_ip_address',
    'status',
  ]),
  sortable: new Set([
    'id',
    'description',
    'project_id',
    'created_at',
    'updated_at',
    'revision_number',
    'floating_ip_address',
    'floating_network_id',
    'status',
  ]),
  visible: (eb, p) => eb('floatingips.project_id', '=', p),
};

/** One port (`N`) or range (`N:M`) as stored start and end; anything else matches nothing. */
function portSpan(v: string | number | boolean | null): [number, number] | null {
  const m = /^(\d{1,5})(?::(\d{1,5}))?$/.exec(String(v));
  return m ? [Number(m[1]), Number(m[2] ?? m[1])] : null;
}

/**
 * Port forwardings, listed per floating IP (filter `floatingip_id`; the floating IP's
 * visibility is checked by the caller). `external_port` and `external_port_range` match the
 * stored external range.
 */
export const PORT_FORWARDING_SPEC: ListSpec = {
  table: 'port_forwardings',
  columns: new Set(['id', 'floatingip_id', 'protocol', 'internal_port_id', 'description']),
  sortable: new Set(['id', 'protocol', 'internal_port_id', 'external_port_start', 'description']),
  visible: () => sql<boolean>`1 = 1`,
  special: Object.fromEntries(
    ['external_port', 'external_port_range'].map((name) => [
      name,
      (eb: any, values: readonly (string | number | boolean | null)[]) => {
        const spans = values.map(portSpan).filter((x): x is [number, number] => x !== null);
        if (spans.length === 0) return sql<boolean>`1 = 0`;
        return eb.or(
          spans.map(([a, b]) =>
            eb.and([eb('port_forwardings.external_port_start', '=', a), eb('port_forwardings.external_port_end', '=', b)]),
          ),
        );
      },
    ]),
  ),
};

/** RBAC policies, visible to their project. */
export const RBAC_SPEC: ListSpec = {
  table: 'network_rbac',
  columns: new Set(['id', 'project_id', 'object_type', 'object_id', 'action', 'target_tenant']),
  sortable: new Set(['id', 'project_id', 'object_type', 'object_id', 'action', 'target_tenant']),
  visible: (eb, p) => eb('network_rbac.project_id', '=', p),
};
