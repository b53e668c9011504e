/**
 * `esi offer create|list|show|delete|claim`: esi-leap offers (`/lease/v1/offers`), with the
 * options and output columns of python-esileapclient's `openstack esi offer …`
 * (`esileapclient/osc/v1/offer.py` in https://github.com/CCI-MOC/python-esileapclient).
 */
import type { Command } from 'commander';
import { collect, filterByProperties, pair, parseJsonObject } from '../filters.ts';
import { addOutputOptions, printList, printShow, type OutputOptions } from '../output.ts';
import { LEASE_FIELDS, OFFER_DETAILED_FIELDS, OFFER_FIELDS, OFFER_LONG_FIELDS, recordOf, rowsOf } from '../resources.ts';
import { withSession } from '../session.ts';

/** `--now`: availability from now until esi-leap's end of time (python-esileapclient END_OF_TIME). */
const END_OF_TIME = '9999-12-31T00:00:00';

/** Register the `offer` command group. */
export function registerOfferCommands(program: Command): void {
  const offer = program.command('offer').description('offer nodes for lease (esi-leap offers)');

  addOutputOptions(
    offer
      .command('create')
      .description('create a new offer')
      .argument('<resource_uuid>', 'node UUID or name')
      .option('--start-time <time>', "time when the offer will be made 'available'")
      .option('--end-time <time>', "time when the offer will expire and no longer be 'available'")
      .option('--lessee <project>', 'project subtree to which this offer will be limited')
      .option('--name <name>', 'name of the offer')
      .option('--properties <json>', 'arbitrary key/value properties, as a JSON object')
      .option('--resource-type <type>', 'use this resource type instead of the default'),
    OFFER_FIELDS.map(([f]) => f),
  ).action(async (resourceUuid: string, o: OfferCreateOptions & OutputOptions) => {
    const body = {
      resource_uuid: resourceUuid,
      ...(o.startTime !== undefined ? { start_time: o.startTime } : {}),
      ...(o.endTime !== undefined ? { end_time: o.endTime } : {}),
      ...(o.lessee !== undefined ? { lessee_id: o.lessee } : {}),
      ...(o.name !== undefined ? { name: o.name } : {}),
      ...(o.properties !== undefined ? { properties: parseJsonObject(o.properties) } : {}),
      ...(o.resourceType !== undefined ? { resource_type: o.resourceType } : {}),
    };
    const created = await withSession((s) => s.call('lease', 'POST', '/v1/offers', { body }));
    printShow(
      recordOf(
        created,
        OFFER_FIELDS.map(([f]) => f),
      ),
      o,
    );
  });

  addOutputOptions(
    offer
      .command('list')
      .description('list offers')
      .option('--long', 'show detailed information about the offers')
      .option('--status <status>', "offers with this status ('any' for all; default: available and error)")
      .option('--time-range <times...>', 'offers whose window contains this range: <start> <end>')
      .option('--availability-range <times...>', 'offers on which a lease over this range is possible: <start> <end>')
      .option('--now', 'only offers available right now')
      .option('--project <project>', 'offers owned by this project (ID or name)')
      .option('--resource-type <type>', 'offers with this resource type')
      .option('--resource-uuid <node>', 'offers of this node (UUID or name)')
      .option('--resource-class <class>', 'offers of nodes of this resource class')
      .option('--property <key<op>value>', 'filter by resource property, e.g. "memory_mb>=4096" (repeatable)', collect, [] as string[]),
  ).action(async (o: OfferListOptions & OutputOptions) => {
    const range = pair(o.timeRange, '--time-range');
    const avail = o.now ? [new Date().toISOString().slice(0, 19), END_OF_TIME] : pair(o.availabilityRange, '--availability-range');
    const query = {
      status: o.status,
      start_time: range?.[0],
      end_time: range?.[1],
      available_start_time: avail?.[0],
      available_end_time: avail?.[1],
      project_id: o.project,
      resource_type: o.resourceType,
      resource_uuid: o.resourceUuid,
      resource_class: o.resourceClass,
    };
    const res = await withSession((s) => s.call('lease', 'GET', '/v1/offers', { query }));
    const offers = filterByProperties(res?.offers ?? [], o.property);
    const fields = o.long ? OFFER_LONG_FIELDS : OFFER_FIELDS;
    printList(
      fields.map(([, l]) => l),
      rowsOf(offers, fields),
      o,
    );
  });

  addOutputOptions(offer.command('show').description('show offer details').argument('<uuid>', 'offer UUID or name')).action(
    async (uuid: string, o: OutputOptions) => {
      const shown = await withSession((s) => s.call('lease', 'GET', `/v1/offers/${encodeURIComponent(uuid)}`));
      printShow(recordOf({ resource_properties: {}, ...shown }, OFFER_DETAILED_FIELDS), o);
    },
  );

  offer
    .command('delete')
    .description('delete (cancel) an offer')
    .argument('<uuid>', 'offer UUID or name')
    .action(async (uuid: string) => {
      await withSession((s) => s.call('lease', 'DELETE', `/v1/offers/${encodeURIComponent(uuid)}`));
      process.stdout.write(`Deleted offer ${uuid}\n`);
    });

  addOutputOptions(
    offer
      .command('claim')
      .description('claim an offer: lease its node')
      .argument('<offer_uuid>', 'offer UUID or name')
      .option('--start-time <time>', 'time when the lease starts')
      .option('--end-time <time>', 'time when the lease ends')
      .option('--properties <json>', 'arbitrary key/value properties, as a JSON object'),
    LEASE_FIELDS.map(([f]) => f),
  ).action(async (offerUuid: string, o: ClaimOptions & OutputOptions) => {
    const body = {
      ...(o.startTime !== undefined ? { start_time: o.startTime } : {}),
      ...(o.endTime !== undefined ? { end_time: o.endTime } : {}),
      ...(o.properties !== undefined ? { properties: parseJsonObject(o.properties) } : {}),
    };
    const lease = await withSession((s) => s.call('lease', 'POST', `/v1/offers/${encodeURIComponent(offerUuid)}/claim`, { body }));
    printShow(
      recordOf(
        lease,
        LEASE_FIELDS.map(([f]) => f),
      ),
      o,
    );
  });
}

interface OfferCreateOptions {
  startTime?: string;
  endTime?: string;
  lessee?: string;
  name?: string;
  properties?: string;
  resourceType?: string;
}

interface OfferListOptions {
  long?: boolean;
  status?: string;
  timeRange?: string[];
  availabilityRange?: string[];
  now?: boolean;
  project?: string;
  resourceType?: string;
  resourceUuid?: string;
  resourceClass?: string;
  property: string[];
}

interface ClaimOptions {
  startTime?: string;
  endTime?: string;
  properties?: string;
}
