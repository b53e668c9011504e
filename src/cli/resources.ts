/**
 * Which fields the lease commands print, and under which labels: the column sets of
 * python-esileapclient (`esileapclient/v1/{offer,lease,node,event}.py`: `fields`,
 * `long_fields`, `detailed_fields`; https://github.com/CCI-MOC/python-esileapclient), so that `esi`
 * output matches `openstack esi …` column for column.
 */

/** `[field, label]` pairs in display order. */
export type FieldSet = ReadonlyArray<readonly [string, string]>;

/** `esi offer list`. */
export const OFFER_FIELDS: FieldSet = [
  ['uuid', 'UUID'],
  ['resource', 'Resource'],
  ['resource_class', 'Resource Class'],
  ['lessee', 'Lessee'],
  ['start_time', 'Start Time'],
  ['end_time', 'End Time'],
  ['status', 'Status'],
  ['availabilities', 'Availabilities'],
];

/** `esi offer list --long`. */
export const OFFER_LONG_FIELDS: FieldSet = [
  ['uuid', 'UUID'],
  ['resource', 'Resource'],
  ['resource_class', 'Resource Class'],
  ['resource_properties', 'Resource Properties'],
  ['lessee', 'Lessee'],
  ['start_time', 'Start Time'],
  ['end_time', 'End Time'],
  ['status', 'Status'],
  ['availabilities', 'Availabilities'],
  ['project', 'Project'],
  ['parent_lease_uuid', 'Parent Lease UUID'],
];

/** `esi offer show` (printed sorted by field name, with `resource_properties`). */
export const OFFER_DETAILED_FIELDS: readonly string[] = [
  'availabilities',
  'end_time',
  'lessee',
  'lessee_id',
  'name',
  'parent_lease_uuid',
  'project',
  'project_id',
  'properties',
  'resource',
  'resource_class',
  'resource_properties',
  'resource_type',
  'resource_uuid',
  'start_time',
  'status',
  'uuid',
];

/** `esi lease list`. */
export const LEASE_FIELDS: FieldSet = [
  ['uuid', 'UUID'],
  ['resource', 'Resource'],
  ['resource_class', 'Resource Class'],
  ['project', 'Project'],
  ['start_time', 'Start Time'],
  ['end_time', 'End Time'],
  ['offer_uuid', 'Offer UUID'],
  ['status', 'Status'],
  ['purpose', 'Purpose'],
];

/** `esi lease list --long`. */
export const LEASE_LONG_FIELDS: FieldSet = [
  ['uuid', 'UUID'],
  ['resource', 'Resource'],
  ['resource_class', 'Resource Class'],
  ['resource_properties', 'Resource Properties'],
  ['project', 'Project'],
  ['start_time', 'Start Time'],
  ['end_time', 'End Time'],
  ['expire_time', 'Expire Time'],
  ['fulfill_time', 'Fulfill Time'],
  ['offer_uuid', 'Offer UUID'],
  ['owner', 'Owner'],
  ['parent_lease_uuid', 'Parent Lease UUID'],
  ['status', 'Status'],
  ['purpose', 'Purpose'],
];

/** `esi lease show` (printed sorted by field name, with `resource_properties`). */
export const LEASE_DETAILED_FIELDS: readonly string[] = [
  'end_time',
  'expire_time',
  'fulfill_time',
  'name',
  'offer_uuid',
  'owner',
  'owner_id',
  'parent_lease_uuid',
  'project',
  'project_id',
  'properties',
  'resource',
  'resource_class',
  'resource_properties',
  'resource_type',
  'resource_uuid',
  'start_time',
  'status',
  'uuid',
  'purpose',
];

/** `esi node list`. */
export const NODE_FIELDS: FieldSet = [
  ['name', 'Name'],
  ['owner', 'Owner'],
  ['lessee', 'Lessee'],
  ['resource_class', 'Resource Class'],
  ['provision_state', 'Provision State'],
  ['maintenance', 'Maintenance'],
  ['offer_uuid', 'Offer UUID'],
  ['lease_uuid', 'Lease UUID'],
];

/** `esi node list --long`. */
export const NODE_LONG_FIELDS: FieldSet = [
  ['uuid', 'UUID'],
  ['name', 'Name'],
  ['owner', 'Owner'],
  ['lessee', 'Lessee'],
  ['resource_class', 'Resource Class'],
  ['provision_state', 'Provision State'],
  ['maintenance', 'Maintenance'],
  ['properties', 'Properties'],
  ['offer_uuid', 'Offer UUID'],
  ['lease_uuid', 'Lease UUID'],
  ['future_offers', 'Future Offers'],
  ['future_leases', 'Future Leases'],
];

/** `esi event list`. */
export const EVENT_FIELDS: FieldSet = [
  ['id', 'ID'],
  ['event_type', 'Event Type'],
  ['event_time', 'Event Time'],
  ['object_type', 'Object Type'],
  ['object_uuid', 'Object UUID'],
  ['resource_type', 'Resource Type'],
  ['resource_uuid', 'Resource UUID'],
  ['lessee_id', 'Lessee ID'],
  ['owner_id', 'Owner ID'],
];

/** The rows of a list: each item's values for the fields ('' when absent). */
export function rowsOf(items: readonly Record<string, unknown>[], fields: FieldSet): unknown[][] {
  return items.map((item) => fields.map(([f]) => (f in item ? item[f] : '')));
}

/**
 * A record's `[field, value]` pairs for the given field names, sorted by name as the
 * python clients print single records ('' when absent).
 */
export function recordOf(item: Record<string, unknown>, names: readonly string[]): Array<[string, unknown]> {
  return [...new Set(names)].sort().map((n) => [n, n in item ? item[n] : '']);
}
