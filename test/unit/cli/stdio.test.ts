/**
 * `keepOutputInOrder` (src/cli/stdio.ts): with stdout and stderr merged into one pipe whose
 * reader is slow (`2>&1 | (sleep; cat)`), a line written to stderr after 200 KB written to
 * stdout arrives after those bytes, not in their middle, and a line written to stdout after it
 * arrives after it. Without it, Node queues what the full pipe cannot take and the stderr line
 * overtakes the queued stdout bytes.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-stdio-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/**
 * Run a script that calls keepOutputInOrder, writes A×200,000 to stdout, a line to stderr, one
 * to stdout and exits; its stdout and stderr merged and read half a second late.
 * @returns what the reader got
 */
function runMerged(): Promise<string> {
  const script = path.join(dir, 'writer.mts');
  fs.writeFileSync(
    script,
    [
      `import { keepOutputInOrder } from ${JSON.stringify(pathToFileURL(path.join(ROOT, 'src/cli/stdio.ts')).href)};`,
      'keepOutputInOrder();',
      "process.stdout.write('A'.repeat(200_000) + '\\n');",
      "process.stderr.write('second: stderr\\n');",
      "process.stdout.write('third: stdout\\n');",
      'process.exit(0);',
    ].join('\n'),
  );
  const command = `"$0" "$1" "$2" 2>&1 | (sleep 0.5; cat)`;
  return new Promise((resolve, reject) =>
    execFile(
      '/bin/sh',
      ['-c', command, process.execPath, path.join(ROOT, 'bin/run-ts.js'), script],
      { maxBuffer: 1 << 20, timeout: 15_000 },
      (err, stdout) => (err ? reject(new Error(`the writer failed: ${err.message}`)) : resolve(stdout)),
    ),
  );
}

describe('output order on a merged pipe', () => {
  it('keeps the order of writes across stdout and stderr, and loses nothing at process.exit', async () => {
    const out = await runMerged();
    expect(out).toBe(`${'A'.repeat(200_000)}\nsecond: stderr\nthird: stdout\n`);
  });
});
