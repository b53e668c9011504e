/**
 * The change tailer (src/server/change-tailer.ts) over an in-memory log: it reads only while
 * someone subscribes, delivers rows in order, waits for a row whose transaction committed late
 * (PostgreSQL), replays what a resuming subscriber missed, and resets one whose cursor the log
 * no longer holds or never held.
 */
import { describe, expect, it } from 'vitest';
import type { ChangeLogReader, ChangeRecord } from '../../../src/domain/changes/model.ts';
import { ChangeTailer } from '../../../src/server/change-tailer.ts';
import { waitFor } from '../../helpers/wait-for.ts';

/** An in-memory change log; `visible` rows are the committed ones. */
class MemoryLog implements ChangeLogReader {
  rows: ChangeRecord[] = [];
  reads = 0;
  add(seq: number): void {
    this.rows.push({ seq, kind: 'node', resource_id: `n${seq}`, op: 'update', projects: ['p'] });
    this.rows.sort((a, b) => a.seq - b.seq);
  }
  async bounds() {
    return { min: this.rows[0]?.seq ?? null, max: this.rows.at(-1)?.seq ?? null };
  }
  async after(after: number, limit: number, also: readonly number[] = []) {
    this.reads++;
    return this.rows.filter((r) => r.seq > after || also.includes(r.seq)).slice(0, limit);
  }
  async between(from: number, to: number, limit: number) {
    return this.rows.filter((r) => r.seq > from && r.seq <= to).slice(0, limit);
  }
}

const quiet = { warn: () => undefined };

/** Subscribe and record what the listener is told. */
function record(tailer: ChangeTailer, from: number | null) {
  const got: string[] = [];
  const sub = tailer.subscribe(from, {
    start: (seq, reset) => got.push(`${reset ? 'reset' : 'start'} ${seq}`),
    change: (r) => got.push(String(r.seq)),
  });
  return { got, sub };
}

describe('ChangeTailer', () => {
  it('reads nothing without subscribers, starts at the newest row, delivers later rows in order, and stops when the last one leaves', async () => {
    const log = new MemoryLog();
    log.add(1);
    log.add(2);
    const tailer = new ChangeTailer(log, quiet, { intervalMs: 5 });
    await new Promise((r) => setTimeout(r, 30));
    expect(log.reads).toBe(0);
    const a = record(tailer, null);
    await waitFor(
      () => a.got,
      (g) => g.length === 1,
      { what: 'start' },
    );
    expect(a.got).toEqual(['start 2']);
    log.add(3);
    log.add(4);
    await waitFor(
      () => a.got,
      (g) => g.length === 3,
      { what: 'rows 3 and 4' },
    );
    expect(a.got).toEqual(['start 2', '3', '4']);
    a.sub.close();
    await waitFor(
      () => tailer.subscribers,
      (n) => n === 0,
    );
    await new Promise((r) => setTimeout(r, 30));
    const reads = log.reads;
    await new Promise((r) => setTimeout(r, 30));
    expect(log.reads).toBe(reads);
    await tailer.stop();
  });

  it('delivers a row whose transaction committed after a later one (a gap awaited), and gives a gap up after the wait', async () => {
    const log = new MemoryLog();
    const tailer = new ChangeTailer(log, quiet, { intervalMs: 5, lateWaitMs: 200 });
    const a = record(tailer, null);
    await waitFor(
      () => a.got,
      (g) => g.length === 1,
    );
    log.add(2); // seq 1 still in its transaction
    await waitFor(
      () => a.got,
      (g) => g.includes('2'),
      { what: 'row 2' },
    );
    log.add(1); // commits late
    await waitFor(
      () => a.got,
      (g) => g.includes('1'),
      { what: 'late row 1' },
    );
    expect(a.got).toEqual(['start 0', '2', '1']);
    // seq 3 rolled back: given up after the wait; rows after it flow meanwhile.
    log.add(4);
    await waitFor(
      () => a.got,
      (g) => g.includes('4'),
    );
    await waitFor(
      () => tailer.awaitingLate,
      (n) => n === 0,
      { what: 'seq 3 given up' },
    );
    log.add(3); // too late: no longer awaited (a real log never shows a rolled-back row)
    log.add(5);
    await waitFor(
      () => a.got,
      (g) => g.includes('5'),
    );
    expect(a.got).toEqual(['start 0', '2', '1', '4', '5']);
    await tailer.stop();
  });

  it('replays to a resuming subscriber the rows after its cursor, then goes live', async () => {
    const log = new MemoryLog();
    for (let s = 1; s <= 5; s++) log.add(s);
    const tailer = new ChangeTailer(log, quiet, { intervalMs: 5 });
    const live = record(tailer, null);
    await waitFor(
      () => live.got,
      (g) => g.length === 1,
    );
    const b = record(tailer, 2);
    await waitFor(
      () => b.got,
      (g) => g.length === 4,
      { what: 'replay' },
    );
    expect(b.got).toEqual(['3', '4', '5', 'start 5']);
    log.add(6);
    await waitFor(
      () => b.got,
      (g) => g.includes('6'),
    );
    await tailer.stop();
  });

  it('resets a subscriber whose cursor was pruned, is newer than the log, comes from an empty log, or is too far behind', async () => {
    const log = new MemoryLog();
    for (let s = 10; s <= 20; s++) log.add(s);
    const tailer = new ChangeTailer(log, quiet, { intervalMs: 5, backlogMax: 5 });
    const cases: Array<[number, string[]]> = [
      [8, ['reset 20']], // rows 9 and before pruned
      [9, ['reset 20']], // too far behind (11 rows > 5)
      [16, ['17', '18', '19', '20', 'start 20']],
      [20, ['start 20']],
      [99, ['reset 20']],
    ];
    for (const [from, want] of cases) {
      const s = record(tailer, from);
      await waitFor(
        () => s.got,
        (g) => g.some((x) => x.startsWith('start') || x.startsWith('reset')),
        { what: `start from ${from}` },
      );
      expect(s.got, `from ${from}`).toEqual(want);
      s.sub.close();
    }
    await tailer.stop();
    const empty = new ChangeTailer(new MemoryLog(), quiet, { intervalMs: 5 });
    const e = record(empty, 3);
    await waitFor(
      () => e.got,
      (g) => g.length === 1,
    );
    expect(e.got).toEqual(['reset 0']);
    const z = record(empty, 0);
    await waitFor(
      () => z.got,
      (g) => g.length === 1,
    );
    expect(z.got).toEqual(['start 0']);
    await empty.stop();
  });
});
