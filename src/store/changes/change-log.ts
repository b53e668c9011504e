/**
 * Reads and prunes the change log (migration 0025): the rows the triggers on `nodes`, `leases`
 * and `offers` write. Only reads by the primary key `seq` and batched deletes; no rule about who
 * sees a row lives here (src/domain/changes/visibility.ts).
 */
import type { ChangeKind, ChangeLogBounds, ChangeLogPruner, ChangeLogReader, ChangeOp, ChangeRecord } from '../../domain/changes/model.ts';
import { nowMsSql, type Store } from '../database.ts';

/** Rows deleted per statement while pruning (keeps each transaction short). */
const PRUNE_BATCH = 5_000;

/** Ids in one `seq in (…)` list (late commits awaited at once; far below both engines' bind limits). */
const MAX_ALSO = 500;

const KINDS: ReadonlySet<string> = new Set<ChangeKind>(['node', 'lease', 'offer']);
const OPS: ReadonlySet<string> = new Set<ChangeOp>(['create', 'update', 'delete']);

/** The change log of one store. */
export class KyselyChangeLog implements ChangeLogReader, ChangeLogPruner {
  constructor(private readonly store: Pick<Store, 'db' | 'dialect'>) {}

  async bounds(): Promise<ChangeLogBounds> {
    const row = await this.store.db
      .selectFrom('change_log')
      .select((eb) => [eb.fn.min('seq').as('min'), eb.fn.max('seq').as('max')])
      .executeTakeFirst();
    return { min: num(row?.min), max: num(row?.max) };
  }

  async after(after: number, limit: number, also: readonly number[] = []): Promise<ChangeRecord[]> {
    const late = also.slice(0, MAX_ALSO);
    const rows = await this.store.db
      .selectFrom('change_log')
      .select(['seq', 'kind', 'resource_id', 'op', 'projects'])
      .where((eb) => (late.length === 0 ? eb('seq', '>', after) : eb.or([eb('seq', '>', after), eb('seq', 'in', late)])))
      .orderBy('seq')
      .limit(limit)
      .execute();
    return rows.flatMap(toRecord);
  }

  async between(from: number, to: number, limit: number): Promise<ChangeRecord[]> {
    const rows = await this.store.db
      .selectFrom('change_log')
      .select(['seq', 'kind', 'resource_id', 'op', 'projects'])
      .where('seq', '>', from)
      .where('seq', '<=', to)
      .orderBy('seq')
      .limit(limit)
      .execute();
    return rows.flatMap(toRecord);
  }

  async prune(retentionMs: number): Promise<number> {
    const { max } = await this.bounds();
    if (max === null) return 0;
    const cutoff = nowMsSql(this.store.dialect);
    let total = 0;
    for (;;) {
      const result = await this.store.db
        .deleteFrom('change_log')
        .where('seq', 'in', (eb) =>
          eb
            .selectFrom('change_log')
            .select('seq')
            .where('seq', '<', max)
            .where((w) => w('at', '<', w(cutoff, '-', retentionMs)))
            .orderBy('seq')
            .limit(PRUNE_BATCH),
        )
        .executeTakeFirst();
      const deleted = Number(result.numDeletedRows);
      total += deleted;
      if (deleted < PRUNE_BATCH) return total;
    }
  }
}

/** A number from an aggregate (PostgreSQL `int8` arrives parsed; an empty table gives null). */
function num(value: unknown): number | null {
  return value === null || value === undefined ? null : Number(value);
}

/** A row as a record; a row of an unknown kind or op (written by a newer esi) is skipped. */
function toRecord(row: { seq: number; kind: string; resource_id: string; op: string; projects: string }): ChangeRecord[] {
  if (!KINDS.has(row.kind) || !OPS.has(row.op)) return [];
  return [
    {
      seq: Number(row.seq),
      kind: row.kind as ChangeKind,
      resource_id: row.resource_id,
      op: row.op as ChangeOp,
      projects: row.projects.split(' ').filter((p) => p !== ''),
    },
  ];
}
