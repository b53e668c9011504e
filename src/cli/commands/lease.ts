/**
 * `esi lease create|update|list|show|delete`: esi-leap leases (`/lease/v1/leases`), with the
 * options and output columns of python-esileapclient's `openstack esi lease …`
 * (`esileapclient/osc/v1/lease.py` in https://github.com/CCI-MOC/python-esileapclient); and
 * `esi lease request` (by hardware, `./lease-request.ts`).
 */
import type { Command } from 'commander';
import { collect, filterByProperties, pair, parseJsonObject } from '../filters.ts';
import { addOutputOptions, printList, printShow, type OutputOptions } from '../output.ts';
import { LEASE_DETAILED_FIELDS, LEASE_FIELDS, LEASE_LONG_FIELDS, recordOf, rowsOf } from '../resources.ts';
import { withSession } from '../session.ts';
import { registerLeaseRequest } from './lease-request.ts';

/** Register the `lease` command group. */
export function registerLeaseCommands(program: Command): void {
  const lease = program.command('lease').description('lease nodes (esi-leap leases)');

  addOutputOptions(
    lease
      .command('create')
      .description('lease a node directly to a project (node owner or admin)')
      .argument('<resource>', 'node UUID or name')
      .argument('<project>', 'project ID or name leasing the node')
      .option('--start-time <time>', 'time when the node becomes usable')
      .option('--end-time <time>', 'time when the lease expires')
      .option('--name <name>', 'name of the lease')
      .option('--properties <json>', 'arbitrary key/value properties, as a JSON object')
      .option('--resource-type <type>', 'use this resource type instead of the default')
      .option('--purpose <text>', 'the purpose of the lease'),
    LEASE_FIELDS.map(([f]) => f),
  ).action(async (resource: string, project: string, o: LeaseCreateOptions & OutputOptions) => {
    const body = {
      resource_uuid: resource,
      project_id: project,
      ...(o.startTime !== undefined ? { start_time: o.startTime } : {}),
      ...(o.endTime !== undefined ? { end_time: o.endTime } : {}),
      ...(o.name !== undefined ? { name: o.name } : {}),
      ...(o.properties !== undefined ? { properties: parseJsonObject(o.properties) } : {}),
      ...(o.resourceType !== undefined ? { resource_type: o.resourceType } : {}),
      ...(o.purpose !== undefined ? { purpose: o.purpose } : {}),
    };
    const created = await withSession((s) => s.call('lease', 'POST', '/v1/leases', { body }));
    printShow(
      recordOf(
        created,
        LEASE_FIELDS.map(([f]) => f),
      ),
      o,
    );
  });

  addOutputOptions(
    lease
      .command('update')
      .description("change a lease's end time (admin)")
      .argument('<uuid>', 'lease UUID')
      .requiredOption('--end-time <time>', 'the new end time'),
    LEASE_FIELDS.map(([f]) => f),
  ).action(async (uuid: string, o: { endTime: string } & OutputOptions) => {
    const updated = await withSession((s) =>
      s.call('lease', 'PATCH', `/v1/leases/${encodeURIComponent(uuid)}`, { body: { end_time: o.endTime } }),
    );
    printShow(
      recordOf(
        updated,
        LEASE_FIELDS.map(([f]) => f),
      ),
      o,
    );
  });

  addOutputOptions(
    lease
      .command('list')
      .description('list leases')
      .option('--long', 'show detailed information about the leases')
      .option('--all', 'show the leases of every project (admin)')
      .option('--status <status>', "leases with this status ('any' for all; default: all but expired and deleted)")
      .option('--offer-uuid <uuid>', 'leases made by claiming this offer')
      .option('--time-range <times...>', 'leases that overlap this range: <start> <end>')
      .option('--project <project>', 'leases held by this project (ID or name)')
      .option('--owner <project>', 'leases granted by this owner project (ID or name)')
      .option('--resource-type <type>', 'leases of this resource type')
      .option('--resource-uuid <node>', 'leases of this node (UUID or name)')
      .option('--resource-class <class>', 'leases of nodes of this resource class')
      .option('--purpose <text>', 'leases with this purpose')
      .option('--property <key<op>value>', 'filter by resource property, e.g. "cpus>=8" (repeatable)', collect, [] as string[]),
  ).action(async (o: LeaseListOptions & OutputOptions) => {
    const range = pair(o.timeRange, '--time-range');
    const query = {
      status: o.status,
      offer_uuid: o.offerUuid,
      start_time: range?.[0],
      end_time: range?.[1],
      project_id: o.project,
      owner_id: o.owner,
      view: o.all ? 'all' : undefined,
      resource_type: o.resourceType,
      resource_uuid: o.resourceUuid,
      resource_class: o.resourceClass,
      purpose: o.purpose,
    };
    const res = await withSession((s) => s.call('lease', 'GET', '/v1/leases', { query }));
    const leases = filterByProperties(res?.leases ?? [], o.property);
    const fields = o.long ? LEASE_LONG_FIELDS : LEASE_FIELDS;
    printList(
      fields.map(([, l]) => l),
      rowsOf(leases, fields),
      o,
    );
  });

  addOutputOptions(lease.command('show').description('show lease details').argument('<uuid>', 'lease UUID or name')).action(
    async (uuid: string, o: OutputOptions) => {
      const shown = await withSession((s) => s.call('lease', 'GET', `/v1/leases/${encodeURIComponent(uuid)}`));
      printShow(recordOf({ resource_properties: {}, ...shown }, LEASE_DETAILED_FIELDS), o);
    },
  );

  registerLeaseRequest(lease);

  lease
    .command('delete')
    .description('delete (cancel) a lease')
    .argument('<uuid>', 'lease UUID or name')
    .action(async (uuid: string) => {
      await withSession((s) => s.call('lease', 'DELETE', `/v1/leases/${encodeURIComponent(uuid)}`));
      process.stdout.write(`Deleted lease ${uuid}\n`);
    });
}

interface LeaseCreateOptions {
  startTime?: string;
  endTime?: string;
  name?: string;
  properties?: string;
  resourceType?: string;
  purpose?: string;
}

interface LeaseListOptions {
  long?: boolean;
  all?: boolean;
  status?: string;
  offerUuid?: string;
  timeRange?: string[];
  project?: string;
  owner?: string;
  resourceType?: string;
  resourceUuid?: string;
  resourceClass?: string;
  purpose?: string;
  property: string[];
}
