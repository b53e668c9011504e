/**
 * `esi lease request`: lease several nodes by hardware at once, all or none
 * (`POST /lease/v1/lease_requests`, esi's additive endpoint; docs/leasing.md).
 *
 * One group from options:
 *   esi lease request --count 3 --property "memory_mb>=49152" --property "gpus>=1" \
 *     --start-time 2030-01-02T00:00:00 --duration 3d
 * Several groups with `--group` (repeatable), each `COUNT [class=RC] [trait=T]…[: EXPRESSION]`:
 *   esi lease request --group "3: memory_mb >= 49152 and gpus >= 1" \
 *     --group "1: memory_mb >= 16384 and local_gb >= 1000" --duration 3d
 *
 * Prints the new leases with `esi lease list`'s columns. When the request cannot be satisfied
 * the error names the failed group and the earliest window in which it would fit.
 */
import type { Command } from 'commander';
import { collect, parseJsonObject } from '../filters.ts';
import { addOutputOptions, printList, type OutputOptions } from '../output.ts';
import { LEASE_FIELDS, rowsOf } from '../resources.ts';
import { CliError, withSession } from '../session.ts';

/** A group of the request body. */
export interface GroupBody {
  count: number;
  resource_class?: string;
  traits?: string[];
  properties?: string;
}

const PROPERTY_RE = /^([^><=!]+?)\s*(>=|<=|==|!=|=|>|<)\s*(.+)$/;

/** Turn `--property key<op>value` filters into one expression joined by `and`. */
export function propertiesToExpression(filters: readonly string[]): string {
  return filters
    .map((f) => {
      const m = PROPERTY_RE.exec(f.trim());
      if (!m) throw new CliError(`Invalid property filter format: ${f} (use "key>=value"; operators >=, <=, >, <, =, !=).`);
      const value = m[3]!.trim();
      const literal = /^-?\d+(\.\d+)?$/.test(value) || /^(true|false)$/i.test(value) ? value : JSON.stringify(value);
      return `${m[1]!.trim()} ${m[2] === '=' ? '==' : m[2]} ${literal}`;
    })
    .join(' and ');
}

/**
 * Parse a `--group` value: `COUNT [class=RC] [trait=T]… [: EXPRESSION]`.
 * @throws CliError for another shape
 */
export function parseGroupSpec(spec: string): GroupBody {
  const colon = spec.indexOf(':');
  const head = (colon < 0 ? spec : spec.slice(0, colon)).trim().split(/\s+/);
  const expression = colon < 0 ? '' : spec.slice(colon + 1).trim();
  const count = Number(head[0]);
  if (!Number.isInteger(count) || count < 1)
    throw new CliError(`Invalid --group "${spec}": start with the number of nodes, e.g. "3: memory_mb >= 49152".`);
  const group: GroupBody = { count };
  for (const word of head.slice(1)) {
    const [key, value] = word.split('=', 2);
    if (key === 'class' && value) group.resource_class = value;
    else if (key === 'trait' && value) (group.traits ??= []).push(value);
    else throw new CliError(`Invalid --group "${spec}": unknown "${word}" (use class=RESOURCE_CLASS and trait=TRAIT before the colon).`);
  }
  if (expression !== '') group.properties = expression;
  return group;
}

/** Parse a duration such as `3d`, `36h`, `90m`, `45s` (or plain seconds). @returns ms */
export function parseDuration(text: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*(d|h|m|s)?$/i.exec(text.trim());
  if (!m) throw new CliError(`Invalid --duration "${text}": use e.g. 3d, 36h, 90m or 45s.`);
  const unit = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000 }[(m[2] ?? 's').toLowerCase() as 'd' | 'h' | 'm' | 's'];
  return Math.round(Number(m[1]) * unit);
}

/** esi-leap's naive UTC form of an instant. */
function leapTime(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19);
}

interface RequestOptions {
  group: string[];
  count?: string;
  resourceClass?: string;
  trait: string[];
  property: string[];
  where?: string;
  startTime?: string;
  endTime?: string;
  duration?: string;
  name?: string;
  purpose?: string;
  properties?: string;
}

/** Build the request body from the options. @throws CliError for contradictory options */
export function requestBody(o: RequestOptions, now: number = Date.now()): Record<string, unknown> {
  let groups: GroupBody[];
  if (o.group.length > 0) {
    if (o.count !== undefined || o.resourceClass !== undefined || o.trait.length > 0 || o.property.length > 0 || o.where !== undefined) {
      throw new CliError('Use either --group (repeatable) or --count with --resource-class/--trait/--property/--where, not both.');
    }
    groups = o.group.map(parseGroupSpec);
  } else {
    const count = Number(o.count ?? '1');
    if (!Number.isInteger(count) || count < 1) throw new CliError(`Invalid --count "${o.count}": a whole number of nodes.`);
    const expr = [o.property.length > 0 ? propertiesToExpression(o.property) : '', o.where ? `(${o.where})` : '']
      .filter(Boolean)
      .join(' and ');
    groups = [
      {
        count,
        ...(o.resourceClass ? { resource_class: o.resourceClass } : {}),
        ...(o.trait.length > 0 ? { traits: o.trait } : {}),
        ...(expr ? { properties: expr } : {}),
      },
    ];
  }
  if (o.duration !== undefined && o.endTime !== undefined) throw new CliError('Use either --end-time or --duration, not both.');
  let endTime = o.endTime;
  if (o.duration !== undefined) {
    const start =
      o.startTime !== undefined
        ? Date.parse(`${o.startTime.replace(' ', 'T')}${/[zZ]|[+-]\d\d:?\d\d$/.test(o.startTime) ? '' : 'Z'}`)
        : now;
    if (Number.isNaN(start)) throw new CliError(`Invalid --start-time "${o.startTime}".`);
    endTime = leapTime(start + parseDuration(o.duration));
  }
  return {
    groups,
    ...(o.startTime !== undefined ? { start_time: o.startTime } : o.duration !== undefined ? { start_time: leapTime(now) } : {}),
    ...(endTime !== undefined ? { end_time: endTime } : {}),
    ...(o.name !== undefined ? { name: o.name } : {}),
    ...(o.purpose !== undefined ? { purpose: o.purpose } : {}),
    ...(o.properties !== undefined ? { properties: parseJsonObject(o.properties) } : {}),
  };
}

/** Register `lease request` on the `lease` command group. */
export function registerLeaseRequest(lease: Command): void {
  addOutputOptions(
    lease
      .command('request')
      .description('lease nodes by hardware: every group is satisfied, or nothing is leased')
      .option('--group <spec>', 'a group "COUNT [class=RC] [trait=T]... [: EXPRESSION]" (repeatable)', collect, [] as string[])
      .option('--count <n>', 'number of nodes (single group; default 1)')
      .option('--resource-class <class>', 'nodes of this resource class (single group)')
      .option('--trait <trait>', 'nodes with this trait (single group; repeatable)', collect, [] as string[])
      .option(
        '--property <key<op>value>',
        'node property filter, e.g. "memory_mb>=49152" (single group; repeatable, all must hold)',
        collect,
        [] as string[],
      )
      .option('--where <expression>', 'hardware expression, e.g. "gpus >= 1 or cpu_arch == aarch64" (single group)')
      .option('--start-time <time>', 'when the leases start (default now)')
      .option('--end-time <time>', 'when the leases end (default start + the default lease length)')
      .option('--duration <length>', 'lease length instead of --end-time, e.g. 3d, 36h, 90m')
      .option('--name <name>', 'name of every lease')
      .option('--purpose <text>', 'purpose of every lease')
      .option('--properties <json>', 'arbitrary key/value properties of every lease, as a JSON object'),
    LEASE_FIELDS.map(([, l]) => l),
  ).action(async (o: RequestOptions & OutputOptions) => {
    const body = requestBody(o);
    const res = await withSession((s) => s.call('lease', 'POST', '/v1/lease_requests', { body }));
    printList(
      LEASE_FIELDS.map(([, l]) => l),
      rowsOf(res?.leases ?? [], LEASE_FIELDS),
      o,
    );
  });
}
