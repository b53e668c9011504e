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
    project_id: q.projectId,
    project: q.project,
    max_nodes: q.maxNodes,
    max_node_hours: q.maxNodeHours,
    window_hours: q.windowHours,
    usage: { nodes_now: q.usage.nodesNow, peak_nodes: q.usage.peakNodes, node_hours_in_window: q.usage.nodeHoursInWindow },
  };
}

/** An owner lease policy. */
export function renderLeasePolicy(p: LeasePolicyView): Record<string, unknown> {
  return {
    uuid: p.uuid,
    project_id: p.projectId,
    project: p.project,
    resource_uuid: p.resourceUuid,
    resource: p.resource,
    max_lease_seconds: s(p.maxLeaseMs),
    min_gap_seconds: s(p.minGapMs),
    allowed_projects: p.allowedProjects,
    erase_devices: p.eraseDevices,
    created_at: t(p.createdAt),
    updated_at: t(p.updatedAt),
  };
}

/** A webhook; the secret is write-only. */
export function renderWebhook(w: Webhook): Record<string, unknown> {
  return {
    uuid: w.uuid,
    project_id: w.projectId,
    name: w.name,
    url: w.url,
    secret: '******',
    event_types: w.eventTypes,
    enabled: w.enabled,
    created_at: t(w.createdAt),
    updated_at: t(w.updatedAt),
  };
}

/** A webhook delivery's status (the payload is not repeated). */
export function renderDelivery(d: WebhookDelivery): Record<string, unknown> {
  return {
    id: d.id,
    webhook_uuid: d.webhookUuid,
    event_id: d.eventId,
    event_type: d.eventType,
    status: d.status,
    attempts: d.attempts,
    next_attempt_at: d.status === 'pending' ? t(d.nextAttemptAt) : null,
    last_attempt_at: tn(d.lastAttemptAt),
    last_status_code: d.lastStatusCode,
    last_error: d.lastError,
    created_at: t(d.createdAt),
    delivered_at: tn(d.deliveredAt),
  };
}
