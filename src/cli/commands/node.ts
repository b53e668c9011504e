/**
 * `esi node list` (esi-leap `GET /v1/nodes`), with the options and columns of
 * python-esileapclient (`esileapclient/osc/v1/node.py` in
 * https://github.com/CCI-MOC/python-esileapclient); `esi node provision|unprovision`
 * (./node-provision.ts), `esi node capture` (./node-capture.ts) and `esi node console`
 * (./node-console.ts).
 */
import type { Command } from 'commander';
import { collect, filterByProperties } from '../filters.ts';
import { addOutputOptions, printList, type OutputOptions } from '../output.ts';
import { NODE_FIELDS, NODE_LONG_FIELDS, rowsOf } from '../resources.ts';
import { withSession } from '../session.ts';
import { registerCaptureCommand } from './node-capture.ts';
import { registerConsoleCommand } from './node-console.ts';
import { registerProvisionCommands } from './node-provision.ts';

/** Register `node list`. */
export function registerNodeCommands(program: Command): void {
  const node = program.command('node').description('nodes as the lease service sees them');
  addOutputOptions(
    node
      .command('list')
      .description('list the nodes you own or lease, with their offers and leases')
      .option('--long', 'show detailed information about the nodes')
      .option('--resource-class <class>', 'nodes of this resource class')
      .option('--owner <project>', 'nodes owned by this project (ID or name)')
      .option('--lessee <project>', 'nodes leased to this project (ID or name)')
      .option('--property <key<op>value>', 'filter by node property, e.g. "memory_mb>=4096" (repeatable)', collect, [] as string[]),
  ).action(async (o: { long?: boolean; resourceClass?: string; owner?: string; lessee?: string; property: string[] } & OutputOptions) => {
    const query = { resource_class: o.resourceClass, owner: o.owner, lessee: o.lessee };
    const res = await withSession((s) => s.call('lease', 'GET', '/v1/nodes', { query }));
    const nodes = filterByProperties(res?.nodes ?? [], o.property);
    const fields = o.long ? NODE_LONG_FIELDS : NODE_FIELDS;
    printList(
      fields.map(([, l]) => l),
      rowsOf(nodes, fields),
      o,
    );
  });
  registerProvisionCommands(node);
  registerCaptureCommand(node);
  registerConsoleCommand(node);
}
