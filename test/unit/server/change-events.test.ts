/**
 * Change hints (issue 21, item 1): the notification payload and channel
 * (src/store/change-listener.ts) and their routing to the lease manager and the conductor
 * (src/server/change-events.ts).
 */
import { describe, expect, it } from 'vitest';
import type { ChangeHintHandler, ChangeHints } from '../../../src/domain/changes/hints.ts';
import { routeChangeHints } from '../../../src/server/change-events.ts';
import { changeChannel, parseHintPayload } from '../../../src/store/change-listener.ts';

/** A hint source that hands out its one subscriber. */
function source(): ChangeHints & { handler: () => ChangeHintHandler } {
  let handler: ChangeHintHandler | null = null;
  return {
    subscribe(h) {
      handler = h;
      return () => (handler = null);
    },
    start: async () => undefined,
    stop: async () => undefined,
    handler: () => handler!,
  };
}

describe('change hints', () => {
  it('parses `<kind> <op> <uuid>` payloads and refuses anything else', () => {
    expect(parseHintPayload('lease create 1b2c')).toEqual({ kind: 'lease', op: 'create', id: '1b2c' });
    expect(parseHintPayload('node update a')).toEqual({ kind: 'node', op: 'update', id: 'a' });
    for (const bad of [undefined, '', 'lease create', 'port create x', 'lease renew x', 'lease create x y'])
      expect(parseHintPayload(bad)).toBeNull();
  });

  it('names the channel after the schema, cut to 63 bytes as PostgreSQL cuts identifiers', () => {
    expect(changeChannel('public')).toBe('esi_changes_public');
    expect(changeChannel('s'.repeat(63))).toHaveLength(63);
  });

  it("routes other processes' lease and offer changes to the lease manager, node changes to the conductor, resyncs to both", () => {
    const calls: string[] = [];
    const hints = source();
    const stop = routeChangeHints(hints, {
      leases: { changed: (r) => calls.push(`changed ${r.kind} ${r.uuid}`), resync: () => calls.push('sweep') },
      nodes: { notifyNode: (u) => calls.push(`node ${u}`), resync: () => calls.push('poll') },
    });
    const h = hints.handler();
    h.hint({ kind: 'lease', op: 'create', id: 'l1', local: false });
    h.hint({ kind: 'offer', op: 'delete', id: 'o1', local: false });
    h.hint({ kind: 'node', op: 'update', id: 'n1', local: false });
    h.hint({ kind: 'node', op: 'delete', id: 'n2', local: false });
    h.hint({ kind: 'lease', op: 'update', id: 'l2', local: true });
    h.hint({ kind: 'node', op: 'update', id: 'n3', local: true });
    h.resync();
    expect(calls).toEqual(['changed lease l1', 'changed offer o1', 'node n1', 'sweep', 'poll']);
    stop();
  });
});
