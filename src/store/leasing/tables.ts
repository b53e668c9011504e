/**
 * Kysely table types of the leasing area (esi-leap's offers, leases, events and console auth
 * tokens, `esi_leap/db/sqlalchemy/models.py` in https://github.com/CCI-MOC/esi-leap), plus the node
 * claims of the lease manager (migration `0003_leasing`); owner lease policies, quotas, webhooks,
 * their delivery outbox and lease notices (migration `0004_leasing_policies`). Timestamps are epoch
 * ms, JSON as text (docs/architecture.md).
 */
import type { Generated } from 'kysely';

/** Offers. `status` ∈ available | expired | deleted | error. */
export interface OffersTable {
  uuid: string;
  name: string | null;
  project_id: string;
  lessee_id: string | null;
  resource_type: string;
  resource_uuid: string;
  start_time: number;
  end_time: number;
  status: string;
  /** JSON object. */
  properties: string;
  parent_lease_uuid: string | null;
  created_at: number;
  updated_at: number;
}

/** Leases. `status` ∈ created | active | expired | deleted | error | wait fulfill | wait expire | wait cancel. */
export interface LeasesTable {
  uuid: string;
  name: string | null;
  project_id: string;
  owner_id: string;
  purpose: string | null;
  resource_type: string;
  resource_uuid: string;
  start_time: number;
  end_time: number;
  fulfill_time: number | null;
  expire_time: number | null;
  status: string;
  /** JSON object. */
  properties: string;
  offer_uuid: string | null;
  parent_lease_uuid: string | null;
  created_at: number;
  updated_at: number;
}

/** The event log; `id` is the polling cursor. */
export interface LeaseEventsTable {
  id: Generated<number>;
  event_type: string;
  event_time: number;
  object_type: string;
  object_uuid: string;
  resource_type: string;
  resource_uuid: string;
  lessee_id: string | null;
  owner_id: string | null;
}

/** Console tokens: only the SHA-256 hex digest of a token is stored. */
export interface ConsoleAuthTokensTable {
  token_hash: string;
  node_uuid: string;
  expires_at: number;
  created_at: number;
}

/** Who is changing a node's lease right now (lease manager or API cancel), until when. */
export interface LeaseNodeClaimsTable {
  node_uuid: string;
  holder: string;
  expires_at: number;
}

/** An owner's lease policy; `scope` is a node uuid or `*` (all the owner's nodes). */
export interface LeasePoliciesTable {
  uuid: string;
  project_id: string;
  scope: string;
  max_lease_ms: number | null;
  min_gap_ms: number | null;
  /** JSON array of project ids, or null for any project. */
  allowed_projects: string | null;
  /** 1: automated cleaning erases whole disks (migration 0007). */
  erase_devices: number;
  created_at: number;
  updated_at: number;
}

/** A lessee project's quota (admin-set). */
export interface LeaseQuotasTable {
  project_id: string;
  max_nodes: number | null;
  max_node_hours: number | null;
  window_hours: number;
  created_at: number;
  updated_at: number;
}

/** A project's webhook; `secret` is sealed with the server's secret box. */
export interface LeaseWebhooksTable {
  uuid: string;
  project_id: string;
  name: string | null;
  url: string;
  secret: string;
  /** JSON array of event types (a trailing `*` matches a prefix); empty = every type. */
  event_types: string;
  enabled: number;
  created_at: number;
  updated_at: number;
}

/** The webhook outbox: one row per (event, webhook). `status` ∈ pending | delivered | failed. */
export interface LeaseWebhookDeliveriesTable {
  id: Generated<number>;
  webhook_uuid: string;
  event_id: number | null;
  event_type: string;
  /** The JSON body sent. */
  payload: string;
  status: string;
  attempts: number;
  next_attempt_at: number;
  last_attempt_at: number | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: number;
  delivered_at: number | null;
}

/** Notices sent at most once per lease (`kind` e.g. `ending_soon`). */
export interface LeaseNoticesTable {
  lease_uuid: string;
  kind: string;
  created_at: number;
}

/** Heartbeats of processes without the conductor role (migration 0029); epoch ms. */
export interface ApiProcessesTable {
  id: string;
  started_at: number;
  heartbeat_at: number;
}

/** All leasing tables, merged into the store's `Database` type. */
export interface LeasingTables {
  api_processes: ApiProcessesTable;
  offers: OffersTable;
  leases: LeasesTable;
  lease_events: LeaseEventsTable;
  console_auth_tokens: ConsoleAuthTokensTable;
  lease_node_claims: LeaseNodeClaimsTable;
  lease_policies: LeasePoliciesTable;
  lease_quotas: LeaseQuotasTable;
  lease_webhooks: LeaseWebhooksTable;
  lease_webhook_deliveries: LeaseWebhookDeliveriesTable;
  lease_notices: LeaseNoticesTable;
}
