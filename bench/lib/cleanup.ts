/**
 * Resources a benchmark must release however it ends (peer processes, servers, temp schemas):
 * registered here, released in reverse order by the benchmark's own `finally`, or by
 * `bench/run.ts` on SIGINT/SIGTERM before it exits.
 *
 * Each release runs at most once; a second caller (the signal handler racing the benchmark's
 * `finally`) waits for the same run instead of returning early.
 */

interface Entry {
  readonly name: string;
  readonly run: () => Promise<void>;
}
const pending: Entry[] = [];

/**
 * Register a release step.
 * @returns a function that runs the step (once; later calls return the same promise)
 */
export function onCleanup(name: string, release: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | null = null;
  const entry: Entry = {
    name,
    run: () =>
      (running ??= (async () => {
        const i = pending.indexOf(entry);
        if (i >= 0) pending.splice(i, 1);
        await release();
      })()),
  };
  pending.push(entry);
  return entry.run;
}

/**
 * Run every registered step, newest first; a failing step is reported and does not stop the others.
 * @param log where failures are reported
 */
export async function runCleanups(log: (line: string) => void): Promise<void> {
  while (pending.length > 0) {
    const entry = pending[pending.length - 1]!;
    try {
      await entry.run();
    } catch (err) {
      log(`cleanup of ${entry.name} failed: ${(err as Error).message}`);
    }
  }
}
