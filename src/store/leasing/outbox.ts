/**
 * The event log and the webhook outbox, written together: an event row, then one delivery row
 * for every enabled webhook of the event's lessee or owner project that subscribes to its type —
 * in the caller's transaction, so an event is never recorded without its deliveries (or the
 * reverse). Payloads are built by the domain (`webhookPayload`).
 */
import { eventParties, subscribes, webhookPayload } from '../../domain/leasing/webhook-rules.ts';
import type { NewLeasingEvent } from '../../domain/leasing/model.ts';
import { fromJson, type Db, type Tx } from '../database.ts';

/**
 * Insert an event and its webhook deliveries.
 * @returns the event id
 */
export async function insertEventWithDeliveries(db: Db | Tx, e: NewLeasingEvent): Promise<number> {
  const row = await db
    .insertInto('lease_events')
    .values({
      event_type: e.event_type,
      event_time: e.event_time,
      object_type: e.object_type,
      object_uuid: e.object_uuid,
      resource_type: e.resource_type,
      resource_uuid: e.resource_uuid,
      lessee_id: e.lessee_id,
      owner_id: e.owner_id,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const id = Number(row.id);
  const parties = eventParties(e);
  if (parties.length === 0) return id;
  const hooks = await db
    .selectFrom('lease_webhooks')
    .select(['uuid', 'event_types'])
    .where('project_id', 'in', parties)
    .where('enabled', '=', 1)
    .execute();
  const targets = hooks.filter((h) => subscribes(fromJson<string[]>(h.event_types, []), e.event_type));
  if (targets.length === 0) return id;
  const payload = webhookPayload(e, id);
  await db
    .insertInto('lease_webhook_deliveries')
    .values(
      targets.map((h) => ({
        webhook_uuid: h.uuid,
        event_id: id,
        event_type: e.event_type,
        payload,
        status: 'pending',
        attempts: 0,
        next_attempt_at: e.event_time,
        last_attempt_at: null,
        last_status_code: null,
        last_error: null,
        created_at: e.event_time,
        delivered_at: null,
      })),
    )
    .execute();
  return id;
}
