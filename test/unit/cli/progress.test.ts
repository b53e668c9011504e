/**
 * The CLI's progress view (src/cli/progress.ts): without a terminal, a line per phase and per
 * 10 % of bytes; a byte phase that ends (the next phase, or success) is drawn at 100 %, a failure
 * leaves it where it was; on a terminal the bar ends at 100 % too.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ProgressView } from '../../../src/cli/progress.ts';

/** A stream that records what is written; a terminal when `tty`. */
function sink(tty: boolean): { stream: NodeJS.WriteStream; text: () => string } {
  let out = '';
  const w = new Writable({
    write(chunk: Buffer, _enc, done) {
      out += chunk.toString();
      done();
    },
  }) as unknown as NodeJS.WriteStream & Record<string, unknown>;
  if (tty) {
    Object.assign(w, {
      isTTY: true,
      columns: 120,
      cursorTo: (_x: number, _y?: unknown, cb?: () => void) => (cb?.(), true),
      clearLine: (_d: number, cb?: () => void) => (cb?.(), true),
      moveCursor: (_x: number, _y: number, cb?: () => void) => (cb?.(), true),
      clearScreenDown: (cb?: () => void) => (cb?.(), true),
    });
  }
  return { stream: w, text: () => out };
}

const MiB = 1024 * 1024;

describe('ProgressView without a terminal', () => {
  it('prints a line per phase and per 10 %, and 100 % when the next phase begins', () => {
    const s = sink(false);
    const v = new ProgressView('B', s.stream);
    v.update({ phase: 'writing the image', bytes: 0, total: 100 * MiB });
    v.update({ phase: 'writing the image', bytes: 32 * MiB, total: 100 * MiB });
    v.update({ phase: 'booting the instance' });
    v.finish();
    expect(s.text().split('\n').filter(Boolean)).toEqual([
      'esi: B: writing the image',
      'esi: B: writing the image: 0% (0 B of 100.0 MiB)',
      'esi: B: writing the image: 32% (32.0 MiB of 100.0 MiB)',
      'esi: B: writing the image: 100% (100.0 MiB of 100.0 MiB)',
      'esi: B: booting the instance',
    ]);
  });

  it('finish draws the last byte phase at 100 %; stop (a failure) leaves it where it was', () => {
    const ok = sink(false);
    const a = new ProgressView('B', ok.stream);
    a.update({ phase: 'capturing', bytes: 40 * MiB, total: 50 * MiB });
    a.finish();
    a.stop();
    expect(ok.text().trimEnd().split('\n').at(-1)).toBe('esi: B: capturing: 100% (50.0 MiB of 50.0 MiB)');
    expect(ok.text().match(/100%/g)).toHaveLength(1);

    const failed = sink(false);
    const b = new ProgressView('B', failed.stream);
    b.update({ phase: 'writing the image', bytes: 32 * MiB, total: 100 * MiB });
    b.stop();
    expect(failed.text()).not.toContain('100%');

    const unknown = sink(false);
    const c = new ProgressView('B', unknown.stream);
    c.update({ phase: 'erasing', bytes: 300 * MiB });
    c.finish();
    expect(unknown.text()).not.toContain('%');
  });
});

describe('ProgressView on a terminal', () => {
  it('the bar ends at 100 % when the operation succeeds', () => {
    const s = sink(true);
    const v = new ProgressView('B', s.stream);
    v.update({ phase: 'writing the image', bytes: 32 * MiB, total: 100 * MiB });
    v.finish();
    expect(s.text()).toContain('100% 100.0 MiB of 100.0 MiB');
  });
});
