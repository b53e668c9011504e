/**
 * Every command of `esi` shows examples in its help, and every example is a command line that
 * names its own command and only options that command (or the program) has — so that a renamed
 * option or command fails here instead of in a user's terminal.
 */
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { commandPath, EXAMPLES } from '../../../src/cli/examples.ts';
import { buildProgram } from '../../../src/program.ts';

/** Every command below the program with an action or no subcommands (the ones a user runs). */
function runnable(program: Command): Command[] {
  const out: Command[] = [];
  const visit = (cmd: Command): void => {
    for (const sub of cmd.commands) {
      if (sub.name() === 'help') continue;
      const hasAction = (sub as unknown as { _actionHandler: unknown })._actionHandler != null;
      if (hasAction || sub.commands.length === 0) out.push(sub);
      visit(sub);
    }
  };
  visit(program);
  return out;
}

/** The words of a shell line: quotes kept together, `$(…)` kept whole, a `#` comment dropped. */
function words(line: string): string[] {
  const out: string[] = [];
  const re = /"[^"]*"|'[^']*'|\$\([^)]*\)|[^\s]+/g;
  for (const m of line.matchAll(re)) {
    if (m[0].startsWith('#')) break;
    out.push(m[0]);
  }
  return out;
}

describe('esi help examples', () => {
  const program = buildProgram();
  const commands = runnable(program);

  it('every command a user runs has examples, and every example belongs to a command', () => {
    const paths = commands.map(commandPath);
    expect(paths.length).toBeGreaterThan(60);
    expect(paths.filter((p) => (EXAMPLES[p]?.length ?? 0) === 0)).toEqual([]);
    const known = new Set(['', ...paths, ...commands.flatMap((c) => (c.commands.length > 0 ? [commandPath(c)] : []))]);
    expect(Object.keys(EXAMPLES).filter((p) => !known.has(p))).toEqual([]);
  });

  it("each example starts with its command and uses only that command's options", () => {
    const byPath = new Map(commands.map((c) => [commandPath(c), c]));
    byPath.set('', program);
    const globals = new Set(program.options.flatMap((o) => [o.long, o.short].filter((x): x is string => !!x)));
    const bad: string[] = [];
    for (const [path, lines] of Object.entries(EXAMPLES)) {
      const cmd = byPath.get(path)!;
      for (const line of lines) {
        const w = words(line).filter((x) => !/^[A-Z_]+=/.test(x));
        if (w[0] !== 'esi') bad.push(`${line}: does not start with esi`);
        const named = w.slice(1, 1 + (path === '' ? 0 : path.split(' ').length)).join(' ');
        if (path !== '' && named !== path) bad.push(`${line}: not an example of "${path}"`);
        if (path === '') continue; // the program's examples show several commands
        const opts = new Set(cmd.options.flatMap((o) => [o.long, o.short].filter((x): x is string => !!x)));
        for (const x of w) {
          if (!x.startsWith('-') || x === '-') continue;
          const flag = x.split('=')[0]!;
          if (!opts.has(flag) && !globals.has(flag)) bad.push(`${line}: ${flag} is not an option of "esi ${path}"`);
        }
      }
    }
    expect(bad).toEqual([]);
  });

  it('help shows them', () => {
    const create = program.commands.find((c) => c.name() === 'lease')!.commands.find((c) => c.name() === 'create')!;
    let text = '';
    create.configureOutput({ writeOut: (s) => (text += s) });
    create.outputHelp();
    expect(text).toMatch(/Examples:\n {2}\$ esi lease create node-1 l1 /);
  });
});
