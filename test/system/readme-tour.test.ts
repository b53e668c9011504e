/**
 * The README's tours, word for word (issue 19): every `sh` block of README.md, then of each
 * document under docs/ (in name order; they continue from the README tour's server, projects
 * and users), is run in order as one bash script in a fresh directory with a fresh data
 * directory and HOME, as a user who pastes them into a terminal would. A block preceded by `<!-- tour: skip: <reason> -->` is not
 * run; the test prints each skipped block with its reason (the reason names the test that runs
 * that flow instead).
 *
 * Only `npm` is shimmed: `npm install` is what CI did already, and `npm start -- <args>` runs
 * `node <repo>/bin/esi.js server <args>` in the tour's directory (what `npm start` runs in a
 * clone). The script runs with `set -eE -o pipefail`: the first command that fails fails the
 * test with its line. The server the tour starts in the background is stopped at the end (the
 * whole process group). Ports: the README's 8585 and 8586, which must be free.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { testDb } from '../helpers/harness.ts';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** One fenced `sh` block of a Markdown file. */
interface Block {
  readonly line: number;
  readonly text: string;
  /** Why it is not run, or null when it is. */
  readonly skip: string | null;
}

/** The `sh`/`bash` blocks of a Markdown text, with their skip markers. */
export function shellBlocks(markdown: string): Block[] {
  const lines = markdown.split('\n');
  const out: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/^```(sh|bash|shell)\s*$/.test(lines[i]!)) continue;
    let before = i - 1;
    while (before >= 0 && lines[before]!.trim() === '') before--;
    const marker = /^<!-- tour: skip: (.*) -->$/.exec(lines[before] ?? '');
    const start = i + 1;
    let end = start;
    while (end < lines.length && !lines[end]!.startsWith('```')) end++;
    out.push({ line: start + 1, text: lines.slice(start, end).join('\n'), skip: marker ? marker[1]! : null });
    i = end;
  }
  return out;
}

/** Resolve true when nothing listens on 127.0.0.1:`port`. */
function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

const SHIM = `npm() {
  case "$1" in
    install) echo "(npm install: done by CI before the tour)" ;;
    start) shift; [ "\${1:-}" = "--" ] && shift; node "$ESI_REPO/bin/esi.js" server "$@" ;;
    *) command npm "$@" ;;
  esac
}
set -eE -o pipefail
shopt -s expand_aliases
trap 'echo "tour: line $LINENO of tour.sh failed: $BASH_COMMAND" >&2' ERR
`;

describe.runIf(testDb() === 'sqlite')('README.md tours, word for word', () => {
  it('every block not marked skip runs, in order, in a fresh directory', { timeout: 600_000 }, async () => {
    const docs = fs
      .readdirSync(path.join(REPO, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .sort()
      .map((f) => `docs/${f}`);
    const blocks = ['README.md', ...docs].flatMap((file) =>
      shellBlocks(fs.readFileSync(path.join(REPO, file), 'utf8')).map((b) => ({ ...b, file })),
    );
    const run = blocks.filter((b) => b.skip === null);
    for (const b of blocks.filter((x) => x.skip !== null)) process.stdout.write(`${b.file}:${b.line}: skipped (${b.skip})\n`);
    expect(run.filter((b) => b.file === 'README.md').length).toBeGreaterThanOrEqual(2);
    for (const port of [8585, 8586]) expect(await portFree(port), `port ${port} must be free for the README tour`).toBe(true);

    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-tour-'));
    fs.mkdirSync(path.join(dir, 'home'));
    fs.symlinkSync(path.join(REPO, 'bin'), path.join(dir, 'bin'));
    const script = SHIM + run.map((b) => `# ${b.file}:${b.line}\n${b.text}\n`).join('\n');
    fs.writeFileSync(path.join(dir, 'tour.sh'), script);
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: path.join(dir, 'home'), LANG: 'C.UTF-8', ESI_REPO: REPO, TERM: 'dumb' };
    const child = spawn('bash', ['tour.sh'], { cwd: dir, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const started = Date.now();
    // A command that hangs ends the tour after 8 minutes (the test then fails with the output).
    const guard = setTimeout(() => {
      out += '\nREADME tour: stopped after 480 s\n';
      process.kill(-child.pid!, 'SIGKILL');
    }, 480_000);
    const code = await new Promise<number>((resolve) => child.on('exit', (c) => resolve(c ?? 1)));
    clearTimeout(guard);
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    // Stop what the tour left running (the server it started with &), then its directory.
    try {
      process.kill(-child.pid!, 'SIGTERM');
    } catch {
      // the group is gone already
    }
    for (let i = 0; i < 100 && !(await portFree(8585)); i++) await new Promise((r) => setTimeout(r, 100));
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // stopped by SIGTERM
    }
    process.stdout.write(`README and docs tours: ${run.length} blocks in ${seconds} s, exit ${code}\n`);
    fs.rmSync(dir, { recursive: true, force: true });
    expect(code, out.slice(-6000)).toBe(0);
  });
});
