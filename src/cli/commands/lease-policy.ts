/**
 * `esi lease policy list|show|create|set|delete`: an owner's lease policies
 * (`/lease/v1/lease_policies`, esi's additive endpoint; docs/leasing.md) — the longest lease, the
 * gap between leases, the projects that may lease, and whether disks are erased at lease end, for
 * all the owner's nodes or one of them. Durations are given and shown in seconds.
 *
 *   esi lease policy create --max-lease-seconds 604800 --allowed-project l1 --allowed-project l2
 *   esi lease policy create --node node-1 --min-gap-seconds 3600 --erase-devices
 *   esi lease policy set <uuid> --max-lease-seconds none
 */
import type { Command } from 'commander';
import { addOutputOptions, printRecords, printShow, type FieldColumn, type OutputOptions } from '../output.ts';
import { CliError, withSession } from '../session.ts';
import { parseLimit } from './quota.ts';

/** `esi lease policy list` columns: `[field, label]` (esi-leap's names, as the other lease commands). */
export const POLICY_FIELDS: readonly FieldColumn[] = [
  ['uuid', 'UUID'],
  ['project', 'Project'],
  ['resource', 'Resource'],
  ['max_lease_seconds', 'Max Lease Seconds'],
  ['min_gap_seconds', 'Min Gap Seconds'],
  ['allowed_projects', 'Allowed Projects'],
  ['erase_devices', 'Erase Devices'],
];

/** The fields of one policy, as `show` prints them (every field the API returns, sorted). */
const SHOW_FIELDS = [
  'allowed_projects',
  'created_at',
  'erase_devices',
  'max_lease_seconds',
  'min_gap_seconds',
  'project',
  'project_id',
  'resource',
  'resource_uuid',
  'updated_at',
  'uuid',
];

/** Options that set a policy's limits (create and set). */
interface LimitOptions {
  readonly maxLeaseSeconds?: string;
  readonly minGapSeconds?: string;
  readonly allowedProject?: string[];
  readonly anyProject?: boolean;
  readonly eraseDevices?: boolean;
}

/** The request body fields the limit options give. @throws CliError for a bad value */
function limitBody(o: LimitOptions): Record<string, unknown> {
  if (o.anyProject && (o.allowedProject?.length ?? 0) > 0) throw new CliError('give --allowed-project or --any-project, not both.');
  return {
    ...(o.maxLeaseSeconds !== undefined ? { max_lease_seconds: parseLimit('--max-lease-seconds', o.maxLeaseSeconds) } : {}),
    ...(o.minGapSeconds !== undefined ? { min_gap_seconds: parseLimit('--min-gap-seconds', o.minGapSeconds) } : {}),
    ...((o.allowedProject?.length ?? 0) > 0 ? { allowed_projects: o.allowedProject } : {}),
    ...(o.anyProject ? { allowed_projects: null } : {}),
    ...(o.eraseDevices !== undefined ? { erase_devices: o.eraseDevices } : {}),
  };
}

/** Add the limit options to a command. */
function withLimitOptions(cmd: Command): Command {
  return cmd
    .option('--max-lease-seconds <s>', 'longest lease, seconds (≥ 60), or "none"')
    .option('--min-gap-seconds <s>', 'time between one project\'s leases of a node, seconds, or "none"')
    .option('--allowed-project <project>', 'a project that may lease (repeatable; default: any)', (v: string, p: string[]) => [...p, v], [])
    .option('--any-project', 'any project may lease (clears --allowed-project)')
    .option('--erase-devices', "erase the node's disks at lease end")
    .option('--no-erase-devices', "do not erase the node's disks at lease end");
}

/** Print one policy as `Field | Value` rows. */
function showPolicy(p: Record<string, unknown>, o: OutputOptions): void {
  printShow(
    SHOW_FIELDS.map((f) => [f, p[f]] as const),
    o,
  );
}

/** Register `esi lease policy …` on the `lease` command group. */
export function registerLeasePolicyCommands(lease: Command): void {
  const policy = lease.command('policy').description("owners' lease policies: longest lease, gap, allowed projects, disk erasure");

  addOutputOptions(
    policy
      .command('list')
      .description('list lease policies (owners: their own; admins: all)')
      .option('--project <project>', 'policies of this project (admin)')
      .option('--node <node>', 'policies naming this node'),
  ).action(async (o: { project?: string; node?: string } & OutputOptions) => {
    const res = await withSession((s) =>
      s.call('lease', 'GET', '/v1/lease_policies', { query: { project_id: o.project, resource_uuid: o.node } }),
    );
    printRecords(POLICY_FIELDS, res?.lease_policies, o);
  });

  addOutputOptions(policy.command('show').description('show a lease policy').argument('<uuid>', 'policy UUID')).action(
    async (uuid: string, o: OutputOptions) => {
      showPolicy(await withSession((s) => s.call('lease', 'GET', `/v1/lease_policies/${encodeURIComponent(uuid)}`)), o);
    },
  );

  addOutputOptions(
    withLimitOptions(
      policy
        .command('create')
        .description("create a lease policy for all the project's nodes, or for one (--node)")
        .option('--node <node>', 'the node it applies to (UUID or name); default: all nodes of the project')
        .option('--project <project>', 'the owner project (admin; default: your project)'),
    ),
    SHOW_FIELDS,
  ).action(async (o: { node?: string; project?: string } & LimitOptions & OutputOptions) => {
    const body = { ...limitBody(o), ...(o.node ? { resource_uuid: o.node } : {}), ...(o.project ? { project_id: o.project } : {}) };
    showPolicy(await withSession((s) => s.call('lease', 'POST', '/v1/lease_policies', { body })), o);
  });

  addOutputOptions(
    withLimitOptions(policy.command('set').description("change a lease policy's limits").argument('<uuid>', 'policy UUID')),
    SHOW_FIELDS,
  ).action(async (uuid: string, o: LimitOptions & OutputOptions) => {
    const body = limitBody(o);
    if (Object.keys(body).length === 0) throw new CliError('Nothing to set: give at least one limit option.');
    showPolicy(await withSession((s) => s.call('lease', 'PATCH', `/v1/lease_policies/${encodeURIComponent(uuid)}`, { body })), o);
  });

  policy
    .command('delete')
    .description('delete a lease policy')
    .argument('<uuid...>', 'policy UUIDs')
    .action(async (uuids: string[]) => {
      await withSession(async (s) => {
        for (const uuid of uuids) {
          await s.call('lease', 'DELETE', `/v1/lease_policies/${encodeURIComponent(uuid)}`);
          process.stdout.write(`Deleted lease policy ${uuid}\n`);
        }
      });
    });
}
