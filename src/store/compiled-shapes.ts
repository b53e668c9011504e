/**
 * Compiled queries kept by shape: a read whose SQL text depends only on a small key (which
 * filters are given, the sort direction) is built and compiled by Kysely once and then run with
 * new parameters — building and compiling cost more than SQLite's answer to a one-row read.
 *
 * Safety: a shape is kept only when its first compile produced exactly the parameters the
 * caller passed, in order, so that substituting later parameters positionally is right; a shape
 * whose compile disagrees is compiled on every call.
 */
import type { CompiledQuery, QueryResult } from 'kysely';

/** What runs a compiled query: the Kysely handle or a transaction. */
export interface QueryRunner {
  executeQuery<R>(query: CompiledQuery<R>): Promise<QueryResult<R>>;
}

/** Compiled queries by shape key, for one repository. */
export class CompiledShapes {
  readonly #compiled = new Map<string, CompiledQuery>();

  /**
   * The compiled query of `shape` with `params`.
   * @param shape a key naming the query's SQL text, or null for a query compiled every time
   * @param params the query's parameters, in the order its compile produces them
   * @param build builds the query (with the same parameter values), called on a miss
   */
  query(shape: string | null, params: readonly unknown[], build: () => { compile(): CompiledQuery }): CompiledQuery {
    const kept = shape === null ? undefined : this.#compiled.get(shape);
    if (kept !== undefined) return { ...kept, parameters: params };
    const query = build().compile();
    const same = query.parameters.length === params.length && query.parameters.every((v, i) => v === params[i]);
    if (shape !== null && same) this.#compiled.set(shape, query);
    return query;
  }

  /**
   * Run the compiled query of `shape` (see {@link query}) on `db` and return its rows.
   * @typeParam R the row type the query's `build` selects (not checked: the caller's query decides)
   */
  async rows<R>(
    db: QueryRunner,
    shape: string | null,
    params: readonly unknown[],
    build: () => { compile(): CompiledQuery },
  ): Promise<R[]> {
    return (await db.executeQuery(this.query(shape, params, build))).rows as R[];
  }

  /** Like {@link rows}, the first row or undefined (a read by a unique key). */
  async first<R>(
    db: QueryRunner,
    shape: string | null,
    params: readonly unknown[],
    build: () => { compile(): CompiledQuery },
  ): Promise<R | undefined> {
    return (await this.rows<R>(db, shape, params, build))[0];
  }
}
