/**
 * The ssh-style escape of `esi node console`: `~.` at the start of a line (or of the session)
 * disconnects, `~~` sends one `~`, a `~` elsewhere is sent as it is; split across chunks too.
 */
import { describe, expect, it } from 'vitest';
import { EscapeFilter } from '../../../src/cli/commands/node-console.ts';

const feed = (f: EscapeFilter, s: string) => {
  const r = f.feed(Buffer.from(s));
  return { send: r.send.toString(), quit: r.quit };
};

describe('EscapeFilter', () => {
  it('quits on ~. at the start of the session and after CR or LF, dropping what follows', () => {
    expect(feed(new EscapeFilter(), '~.')).toEqual({ send: '', quit: true });
    expect(feed(new EscapeFilter(), 'ls\r~.rest')).toEqual({ send: 'ls\r', quit: true });
    expect(feed(new EscapeFilter(), 'ls\n~.')).toEqual({ send: 'ls\n', quit: true });
  });

  it('sends a ~ inside a line, ~~ as one ~, and ~ followed by another key as both', () => {
    expect(feed(new EscapeFilter(), 'a~.b')).toEqual({ send: 'a~.b', quit: false });
    expect(feed(new EscapeFilter(), '~~.')).toEqual({ send: '~.', quit: false });
    expect(feed(new EscapeFilter(), '~x')).toEqual({ send: '~x', quit: false });
  });

  it('recognises the escape split across chunks', () => {
    const f = new EscapeFilter();
    expect(feed(f, 'echo\r')).toEqual({ send: 'echo\r', quit: false });
    expect(feed(f, '~')).toEqual({ send: '', quit: false });
    expect(feed(f, '.')).toEqual({ send: '', quit: true });
  });
});
