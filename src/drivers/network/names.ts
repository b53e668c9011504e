/**
 * Names of what the tenant dataplane creates in the kernel, as Neutron's agents name them, so
 * that an operator who knows Neutron finds their way:
 *
 * | object                                  | name                              |
 * |-----------------------------------------|-----------------------------------|
 * | DHCP namespace of network N             | `qdhcp-<N>`                       |
 * | router namespace of router R            | `qrouter-<R>`                     |
 * | DHCP leg (in `qdhcp-`)                  | `tap<11 chars of the port id>`    |
 * | router interface (in `qrouter-`)        | `qr-<11 chars of the port id>`    |
 * | router gateway (in `qrouter-`)          | `qg-<11 chars of the port id>`    |
 * | the leg's other end, on the bridge      | `vd-`, `vr-`, `vg-` + the same 11 |
 *
 * Every name is at most 14 characters (the kernel allows 15). The 11 characters are the start of
 * the port's UUID, as Neutron's `get_tap_device_name`/`get_internal_device_name` take them;
 * Neutron relies on their uniqueness the same way. Pure functions.
 */
import { DataplaneError } from '../../domain/networking/dataplane.ts';

/** Neutron's namespace prefixes. */
export const DHCP_NS_PREFIX = 'qdhcp-';
export const ROUTER_NS_PREFIX = 'qrouter-';

/** The kinds of leg: DHCP port, router interface, router gateway. */
export type LegKind = 'dhcp' | 'interface' | 'gateway';

const NS_SIDE: Record<LegKind, string> = { dhcp: 'tap', interface: 'qr-', gateway: 'qg-' };
const BRIDGE_SIDE: Record<LegKind, string> = { dhcp: 'vd-', interface: 'vr-', gateway: 'vg-' };
/** Characters of the port id kept in a device name (Neutron: 14 − the 3 of the prefix). */
const ID_CHARS = 11;
const ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/**
 * Check an id (network, router or port UUID) before it is put into a name.
 * @throws DataplaneError for an id that cannot name a namespace or device
 */
export function checkId(id: string, what: string): string {
  if (typeof id !== 'string' || !ID.test(id) || id.length < ID_CHARS)
    throw new DataplaneError(`${what} '${String(id)}' is not an id (at least ${ID_CHARS} of A-Z a-z 0-9 _ . -, a UUID)`);
  return id;
}

/** The DHCP namespace of a network: `qdhcp-<network id>`. */
export function dhcpNamespace(networkId: string): string {
  return `${DHCP_NS_PREFIX}${checkId(networkId, 'network id')}`;
}

/** The namespace of a router: `qrouter-<router id>`. */
export function routerNamespace(routerId: string): string {
  return `${ROUTER_NS_PREFIX}${checkId(routerId, 'router id')}`;
}

/** The names of one leg: the device in the namespace and its peer on the bridge. */
export interface LegNames {
  readonly device: string;
  readonly peer: string;
}

/** The device and peer names of a leg of `kind` for port (or, for DHCP without a port id, network) `id`. */
export function legNames(kind: LegKind, id: string): LegNames {
  const short = checkId(id, 'port id').slice(0, ID_CHARS);
  return { device: `${NS_SIDE[kind]}${short}`, peer: `${BRIDGE_SIDE[kind]}${short}` };
}

/**
 * The peer of a device found in one of our namespaces, and its kind; null for a device that is
 * not a leg of ours (`lo`, or anything an operator added).
 */
export function peerOfDevice(device: string): { kind: LegKind; peer: string } | null {
  for (const kind of Object.keys(NS_SIDE) as LegKind[]) {
    const prefix = NS_SIDE[kind];
    if (device.startsWith(prefix) && device.length === prefix.length + ID_CHARS)
      return { kind, peer: `${BRIDGE_SIDE[kind]}${device.slice(prefix.length)}` };
  }
  return null;
}

/** The network or router id of one of our namespaces, by prefix; null for any other namespace. */
export function idOfNamespace(ns: string, prefix: typeof DHCP_NS_PREFIX | typeof ROUTER_NS_PREFIX): string | null {
  return ns.startsWith(prefix) && ns.length > prefix.length ? ns.slice(prefix.length) : null;
}
