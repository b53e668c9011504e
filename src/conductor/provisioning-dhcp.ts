/**
 * The provisioning network's DHCP server, run by a conductor that sits on that network
 * (`ESI_PROVISIONING_INTERFACE`), as Neutron's DHCP agent serves Ironic's provisioning network:
 * one DHCP server (src/drivers/dhcp/dnsmasq.ts behind the domain's `DhcpServer` port) on the
 * network's first IPv4 subnet, answering exactly the provisioning ports' MACs — the NICs of nodes
 * whose deploy agent is booting or running (src/domain/networking/provisioning.ts) — with their
 * fixed addresses and the network-boot options (PXE/iPXE). Every other MAC gets nothing.
 *
 * The host list is refreshed when the conductor moves a node into or out of an agent phase
 * ({@link ProvisioningDhcp.refresh}) and every `pollMs`, after a sweep of stale provisioning ports
 * (changes made by other conductors or by API requests, a network created after the start). Without the network or a subnet, it waits and says so once.
 */
import type { DhcpBootConfig, DhcpServer, DhcpSubnetConfig } from '../domain/networking/dhcp.ts';
import type { ProvisioningNetwork, Subnet } from '../domain/networking/index.ts';
import type { ConductorLog } from './runtime.ts';
import type { BackgroundWorker } from './worker.ts';

/** What the worker is built from. */
export interface ProvisioningDhcpDeps {
  readonly provisioning: ProvisioningNetwork;
  /** The subnets of a network (the first IPv4 one is served). */
  readonly subnets: (networkId: string) => Promise<readonly Subnet[]>;
  /** Builds the DHCP server of a subnet. */
  readonly server: (config: DhcpSubnetConfig) => DhcpServer;
  readonly log: ConductorLog;
  /** The interface on the provisioning network (it must carry an address in the subnet). */
  readonly interface: string;
  /** Its network namespace, or null for the host's. */
  readonly netns: string | null;
  /** Network boot: TFTP files and the iPXE chain script URL. */
  readonly boot: DhcpBootConfig;
  /** Period of the host list refresh, ms. */
  readonly pollMs: number;
}

/** See the module documentation. */
export class ProvisioningDhcp implements BackgroundWorker {
  readonly name = 'provisioning-dhcp';
  #server: DhcpServer | null = null;
  #timer: NodeJS.Timeout | null = null;
  #busy: Promise<void> = Promise.resolve();
  #waitingSaid = false;
  #stopped = true;
  #unsubscribe: () => void = () => {};

  constructor(private readonly d: ProvisioningDhcpDeps) {}

  async start(): Promise<void> {
    this.#stopped = false;
    this.#unsubscribe = this.d.provisioning.onPortsChanged(() => void this.refresh());
    this.#timer = setInterval(() => void this.refresh(), this.d.pollMs);
    this.#timer.unref();
    await this.refresh();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#unsubscribe();
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
    await this.#busy;
    await this.#server?.stop();
    this.#server = null;
  }

  /** Bring the server's host list up to date (starting the server first if needed). Never throws. */
  refresh(): Promise<void> {
    this.#busy = this.#busy
      .then(() => this.#refresh())
      .catch((err: unknown) => this.d.log.error({ err }, 'provisioning DHCP: refresh failed'));
    return this.#busy;
  }

  async #refresh(): Promise<void> {
    if (this.#stopped) return;
    await this.d.provisioning.sweep();
    const hosts = await this.d.provisioning.dhcpHosts();
    if (this.#server !== null) {
      await this.#server.setHosts(hosts);
      return;
    }
    const network = await this.d.provisioning.network();
    const subnet = network === null ? undefined : (await this.d.subnets(network.id)).find((s) => s.ip_version === 4);
    if (network === null || subnet === undefined) {
      if (!this.#waitingSaid)
        this.d.log.warn(
          { network: this.d.provisioning.ref },
          network === null
            ? 'provisioning DHCP: the provisioning network does not exist yet; waiting'
            : 'provisioning DHCP: the provisioning network has no IPv4 subnet yet; waiting',
        );
      this.#waitingSaid = true;
      return;
    }
    const server = this.d.server({
      id: subnet.id,
      interface: this.d.interface,
      netns: this.d.netns,
      cidr: subnet.cidr,
      gateway: subnet.gateway_ip,
      dnsServers: subnet.dns_nameservers,
      hostRoutes: subnet.host_routes,
      mtu: network.mtu,
      boot: this.d.boot,
    });
    await server.start(hosts);
    this.#server = server;
    this.d.log.info({ subnet: subnet.id, interface: this.d.interface, hosts: hosts.length }, 'provisioning DHCP: serving');
  }
}
