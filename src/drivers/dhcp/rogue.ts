/**
 * Rogue DHCP detection: is another DHCP server answering on a network esi serves?
 *
 * A DHCPDISCOVER goes out from a random locally-administered MAC that esi's dnsmasq does not
 * know (so esi's own server, which answers only known MACs, stays silent); every DHCPOFFER
 * that comes back is another server. The probe runs as a small Node program inside the
 * server's network namespace (`ip netns exec <ns> node bin/run-ts.js probe-main.ts`), since
 * a process cannot change the namespace of its sockets; ./probe.ts explains how it reaches the
 * wire (the interface needs an IPv4 address). Servers that ignore the broadcast flag and
 * unicast their offer to the made-up MAC are not heard.
 *
 * Nothing is done against the other servers ("reported, not fought"): the caller logs them.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fromRoot } from '../../project-root.ts';
import { DhcpError, type OtherDhcpServer } from '../../domain/networking/dhcp.ts';
import type { ProbeReport } from './probe-main.ts';
import type { ProbeOptions } from './probe.ts';

const RUN_TS = fromRoot('bin', 'run-ts.js');
const PROBE_MAIN = fromRoot('src', 'drivers', 'dhcp', 'probe-main.ts');
/** Time the probe program may take beyond its listening time (start-up of Node and tsx), ms. */
const STARTUP_MS = 20_000;

/** A random locally-administered unicast MAC (first octet `x2`, `x6`, `xa` or `xe`). */
export function randomLocalMac(): string {
  const b = randomBytes(6);
  b[0] = (b[0]! & 0xfc) | 0x02;
  return [...b].map((x) => x.toString(16).padStart(2, '0')).join(':');
}

/** What {@link runProbe} sends; see {@link ProbeOptions}. */
export type ProbeRequest = Omit<ProbeOptions, 'xid'> & { readonly xid?: number };

/**
 * Run the DHCP probe program on `iface`, in namespace `netns` (null: this one).
 * @returns the offers heard within `timeoutMs`
 * @throws DhcpError when the probe cannot run (no such namespace or interface, no IPv4
 *   address on it, port 68 taken without SO_REUSEADDR)
 */
export function runProbe(netns: string | null, req: ProbeRequest, signal?: AbortSignal): Promise<ProbeReport[]> {
  const o: ProbeOptions = { ...req, xid: req.xid ?? randomBytes(4).readUInt32BE(0) };
  const node = [process.execPath, RUN_TS, PROBE_MAIN, JSON.stringify(o)];
  const [command, ...args] = netns ? ['ip', 'netns', 'exec', netns, ...node] : node;
  return new Promise((resolve, reject) => {
    const child = spawn(command!, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const onAbort = (): void => void child.kill('SIGTERM');
    signal?.addEventListener('abort', onAbort, { once: true });
    const guard = setTimeout(() => child.kill('SIGKILL'), o.timeoutMs + STARTUP_MS);
    child.on('error', (e) => {
      clearTimeout(guard);
      signal?.removeEventListener('abort', onAbort);
      reject(new DhcpError(`DHCP probe on ${iface(netns, o.iface)} could not start: ${e.message}`));
    });
    child.on('close', (code, sig) => {
      clearTimeout(guard);
      signal?.removeEventListener('abort', onAbort);
      const line = out.trim().split('\n').pop() ?? '';
      if (code === 0 && line.startsWith('[')) {
        resolve(JSON.parse(line) as ProbeReport[]);
        return;
      }
      if (signal?.aborted) {
        resolve([]);
        return;
      }
      const why = err.trim().split('\n').slice(-3).join('; ') || (sig ? `killed by ${sig}` : `exit status ${code}`);
      reject(new DhcpError(`DHCP probe on ${iface(netns, o.iface)} failed: ${why}`));
    });
  });
}

function iface(netns: string | null, name: string): string {
  return netns ? `${name} (namespace ${netns})` : name;
}

/**
 * Look for other DHCP servers on `iface`: send a DISCOVER from a random MAC and collect the
 * offers for `timeoutMs` milliseconds.
 * @param netns the namespace holding `iface`; null or undefined: this one
 * @returns one entry per server heard (by server identifier, else source address), empty when
 *   none answered
 * @throws DhcpError when the probe cannot run
 */
export async function detectOtherDhcpServers(
  iface: string,
  netns: string | null | undefined,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<OtherDhcpServer[]> {
  const reports = await runProbe(netns ?? null, { iface, mac: randomLocalMac(), timeoutMs, vendorClass: 'esi-rogue-dhcp-probe' }, signal);
  const seen = new Map<string, OtherDhcpServer>();
  for (const r of reports) {
    const key = r.serverId ?? r.sourceIp;
    if (!seen.has(key))
      seen.set(key, { serverId: r.serverId, sourceIp: r.sourceIp, offeredIp: r.offeredIp === '0.0.0.0' ? null : r.offeredIp });
  }
  return [...seen.values()];
}
