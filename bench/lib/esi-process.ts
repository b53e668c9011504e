/**
 * Starts and stops bench/lib/esi-child.ts: an esi server (with nodes) in a child process, so that
 * two servers under comparison share nothing but the machine. Registered for clean-up
 * (./cleanup.ts): a benchmark that fails or is interrupted leaves no process behind.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { onCleanup } from './cleanup.ts';
import type { EsiChildOptions, EsiChildReady } from './esi-child.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** An esi server running in a child process. */
export interface EsiProcess extends EsiChildReady {
  /** The child's process id. */
  readonly pid: number;
  /**
   * CPU time the child has used so far (user + system), seconds, from `/proc/<pid>/stat`, at
   * the kernel's 10 ms tick; 0 where `/proc` is missing.
   */
  cpuSeconds(): number;
  /** Stop the server (its data directory is removed) and wait for the child to exit. Idempotent. */
  close(): Promise<void>;
}

/** Clock ticks per second of `/proc/<pid>/stat` times (`getconf CLK_TCK`: 100 on Linux). */
const CLK_TCK = 100;

/** User + system CPU seconds of process `pid` (fields 14 and 15 of `/proc/<pid>/stat`). */
export function processCpuSeconds(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces: count the fields after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
  } catch {
    return 0;
  }
}

/**
 * Start esi in a child process and wait until it serves and its nodes exist.
 * @param label names the process in clean-up messages, e.g. `esi (metrics on)`
 * @throws Error when the child exits before it reports its URL
 */
export async function startEsiProcess(label: string, options: EsiChildOptions): Promise<EsiProcess> {
  const child = spawn(
    process.execPath,
    [path.join(ROOT, 'bin/run-ts.js'), path.join(ROOT, 'bench/lib/esi-child.ts'), JSON.stringify(options)],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ready = await new Promise<EsiChildReady>((resolve, reject) => {
    let buf = '';
    child.stdout.on('data', (d: Buffer) => {
      buf += d.toString('utf8');
      const nl = buf.indexOf('\n');
      if (nl >= 0) resolve(JSON.parse(buf.slice(0, nl)) as EsiChildReady);
    });
    child.once('exit', (code) => reject(new Error(`${label}: the esi child exited with ${code} before it served`)));
  });
  const close = onCleanup(label, async () => {
    if (child.exitCode === null && child.signalCode === null) child.stdin.end();
    await exited;
  });
  const pid = child.pid!;
  return { ...ready, pid, cpuSeconds: () => processCpuSeconds(pid), close };
}
