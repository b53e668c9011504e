/**
 * A DHCP probe in the calling process's network namespace: broadcast DHCPDISCOVERs on one
 * interface and collect every DHCPOFFER that answers, for a fixed time. Used by the rogue DHCP
 * check (./rogue.ts runs it in a server's namespace through ./probe-main.ts).
 *
 * How it reaches the wire with plain UDP sockets (Node's dgram has no SO_BINDTODEVICE):
 * - the sending socket is bound to the interface's own IPv4 address, port 68: Linux sends a
 *   limited broadcast (255.255.255.255) out of the interface that owns the socket's source
 *   address (net/ipv4/route.c, `ip_route_output_key_hash_rcu`, the "special hack" for
 *   multicast and limited broadcast), so the interface must have an IPv4 address;
 * - the DISCOVER sets the broadcast flag, so servers broadcast their OFFERs (the probe's MAC is
 *   made up, a unicast reply to it would never reach this host), and a second socket bound to
 *   0.0.0.0:68 receives them. Both sockets use SO_REUSEADDR so a DHCP client already on the
 *   host does not block the probe.
 * The DISCOVER is sent twice (at 0 and at half the wait) in case one is lost; OFFERs are
 * matched by transaction id and MAC.
 */
import dgram from 'node:dgram';
import os from 'node:os';
import { DHCP_MESSAGE, decodeMessage, encodeDiscover, type DhcpMessage } from './packet.ts';

/** What {@link collectOffers} sends and how long it listens. */
export interface ProbeOptions {
  /** The interface to probe (needs an IPv4 address). */
  readonly iface: string;
  /** The MAC the DISCOVER claims (chaddr and client id). */
  readonly mac: string;
  /** Transaction id. */
  readonly xid: number;
  /** How long to collect offers, milliseconds. */
  readonly timeoutMs: number;
  /** Options sent with the DISCOVER. */
  readonly userClass?: string;
  readonly clientArch?: number;
  readonly vendorClass?: string;
}

/** One offer heard: its sender and the message. */
export interface HeardOffer {
  /** IPv4 source address of the datagram. */
  readonly sourceIp: string;
  readonly message: DhcpMessage;
}

/**
 * The first IPv4 address of an interface of this namespace.
 * @throws Error when the interface does not exist or has no IPv4 address
 */
export function interfaceIpv4(iface: string): string {
  const addrs = os.networkInterfaces()[iface];
  if (!addrs) throw new Error(`interface ${iface} does not exist`);
  const v4 = addrs.find((a) => a.family === 'IPv4');
  if (!v4) throw new Error(`interface ${iface} has no IPv4 address (the probe sends from it)`);
  return v4.address;
}

function bound(address: string, port: number): Promise<dgram.Socket> {
  return new Promise((resolve, reject) => {
    const s = dgram.createSocket({ type: 'udp4', reuseAddr: true });
    s.once('error', reject);
    s.bind({ address, port }, () => {
      s.off('error', reject);
      resolve(s);
    });
  });
}

/**
 * Broadcast DISCOVERs on `o.iface` and collect the OFFERs for `o.timeoutMs`.
 * @returns every offer heard, in arrival order (one server may answer both DISCOVERs)
 * @throws Error when the interface has no IPv4 address or port 68 cannot be bound
 */
export async function collectOffers(o: ProbeOptions, signal?: AbortSignal): Promise<HeardOffer[]> {
  const source = interfaceIpv4(o.iface);
  const rx = await bound('0.0.0.0', 68);
  let tx: dgram.Socket;
  try {
    tx = await bound(source, 68);
  } catch (err) {
    rx.close();
    throw err;
  }
  const heard: HeardOffer[] = [];
  rx.on('message', (msg, rinfo) => {
    const m = decodeMessage(msg);
    if (m && m.op === 2 && m.xid === o.xid >>> 0 && m.mac === o.mac.toLowerCase() && m.messageType === DHCP_MESSAGE.OFFER)
      heard.push({ sourceIp: rinfo.address, message: m });
  });
  rx.on('error', () => undefined);
  tx.on('error', () => undefined);
  tx.setBroadcast(true);
  const discover = encodeDiscover({
    xid: o.xid,
    mac: o.mac,
    broadcast: true,
    ...(o.userClass !== undefined ? { userClass: o.userClass } : {}),
    ...(o.clientArch !== undefined ? { clientArch: o.clientArch } : {}),
    ...(o.vendorClass !== undefined ? { vendorClass: o.vendorClass } : {}),
  });
  const send = (): Promise<void> =>
    new Promise((resolve) => {
      tx.send(discover, 67, '255.255.255.255', () => resolve());
    });
  try {
    await send();
    await new Promise<void>((resolve) => {
      const again = setTimeout(() => void send(), Math.floor(o.timeoutMs / 2));
      const done = setTimeout(finish, o.timeoutMs);
      function finish(): void {
        clearTimeout(again);
        clearTimeout(done);
        signal?.removeEventListener('abort', finish);
        resolve();
      }
      signal?.addEventListener('abort', finish, { once: true });
    });
  } finally {
    rx.close();
    tx.close();
  }
  return heard;
}
