/**
 * Output of the user CLI, as the `openstack` CLI (cliff) prints it:
 *
 * - `-f table` (default): a table; lists have one column per label, single records have
 *   `Field | Value` rows; an empty list prints its header, so that "nothing matched" is told
 *   apart from "nothing ran" (cliff prints nothing);
 * - `-f json`: lists as an array of `{label: value}` objects, records as one object;
 * - `-f yaml`: the same data as YAML;
 * - `-f value`: lists as one line per row of space-separated values, records as one value per
 *   line — for shell scripts;
 * - `-f csv`: a header line of the column names, then one line per row (a record is one row),
 *   strings quoted and numbers not (cliff's `QUOTE_NONNUMERIC`);
 * - `-c COLUMN` (repeatable): keep only these columns (list labels or record field names), in
 *   the command's own order; naming no known column is an error, as in cliff. A command that
 *   changes state declares its columns ({@link addOutputOptions}), so that a bad `-c` is refused
 *   before anything is sent.
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
export type Format = 'table' | 'json' | 'yaml' | 'value' | 'csv';

/** The output options of one command. */
export interface OutputOptions {
  readonly format: Format;
  readonly column: readonly string[];
}

const FORMATS: readonly Format[] = ['table', 'json', 'yaml', 'value', 'csv'];

/**
 * Add `-f/--format` and `-c/--column` to a command.
 * @param columns the columns the command prints, when known before it runs (every command that
 *   changes state gives them): `-c` naming none of them is then refused before the action runs,
 *   so that nothing is created by a command that would fail to print it
 */
export function addOutputOptions(cmd: Command, columns?: readonly string[]): Command {
  const withOptions = cmd
    .option('-f, --format <format>', `output format: ${FORMATS.join(', ')}`, parseFormat, 'table' as Format)
    .option('-c, --column <name>', 'show only this column (repeatable)', (v: string, prev: string[]) => [...prev, v], [] as string[]);
  if (columns !== undefined) {
    withOptions.hook('preAction', (_program, action) => {
      select(columns, action.opts<Partial<OutputOptions>>().column ?? []);
    });
  }
  return withOptions;
}

/** One CSV line: strings quoted (inner quotes doubled), numbers bare, as Python's `csv.QUOTE_NONNUMERIC`. */
function csvLine(values: readonly unknown[]): string {
  return values
    .map((v) =>
      typeof v === 'number' || typeof v === 'bigint' ? String(v) : `"${(v === undefined ? '' : cellText(v)).replace(/"/g, '""')}"`,
    )
    .join(',');
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

/** A column name as `-c` compares it: lower case, spaces as underscores (`Start Time` = `start_time`). */
function columnKey(name: string): string {
  return name.trim().toLowerCase().replace(/\s+/g, '_');
}

/**
 * The indexes of the columns `wanted` names, in the command's order; a list's label and the
 * field name of the same column are one column (`-c uuid` and `-c UUID` both select `UUID`).
 * @throws CliError when `wanted` names none of them (cliff's message)
 */
function select(names: readonly string[], wanted: readonly string[]): number[] {
  if (wanted.length === 0) return names.map((_, i) => i);
  const keys = new Set(wanted.map(columnKey));
  const idx = names.flatMap((n, i) => (keys.has(columnKey(n)) ? [i] : []));
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
    case 'csv':
      write(`${[csvLine(cols), ...picked.map(csvLine)].join('\n')}\n`);
      return;
    default: {
      const table = newTable(cols);
      for (const r of picked) table.push(r.map(cellText));
      write(`${table.toString()}\n`);
    }
  }
}

/** A column of a list of API records: `[field path, label]`; a path may be dotted (`usage.nodes_now`). */
export type FieldColumn = readonly [string, string];

/** The value at a dotted path of a record (undefined when a step is missing). */
export function valueAt(item: Readonly<Record<string, unknown>>, path: string): unknown {
  return path.split('.').reduce<unknown>((v, k) => (v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined), item);
}

/**
 * Print API records as a list with one column per field ({@link printList}).
 * @param fields the columns, `[field path, label]`, in display order
 * @param items the records, e.g. `body.webhooks` (null/undefined: none)
 */
export function printRecords(
  fields: readonly FieldColumn[],
  items: readonly Readonly<Record<string, unknown>>[] | null | undefined,
  opts: OutputOptions,
  write: (s: string) => void = stdout,
): void {
  printList(
    fields.map(([, label]) => label),
    (items ?? []).map((item) => fields.map(([path]) => valueAt(item, path))),
    opts,
    write,
  );
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
    case 'csv':
      write(`${csvLine(picked.map(([k]) => k))}\n${csvLine(picked.map(([, v]) => v))}\n`);
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
