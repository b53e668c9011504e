/**
 * The conductor's take-over trigger (src/conductor/takeover.ts `OrphanWatch`, issue 21): after
 * each heartbeat it compares the live set with the previous one and takes over at once when a
 * conductor left it; a conductor that was itself silent for longer than its dead-after takes
 * nothing over for one dead-after (after a database outage every conductor was silent), and
 * then takes over those still dead.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, vi } from 'vitest';
import { OrphanWatch } from '../../../src/conductor/takeover.ts';
import type { ConductorRuntime } from '../../../src/conductor/runtime.ts';

const quiet = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

/** A watch over a live set the test changes, whose rounds are counted instead of run. */
function watch(): { w: OrphanWatch; set: (alive: Record<string, boolean>) => void; rounds: () => number } {
  let current: Record<string, boolean> = {};
  const directory = {
    list: async () => Object.entries(current).map(([hostname, alive]) => ({ hostname, alive })),
    invalidate: () => {},
  };
  const w = new OrphanWatch(
    { log: quiet, host: 'me' } as unknown as ConductorRuntime,
    directory,
    async () => () => true,
    () => false,
  );
  let n = 0;
  vi.spyOn(w, 'takeOverOnce').mockImplementation(async () => {
    n++;
    return 0;
  });
  return { w, set: (alive) => void (current = alive), rounds: () => n };
}

describe('OrphanWatch', () => {
  it('lost(): the dead ones on the first look, then those that left the live set', () => {
    const { w } = watch();
    expect(
      w.lost([
        { hostname: 'a', alive: true },
        { hostname: 'old', alive: false },
      ]),
    ).toEqual(['old']);
    expect(
      w.lost([
        { hostname: 'a', alive: true },
        { hostname: 'b', alive: true },
      ]),
    ).toEqual([]);
    expect(w.lost([{ hostname: 'b', alive: true }])).toEqual(['a']);
    expect(w.lost([{ hostname: 'b', alive: false }])).toEqual(['b']);
  });

  it('takes over at once when a conductor leaves the live set, not while nothing changes', async () => {
    const { w, set, rounds } = watch();
    set({ me: true, other: true });
    expect(await w.afterHeartbeat(100, 6000)).toBe(false);
    expect(await w.afterHeartbeat(100, 6000)).toBe(false);
    expect(rounds()).toBe(0);
    set({ me: true, other: false });
    expect(await w.afterHeartbeat(100, 6000)).toBe(true);
    expect(rounds()).toBe(1);
  });

  it('after its own silence beyond its dead-after, takes nothing over for one dead-after, then those still dead', async () => {
    const { w, set, rounds } = watch();
    set({ me: true, other: true, third: true });
    await w.afterHeartbeat(100, 200);
    // The database was away: everyone was silent; "other" has not beaten again yet.
    set({ me: true, other: false, third: true });
    expect(await w.afterHeartbeat(5000, 200)).toBe(true);
    expect(rounds()).toBe(0);
    await sleep(250);
    // "other" is back; "third" died meanwhile and stays dead.
    set({ me: true, other: true, third: false });
    expect(await w.afterHeartbeat(100, 200)).toBe(true);
    expect(rounds()).toBe(1);
  });
});
