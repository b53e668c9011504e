/**
 * The DHCP service of one subnet, as a port: what esi asks of the program that hands out
 * addresses and network-boot instructions (Neutron's DHCP agent with dnsmasq, which Ironic's
 * `pxe`/`ipxe` boot interfaces rely on). Pure types; the implementation is
 * src/drivers/dhcp/dnsmasq.ts (docs/network-boot.md).
 *
 * The service answers only the hosts it is given — each with its fixed address — and stays
 * silent to every other MAC, so that two DHCP servers on one network never compete for a
 * machine esi manages and a machine esi does not know is never booted by esi.
 */

/** One machine the DHCP service answers: its NIC's MAC and the fixed address it gets. */
export interface DhcpHost {
  /** MAC address, `aa:bb:cc:dd:ee:ff` (any case). */
  readonly mac: string;
  /** IPv4 address inside the subnet's CIDR. */
  readonly ip: string;
  /** Host name sent in option 12 (an RFC 1123 label). */
  readonly hostname?: string;
  /**
   * Per-host tags. `boot`: the host gets network-boot options (boot file, TFTP server) — a
   * node in a flow that boots the deploy agent; without it, only its address and options.
   * Other tags are carried to the server's configuration and have no meaning by themselves.
   */
  readonly tags?: readonly string[];
}

/** A route pushed to DHCP clients (options 121 and 249). */
export interface DhcpHostRoute {
  /** Destination CIDR, e.g. `10.99.0.0/16`. */
  readonly destination: string;
  /** IPv4 next hop. */
  readonly nexthop: string;
}

/** Network boot served with the addresses: TFTP for firmware, HTTP for iPXE. */
export interface DhcpBootConfig {
  /** Absolute directory served over TFTP (read-only). */
  readonly tftpRoot: string;
  /** Boot file (relative to `tftpRoot`) for legacy BIOS PXE clients (client arch 0), e.g. `undionly.kpxe`. */
  readonly biosFile: string;
  /** Boot file (relative to `tftpRoot`) for UEFI x86-64 clients (client arch 7 and 9), e.g. `ipxe.efi`. */
  readonly uefiFile: string;
  /** HTTP(S) URL of the iPXE script, the boot file of clients that are iPXE already. */
  readonly ipxeScriptUrl: string;
}

/** One subnet served by one DHCP server process. */
export interface DhcpSubnetConfig {
  /** Stable id (the subnet's UUID): names the server's files and process. */
  readonly id: string;
  /** The interface the server listens on (must exist and carry an IPv4 address in `cidr`). */
  readonly interface: string;
  /** Network namespace holding `interface`; null or absent: the host's. */
  readonly netns?: string | null;
  /** IPv4 network, e.g. `10.77.0.0/24`. */
  readonly cidr: string;
  /** Default gateway (option 3); null or absent: clients are told there is no router. */
  readonly gateway?: string | null;
  /** DNS servers (option 6); empty or absent: none is sent. */
  readonly dnsServers?: readonly string[];
  /** Extra routes (options 121 and 249, with the default route appended when there is a gateway). */
  readonly hostRoutes?: readonly DhcpHostRoute[];
  /** Interface MTU pushed to clients (option 26), bytes; null or absent: none. */
  readonly mtu?: number | null;
  /** Lease time, seconds (default 86,400, at least 120). */
  readonly leaseTimeS?: number;
  /** DNS domain (option 15); null or absent: none. */
  readonly domain?: string | null;
  /** Network boot for hosts tagged `boot`; null or absent: addresses only. */
  readonly boot?: DhcpBootConfig | null;
  /**
   * Further subnets served by the same server on the same interface — one server per network,
   * as Neutron's DHCP agent runs one dnsmasq per network: each gets its own range and options,
   * and a host's address picks its subnet. Their CIDRs must not overlap. Absent or empty: this
   * subnet only.
   */
  readonly moreSubnets?: readonly DhcpExtraSubnet[];
}

/** A further subnet of a server ({@link DhcpSubnetConfig.moreSubnets}); fields as there. */
export type DhcpExtraSubnet = Pick<DhcpSubnetConfig, 'id' | 'cidr' | 'gateway' | 'dnsServers' | 'hostRoutes' | 'mtu' | 'leaseTimeS'>;

/** Another DHCP server heard on a network esi serves (a "rogue" one). */
export interface OtherDhcpServer {
  /** Its server identifier (option 54), or null when the offer carried none. */
  readonly serverId: string | null;
  /** The IPv4 source address of its offer. */
  readonly sourceIp: string;
  /** The address it offered our probe, or null. */
  readonly offeredIp: string | null;
}

/** The DHCP server of one subnet. */
export interface DhcpServer {
  /** The server process id while one runs, else null. */
  readonly pid: number | null;
  /**
   * Write the configuration, start the server and resolve once it serves.
   * @throws DhcpError for a configuration that cannot work or a server that does not start
   */
  start(hosts: readonly DhcpHost[]): Promise<void>;
  /**
   * Replace the hosts answered; resolves once the running server has read them.
   * @throws DhcpError for an invalid host list (nothing changed)
   */
  setHosts(hosts: readonly DhcpHost[]): Promise<void>;
  /** Stop the server and its supervision. Never throws. */
  stop(): Promise<void>;
}

/** A DHCP server configuration that cannot work, or a server process that failed. */
export class DhcpError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DhcpError';
  }
}
