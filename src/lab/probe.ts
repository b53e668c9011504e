/**
 * Proving isolation by sending frames: the lab's layer-2 probe (./l2probe.py, run with
 * Debian's /usr/bin/python3 inside the nodes' namespaces). One broadcast frame is sent from
 * one node while other nodes listen; the answer says which nodes received it and with which
 * 802.1Q tag. Broadcasts reach every port of the sender's VLAN on a switch, so "received"
 * means "on the same layer-2 network".
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fromRoot } from '../project-root.ts';
import type { LabNetworkPort } from './network.ts';

const PROBE = fromRoot('src', 'lab', 'l2probe.py');
const PYTHON = '/usr/bin/python3';

/** One received probe frame: its 802.1Q tag (null: untagged) and CLOCK_MONOTONIC time, ns. */
export interface Received {
  readonly vlan: number | null;
  readonly t: bigint;
}

/**
 * Run the probe script in a node's namespace.
 * @param stop when aborted, the script is terminated and its output so far is the result
 *   (listeners print each frame as it arrives, so nothing received is lost)
 */
function runProbe(port: LabNetworkPort, args: readonly string[], onLine?: (line: string) => void, stop?: AbortSignal): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('ip', ['netns', 'exec', port.netns, PYTHON, PROBE, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    const onStop = () => child.kill('SIGTERM');
    stop?.addEventListener('abort', onStop, { once: true });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => {
      const text = d.toString();
      out += text;
      if (onLine) for (const line of text.split('\n')) if (line !== '') onLine(line);
    });
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('close', (code) => {
      stop?.removeEventListener('abort', onStop);
      if (code === 0 || stop?.aborted) resolve(out);
      else reject(new Error(`l2probe ${args[0]} in ${port.netns} failed (${code}): ${err.trim()}`));
    });
  });
}

function listen(
  port: LabNetworkPort,
  seconds: number,
  marker: string,
  first = false,
  stop?: AbortSignal,
): { ready: Promise<void>; done: Promise<Received[]> } {
  let readyResolve: () => void = () => undefined;
  const ready = new Promise<void>((r) => (readyResolve = r));
  const done = runProbe(
    port,
    ['listen', 'eth0', String(seconds), marker, ...(first ? ['first'] : [])],
    (line) => {
      if (line.startsWith('ready')) readyResolve();
    },
    stop,
  )
    .then((out) =>
      out
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => {
          const r = JSON.parse(l) as { vlan: number | null; t: number };
          return { vlan: r.vlan, t: BigInt(r.t) };
        }),
    )
    .finally(() => readyResolve());
  return { ready, done };
}

/**
 * Send one broadcast probe from `from` (tagged with `vlan` if given) while every port of `to`
 * listens; the listeners stop `windowS` seconds after the sender has finished (so a slow start
 * of the sender on a busy machine does not shorten the window).
 * @returns per listening namespace, the tags of the probe frames it received (empty: none)
 */
export async function probe(
  from: LabNetworkPort,
  to: readonly LabNetworkPort[],
  options: { vlan?: number; windowS?: number } = {},
): Promise<Map<string, Array<number | null>>> {
  const marker = `esi-${randomBytes(6).toString('hex')}`;
  const stop = new AbortController();
  const listeners = to.map((p) => ({ p, l: listen(p, 60, marker, false, stop.signal) }));
  try {
    await Promise.all(listeners.map((x) => x.l.ready));
    await runProbe(from, ['send', 'eth0', from.mac, marker, options.vlan === undefined ? '-' : String(options.vlan)]);
    await new Promise((r) => setTimeout(r, (options.windowS ?? 0.4) * 1000));
  } finally {
    stop.abort();
  }
  const out = new Map<string, Array<number | null>>();
  for (const { p, l } of listeners)
    out.set(
      p.netns,
      (await l.done).map((r) => r.vlan),
    );
  return out;
}

/**
 * Time from `action` until frames flow from `from` to `to`: `to` listens and `from` sends a
 * probe every millisecond before `action` starts, so the answer is the time from the start of
 * `action` until the first frame arrives (CLOCK_MONOTONIC on both sides).
 * @returns milliseconds, or null when nothing arrived within `timeoutS`
 */
export async function timeUntilFlow(
  from: LabNetworkPort,
  to: LabNetworkPort,
  action: () => Promise<void>,
  timeoutS = 5,
): Promise<number | null> {
  const marker = `esi-${randomBytes(6).toString('hex')}`;
  const l = listen(to, timeoutS, marker, true);
  await l.ready;
  const sender = spawn(
    'ip',
    ['netns', 'exec', from.netns, PYTHON, PROBE, 'send', 'eth0', from.mac, marker, '-', '1', String(timeoutS * 1000)],
    { stdio: 'ignore' },
  );
  try {
    await new Promise((r) => setTimeout(r, 50));
    const t0 = process.hrtime.bigint();
    await action();
    const got = await l.done;
    return got.length === 0 ? null : Number(got[0]!.t - t0) / 1e6;
  } finally {
    sender.kill('SIGTERM');
  }
}
