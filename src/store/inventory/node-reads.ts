/**
 * Node reads for the node repository, as value arrays (`Store.selectArrays`: no object per
 * row from the driver) mapped by generated mappers (`node-rows.ts`):
 *
 * - full nodes by uuid, name or id, and by lists of ids or uuids (`IN` lists padded to a few
 *   sizes, so the same statements are reused);
 * - pages built by the repository (any Kysely select of known columns);
 * - stored display documents (migration 0006, `node-display.ts`) with the few plain columns
 *   kept beside them: a dozen columns per node instead of ~60, nothing parsed. A document is
 *   used only when it was made for the row's current version by the running codec
 *   (`display_version`, `display_rev`); for any other row the node is read in full and its
 *   document encoded here, so a reader never gets a stale document or one of another format.
 *
 * Without an array primitive (repositories built on a bare Kysely handle, e.g. in tests) the
 * same compiled queries run through Kysely and rows are turned into arrays.
 */
import type { CompiledQuery, SelectQueryBuilder } from 'kysely';
import { SLICE_BASE_FIELDS, type Node, type NodeField, type NodeSlice } from '../../domain/inventory/model.ts';
import type { ArrayQuery, Db } from '../database.ts';
import type { Database } from '../schema.ts';
import type { NodeDocumentCodec } from './node-display.ts';
import { NODE_COLUMNS, nodeMapper } from './node-rows.ts';

/** Largest `IN` list of one query; lists are padded to a power of two from 16 up to this. */
export const IN_CHUNK = 1024;
/**
 * A node's stored display document with the plain values kept beside it: the columns a
 * conductor changes while it holds a node (`reservation`, `updated_at`, epoch ms) and those a
 * reader needs for policy and the conductor mapping.
 */
export interface NodeDocumentRow {
  readonly id: number;
  readonly version: number;
  readonly uuid: string;
  readonly owner: string | null;
  readonly lessee: string | null;
  readonly driver: string;
  readonly conductor_group: string;
  readonly reservation: string | null;
  readonly updated_at: number | null;
  /** What the codec encoded for this version of the node. */
  readonly document: string;
}

/** Columns of a {@link NodeDocumentRow} read with its document, in the order {@link documentRowFromColumns} reads them. */
export const DOCUMENT_COLUMNS = [
  'id',
  'version',
  'uuid',
  'owner',
  'lessee',
  'driver',
  'conductor_group',
  'reservation',
  'updated_at',
  'display',
  'display_version',
  'display_rev',
] as const;

/** A document row from a row of {@link DOCUMENT_COLUMNS}, or null when its document cannot be used. */
function documentRowFromColumns(r: readonly unknown[], revision: string): NodeDocumentRow | null {
  if (r[10] !== r[1] || r[11] !== revision || typeof r[9] !== 'string') return null;
  return {
    id: r[0] as number,
    version: r[1] as number,
    uuid: r[2] as string,
    owner: r[3] as string | null,
    lessee: r[4] as string | null,
    driver: r[5] as string,
    conductor_group: r[6] as string,
    reservation: r[7] as string | null,
    updated_at: r[8] as number | null,
    document: r[9],
  };
}

/** The document row of a full node, encoded now. */
function documentRowOf(node: Node, codec: NodeDocumentCodec): NodeDocumentRow {
  const { id, version, uuid, owner, lessee, driver, conductor_group, reservation, updated_at } = node;
  return { id, version, uuid, owner, lessee, driver, conductor_group, reservation, updated_at, document: codec.encode(node) };
}

/** Compiled statements kept (column sets × key columns × `IN` sizes). */
const COMPILED_CACHE = 256;

/** `values` padded with its last element to the next size of the `IN` ladder. */
function padded<T>(values: readonly T[]): T[] {
  let n = 16;
  while (n < values.length) n *= 2;
  const out = values.slice();
  while (out.length < n) out.push(values[values.length - 1]!);
  return out;
}

/** Array-based node reads over one database (see the module documentation). */
export class NodeReads {
  readonly #compiled = new Map<string, CompiledQuery>();

  /**
   * @param db the Kysely handle (builds and compiles every query)
   * @param codec the format of the stored documents (see `node-display.ts`)
   * @param arrays the store's array primitive; without it queries run through `db`
   */
  constructor(
    private readonly db: Db,
    private readonly codec: NodeDocumentCodec,
    private readonly arrays?: ArrayQuery,
  ) {}

  /** Run a compiled select; rows as value arrays in select-list order. */
  async run(query: CompiledQuery): Promise<unknown[][]> {
    if (this.arrays !== undefined) return this.arrays(query);
    return (await this.db.executeQuery(query)).rows.map((row) => Object.values(row as object));
  }

  /** Run a select of `columns` (as built by the caller) and map its rows to nodes. */
  async nodes(query: SelectQueryBuilder<Database, 'nodes', object>, columns: readonly string[]): Promise<NodeSlice[]> {
    const map = nodeMapper(columns);
    return (await this.run(query.compile())).map(map);
  }

  /** Full nodes whose `column` equals `value` (0 or 1 for the unique columns). */
  async fullBy(column: 'uuid' | 'name' | 'id', value: string | number): Promise<Node[]> {
    const q = this.#statement(`full|${column}`, () =>
      this.db
        .selectFrom('nodes')
        .select(NODE_COLUMNS as never[])
        .where(column, '=', value as never)
        .compile(),
    );
    const map = nodeMapper(NODE_COLUMNS);
    return (await this.run({ ...q, parameters: [value] })).map((r) => map(r) as Node);
  }

  /**
   * Slices (`SLICE_BASE_FIELDS` and `fields`) of the nodes whose `column` equals `value` (0 or
   * 1 for the unique columns).
   */
  async sliceBy(column: 'uuid' | 'name' | 'id', value: string | number, fields: readonly NodeField[]): Promise<NodeSlice[]> {
    const columns = fields.length === 0 ? SLICE_BASE_FIELDS : [...new Set([...SLICE_BASE_FIELDS, ...fields])];
    const q = this.#statement(`slice|${column}|${columns.join(',')}`, () =>
      this.db
        .selectFrom('nodes')
        .select(columns as never[])
        .where(column, '=', value as never)
        .compile(),
    );
    const map = nodeMapper(columns);
    return (await this.run({ ...q, parameters: [value] })).map(map);
  }

  /** Full nodes whose `column` is one of `values` (missing ones absent, any order). */
  async fullIn(column: 'uuid' | 'id', values: readonly (string | number)[]): Promise<Node[]> {
    const map = nodeMapper(NODE_COLUMNS);
    const out: Node[] = [];
    for (const rows of await this.#inChunks('full', NODE_COLUMNS, column, values)) for (const r of rows) out.push(map(r) as Node);
    return out;
  }

  /**
   * Document rows by internal id (missing ones absent, any order): from the stored documents,
   * and for rows whose document is missing, stale or of another format, from the full row.
   */
  async documents(ids: readonly number[]): Promise<NodeDocumentRow[]> {
    const out: NodeDocumentRow[] = [];
    for (const rows of await this.#inChunks('document', DOCUMENT_COLUMNS, 'id', ids)) out.push(...(await this.#documentRows(rows)));
    return out;
  }

  /** The document rows of a page select of {@link DOCUMENT_COLUMNS}, in its order (see {@link documents}). */
  async pageDocuments(query: SelectQueryBuilder<Database, 'nodes', object>): Promise<NodeDocumentRow[]> {
    return this.#documentRows(await this.run(query.compile()));
  }

  /** Document rows of rows of {@link DOCUMENT_COLUMNS}, in order; rows without a usable document are read in full (a node deleted meanwhile is left out). */
  async #documentRows(rows: readonly unknown[][]): Promise<NodeDocumentRow[]> {
    const revision = this.codec.revision;
    const out: (NodeDocumentRow | null)[] = rows.map((r) => documentRowFromColumns(r, revision));
    const rebuild = rows.filter((_, i) => out[i] === null).map((r) => r[0] as number);
    if (rebuild.length === 0) return out as NodeDocumentRow[];
    const full = new Map((await this.fullIn('id', rebuild)).map((n) => [n.id, documentRowOf(n, this.codec)]));
    return out.map((d, i) => d ?? full.get(rows[i]![0] as number) ?? null).filter((d): d is NodeDocumentRow => d !== null);
  }

  /** Run `select columns … where column in (…)` over `values` in padded chunks. */
  async #inChunks(
    kind: string,
    columns: readonly string[],
    column: 'uuid' | 'id',
    values: readonly (string | number)[],
  ): Promise<unknown[][][]> {
    const out: unknown[][][] = [];
    for (let i = 0; i < values.length; i += IN_CHUNK) {
      const part = padded(values.slice(i, i + IN_CHUNK));
      const q = this.#statement(`${kind}|${column}|${part.length}`, () =>
        this.db
          .selectFrom('nodes')
          .select(columns as never[])
          .where(column, 'in', part as never[])
          .compile(),
      );
      out.push(await this.run({ ...q, parameters: part }));
    }
    return out;
  }

  /** A compiled statement of a fixed shape, compiled once (bounded cache). */
  #statement(key: string, build: () => CompiledQuery): CompiledQuery {
    let q = this.#compiled.get(key);
    if (q === undefined) {
      q = build();
      if (this.#compiled.size >= COMPILED_CACHE) this.#compiled.delete(this.#compiled.keys().next().value!);
      this.#compiled.set(key, q);
    }
    return q;
  }
}
