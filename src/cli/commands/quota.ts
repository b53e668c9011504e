/**
 * `esi quota list|show|set|delete`: per-project lease quotas (`/lease/v1/quotas`, esi's additive
 * endpoint; docs/leasing.md) — nodes held at once and node-hours in a rolling window. Setting
 * and deleting are for admins; a project may read its own quota and usage.
 *
 *   esi quota set l1 --max-nodes 10 --max-node-hours 2000 --window-hours 720
 *   esi quota set l1 --max-nodes none      # remove one limit, keep the others
 */
import type { Command } from 'commander';
import { addOutputOptions, printRecords, printShow, type FieldColumn, type OutputOptions } from '../output.ts';
import { CliError, withSession } from '../session.ts';

/** `esi quota list` columns: `[field path, label]`. */
export const QUOTA_FIELDS: readonly FieldColumn[] = [
  ['project', 'Project'],
  ['max_nodes', 'Max Nodes'],
  ['max_node_hours', 'Max Node Hours'],
  ['window_hours', 'Window Hours'],
  ['usage.nodes_now', 'Nodes Now'],
  ['usage.peak_nodes', 'Peak Nodes'],
  ['usage.node_hours_in_window', 'Node Hours In Window'],
];

/** A quota as one flat record (usage fields prefixed `usage_`), sorted by field name. */
export function quotaRecord(q: Record<string, unknown>): Array<[string, unknown]> {
  const usage = (q.usage ?? {}) as Record<string, unknown>;
  const flat: Record<string, unknown> = {
    project: q.project,
    project_id: q.project_id,
    max_nodes: q.max_nodes,
    max_node_hours: q.max_node_hours,
    window_hours: q.window_hours,
  };
  for (const [k, v] of Object.entries(usage)) flat[`usage_${k}`] = v;
  return Object.keys(flat)
    .sort()
    .map((k) => [k, flat[k]]);
}

/** Parse a limit option: a non-negative integer, or `none` for no limit. @throws CliError */
export function parseLimit(option: string, text: string): number | null {
  if (/^(none|unlimited)$/i.test(text.trim())) return null;
  if (!/^\d+$/.test(text.trim())) throw new CliError(`${option} must be a whole number or "none" (got "${text}").`);
  return Number(text);
}

/** Register the `quota` command group. */
export function registerQuotaCommands(program: Command): void {
  const quota = program.command('quota').description('lease quotas of projects (set by admins)');

  addOutputOptions(quota.command('list').description('list quotas (admins: all; others: their own)')).action(async (o: OutputOptions) => {
    const res = await withSession((s) => s.call('lease', 'GET', '/v1/quotas'));
    printRecords(QUOTA_FIELDS, res?.quotas, o);
  });

  addOutputOptions(
    quota.command('show').description("show a project's quota and usage").argument('<project>', 'project ID or name'),
  ).action(async (project: string, o: OutputOptions) => {
    const q = await withSession((s) => s.call('lease', 'GET', `/v1/quotas/${encodeURIComponent(project)}`));
    printShow(quotaRecord(q), o);
  });

  addOutputOptions(
    quota
      .command('set')
      .description("set a project's quota (admin); limits not given keep their value")
      .argument('<project>', 'project ID or name')
      .option('--max-nodes <n>', 'most nodes held at the same time, or "none"')
      .option('--max-node-hours <h>', 'most node-hours in any rolling window, or "none"')
      .option('--window-hours <h>', 'length of the rolling window, hours (default 720)'),
  ).action(async (project: string, o: { maxNodes?: string; maxNodeHours?: string; windowHours?: string } & OutputOptions) => {
    if (o.maxNodes === undefined && o.maxNodeHours === undefined && o.windowHours === undefined) {
      throw new CliError('Nothing to set: give --max-nodes, --max-node-hours or --window-hours.');
    }
    const q = await withSession(async (s) => {
      const path = `/v1/quotas/${encodeURIComponent(project)}`;
      const current = await s.call('lease', 'GET', path);
      const body = {
        max_nodes: o.maxNodes !== undefined ? parseLimit('--max-nodes', o.maxNodes) : current.max_nodes,
        max_node_hours: o.maxNodeHours !== undefined ? parseLimit('--max-node-hours', o.maxNodeHours) : current.max_node_hours,
        window_hours: o.windowHours !== undefined ? Number(parseLimit('--window-hours', o.windowHours) ?? NaN) : current.window_hours,
      };
      if (Number.isNaN(body.window_hours)) throw new CliError('--window-hours must be a whole number of hours.');
      return s.call('lease', 'PUT', path, { body });
    });
    printShow(quotaRecord(q), o);
  });

  quota
    .command('delete')
    .description("remove a project's quota (admin): it becomes unlimited")
    .argument('<project>', 'project ID or name')
    .action(async (project: string) => {
      await withSession((s) => s.call('lease', 'DELETE', `/v1/quotas/${encodeURIComponent(project)}`));
      process.stdout.write(`Deleted quota of project ${project}\n`);
    });
}
