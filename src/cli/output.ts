/**
 * Output of the user CLI, as the `openstack` CLI (cliff) prints it:
 *
 * - `-f table` (default): a table; lists have one column per label, single records have
 *   `Field | Value` rows; an empty list prints nothing;
 * - `-f json`: lists as an array of `{label: value}` objects, records as one object;
 * - `-f yaml`: the same data as YAML;
 * - `-f value`: lists as one line per row of space-separated values, records as one value per
 *   line — for shell scripts;
 * - `-c COLUMN` (repeatable): keep only these columns (list labels or record field names), in
 *   the command's own order; naming no known column is an error, as in cliff.
 *
 * In `table` and `value` output, objects and arrays are written as JSON, `null` as `None` and
 * booleans as `True`/`False` (the words the Python clients print), so scripts written for
 * `openstack esi …` read esi's output the same way.
 */
import Table from 'cli-table3';
import type { Command } from 'commander';
import YAML from 'yaml';
import { CliError } from './session.ts';

/** An output format. */
export type Format = 'table' | 'json' | 'yaml' | 'value';

/** The output options of one command. */
export interface OutputOptions {
  readonly format: Format;
  readonly column: readonly string[];
}

const FORMATS: readonly Format[] = ['table', 'json', 'yaml', 'value'];

/** Add `-f/--format` and `-c/--column` to a command. */
export function addOutputOptions(cmd: Command): Command {
  return cmd
    .option('-f, --format <format>', `output format: ${FORMATS.join(', ')}`, parseFormat, 'table' as Format)
    .option('-c, --column <name>', 'show only this column (repeatable)', (v: string, prev: string[]) => [...prev, v], [] as string[]);
}

function parseFormat(value: string): Format {
  if (!(FORMATS as readonly string[]).includes(value)) throw new CliError(`unknown output format "${value}" (use ${FORMATS.join(', ')}).`);
  return value as Format;
}

/** A cell as table and value output write it. */
export function cellText(v: unknown): string {
  if (v === undefined) return '';
  if (v === null) return 'None';
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'bigint') return String(v);
  return JSON.stringify(v);
}

function select(names: readonly string[], wanted: readonly string[]): number[] {
  if (wanted.length === 0) return names.map((_, i) => i);
  const idx = names.flatMap((n, i) => (wanted.includes(n) ? [i] : []));
  if (idx.length === 0)
    throw new CliError(`No recognized column names in ${JSON.stringify(wanted)}. Recognized columns are ${JSON.stringify(names)}.`);
  return idx;
}

/**
 * Print a list.
 * @param labels column labels (e.g. `UUID`, `Start Time`)
 * @param rows one array of values per row, in label order
 * @param write where to write (default stdout)
 */
export function printList(
  labels: readonly string[],
  rows: readonly (readonly unknown[])[],
  opts: OutputOptions,
  write: (s: string) => void = stdout,
): void {
  const idx = select(labels, opts.column);
  const cols = idx.map((i) => labels[i]!);
  const picked = rows.map((r) => idx.map((i) => r[i]));
  switch (opts.format) {
    case 'json':
      write(
        `${JSON.stringify(
          picked.map((r) => Object.fromEntries(cols.map((c, i) => [c, r[i] === undefined ? '' : r[i]]))),
          null,
          2,
        )}\n`,
      );
      return;
    case 'yaml':
      write(YAML.stringify(picked.map((r) => Object.fromEntries(cols.map((c, i) => [c, r[i] === undefined ? '' : r[i]])))));
      return;
    case 'value':
      for (const r of picked) write(`${r.map(cellText).join(' ')}\n`);
      return;
    default: {
      if (picked.length === 0) return;
      const table = newTable(cols);
      for (const r of picked) table.push(r.map(cellText));
      write(`${table.toString()}\n`);
    }
  }
}

/**
 * Print one record as `Field | Value` rows.
 * @param fields `[name, value]` pairs in display order
 */
export function printShow(
  fields: ReadonlyArray<readonly [string, unknown]>,
  opts: OutputOptions,
  write: (s: string) => void = stdout,
): void {
  const names = fields.map(([n]) => n);
  const idx = select(names, opts.column);
  const picked = idx.map((i) => fields[i]!);
  switch (opts.format) {
    case 'json':
      write(`${JSON.stringify(Object.fromEntries(picked.map(([k, v]) => [k, v === undefined ? '' : v])), null, 2)}\n`);
      return;
    case 'yaml':
      write(YAML.stringify(Object.fromEntries(picked.map(([k, v]) => [k, v === undefined ? '' : v]))));
      return;
    case 'value':
      for (const [, v] of picked) write(`${cellText(v)}\n`);
      return;
    default: {
      const table = newTable(['Field', 'Value']);
      for (const [k, v] of picked) table.push([k, cellText(v)]);
      write(`${table.toString()}\n`);
    }
  }
}

/** An ASCII table without row separators and without colours, as cliff/prettytable prints. */
function newTable(head: string[]): Table.Table {
  return new Table({
    head,
    style: { head: [], border: [], compact: true },
    chars: {
      top: '-',
      'top-mid': '+',
      'top-left': '+',
      'top-right': '+',
      bottom: '-',
      'bottom-mid': '+',
      'bottom-left': '+',
      'bottom-right': '+',
      left: '|',
      'left-mid': '+',
      mid: '-',
      'mid-mid': '+',
      right: '|',
      'right-mid': '+',
      middle: '|',
    },
  });
}

function stdout(s: string): void {
  process.stdout.write(s);
}
