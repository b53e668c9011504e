/**
 * esi's default policy, part 2: the leasing (esi-leap) rules — offers, leases, nodes, events,
 * console tokens, and esi's additions (lease requests, quotas, lease policies, webhooks).
 * Merged into `DEFAULT_RULES` by `./defaults.ts`.
 */

/** esi-leap check strings. */
const LEAP_ADMIN = 'rule:is_esi_leap_admin';
const LEAP_ANY_ROLE = 'rule:is_esi_leap_admin or rule:is_owner or rule:is_lessee';
const LEAP_LEASE_PARTY = 'rule:is_esi_leap_admin or rule:is_lease_owner or rule:is_lease_lessee';
/** Admin or the node's owner (Ironic's owner rule, for the console rule below). */
const ADMIN_OWNER = 'rule:is_admin or rule:is_node_owner';

/** The leasing rules. */
export const LEASING_RULES: Readonly<Record<string, string>> = Object.freeze({
  // --- esi-leap base rules. Source: esi-leap esi_leap/common/policy.py
  // (https://github.com/CCI-MOC/esi-leap). esi-leap calls its admin rule is_admin; here it is
  // is_esi_leap_admin so that it does not clash with Ironic's is_admin.
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
  // the node in Ironic with its own token (`esi_leap/api/controllers/v1/console_auth_token.py`).
  // esi states that directly: the caller must be allowed Ironic's get_console on the node (admin,
  // owner or lessee).
  'esi_leap:console_auth_token:create': 'rule:is_esi_leap_admin or rule:is_node_owner or rule:is_node_lessee',
  'esi_leap:console_auth_token:delete': 'rule:is_esi_leap_admin or rule:is_node_owner or rule:is_node_lessee',
  // esi addition (docs/console.md): who may type at a node's serial console, checked when a console
  // token is issued and when a websocket opens with a Keystone token. Lessees get read-only
  // consoles by default (ESI's design document: "View serial console of a leased node (read
  // only)"); owners and admins read-write.
  'esi:node:console:write': ADMIN_OWNER,

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
});
