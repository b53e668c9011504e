/**
 * Who sees which change of the dashboard's live channel (src/domain/changes/visibility.ts) and
 * what a channel tells (src/domain/changes/channel.ts): admins everything; a project its own
 * nodes, leases and offers (before and after a change), offers restricted to its project or an
 * ancestor, public offers; anonymous and system readers nothing; never a field value.
 */
import { describe, expect, it } from 'vitest';
import { ANONYMOUS, type AuthContext } from '../../../src/domain/auth.ts';
import { ChangeChannels, type ChangeEvent } from '../../../src/domain/changes/channel.ts';
import type { ChangeFeed, ChangeListener, ChangeRecord } from '../../../src/domain/changes/model.ts';
import { changeViewer, seesChange } from '../../../src/domain/changes/visibility.ts';

function ctx(over: Partial<AuthContext>): AuthContext {
  return { ...ANONYMOUS, anonymous: false, userId: 'u', userName: 'u', userDomainId: 'default', tokenId: 't', expiresAt: null, ...over };
}
const project = (id: string, roles = ['member', 'reader']): AuthContext => ctx({ projectId: id, projectName: id, roles });
const change = (projects: string[]): Pick<ChangeRecord, 'projects'> => ({ projects });

describe('seesChange', () => {
  it('an admin (project-scoped admin role or system-scoped admin) sees every change, private or not', () => {
    for (const admin of [
      project('admin', ['admin', 'member', 'reader']),
      ctx({ systemScope: 'all', roles: ['admin', 'member', 'reader'] }),
    ]) {
      const v = changeViewer(admin, []);
      expect(seesChange(v, change(['o1', 'l1']))).toBe(true);
      expect(seesChange(v, change([]))).toBe(true);
      expect(seesChange(v, change(['o1', '^l1']))).toBe(true);
    }
  });

  it('a project sees a change naming it (owner, lessee, old or new), not one naming only others', () => {
    const v = changeViewer(project('l1'), []);
    expect(seesChange(v, change(['o1', 'l1']))).toBe(true);
    // A node whose lessee was removed: old lessee l1, new none.
    expect(seesChange(v, change(['o1', 'l1', 'o1']))).toBe(true);
    expect(seesChange(v, change(['o1', 'o2']))).toBe(false);
    expect(seesChange(v, change([]))).toBe(false);
    // Not by prefix: l10 is another project.
    expect(seesChange(changeViewer(project('l10'), []), change(['o1', 'l1']))).toBe(false);
  });

  it('a public offer (`*`) reaches every project; a restricted one (`^id`) reaches that project and its subtree', () => {
    expect(seesChange(changeViewer(project('o2'), []), change(['o1', '*']))).toBe(true);
    const restricted = change(['o1', '^l1']);
    expect(seesChange(changeViewer(project('l1'), []), restricted)).toBe(true);
    expect(seesChange(changeViewer(project('l1-child'), ['l1', 'root']), restricted)).toBe(true);
    expect(seesChange(changeViewer(project('o1'), []), restricted)).toBe(true);
    expect(seesChange(changeViewer(project('o2'), ['root']), restricted)).toBe(false);
    // Only a subtree entry reaches the subtree: a child of an owner sees nothing of its parent's nodes.
    expect(seesChange(changeViewer(project('o1-child'), ['o1']), change(['o1', 'l1']))).toBe(false);
  });

  it('anonymous callers and system-scoped tokens without the admin role see nothing, public offers included', () => {
    expect(seesChange(changeViewer(ANONYMOUS, []), change(['*']))).toBe(false);
    expect(seesChange(changeViewer(ctx({ systemScope: 'all', roles: ['reader'] }), []), change(['*', 'o1']))).toBe(false);
  });
});

describe('ChangeChannels', () => {
  /** A feed that hands rows to its one subscriber when told. */
  function fakeFeed(): {
    feed: ChangeFeed;
    push(r: ChangeRecord): void;
    start(seq: number, reset: boolean): void;
    froms: Array<number | null>;
  } {
    let listener: ChangeListener | null = null;
    const froms: Array<number | null> = [];
    return {
      feed: {
        subscribe(from, l) {
          froms.push(from);
          listener = l;
          return { close: () => (listener = null) };
        },
      },
      push: (r) => listener?.change(r),
      start: (seq, reset) => listener?.start(seq, reset),
      froms,
    };
  }
  const row = (seq: number, projects: string[], extra: Partial<ChangeRecord> = {}): ChangeRecord => ({
    seq,
    kind: 'node',
    resource_id: `node-${seq}`,
    op: 'update',
    projects,
    ...extra,
  });

  it('tells a viewer only the changes it may see, as {kind, id, op, seq}; follows role changes; stops when closed', async () => {
    const f = fakeFeed();
    const channels = new ChangeChannels(f.feed, async (id) => (id === 'child' ? ['l1'] : []));
    const viewer = await channels.viewerOf(project('child'));
    expect(viewer).toEqual({ all: false, projectId: 'child', ancestors: ['l1'] });
    const got: Array<ChangeEvent | string> = [];
    const channel = channels.subscribe(viewer, 41, {
      start: (seq, reset) => got.push(`start ${seq} ${reset}`),
      change: (e) => got.push(e),
    });
    expect(f.froms).toEqual([41]);
    f.start(41, false);
    f.push(row(42, ['o1', 'l1']));
    f.push(row(43, ['o1', '^l1'], { kind: 'offer', op: 'create', resource_id: 'offer-1' }));
    f.push(row(44, ['child']));
    channel.update(project('child', ['admin']));
    f.push(row(45, ['o9']));
    channel.close();
    f.push(row(46, ['child']));
    expect(got).toEqual([
      'start 41 false',
      { kind: 'offer', id: 'offer-1', op: 'create', seq: 43 },
      { kind: 'node', id: 'node-44', op: 'update', seq: 44 },
      { kind: 'node', id: 'node-45', op: 'update', seq: 45 },
    ]);
  });
});
