/**
 * The render cache: keys cover everything a rendering depends on; LRU eviction by size.
 */
import { describe, expect, it } from 'vitest';
import { NodeRenderCache } from '../../../src/api/baremetal/render-cache.ts';
import type { NodeView } from '../../../src/domain/inventory/presentation.ts';

const view = (version: number, redaction = 0, conductor: string | null = 'c1'): NodeView => ({
  node: { id: 1, uuid: 'u1', version, owner: null, lessee: null },
  redaction,
  conductor,
});

describe('NodeRenderCache', () => {
  it('keys on uuid, row version, microversion, redaction and conductor', () => {
    const keys = new Set([
      NodeRenderCache.key(view(1), 78),
      NodeRenderCache.key(view(2), 78),
      NodeRenderCache.key(view(1), 82),
      NodeRenderCache.key(view(1, 15), 78),
      NodeRenderCache.key(view(1, 0, 'c2'), 78),
      NodeRenderCache.key(view(1, 0, null), 78),
    ]);
    expect(keys.size).toBe(6);
  });

  it('drops entries unused for a generation (half the budget, in bytes)', () => {
    const c = new NodeRenderCache(10, 8);
    const b = (s: string) => Buffer.from(s);
    c.set('a', b('1234'));
    c.set('b', b('1234')); // young holds 8 > 5: it becomes the old generation
    expect(c.get('a')?.toString()).toBe('1234'); // a is used again: back to the young one
    c.set('c', b('1234')); // young holds 8 > 5: turns over, dropping b (unused)
    expect(c.has('b')).toBe(false);
    expect(c.has('a')).toBe(true);
    expect(c.stats()).toMatchObject({ entries: 2, bytes: 8 });
    c.set('huge', b('x'.repeat(11)));
    expect(c.has('huge')).toBe(false);
    c.set('a', b('12'));
    expect(c.stats().bytes).toBe(6);
    c.set('d', b('ééé')); // 6 bytes, 3 characters: young holds 8 > 5, turns over, dropping c
    expect(c.has('c')).toBe(false);
    expect(c.stats()).toMatchObject({ entries: 2, bytes: 8 });
    expect(c.get('d')?.toString()).toBe('ééé');
    for (let i = 0; i < 100; i++) c.set(`k${i}`, b('12'));
    expect(c.stats().bytes).toBeLessThanOrEqual(10);
  });

  it('caches whole pages by a digest of their keys and next link', () => {
    const c = new NodeRenderCache(100, 8);
    const k1 = NodeRenderCache.pageKey(['a', 'b'], undefined);
    expect(NodeRenderCache.pageKey(['a', 'b'], 'next')).not.toBe(k1);
    expect(NodeRenderCache.pageKey(['a\nb'], undefined)).toBe(NodeRenderCache.pageKey(['a', 'b'], undefined)); // joined by newline, keys never contain one
    c.setPage(k1, Buffer.from('12345'));
    c.setPage('k2', Buffer.from('12345')); // 10 > 8: evicts k1
    expect(c.getPage(k1)).toBeUndefined();
    expect(c.getPage('k2')?.toString()).toBe('12345');
  });

  it('remembers whether most of the last full page had to be rendered', () => {
    const c = new NodeRenderCache();
    expect(c.expectsMisses()).toBe(false);
    c.notePage(1000, 900);
    expect(c.expectsMisses()).toBe(true);
    c.notePage(1000, 500);
    expect(c.expectsMisses()).toBe(false);
    c.notePage(0, 0);
    expect(c.expectsMisses()).toBe(false);
  });
});
