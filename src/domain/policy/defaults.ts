/**
 * The default policy of esi: one flat rule set (oslo.policy language) for all services.
 *
 * Each group cites where its defaults come from. Where esi deviates or fills a gap, the comment
 * says so. Operators override any rule with a YAML file (see `./overrides.ts`).
 *
 * Target keys the services must supply (flat dict, one key per dotted name):
 * - baremetal: `node.owner`, `node.lessee` (nodes, and ports/portgroups via their node),
 *   `allocation.owner`;
 * - lease: `offer.project_id`, `lease.owner_id`, `lease.project_id`, and for console tokens
 *   `node.owner`, `node.lessee`;
 * - identity: `target.project.id`, `target.user.id`, `target.domain.id`, `target.token.user_id`;
 * - network (Neutron names): `project_id`, `network:project_id`, `network:shared`,
 *   `port:network_device`, `rbac:wildcard`.
 * - compute: `flavor.is_public`, `flavor.owner`, `user_id` (key pairs), `project_id` (servers).
 */

/** Ironic check strings shared by several rules (kept as strings so rules read plainly). */
const ADMIN = 'rule:is_admin';
const ADMIN_OBSERVER = 'rule:is_admin or rule:is_observer';
const ADMIN_OWNER = 'rule:is_admin or rule:is_node_owner';
const ADMIN_OWNER_LESSEE = 'rule:is_admin or rule:is_node_owner or rule:is_node_lessee';
const ADMIN_OBSERVER_OWNER = 'rule:is_admin or rule:is_observer or rule:is_node_owner';
const NODE_GET = 'rule:is_admin or rule:is_observer or rule:is_node_owner or rule:is_node_lessee';

/** esi-leap check strings. */
const LEAP_ADMIN = 'rule:is_esi_leap_admin';
const LEAP_ANY_ROLE = 'rule:is_esi_leap_admin or rule:is_owner or rule:is_lessee';
const LEAP_LEASE_PARTY = 'rule:is_esi_leap_admin or rule:is_lease_owner or rule:is_lease_lessee';

/** Keystone check strings. */
const K_ADMIN = 'rule:admin_required';
const K_ADMIN_OR_SELF = 'rule:admin_required or user_id:%(target.user.id)s';
const K_TOKEN = 'rule:service_or_admin or rule:token_subject';

/**
 * Default rules: rule name → rule string. Frozen; `PolicyEngine` merges operator overrides on
 * top. `default` (used for rule names that are not defined) is admin-only.
 */
export const DEFAULT_RULES: Readonly<Record<string, string>> = Object.freeze({
  // --- Ironic base rules. Source: reference/ironic.md §3.1-3.2 and ESI's
  // etc/ironic/policy.yaml.sample (reference/esi-leap.md §4.2). is_admin is the legacy rule
  // that stock Ironic 21.4 (enforce_new_defaults=False) honours: role admin in any scope.
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

  // --- Nodes: visibility and lists. Source: ESI sample (esi-leap.md §4.2); list is open
  // because the API filters the list to owned/leased nodes (ironic.md §3.4).
  'baremetal:node:get': NODE_GET,
  'baremetal:node:list': '',
  'baremetal:node:list_all': ADMIN_OBSERVER,
  'baremetal:node:create': ADMIN,
  'baremetal:node:delete': ADMIN,

  // --- Node field redaction. Source: Ironic 21.4 (ironic.md §3.3-3.4): lessees fail these and
  // see redacted values; owners pass.
  'baremetal:node:get:filter_threshold': ADMIN_OBSERVER,
  'baremetal:node:get:driver_info': ADMIN_OBSERVER_OWNER,
  'baremetal:node:get:driver_internal_info': ADMIN_OBSERVER_OWNER,
  'baremetal:node:get:last_error': ADMIN_OBSERVER_OWNER,
  'baremetal:node:get:reservation': ADMIN_OBSERVER_OWNER,

  // --- Node PATCH, one rule per field family (ironic.md §3.4). Source: ESI sample for update,
  // update_extra, update_instance_info; the per-field rules follow Ironic 21.4's owner-member
  // groups (MOM/MOA), with owner change reserved to the admin. esi also gives the owner
  // network_data and retired (Ironic: owner member); conductor_group and chassis are admin-only.
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
  // Added by the inventory work. Source: Ironic 21.4 (ironic.md §3.3): changing the owner of an
  // active node (else 409) and changing the shard are system-admin rules; here admin.
  'baremetal:node:update_owner_provisioned': ADMIN,
  'baremetal:node:update:shard': ADMIN,

  // --- Node actions. Source: ESI sample (validate, maintenance, power, provision, console, VIFs
  // for owner and lessee). get_states/traits:list/bios:get follow node get (Ironic 21.4: readers
  // of owner or lessee). Boot device, NMI and traits writes: admin or owner (DESIGN.md: the owner
  // has full control of its nodes; the ESI sample leaves boot device admin-only).
  'baremetal:node:validate': ADMIN_OWNER_LESSEE,
  'baremetal:node:set_maintenance': ADMIN_OWNER_LESSEE,
  'baremetal:node:clear_maintenance': ADMIN_OWNER_LESSEE,
  'baremetal:node:set_power_state': ADMIN_OWNER_LESSEE,
  'baremetal:node:set_provision_state': ADMIN_OWNER_LESSEE,
  'baremetal:node:get_states': NODE_GET,
  'baremetal:node:get_boot_device': ADMIN_OWNER,
  'baremetal:node:set_boot_device': ADMIN_OWNER,
  'baremetal:node:inject_nmi': ADMIN_OWNER,
  'baremetal:node:get_console': ADMIN_OWNER_LESSEE,
  'baremetal:node:set_console_state': ADMIN_OWNER_LESSEE,
  'baremetal:node:vif:list': ADMIN_OWNER_LESSEE,
  'baremetal:node:vif:attach': ADMIN_OWNER_LESSEE,
  'baremetal:node:vif:detach': ADMIN_OWNER_LESSEE,
  // esi addition: capture an image of the node's disk (seed 000 "Create image from a leased,
  // provisioned node": a lessee may).
  'baremetal:node:capture': ADMIN_OWNER_LESSEE,
  'baremetal:node:traits:list': NODE_GET,
  'baremetal:node:traits:set': ADMIN_OWNER,
  'baremetal:node:traits:delete': ADMIN_OWNER,
  'baremetal:node:bios:get': NODE_GET,
  // Issue 6 (redfish): setting the target RAID configuration is the owner's (Ironic 21.4:
  // owner member, not the lessee, ironic.md §3.3 MOM); here admin or owner.
  'baremetal:node:set_raid_state': ADMIN_OWNER,
  // Ironic 21.4: set_boot_mode follows set_power_state (M: a lessee may).
  'baremetal:node:set_boot_mode': ADMIN_OWNER_LESSEE,
  'baremetal:node:history:get': ADMIN_OBSERVER_OWNER,
  'baremetal:node:inventory:get': ADMIN_OBSERVER_OWNER,
  'baremetal:node:vendor_passthru': ADMIN,

  // --- Agent (ramdisk) lookup and heartbeat: public routes, the agent has no token. Source:
  // Ironic 21.4 empty rules for ipa_lookup / ipa_heartbeat (ironic.md §3.3).
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

  // --- System-level resources: readable by admin and observers. Source: Ironic 21.4 (system
  // reader), with admin in any scope as above.
  'baremetal:driver:get': ADMIN_OBSERVER,
  'baremetal:driver:get_properties': ADMIN_OBSERVER,
  'baremetal:conductor:get': ADMIN_OBSERVER,
  'baremetal:chassis:get': ADMIN_OBSERVER,

  // --- Allocations. Source: Ironic 21.4 (ironic.md §3.3): get = system reader or allocation
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

  // --- esi-leap base rules. Source: esi-leap esi_leap/common/policy.py (reference/esi-leap.md
  // §4.1). esi-leap calls its admin rule is_admin; here it is is_esi_leap_admin so that it does
  // not clash with Ironic's is_admin.
  is_esi_leap_admin: 'role:admin or role:esi_leap_admin',
  is_owner: 'role:owner or role:esi_leap_owner',
  is_lessee: 'role:lessee or role:esi_leap_lessee',
  is_offer_owner: 'project_id:%(offer.project_id)s',
  is_lease_owner: 'project_id:%(lease.owner_id)s',
  is_lease_lessee: 'project_id:%(lease.project_id)s',

  // --- esi-leap offers, leases, nodes, events. Source: esi-leap policy.py defaults.
  'esi_leap:offer:offer_admin': LEAP_ADMIN,
  'esi_leap:offer:create': 'rule:is_esi_leap_admin or rule:is_owner',
  'esi_leap:offer:get': LEAP_ANY_ROLE,
  'esi_leap:offer:get_all': LEAP_ANY_ROLE,
  'esi_leap:offer:delete': 'rule:is_esi_leap_admin or rule:is_offer_owner',
  'esi_leap:offer:claim': LEAP_ANY_ROLE,
  'esi_leap:lease:lease_admin': LEAP_ADMIN,
  'esi_leap:lease:create': 'rule:is_esi_leap_admin or rule:is_owner',
  'esi_leap:lease:update': LEAP_ADMIN,
  'esi_leap:lease:get': LEAP_LEASE_PARTY,
  'esi_leap:lease:get_all': LEAP_ANY_ROLE,
  'esi_leap:lease:delete': LEAP_LEASE_PARTY,
  'esi_leap:node:node_admin': LEAP_ADMIN,
  'esi_leap:node:get_all': LEAP_ANY_ROLE,
  'esi_leap:event:event_admin': LEAP_ADMIN,
  'esi_leap:event:get_all': LEAP_ANY_ROLE,

  // --- esi-leap console auth tokens. esi-leap has no rule: it requires that the caller can see
  // the node in Ironic with its own token (esi-leap.md §1.7). esi states that directly: the
  // caller must be allowed Ironic's get_console on the node (admin, owner or lessee).
  'esi_leap:console_auth_token:create': 'rule:is_esi_leap_admin or rule:is_node_owner or rule:is_node_lessee',
  'esi_leap:console_auth_token:delete': 'rule:is_esi_leap_admin or rule:is_node_owner or rule:is_node_lessee',
  // esi addition (docs/console.md): who may type at a node's serial console, checked when a console
  // token is issued and when a websocket opens with a Keystone token. Seed 000: lessees get
  // read-only consoles by default; owners and admins read-write.
  'esi:node:console:write': ADMIN_OWNER,
  // esi addition (tenant isolation): `adopt` turns whatever is on a node's disk
  // into an instance; the owner's (and admins'), not a lessee's, who could otherwise adopt the
  // disk a previous tenant left and read it through rescue or capture. Provision verbs that skip
  // the wipe between tenants (manage while cleaning, clean while deleting, abort of an automated
  // clean) need Ironic's `baremetal:node:disable_cleaning` (admin).
  'esi:node:provision:adopt': ADMIN_OWNER,

  // --- esi additions beyond esi-leap (docs/leasing.md "Beyond esi-leap"); no upstream rules exist.
  // Lease requests by hardware: whoever may claim offers may request several at once.
  'esi_leap:lease:request': LEAP_ANY_ROLE,
  // Quotas: set by admins; a project may read its own (targets: quota.project_id).
  'esi_leap:quota:quota_admin': LEAP_ADMIN,
  'esi_leap:quota:get_all': LEAP_ANY_ROLE,
  'esi_leap:quota:get': 'rule:is_esi_leap_admin or project_id:%(quota.project_id)s',
  'esi_leap:quota:set': LEAP_ADMIN,
  'esi_leap:quota:delete': LEAP_ADMIN,
  // Owner lease policies: owners manage their own (targets: lease_policy.project_id).
  'esi_leap:lease_policy:policy_admin': LEAP_ADMIN,
  'esi_leap:lease_policy:get_all': LEAP_ANY_ROLE,
  'esi_leap:lease_policy:get': 'rule:is_esi_leap_admin or project_id:%(lease_policy.project_id)s',
  'esi_leap:lease_policy:create': 'rule:is_esi_leap_admin or rule:is_owner',
  'esi_leap:lease_policy:update': 'rule:is_esi_leap_admin or (rule:is_owner and project_id:%(lease_policy.project_id)s)',
  'esi_leap:lease_policy:delete': 'rule:is_esi_leap_admin or (rule:is_owner and project_id:%(lease_policy.project_id)s)',
  // Webhooks: a project's leasing roles manage its own (targets: webhook.project_id).
  'esi_leap:webhook:webhook_admin': LEAP_ADMIN,
  'esi_leap:webhook:get_all': LEAP_ANY_ROLE,
  'esi_leap:webhook:get': 'rule:is_esi_leap_admin or project_id:%(webhook.project_id)s',
  'esi_leap:webhook:create': 'rule:is_esi_leap_admin or ((rule:is_owner or rule:is_lessee) and project_id:%(webhook.project_id)s)',
  'esi_leap:webhook:update': 'rule:is_esi_leap_admin or ((rule:is_owner or rule:is_lessee) and project_id:%(webhook.project_id)s)',
  'esi_leap:webhook:delete': 'rule:is_esi_leap_admin or ((rule:is_owner or rule:is_lessee) and project_id:%(webhook.project_id)s)',

  // --- Keystone base rules. Source: Keystone's legacy policy (admin_required, service_role,
  // service_or_admin, token_subject); `is_admin:1` is dropped (no such credential in esi).
  admin_required: 'role:admin',
  service_role: 'role:service',
  service_or_admin: 'rule:admin_required or rule:service_role',
  token_subject: 'user_id:%(target.token.user_id)s',

  // --- Keystone identity API. Source: Keystone legacy defaults: admin for management, plus
  // the caller's own project, user, domain and token. /auth/* listings are open (they list
  // only what the token already grants).
  'identity:get_project': 'rule:admin_required or project_id:%(target.project.id)s',
  'identity:list_projects': K_ADMIN,
  'identity:create_project': K_ADMIN,
  'identity:update_project': K_ADMIN,
  'identity:delete_project': K_ADMIN,
  'identity:list_user_projects': K_ADMIN_OR_SELF,
  'identity:get_user': K_ADMIN_OR_SELF,
  'identity:list_users': K_ADMIN,
  'identity:create_user': K_ADMIN,
  'identity:update_user': K_ADMIN,
  'identity:delete_user': K_ADMIN,
  'identity:get_role': K_ADMIN,
  'identity:list_roles': K_ADMIN,
  'identity:create_role': K_ADMIN,
  'identity:delete_role': K_ADMIN,
  'identity:check_grant': K_ADMIN,
  'identity:list_grants': K_ADMIN,
  'identity:create_grant': K_ADMIN,
  'identity:revoke_grant': K_ADMIN,
  'identity:check_system_grant_for_user': K_ADMIN,
  'identity:list_system_grants_for_user': K_ADMIN,
  'identity:create_system_grant_for_user': K_ADMIN,
  'identity:revoke_system_grant_for_user': K_ADMIN,
  'identity:list_role_assignments': K_ADMIN,
  'identity:get_domain': 'rule:admin_required or domain_id:%(target.domain.id)s',
  'identity:list_domains': K_ADMIN,
  'identity:check_token': K_TOKEN,
  'identity:validate_token': K_TOKEN,
  'identity:revoke_token': K_TOKEN,
  'identity:revocation_list': K_TOKEN,
  'identity:get_auth_catalog': '',
  'identity:get_auth_projects': '',
  'identity:get_auth_domains': '',
  'identity:get_auth_system': '',
  'identity:get_application_credential': K_ADMIN_OR_SELF,
  'identity:list_application_credentials': K_ADMIN_OR_SELF,
  'identity:create_application_credential': K_ADMIN_OR_SELF,
  'identity:delete_application_credential': K_ADMIN_OR_SELF,

  // --- Glance image API (added by the image work). Source: Glance's secure-RBAC defaults
  // (glance/policies/image.py, base.py). Targets: image.owner, image.visibility, image.member_id
  // (the caller's project when it is a member of the shared image, else null; see
  // src/domain/images/access.ts) and, for get_images, project_id (the caller's project).
  // esi deviation: Glance's project member is role:member; esi also accepts its owner and lessee
  // roles (which do not imply member), and a project reader is any role on the project.
  'image:context_is_admin': 'role:admin',
  'image:member_role': 'role:member or rule:is_owner or rule:is_lessee',
  'image:owner_member': 'rule:image:member_role and project_id:%(image.owner)s',
  'image:shared_member': 'project_id:%(image.member_id)s',
  'image:get_image':
    "rule:image:context_is_admin or project_id:%(image.owner)s or rule:image:shared_member or 'public':%(image.visibility)s or 'community':%(image.visibility)s",
  'image:get_images': 'rule:image:context_is_admin or project_id:%(project_id)s',
  'image:add_image': 'rule:image:context_is_admin or rule:image:owner_member',
  'image:modify_image': 'rule:image:context_is_admin or rule:image:owner_member',
  'image:delete_image': 'rule:image:context_is_admin or rule:image:owner_member',
  'image:upload_image': 'rule:image:context_is_admin or rule:image:owner_member',
  'image:publicize_image': 'rule:image:context_is_admin',
  'image:communitize_image': 'rule:image:context_is_admin or rule:image:owner_member',
  'image:download_image':
    "rule:image:context_is_admin or (rule:image:member_role and (project_id:%(image.owner)s or rule:image:shared_member or 'public':%(image.visibility)s or 'community':%(image.visibility)s))",
  'image:deactivate': 'rule:image:context_is_admin or rule:image:owner_member',
  'image:reactivate': 'rule:image:context_is_admin or rule:image:owner_member',
  'image:get_members': 'rule:image:context_is_admin or project_id:%(image.owner)s or rule:image:shared_member',
  'image:get_member': 'rule:image:context_is_admin or project_id:%(image.owner)s or rule:image:shared_member',
  'image:add_member': 'rule:image:context_is_admin or rule:image:owner_member',
  'image:delete_member': 'rule:image:context_is_admin or rule:image:owner_member',
  'image:modify_member': 'rule:image:context_is_admin or (rule:image:member_role and rule:image:shared_member)',

  // --- Neutron network API (added by the networking work; docs/networking.md "Policy").
  // Source: Neutron's legacy defaults (neutron/conf/policies/{base,network,subnet,port,trunk,
  // rbac_policy}.py, the rules before secure RBAC), with Neutron's rule names so an operator's
  // Neutron overrides apply. Targets are flat: `project_id` (the resource's project),
  // `network:project_id` (its network's project), `network:shared` (True when the network is
  // shared with the caller, by `shared` or an RBAC entry), `port:network_device` (True for a
  // `network:*` device_owner) and `rbac:wildcard` (True for target `*`). Neutron's `field:`
  // checks are written as literal checks on those keys.
  context_is_admin: 'role:admin',
  context_is_advsvc: 'role:advsvc',
  owner: 'project_id:%(project_id)s',
  admin_or_owner: 'rule:context_is_admin or rule:owner',
  network_owner: 'project_id:%(network:project_id)s',
  admin_or_network_owner: 'rule:context_is_admin or rule:network_owner',
  admin_owner_or_network_owner: 'rule:owner or rule:admin_or_network_owner',
  admin_only: 'rule:context_is_admin',
  regular_user: '',
  shared: "'True':%(network:shared)s",
  network_device: "'True':%(port:network_device)s",
  restrict_wildcard: "(not 'True':%(rbac:wildcard)s) or rule:admin_only",
  create_network: 'rule:regular_user',
  'create_network:shared': 'rule:admin_only',
  'create_network:router:external': 'rule:admin_only',
  'create_network:provider:network_type': 'rule:admin_only',
  'create_network:provider:physical_network': 'rule:admin_only',
  'create_network:provider:segmentation_id': 'rule:admin_only',
  get_network: 'rule:admin_or_owner or rule:shared or rule:context_is_advsvc',
  'get_network:provider:network_type': 'rule:admin_only',
  'get_network:provider:physical_network': 'rule:admin_only',
  'get_network:provider:segmentation_id': 'rule:admin_only',
  update_network: 'rule:admin_or_owner',
  'update_network:shared': 'rule:admin_only',
  delete_network: 'rule:admin_or_owner',
  create_subnet: 'rule:admin_or_network_owner',
  get_subnet: 'rule:admin_or_owner or rule:shared',
  update_subnet: 'rule:admin_or_network_owner',
  delete_subnet: 'rule:admin_or_network_owner',
  create_port: 'rule:regular_user',
  'create_port:device_owner': 'not rule:network_device or rule:context_is_advsvc or rule:admin_or_network_owner',
  'create_port:mac_address': 'rule:context_is_advsvc or rule:admin_or_network_owner',
  'create_port:fixed_ips:ip_address': 'rule:context_is_advsvc or rule:admin_or_network_owner',
  'create_port:fixed_ips:subnet_id': 'rule:context_is_advsvc or rule:admin_or_network_owner or rule:shared',
  'create_port:binding:host_id': 'rule:admin_only',
  'create_port:binding:profile': 'rule:admin_only',
  get_port: 'rule:context_is_advsvc or rule:admin_owner_or_network_owner',
  'get_port:binding:vif_type': 'rule:admin_only',
  'get_port:binding:vif_details': 'rule:admin_only',
  'get_port:binding:host_id': 'rule:admin_only',
  'get_port:binding:profile': 'rule:admin_only',
  update_port: 'rule:admin_or_owner or rule:context_is_advsvc',
  'update_port:device_owner': 'not rule:network_device or rule:context_is_advsvc or rule:admin_or_network_owner',
  'update_port:mac_address': 'rule:admin_only or rule:context_is_advsvc',
  'update_port:fixed_ips:ip_address': 'rule:context_is_advsvc or rule:admin_or_network_owner',
  'update_port:fixed_ips:subnet_id': 'rule:context_is_advsvc or rule:admin_or_network_owner or rule:shared',
  'update_port:binding:host_id': 'rule:admin_only',
  'update_port:binding:profile': 'rule:admin_only',
  delete_port: 'rule:context_is_advsvc or rule:admin_owner_or_network_owner',
  create_trunk: 'rule:regular_user',
  get_trunk: 'rule:admin_or_owner',
  update_trunk: 'rule:admin_or_owner',
  delete_trunk: 'rule:admin_or_owner',
  add_subports: 'rule:admin_or_owner',
  remove_subports: 'rule:admin_or_owner',
  get_subports: 'rule:admin_or_owner',
  create_rbac_policy: 'rule:regular_user',
  'create_rbac_policy:target_tenant': 'rule:restrict_wildcard',
  update_rbac_policy: 'rule:admin_or_owner',
  'update_rbac_policy:target_tenant': 'rule:restrict_wildcard and rule:admin_or_owner',
  get_rbac_policy: 'rule:admin_or_owner',
  delete_rbac_policy: 'rule:admin_or_owner',
  // esi additions (no Neutron rule exists; docs/networking.md). Attaching a port to a node
  // (as a VIF, on top of baremetal:node:vif:attach): the port must be the caller's, on a
  // network the caller owns or that is shared with it — RBAC-shared networks are attachable.
  attach_port: 'rule:context_is_admin or (rule:owner and (rule:network_owner or rule:shared))',
  // Who may register a switch port to a node — say which node's NIC a cable reaches — by
  // cabling a bare-metal port to it or explicitly (src/domain/networking/cabling.ts). Others
  // may only name switch ports registered to the node whose port names them.
  'esi:switch_port:register': 'rule:admin_only',
  // Switches (driver settings, credentials) are the operator's; resync re-applies a switch.
  get_switch: 'rule:admin_only',
  create_switch: 'rule:admin_only',
  update_switch: 'rule:admin_only',
  delete_switch: 'rule:admin_only',
  resync_switch: 'rule:admin_only',
  // --- Compute API (Nova v2.1 subset, added by the scheduling work). Source: Nova's defaults
  // (nova/policies: flavor_manage, flavor_extra_specs, flavor_access, keypairs, servers,
  // extended_server_attributes) with esi's roles: a project "member" is a user with member,
  // owner or lessee on the project (as for images). Targets: flavor.is_public, flavor.owner,
  // user_id (key pairs), project_id (servers).
  // esi deviation: Nova lets only admins create flavors; esi also lets a project member create
  // PRIVATE flavors for its own project (it becomes their owner) and manage them.
  'compute:context_is_admin': 'role:admin',
  'compute:member_role': 'role:member or rule:is_owner or rule:is_lessee',
  'compute:flavor_owner': "rule:compute:member_role and project_id:%(flavor.owner)s",
  'os_compute_api:os-flavor-manage:create': "rule:compute:context_is_admin or (rule:compute:member_role and 'False':%(flavor.is_public)s)",
  'os_compute_api:os-flavor-manage:update': 'rule:compute:context_is_admin or rule:compute:flavor_owner',
  'os_compute_api:os-flavor-manage:delete': 'rule:compute:context_is_admin or rule:compute:flavor_owner',
  'os_compute_api:os-flavor-extra-specs:index': '',
  'os_compute_api:os-flavor-extra-specs:show': '',
  'os_compute_api:os-flavor-extra-specs:create': 'rule:compute:context_is_admin or rule:compute:flavor_owner',
  'os_compute_api:os-flavor-extra-specs:update': 'rule:compute:context_is_admin or rule:compute:flavor_owner',
  'os_compute_api:os-flavor-extra-specs:delete': 'rule:compute:context_is_admin or rule:compute:flavor_owner',
  'os_compute_api:os-flavor-access': 'rule:compute:context_is_admin or rule:compute:flavor_owner',
  'os_compute_api:os-flavor-access:add_tenant_access': 'rule:compute:context_is_admin or rule:compute:flavor_owner',
  'os_compute_api:os-flavor-access:remove_tenant_access': 'rule:compute:context_is_admin or rule:compute:flavor_owner',
  'os_compute_api:os-keypairs:index': 'rule:compute:context_is_admin or user_id:%(user_id)s',
  'os_compute_api:os-keypairs:show': 'rule:compute:context_is_admin or user_id:%(user_id)s',
  'os_compute_api:os-keypairs:create': 'rule:compute:context_is_admin or user_id:%(user_id)s',
  'os_compute_api:os-keypairs:delete': 'rule:compute:context_is_admin or user_id:%(user_id)s',
  'os_compute_api:servers:index': 'rule:compute:context_is_admin or project_id:%(project_id)s',
  'os_compute_api:servers:detail': 'rule:compute:context_is_admin or project_id:%(project_id)s',
  'os_compute_api:servers:show': 'rule:compute:context_is_admin or project_id:%(project_id)s',
  'os_compute_api:servers:index:get_all_tenants': 'rule:compute:context_is_admin',
  'os_compute_api:servers:detail:get_all_tenants': 'rule:compute:context_is_admin',
  'os_compute_api:servers:create': 'rule:compute:context_is_admin or (rule:compute:member_role and project_id:%(project_id)s)',
  'os_compute_api:servers:delete': 'rule:compute:context_is_admin or (rule:compute:member_role and project_id:%(project_id)s)',
  'os_compute_api:os-extended-server-attributes': 'rule:compute:context_is_admin',
});
