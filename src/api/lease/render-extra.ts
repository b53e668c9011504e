/**
 * JSON documents of the lease API's additive resources (docs/leasing.md "Beyond esi-leap"):
 * quotas, owner lease policies, webhooks and their deliveries. Field names follow esi-leap's
 * style (snake_case, `project_id` + `project` name); times are esi-leap times (naive UTC
 * ISO-8601); durations are whole seconds. Webhook secrets are never rendered: `******`.
 */
import type { LeasePolicyView, QuotaView, Webhook, WebhookDelivery } from '../../domain/leasing/index.ts';
import { formatLeaseTime } from '../../domain/leasing/index.ts';

const t = formatLeaseTime;
const tn = (ms: number | null): string | null => (ms === null ? null : t(ms));
const s = (ms: number | null): number | null => (ms === null ? null : Math.round(ms / 1000));

/** A quota with its usage. */
export function renderQuota(q: QuotaView): Record<string, unknown> {
  return {
    project_id: q.project_id,
    project: q.project,
    max_nodes: q.max_nodes,
    max_node_hours: q.max_node_hours,
    window_hours: q.window_hours,
    usage: { nodes_now: q.usage.nodes_now, peak_nodes: q.usage.peak_nodes, node_hours_in_window: q.usage.node_hours_in_window },
  };
}

/** An owner lease policy. */
export function renderLeasePolicy(p: LeasePolicyView): Record<string, unknown> {
  return {
    uuid: p.uuid,
    project_id: p.project_id,
    project: p.project,
    resource_uuid: p.resource_uuid,
    resource: p.resource,
    max_lease_seconds: s(p.max_lease_ms),
    min_gap_seconds: s(p.min_gap_ms),
    allowed_projects: p.allowed_projects,
    erase_devices: p.erase_devices,
    created_at: t(p.created_at),
    updated_at: t(p.updated_at),
  };
}

/** A webhook; the secret is write-only. */
export function renderWebhook(w: Webhook): Record<string, unknown> {
  return {
    uuid: w.uuid,
    project_id: w.project_id,
    name: w.name,
    url: w.url,
    secret: '******',
    event_types: w.event_types,
    enabled: w.enabled,
    created_at: t(w.created_at),
    updated_at: t(w.updated_at),
  };
}

/** A webhook delivery's status (the payload is not repeated). */
export function renderDelivery(d: WebhookDelivery): Record<string, unknown> {
  return {
    id: d.id,
    webhook_uuid: d.webhook_uuid,
    event_id: d.event_id,
    event_type: d.event_type,
    status: d.status,
    attempts: d.attempts,
    next_attempt_at: d.status === 'pending' ? t(d.next_attempt_at) : null,
    last_attempt_at: tn(d.last_attempt_at),
    last_status_code: d.last_status_code,
    last_error: d.last_error,
    created_at: t(d.created_at),
    delivered_at: tn(d.delivered_at),
  };
}
