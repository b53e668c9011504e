/**
 * esi's default policy, part 1: the baremetal (Ironic) rules — nodes, ports, drivers,
 * conductors, allocations, and esi's node additions. Merged into `DEFAULT_RULES` by
 * `./defaults.ts`, whose module documentation lists the targets each service supplies.
 */

/** Ironic check strings shared by several rules (kept as strings so rules read plainly). */
const ADMIN = 'rule:is_admin';
const ADMIN_OBSERVER = 'rule:is_admin or rule:is_observer';
const ADMIN_OWNER = 'rule:is_admin or rule:is_node_owner';
const ADMIN_OWNER_LESSEE = 'rule:is_admin or rule:is_node_owner or rule:is_node_lessee';
const ADMIN_OBSERVER_OWNER = 'rule:is_admin or rule:is_observer or rule:is_node_owner';
const NODE_GET = 'rule:is_admin or rule:is_observer or rule:is_node_owner or rule:is_node_lessee';

/** The baremetal rules. */
export const BAREMETAL_RULES: Readonly<Record<string, string>> = Object.freeze({
  // --- Ironic base rules. Source: Ironic 21.4 `ironic/common/policy.py`
  // (https://opendev.org/openstack/ironic) and ESI's etc/ironic/policy.yaml.sample
  // (https://github.com/CCI-MOC/esi). is_admin is the legacy rule that stock Ironic 21.4
  // (enforce_new_defaults=False) honours: role admin in any scope.
  is_admin: 'role:admin',
  is_observer: 'role:baremetal_observer or (role:reader and system_scope:all)',
  is_node_owner: 'project_id:%(node.owner)s',
  is_node_lessee: 'project_id:%(node.lessee)s',
  is_allocation_owner: 'project_id:%(allocation.owner)s',
  default: 'rule:is_admin',

  // --- Secrets are never shown, whoever asks. Source: Ironic legacy rules show_password and
  // show_instance_secrets (values are masked as "******").
  show_password: '!',
  show_instance_secrets: '!',

  // --- Nodes: visibility and lists. Source: ESI sample; list is open because the API filters
  // the list to owned/leased nodes (Ironic's `check_list_policy`).
  'baremetal:node:get': NODE_GET,
  'baremetal:node:list': '',
  'baremetal:node:list_all': ADMIN_OBSERVER,
  'baremetal:node:create': ADMIN,
  'baremetal:node:delete': ADMIN,

  // --- Node field redaction. Source: Ironic 21.4 (`policy.py`, `node_sanitize`): lessees fail
  // these and see redacted values; owners pass.
  'baremetal:node:get:filter_threshold': ADMIN_OBSERVER,
  'baremetal:node:get:driver_info': ADMIN_OBSERVER_OWNER,
  'baremetal:node:get:driver_internal_info': ADMIN_OBSERVER_OWNER,
  'baremetal:node:get:last_error': ADMIN_OBSERVER_OWNER,
  'baremetal:node:get:reservation': ADMIN_OBSERVER_OWNER,

  // --- Node PATCH, one rule per field family (Ironic 21.4 `_authorize_patch_and_get_node`).
  // Source: ESI sample for update, update_extra, update_instance_info; the per-field rules follow
  // Ironic 21.4's owner-only rules (owner member or owner admin), with owner change reserved to
  // the admin. esi also gives the owner network_data and retired (Ironic: owner member);
  // conductor_group and chassis are admin-only.
  'baremetal:node:update': ADMIN_OWNER,
  'baremetal:node:update_extra': ADMIN_OWNER_LESSEE,
  'baremetal:node:update_instance_info': ADMIN_OWNER_LESSEE,
  'baremetal:node:update:driver_info': ADMIN_OWNER,
  'baremetal:node:update:properties': ADMIN_OWNER,
  'baremetal:node:update:lessee': ADMIN_OWNER,
  'baremetal:node:update:name': ADMIN_OWNER,
  'baremetal:node:update:instance_uuid': ADMIN_OWNER,
  'baremetal:node:update:driver_interfaces': ADMIN_OWNER,
  'baremetal:node:update:network_data': ADMIN_OWNER,
  'baremetal:node:update:retired': ADMIN_OWNER,
  'baremetal:node:update:owner': ADMIN,
  'baremetal:node:update:conductor_group': ADMIN,
  'baremetal:node:update:chassis_uuid': ADMIN,
  'baremetal:node:disable_cleaning': ADMIN,
  // Added by the inventory work. Source: Ironic 21.4 (`policy.py`): changing the owner of an
  // active node (else 409) and changing the shard are system-admin rules; here admin.
  'baremetal:node:update_owner_provisioned': ADMIN,
  'baremetal:node:update:shard': ADMIN,

  // --- Node actions. Source: ESI sample (validate, maintenance, power, provision, console, VIFs
  // for owner and lessee). get_states/traits:list/bios:get follow node get (Ironic 21.4: readers
  // of owner or lessee). NMI and traits writes: admin or owner (docs/architecture.md: the owner has
  // full control of its nodes). Boot device: admin, owner and lessee — ESI's design lets a lessee
  // bring its own provisioning, "set boot device of a leased node (PXE or disk)" (seed 000), so it
  // can network-boot its node from its own DHCP/TFTP on its own network (docs/network-boot.md).
  'baremetal:node:validate': ADMIN_OWNER_LESSEE,
  'baremetal:node:set_maintenance': ADMIN_OWNER_LESSEE,
  'baremetal:node:clear_maintenance': ADMIN_OWNER_LESSEE,
  'baremetal:node:set_power_state': ADMIN_OWNER_LESSEE,
  'baremetal:node:set_provision_state': ADMIN_OWNER_LESSEE,
  'baremetal:node:get_states': NODE_GET,
  'baremetal:node:get_boot_device': ADMIN_OWNER_LESSEE,
  'baremetal:node:set_boot_device': ADMIN_OWNER_LESSEE,
  'baremetal:node:inject_nmi': ADMIN_OWNER,
  // Indicators (LEDs). Source: Ironic 21.4 `policy.py`: get_indicator_state is
  // SYSTEM_OR_PROJECT_READER (owner and lessee readers: as node get), set_indicator_state is
  // SYSTEM_MEMBER_OR_OWNER_MEMBER (owner, not lessee).
  'baremetal:node:get_indicator_state': NODE_GET,
  'baremetal:node:set_indicator_state': ADMIN_OWNER,
  'baremetal:node:get_console': ADMIN_OWNER_LESSEE,
  'baremetal:node:set_console_state': ADMIN_OWNER_LESSEE,
  'baremetal:node:vif:list': ADMIN_OWNER_LESSEE,
  'baremetal:node:vif:attach': ADMIN_OWNER_LESSEE,
  'baremetal:node:vif:detach': ADMIN_OWNER_LESSEE,
  // esi addition: capture an image of the node's disk (ESI's design document, "Create image from a
  // leased, provisioned node": a lessee may; docs/provisioning.md).
  'baremetal:node:capture': ADMIN_OWNER_LESSEE,
  'baremetal:node:traits:list': NODE_GET,
  'baremetal:node:traits:set': ADMIN_OWNER,
  'baremetal:node:traits:delete': ADMIN_OWNER,
  'baremetal:node:bios:get': NODE_GET,
  // Issue 6 (redfish): setting the target RAID configuration is the owner's (Ironic 21.4:
  // owner member, not the lessee); here admin or owner.
  'baremetal:node:set_raid_state': ADMIN_OWNER,
  // Ironic 21.4: set_boot_mode follows set_power_state (a lessee member may).
  'baremetal:node:set_boot_mode': ADMIN_OWNER_LESSEE,
  'baremetal:node:history:get': ADMIN_OBSERVER_OWNER,
  'baremetal:node:inventory:get': ADMIN_OBSERVER_OWNER,
  'baremetal:node:vendor_passthru': ADMIN,

  // --- Agent (ramdisk) lookup and heartbeat: public routes, the agent has no token. Source:
  // Ironic 21.4 empty rules for ipa_lookup / ipa_heartbeat (`policy.py`).
  'baremetal:driver:ipa_lookup': '',
  'baremetal:node:ipa_heartbeat': '',

  // --- Ports and portgroups, judged by their node's owner/lessee (target node.owner,
  // node.lessee). Source: ESI sample (get, update incl. lessee); create/delete admin or owner
  // as Ironic 21.4's owner groups. Portgroups mirror ports.
  'baremetal:port:get': NODE_GET,
  'baremetal:port:list': '',
  'baremetal:port:list_all': ADMIN_OBSERVER,
  'baremetal:port:create': ADMIN_OWNER,
  'baremetal:port:update': ADMIN_OWNER_LESSEE,
  // The wiring and hardware facts of a port are infrastructure: the owner's and the admin's,
  // whatever the node's lessee may change in its other fields (issue 14: the ESI sample's
  // lessee update let a lessee re-cable the node it leases). `node_uuid` also needs
  // `baremetal:port:create` on the new node.
  'baremetal:port:update:local_link_connection': ADMIN_OWNER,
  'baremetal:port:update:physical_network': ADMIN_OWNER,
  'baremetal:port:update:pxe_enabled': ADMIN_OWNER,
  'baremetal:port:update:node_uuid': ADMIN_OWNER,
  'baremetal:port:update:portgroup_uuid': ADMIN_OWNER,
  'baremetal:port:update:address': ADMIN_OWNER,
  'baremetal:port:update:is_smartnic': ADMIN_OWNER,
  'baremetal:port:delete': ADMIN_OWNER,
  'baremetal:portgroup:get': NODE_GET,
  'baremetal:portgroup:list': '',
  'baremetal:portgroup:list_all': ADMIN_OBSERVER,
  'baremetal:portgroup:create': ADMIN_OWNER,
  'baremetal:portgroup:update': ADMIN_OWNER_LESSEE,
  'baremetal:portgroup:delete': ADMIN_OWNER,
  // esi addition (issue 18), as for ports' wiring (issue 14): the bond's wiring — its MAC, mode,
  // bonding properties, standalone ports and node — is the owner's and the admin's, whatever
  // else of it the node's lessee may change.
  'baremetal:portgroup:update:address': ADMIN_OWNER,
  'baremetal:portgroup:update:mode': ADMIN_OWNER,
  'baremetal:portgroup:update:properties': ADMIN_OWNER,
  'baremetal:portgroup:update:standalone_ports_supported': ADMIN_OWNER,
  'baremetal:portgroup:update:node_uuid': ADMIN_OWNER,

  // --- Volume connectors and targets (issue 18), judged by their node like ports. Source: Ironic
  // 21.4 (`policy.py`): get = readers of owner or lessee; list filtered, list_all = system reader;
  // create and delete = owner or lessee admins/managers; update = owner member or lessee admin;
  // here admin, owner and lessee (ESI's `esi node volume attach` is the lessee's). Target
  // properties (storage connection details) = system reader or admin; others see a notice.
  'baremetal:volume:get': NODE_GET,
  'baremetal:volume:list': '',
  'baremetal:volume:list_all': ADMIN_OBSERVER,
  'baremetal:volume:create': ADMIN_OWNER_LESSEE,
  'baremetal:volume:update': ADMIN_OWNER_LESSEE,
  'baremetal:volume:delete': ADMIN_OWNER_LESSEE,
  'baremetal:volume:view_target_properties': ADMIN_OBSERVER,

  // --- System-level resources: readable by admin and observers. Source: Ironic 21.4 (system
  // reader), with admin in any scope as above.
  'baremetal:driver:get': ADMIN_OBSERVER,
  'baremetal:driver:get_properties': ADMIN_OBSERVER,
  'baremetal:conductor:get': ADMIN_OBSERVER,
  'baremetal:chassis:get': ADMIN_OBSERVER,
  // Chassis writes (issue 18). Source: Ironic 21.4: create and delete system admin, update
  // system member; here admin.
  'baremetal:chassis:create': ADMIN,
  'baremetal:chassis:update': ADMIN,
  'baremetal:chassis:delete': ADMIN,

  // --- Issue 18: RAID logical disk properties, driver vendor passthru, deploy templates and
  // shards. Source: Ironic 21.4 (`policy.py`): the properties, template reads and shards are for
  // system readers (legacy rule admin or observer), vendor passthru and template writes for
  // system admins (legacy rule admin); here admin and observers / admin, as the driver rules above.
  'baremetal:driver:get_raid_logical_disk_properties': ADMIN_OBSERVER,
  'baremetal:driver:vendor_passthru': ADMIN,
  'baremetal:deploy_template:get': ADMIN_OBSERVER,
  'baremetal:deploy_template:create': ADMIN,
  'baremetal:deploy_template:update': ADMIN,
  'baremetal:deploy_template:delete': ADMIN,
  'baremetal:shards:get': ADMIN_OBSERVER,
  // Source: Ironic 21.4 (`policy.py`): `baremetal:events:post` is for the service role and
  // system admins (Neutron's notifier); esi has no separate service role, so admins.
  'baremetal:events:post': ADMIN,

  // --- Allocations. Source: Ironic 21.4 (`policy.py`): get = system reader or allocation
  // owner; list open (the API filters by allocation owner), list_all = system reader; create =
  // any member (esi: or its owner / lessee roles); candidates are limited to nodes the project
  // owns or leases and the owner is forced to the caller's project; naming another owner
  // (create_restricted) is admin-only; update/delete = admin or the allocation's owner.
  'baremetal:allocation:get': 'rule:is_admin or rule:is_observer or rule:is_allocation_owner',
  'baremetal:allocation:list': '',
  'baremetal:allocation:list_all': ADMIN_OBSERVER,
  'baremetal:allocation:create': 'rule:is_admin or role:member or rule:is_owner or rule:is_lessee',
  'baremetal:allocation:create_restricted': ADMIN,
  'baremetal:allocation:update': 'rule:is_admin or rule:is_allocation_owner',
  'baremetal:allocation:delete': 'rule:is_admin or rule:is_allocation_owner',

  // esi addition (tenant isolation): `adopt` turns whatever is on a node's disk
  // into an instance; the owner's (and admins'), not a lessee's, who could otherwise adopt the
  // disk a previous tenant left and read it through rescue or capture. Provision verbs that skip
  // the wipe between tenants (manage while cleaning, clean while deleting, abort of an automated
  // clean) need Ironic's `baremetal:node:disable_cleaning` (admin).
  'esi:node:provision:adopt': ADMIN_OWNER,
});
