/**
 * Planning a namespace's legs: from the legs wanted and what the kernel reports (iproute2's
 * JSON), the exact `ip -batch` lines that make the namespace hold those legs — each a veth pair
 * whose namespace end carries the leg's MAC, MTU and addresses and whose other end is a port of
 * the bridge — and nothing else of ours. Pure functions, so the plan is testable without a
 * kernel; ./legs.ts runs it. A device in the namespace that is not named like a leg (see
 * ./names.ts) is left alone.
 */
import { DataplaneError, type SegmentRef } from '../../domain/networking/dataplane.ts';
import type { NsLink, NsRoute } from './commands.ts';
import { peerOfDevice, type LegKind } from './names.ts';

/** One leg as it should be. */
export interface WantedLeg {
  readonly kind: LegKind;
  /** The device in the namespace (`tap…`, `qr-…`, `qg-…`). */
  readonly device: string;
  /** Its veth peer, a port of the bridge. */
  readonly peer: string;
  /** Lower-case MAC of the device. */
  readonly mac: string;
  /** MTU of both ends, bytes. */
  readonly mtu: number;
  /** The VLAN its peer is an access port of (a flat network's: the switch's flat VLAN). */
  readonly vlan: number;
  /** Its IPv4 addresses, canonical `ip/prefixlen`. */
  readonly addresses: readonly string[];
}

/** The lines that bring a namespace's legs to what is wanted, in the order they must run. */
export interface LegPlan {
  /** Peers of legs about to go: released from the switch first (their VLAN bridges emptied). */
  readonly release: readonly string[];
  /** In the namespace, first: delete the devices of legs that are not wanted (the veth pair goes). */
  readonly nsDelete: readonly string[];
  /** Peers without their device (left by a namespace deleted under us, which the kernel removes lazily): deleted first. */
  readonly orphans: readonly string[];
  /** In the bridge's namespace: create missing veth pairs (the device end moved into the namespace). */
  readonly bridgeCreate: readonly string[];
  /** Peers created by `bridgeCreate`, to be plugged into the switch. */
  readonly created: readonly string[];
  /** In the bridge's namespace: MTU of peers whose leg changed MTU. */
  readonly bridgeConfigure: readonly string[];
  /** In the namespace: MAC, MTU, addresses (removals first), link up. */
  readonly nsConfigure: readonly string[];
  /** The addresses `nsConfigure` adds, by device. */
  readonly added: ReadonlyArray<{ readonly device: string; readonly address: string }>;
}

/**
 * The VLAN and MTU of a leg on `segment`: its VLAN, or for a flat network the switch's flat VLAN.
 * @throws DataplaneError for a VLAN id outside 1-4094 or an MTU outside 68-65535
 */
export function segmentVlanMtu(segment: SegmentRef, flatVlan: number): { vlan: number; mtu: number } {
  const vlan = segment.vlan ?? flatVlan;
  if (!Number.isInteger(vlan) || vlan < 1 || vlan > 4094)
    throw new DataplaneError(`network ${segment.network_id}: VLAN ${String(segment.vlan)} is not 1-4094`);
  if (!Number.isInteger(segment.mtu) || segment.mtu < 68 || segment.mtu > 65_535)
    throw new DataplaneError(`network ${segment.network_id}: MTU ${String(segment.mtu)} is not 68-65535`);
  return { vlan, mtu: segment.mtu };
}

const isUp = (l: NsLink | undefined): boolean => l?.flags?.includes('UP') ?? false;

/** The IPv4 addresses of a link, `ip/prefixlen`. */
function addressesOf(l: NsLink | undefined): string[] {
  return (l?.addr_info ?? []).filter((a) => a.family === 'inet' && a.local).map((a) => `${a.local}/${a.prefixlen}`);
}

/** The legs whose device is missing from the namespace (the caller then reads the bridge's links). */
export function missingLegs(wanted: readonly WantedLeg[], nsLinks: readonly NsLink[]): WantedLeg[] {
  const have = new Set(nsLinks.map((l) => l.ifname));
  return wanted.filter((w) => !have.has(w.device));
}

/**
 * Plan the legs of namespace `ns`.
 * @param nsLinks `ip -j addr show` of the namespace (empty for a namespace just created)
 * @param bridgeLinks names of the links in the bridge's namespace (only needed when legs are missing)
 * @throws DataplaneError for two legs with one device name
 */
export function planLegs(ns: string, wanted: readonly WantedLeg[], nsLinks: readonly NsLink[], bridgeLinks: ReadonlySet<string>): LegPlan {
  const seen = new Set<string>();
  for (const w of wanted) {
    if (seen.has(w.device)) throw new DataplaneError(`namespace ${ns}: two legs named ${w.device} (port ids sharing 11 characters)`);
    seen.add(w.device);
  }
  const links = new Map(nsLinks.map((l) => [l.ifname, l]));
  const release: string[] = [];
  const nsDelete: string[] = [];
  for (const l of nsLinks) {
    const ours = peerOfDevice(l.ifname);
    if (ours && !seen.has(l.ifname)) {
      release.push(ours.peer);
      nsDelete.push(`link del dev ${l.ifname}`);
    }
  }
  const orphans: string[] = [];
  const bridgeCreate: string[] = [];
  const created: string[] = [];
  const bridgeConfigure: string[] = [];
  const nsConfigure: string[] = [];
  const added: Array<{ device: string; address: string }> = [];
  if (!isUp(links.get('lo')) && links.has('lo')) nsConfigure.push('link set dev lo up');
  for (const w of wanted) {
    const cur = links.get(w.device);
    if (!cur) {
      if (bridgeLinks.has(w.peer)) orphans.push(w.peer);
      bridgeCreate.push(`link add name ${w.peer} mtu ${w.mtu} type veth peer name ${w.device} mtu ${w.mtu} address ${w.mac} netns ${ns}`);
      created.push(w.peer);
    } else {
      if (cur.address?.toLowerCase() !== w.mac) nsConfigure.push(`link set dev ${w.device} address ${w.mac}`);
      if (cur.mtu !== w.mtu) {
        nsConfigure.push(`link set dev ${w.device} mtu ${w.mtu}`);
        bridgeConfigure.push(`link set dev ${w.peer} mtu ${w.mtu}`);
      }
    }
    const have = addressesOf(cur);
    for (const a of have) if (!w.addresses.includes(a)) nsConfigure.push(`addr del ${a} dev ${w.device}`);
    for (const a of w.addresses.filter((x) => !have.includes(x))) {
      nsConfigure.push(`addr add ${a} dev ${w.device}`);
      added.push({ device: w.device, address: a });
    }
    if (!isUp(cur)) nsConfigure.push(`link set dev ${w.device} up`);
  }
  return { release, nsDelete, orphans, bridgeCreate, created, bridgeConfigure, nsConfigure, added };
}

/**
 * The lines that make the namespace's default route what is wanted: `via` on `dev`, or none.
 * @param routes `ip -j route show default` of the namespace
 */
export function planDefaultRoute(want: { readonly via: string; readonly dev: string } | null, routes: readonly NsRoute[]): string[] {
  const cur = routes.find((r) => r.dst === 'default');
  if (!want) return cur ? ['route del default'] : [];
  if (cur && cur.gateway === want.via && cur.dev === want.dev && routes.filter((r) => r.dst === 'default').length === 1) return [];
  return [`route replace default via ${want.via} dev ${want.dev}`];
}
