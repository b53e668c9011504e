/**
 * `esi event list` (esi-leap `GET /v1/events`), with the options and columns of
 * python-esileapclient (`esileapclient/osc/v1/event.py` in
 * https://github.com/CCI-MOC/python-esileapclient).
 */
import type { Command } from 'commander';
import { addOutputOptions, printList, type OutputOptions } from '../output.ts';
import { EVENT_FIELDS, rowsOf } from '../resources.ts';
import { withSession } from '../session.ts';

/** Register `event list`. */
export function registerEventCommands(program: Command): void {
  const event = program.command('event').description('lease events (fulfilled, expired, deleted leases)');
  addOutputOptions(
    event
      .command('list')
      .description('list events')
      .option('--project <project>', 'events where this project (ID or name) is lessee or owner')
      .option('--last-event-id <id>', 'events after this event ID')
      .option('--last-notification-time <time>', 'events after this time')
      .option('--event-type <type>', 'events of this type, e.g. esi_leap.lease.fulfill.end')
      .option('--resource-type <type>', 'events of this resource type')
      .option('--resource-uuid <node>', 'events of this node (UUID or name)'),
  ).action(async (o: EventListOptions & OutputOptions) => {
    const query = {
      lessee_or_owner_id: o.project,
      last_event_id: o.lastEventId,
      last_event_time: o.lastNotificationTime,
      event_type: o.eventType,
      resource_type: o.resourceType,
      resource_uuid: o.resourceUuid,
    };
    const res = await withSession((s) => s.call('lease', 'GET', '/v1/events', { query }));
    printList(
      EVENT_FIELDS.map(([, l]) => l),
      rowsOf(res?.events ?? [], EVENT_FIELDS),
      o,
    );
  });
}

interface EventListOptions {
  project?: string;
  lastEventId?: string;
  lastNotificationTime?: string;
  eventType?: string;
  resourceType?: string;
  resourceUuid?: string;
}
