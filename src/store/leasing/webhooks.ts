/**
 * Kysely implementation of the webhook store (`WebhookRepository`, src/domain/leasing/webhooks.ts):
 * subscriptions (secret kept sealed) and the delivery outbox. Deliveries are written by
 * `./outbox.ts` with their event; here they are listed, taken for an attempt (conditional update)
 * and updated. Portable across SQLite and PostgreSQL.
 */
import type { Selectable } from 'kysely';
import type { DeliveryStatus, Webhook, WebhookDelivery } from '../../domain/leasing/webhook-rules.ts';
import type { DeliveryOutcome, WebhookRepository } from '../../domain/leasing/webhooks.ts';
import { fromJson, toBool, toJson, type Db } from '../database.ts';
import type { LeaseWebhookDeliveriesTable, LeaseWebhooksTable } from './tables.ts';

function toWebhook(r: Selectable<LeaseWebhooksTable>): Webhook {
  return {
    uuid: r.uuid,
    project_id: r.project_id,
    name: r.name,
    url: r.url,
    event_types: fromJson<string[]>(r.event_types, []),
    enabled: Number(r.enabled) === 1,
    created_at: Number(r.created_at),
    updated_at: Number(r.updated_at),
  };
}

const n = (v: number | null): number | null => (v === null ? null : Number(v));

function toDelivery(r: Selectable<LeaseWebhookDeliveriesTable>): WebhookDelivery {
  return {
    id: Number(r.id),
    webhook_uuid: r.webhook_uuid,
    event_id: n(r.event_id),
    event_type: r.event_type,
    payload: r.payload,
    status: r.status as DeliveryStatus,
    attempts: Number(r.attempts),
    next_attempt_at: Number(r.next_attempt_at),
    last_attempt_at: n(r.last_attempt_at),
    last_status_code: n(r.last_status_code),
    last_error: r.last_error,
    created_at: Number(r.created_at),
    delivered_at: n(r.delivered_at),
  };
}

/** Webhooks and deliveries over a Kysely handle. */
export class KyselyWebhookRepository implements WebhookRepository {
  constructor(private readonly db: Db) {}

  async listWebhooks(q: { projectId?: string }): Promise<Webhook[]> {
    let s = this.db.selectFrom('lease_webhooks').selectAll();
    if (q.projectId !== undefined) s = s.where('project_id', '=', q.projectId);
    return (await s.orderBy('created_at').orderBy('uuid').execute()).map(toWebhook);
  }

  async getWebhook(uuid: string): Promise<Webhook | null> {
    const row = await this.db.selectFrom('lease_webhooks').selectAll().where('uuid', '=', uuid).executeTakeFirst();
    return row ? toWebhook(row) : null;
  }

  async countWebhooks(projectId: string): Promise<number> {
    const row = await this.db
      .selectFrom('lease_webhooks')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('project_id', '=', projectId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async insertWebhook(w: Webhook, sealedSecret: string): Promise<void> {
    await this.db
      .insertInto('lease_webhooks')
      .values({
        uuid: w.uuid,
        project_id: w.project_id,
        name: w.name,
        url: w.url,
        secret: sealedSecret,
        event_types: toJson(w.event_types),
        enabled: toBool(w.enabled),
        created_at: w.created_at,
        updated_at: w.updated_at,
      })
      .execute();
  }

  async updateWebhook(w: Webhook, sealedSecret?: string): Promise<void> {
    await this.db
      .updateTable('lease_webhooks')
      .set({
        name: w.name,
        url: w.url,
        event_types: toJson(w.event_types),
        enabled: toBool(w.enabled),
        updated_at: w.updated_at,
        ...(sealedSecret !== undefined ? { secret: sealedSecret } : {}),
      })
      .where('uuid', '=', w.uuid)
      .execute();
  }

  async deleteWebhook(uuid: string): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      await tx.deleteFrom('lease_webhook_deliveries').where('webhook_uuid', '=', uuid).execute();
      await tx.deleteFrom('lease_webhooks').where('uuid', '=', uuid).execute();
    });
  }

  async listDeliveries(webhookUuid: string, q: { status?: DeliveryStatus; limit: number }): Promise<WebhookDelivery[]> {
    let s = this.db.selectFrom('lease_webhook_deliveries').selectAll().where('webhook_uuid', '=', webhookUuid);
    if (q.status !== undefined) s = s.where('status', '=', q.status);
    return (await s.orderBy('id', 'desc').limit(q.limit).execute()).map(toDelivery);
  }

  async dueDeliveries(now: number, limit: number): Promise<WebhookDelivery[]> {
    const rows = await this.db
      .selectFrom('lease_webhook_deliveries')
      .selectAll()
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', now)
      .orderBy('next_attempt_at')
      .orderBy('id')
      .limit(limit)
      .execute();
    return rows.map(toDelivery);
  }

  async claimDelivery(id: number, seenNextAttemptAt: number, until: number): Promise<boolean> {
    const r = await this.db
      .updateTable('lease_webhook_deliveries')
      .set({ next_attempt_at: until })
      .where('id', '=', id)
      .where('status', '=', 'pending')
      .where('next_attempt_at', '=', seenNextAttemptAt)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async target(webhookUuid: string): Promise<{ url: string; sealedSecret: string; enabled: boolean } | null> {
    const row = await this.db
      .selectFrom('lease_webhooks')
      .select(['url', 'secret', 'enabled'])
      .where('uuid', '=', webhookUuid)
      .executeTakeFirst();
    return row ? { url: row.url, sealedSecret: row.secret, enabled: Number(row.enabled) === 1 } : null;
  }

  async recordAttempt(id: number, o: DeliveryOutcome): Promise<void> {
    await this.db
      .updateTable('lease_webhook_deliveries')
      .set({
        status: o.status,
        attempts: o.attempts,
        next_attempt_at: o.nextAttemptAt,
        last_attempt_at: o.lastAttemptAt,
        last_status_code: o.lastStatusCode,
        last_error: o.lastError,
        delivered_at: o.deliveredAt,
      })
      .where('id', '=', id)
      .execute();
  }
}
