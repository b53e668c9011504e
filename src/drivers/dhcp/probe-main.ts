/**
 * The DHCP probe as a program, so that it can run inside a network namespace
 * (`ip netns exec <ns> node bin/run-ts.js src/drivers/dhcp/probe-main.ts '<json>'`): the one
 * argument is a {@link ProbeOptions} as JSON; stdout gets one JSON array of
 * {@link ProbeReport}s and the exit status is 0, or stderr gets the reason and the status is 1.
 * Ends itself on SIGTERM with what it heard so far. Started by ./rogue.ts.
 */
import { collectOffers, type ProbeOptions } from './probe.ts';
import { bootFileOf } from './packet.ts';

/** One offer as the probe prints it. */
export interface ProbeReport {
  readonly sourceIp: string;
  readonly serverId: string | null;
  readonly offeredIp: string;
  readonly siaddr: string;
  readonly bootFile: string | null;
}

const stop = new AbortController();
process.once('SIGTERM', () => stop.abort());
try {
  const o = JSON.parse(process.argv[2] ?? '') as ProbeOptions;
  const heard = await collectOffers(o, stop.signal);
  const reports: ProbeReport[] = heard.map((h) => ({
    sourceIp: h.sourceIp,
    serverId: h.message.serverId,
    offeredIp: h.message.yiaddr,
    siaddr: h.message.siaddr,
    bootFile: bootFileOf(h.message),
  }));
  process.stdout.write(`${JSON.stringify(reports)}\n`);
} catch (err) {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
}
