/**
 * The event log and the webhook outbox, written together: an event row, then one delivery row
 * for every enabled webhook of the event's lessee or owner project that subscribes to its type —
 * in the caller's transaction, so an event is never recorded without its deliveries (or the
 * reverse). Payloads are built by the domain (`webhookPayload`).
 */
import { eventParties, subscribes, webhookPayload } from '../../domain/leasing/webhook-rules.ts';
import type { NewLeasingEvent } from '../../domain/leasing/model.ts';
import { CompiledShapes } from '../compiled-shapes.ts';
import { fromJson, type Db, type Tx } from '../database.ts';

/**
 * Insert several events and their webhook deliveries, in the given order, in few statements: one
 * read of the enabled webhooks of every event's parties, then one multi-row insert of the events
 * no webhook subscribes to; an event with subscribers is inserted on its own with its deliveries
 * (it needs its id). Same rows as {@link insertEventWithDeliveries} for each event in turn.
 * @param shapes as {@link insertEventWithDeliveries}'s
 */
export async function insertEventsWithDeliveries(
  db: Db | Tx,
  events: readonly NewLeasingEvent[],
  shapes: CompiledShapes = new CompiledShapes(),
): Promise<void> {
  if (events.length === 0) return;
  if (events.length === 1) {
    await insertEventWithDeliveries(db, events[0]!, shapes);
    return;
  }
  const parties = [...new Set(events.flatMap((e) => eventParties(e)))];
  const hooks =
    parties.length === 0
      ? []
      : await db
          .selectFrom('lease_webhooks')
          .select(['project_id', 'event_types'])
          .where('project_id', 'in', parties)
          .where('enabled', '=', 1)
          .execute();
  const subscribed = (e: NewLeasingEvent): boolean => {
    const mine = eventParties(e);
    return hooks.some((h) => mine.includes(h.project_id) && subscribes(fromJson<string[]>(h.event_types, []), e.event_type));
  };
  // Runs of events without subscribers go in one statement each; ids keep the events' order.
  let plain: NewLeasingEvent[] = [];
  const flush = async (): Promise<void> => {
    if (plain.length > 0) await db.insertInto('lease_events').values(plain.map(eventRow)).execute();
    plain = [];
  };
  for (const e of events) {
    if (!subscribed(e)) {
      plain.push(e);
      continue;
    }
    await flush();
    await insertEventWithDeliveries(db, e, shapes);
  }
  await flush();
}

/** The `lease_events` row of an event. */
function eventRow(e: NewLeasingEvent) {
  return {
    event_type: e.event_type,
    event_time: e.event_time,
    object_type: e.object_type,
    object_uuid: e.object_uuid,
    resource_type: e.resource_type,
    resource_uuid: e.resource_uuid,
    lessee_id: e.lessee_id,
    owner_id: e.owner_id,
  };
}

/**
 * Insert an event and its webhook deliveries.
 * @param shapes compiled statements kept by shape (the event insert and the webhook read run on
 *   every lease change); a fresh set compiles every time
 * @returns the event id
 */
export async function insertEventWithDeliveries(
  db: Db | Tx,
  e: NewLeasingEvent,
  shapes: CompiledShapes = new CompiledShapes(),
): Promise<number> {
  const values = eventRow(e);
  const inserted = shapes.query('event', Object.values(values), () => db.insertInto('lease_events').values(values).returning('id'));
  const [row] = (await db.executeQuery<{ id: number | bigint }>(inserted)).rows;
  if (row === undefined) throw new Error('insert into lease_events returned no id');
  const id = Number(row.id);
  const parties = eventParties(e);
  if (parties.length === 0) return id;
  const subscribed = shapes.query(`event-webhooks:${parties.length}`, [...parties, 1], () =>
    db.selectFrom('lease_webhooks').select(['uuid', 'event_types']).where('project_id', 'in', parties).where('enabled', '=', 1),
  );
  const hooks = (await db.executeQuery<{ uuid: string; event_types: string }>(subscribed)).rows;
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
