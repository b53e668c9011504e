/**
 * Starts and drives bench/lib/lab-child.ts: a virtual lab (and, with `agents`, its agent
 * processes) in a child process, so that the measured server's process does not also run the
 * BMC emulators, spawn the agents or write their serial logs.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LabChildOptions } from './lab-child.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** A lab running in a child process. */
export interface LabProcess {
  /** The lab's Redfish URL (its counting proxy's, when started with `proxy`). */
  readonly url: string;
  /** MAC address of each system's NIC, by system id (`node-0` …). */
  readonly macs: Readonly<Record<string, string>>;
  readonly child: ChildProcess;
  /** ComputerSystem GETs through the proxy so far. */
  count(): Promise<number>;
  /** Bursts of ComputerSystem GETs through the proxy since the last call (see ./lab-child.ts). */
  bursts(gapMs: number): Promise<Array<{ gets: number; ms: number }>>;
  /** Close the lab (its agents are killed) and wait for the child to exit. Idempotent. */
  close(): Promise<void>;
}

/**
 * Start a lab of `nodes` systems in a child process.
 * @throws Error when the child exits before it reports its URL
 */
export async function startLabProcess(nodes: number, options: LabChildOptions = {}): Promise<LabProcess> {
  const child = spawn(
    process.execPath,
    [path.join(ROOT, 'bin/run-ts.js'), path.join(ROOT, 'bench/lib/lab-child.ts'), String(nodes), JSON.stringify(options)],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const waiting: Array<{ resolve: (line: string) => void; reject: (err: Error) => void }> = [];
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.on('exit', (code) => {
    for (const w of waiting.splice(0)) w.reject(new Error(`lab child exited ${code}`));
  });
  let buf = '';
  child.stdout.on('data', (d: Buffer) => {
    buf += d.toString();
    for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      waiting.shift()?.resolve(line);
    }
  });
  const next = (): Promise<string> => new Promise((resolve, reject) => waiting.push({ resolve, reject }));
  const first = JSON.parse(await next()) as { url: string; macs: Record<string, string> };
  const ask = async <T>(line: string): Promise<T> => {
    const answer = next();
    child.stdin.write(`${line}\n`);
    return JSON.parse(await answer) as T;
  };
  return {
    url: first.url,
    macs: first.macs,
    child,
    count: async () => (await ask<{ systemGets: number }>('count')).systemGets,
    bursts: async (gapMs) => (await ask<{ bursts: Array<{ gets: number; ms: number }> }>(`bursts ${gapMs}`)).bursts,
    async close() {
      if (child.exitCode === null && child.signalCode === null) child.stdin.end();
      await exited;
    },
  };
}
