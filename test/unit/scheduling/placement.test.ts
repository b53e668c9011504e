/**
 * `Placer` (src/domain/scheduling/placement.ts) over an in-memory node table with the same
 * compare-and-set claim rule as the store (a claim succeeds only on the version read, with no
 * lock and no instance): concurrent placements never share a node and do not race each other
 * within a process, stale nodes are re-checked, locked nodes retried, freed nodes reusable.
 */
import { describe, expect, it } from 'vitest';
import type { Node } from '../../../src/domain/inventory/model.ts';
import type { SchedNode } from '../../../src/domain/scheduling/model.ts';
import { Placer } from '../../../src/domain/scheduling/placement.ts';
import type { ClaimResult, SchedulingNodeQuery, SchedulingNodes } from '../../../src/domain/scheduling/ports.ts';
import { node, request } from './fixtures.ts';

/** Nodes in memory; claims are compare-and-set on the version. Counts reads and claims. */
class Table implements SchedulingNodes {
  readonly rows = new Map<string, SchedNode & { locked?: boolean }>();
  reads = 0;
  claims = 0;
  constructor(nodes: SchedNode[]) {
    for (const n of nodes) this.rows.set(n.uuid, n);
  }
  async find(q: SchedulingNodeQuery): Promise<SchedNode[]> {
    this.reads++;
    await new Promise((r) => setTimeout(r, 1));
    return [...this.rows.values()].filter(
      (n) => !q.freeOnly || (n.provisionState === 'available' && n.instanceUuid === null && !n.maintenance),
    );
  }
  async get(uuid: string): Promise<SchedNode | null> {
    return this.rows.get(uuid) ?? null;
  }
  async resourceClasses(): Promise<string[]> {
    return ['baremetal'];
  }
  async claim(n: SchedNode, owner: string): Promise<ClaimResult> {
    this.claims++;
    await new Promise((r) => setTimeout(r, 1));
    const cur = this.rows.get(n.uuid);
    if (!cur) return { ok: false, reason: 'missing' };
    if (cur.locked) return { ok: false, reason: 'locked' };
    if (cur.instanceUuid !== null) return { ok: false, reason: 'taken' };
    if (cur.version !== n.version) return { ok: false, reason: 'stale' };
    const next = { ...cur, instanceUuid: owner, version: cur.version + 1 };
    this.rows.set(n.uuid, next);
    return { ok: true, node: { uuid: n.uuid, version: next.version } as Node };
  }
  /** Change a node (bumps its version). */
  touch(uuid: string, change: Partial<SchedNode & { locked: boolean }>): void {
    const cur = this.rows.get(uuid)!;
    this.rows.set(uuid, { ...cur, ...change, version: cur.version + 1 });
  }
}

const placer = (t: Table, sleeps: number[] = []) =>
  new Placer(t, { lockedRetries: 3, lockedRetryDelayMs: 1000, sleep: async (ms) => void sleeps.push(ms) });

describe('Placer', () => {
  it('50 placements at once on 20 nodes: 20 placed on distinct nodes, one shared read, no lost race', async () => {
    const t = new Table(Array.from({ length: 20 }, () => node()));
    const p = placer(t);
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => p.place(request({ seed: `r${i}` }), 1, (n) => t.claim(n, `r${i}`))),
    );
    const placed = results.flatMap((r) => r.placed.map((x) => x.node.uuid));
    expect(placed).toHaveLength(20);
    expect(new Set(placed).size).toBe(20);
    expect(t.reads).toBe(1);
    expect(t.claims).toBe(20);
  });

  it('a node that changed since it was read is read again and claimed when it still fits, skipped when not', async () => {
    const a = node({ name: 'a', memoryMb: 16384 });
    const b = node({ name: 'b', memoryMb: 32768 });
    const t = new Table([a, b]);
    const p = placer(t);
    // `a` changes (a power-state refresh) after the read but before the claim: re-read, claimed.
    const first = await p.place(request(), 1, async (n) => {
      if (n.uuid === a.uuid && n.version === 1) t.touch(a.uuid, { powerState: 'power on' });
      return t.claim(n, 'x');
    });
    expect(first.placed.map((x) => x.node.name)).toEqual(['a']);
    // `b` goes into maintenance after the read: skipped, nothing placed.
    const second = await p.place(request(), 1, async (n) => {
      if (n.uuid === b.uuid && n.version === 1) t.touch(b.uuid, { maintenance: true });
      return t.claim(n, 'y');
    });
    expect(second.placed).toEqual([]);
  });

  it('a locked node is retried after the others, Ironic-style (3 × 1 s)', async () => {
    const a = node({ name: 'a' });
    const t = new Table([a]);
    t.touch(a.uuid, { locked: true });
    const sleeps: number[] = [];
    const p = placer(t, sleeps);
    let tries = 0;
    const out = await p.place(request(), 1, async (n) => {
      if (++tries === 3) t.touch(a.uuid, { locked: false });
      return t.claim(n, 'z');
    });
    expect(out.placed).toHaveLength(1);
    expect(sleeps).toEqual([1000, 1000]);
  });

  it('a node freed after this process claimed it can be placed again at once', async () => {
    const a = node({ name: 'a' });
    const t = new Table([a]);
    const p = placer(t);
    expect((await p.place(request(), 1, (n) => t.claim(n, 'one'))).placed).toHaveLength(1);
    t.touch(a.uuid, { instanceUuid: null });
    expect((await p.place(request({ seed: 'again' }), 1, (n) => t.claim(n, 'two'))).placed).toHaveLength(1);
  });

  it('stops when the claim says the allocation is gone', async () => {
    const t = new Table(Array.from({ length: 5 }, () => node()));
    let calls = 0;
    const out = await placer(t).place(request(), 1, async () => {
      calls++;
      return { ok: false, reason: 'allocation' };
    });
    expect(out.placed).toEqual([]);
    expect(calls).toBe(1);
  });
});
