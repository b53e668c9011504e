/**
 * What the owner's views share: the shapes they read from esi-leap (offers, leases) and Ironic
 * (nodes), the query keys the live channel patches (`['nodes', …]`, `['offers', …]`,
 * `['leases', …]`, ../../lib/live.ts), and the way an API's message is placed beside the form
 * field it names.
 */
import './owner.css';

/** An offer as esi-leap renders it (`GET /lease/v1/offers`). */
export interface Offer {
  uuid: string;
  name: string | null;
  project_id: string;
  project: string | null;
  lessee_id: string | null;
  lessee: string | null;
  resource_uuid: string;
  resource: string | null;
  resource_class: string | null;
  start_time: string;
  end_time: string;
  status: string;
  availabilities: Array<[string, string]>;
  parent_lease_uuid: string | null;
}

/** A lease as esi-leap renders it (`GET /lease/v1/leases`). */
export interface Lease {
  uuid: string;
  name: string | null;
  project_id: string;
  project: string | null;
  owner_id: string;
  owner: string | null;
  resource_uuid: string;
  resource: string | null;
  start_time: string;
  end_time: string;
  status: string;
  offer_uuid: string | null;
  purpose: string | null;
}

/** A node as the owner's views read it (`GET /baremetal/v1/nodes?fields=…`). */
export interface OwnedNode {
  uuid: string;
  name: string | null;
  owner: string | null;
  lessee: string | null;
  provision_state: string;
  target_provision_state: string | null;
  power_state: string | null;
  resource_class: string | null;
  last_error: string | null;
}

/** The node fields the owner's lists ask for. */
export const OWNED_NODE_FIELDS = 'uuid,name,owner,lessee,provision_state,target_provision_state,power_state,resource_class,last_error';

/** The node list of a project (`owner=`; an admin without a project sees every node). */
export function ownedNodesPath(projectId: string | null): string {
  const q = new URLSearchParams({ fields: OWNED_NODE_FIELDS, limit: '1000' });
  if (projectId !== null) q.set('owner', projectId);
  return `/baremetal/v1/nodes?${q.toString()}`;
}

/** A node's label: its name, else its UUID. */
export function nodeLabel(n: { name: string | null; uuid: string }): string {
  return n.name ?? n.uuid;
}

/**
 * Split an API message into the parts that name a form field (Ironic's driver-info messages
 * list problems as `Invalid driver_info for the redfish driver: redfish_address is missing;
 * redfish_password is set but …`). Each part is kept in the API's words.
 * @param message the API's message
 * @param fields the field names the form shows (API names, e.g. `redfish_address`, `name`)
 * @returns the parts per field, and whether every part found a field
 */
export function placeMessage(message: string, fields: readonly string[]): { byField: Record<string, string>; placed: boolean } {
  const body = message.replace(/^Invalid driver_info for the [\w-]+ driver:\s*/, '').replace(/\.$/, '');
  const parts = body === message ? [message] : body.split(/;\s*/);
  const byField: Record<string, string> = {};
  let placed = true;
  for (const part of parts) {
    // The field a part is about: the one it names first.
    let named: string | undefined;
    let at = Infinity;
    for (const f of fields) {
      const m = new RegExp(`(^|[^\\w])${f}([^\\w]|$)`).exec(part);
      if (m !== null && m.index < at) {
        at = m.index;
        named = f;
      }
    }
    if (named === undefined) {
      placed = false;
      continue;
    }
    byField[named] = byField[named] ? `${byField[named]}; ${part}` : part;
  }
  return { byField, placed };
}
