/**
 * `LinuxTenantDataplane`: the {@link TenantDataplane} of a Linux network node, built the way
 * Neutron's DHCP agent and L3 agent (legacy routers, linuxbridge interface driver) build theirs —
 * network namespaces `qdhcp-<network>` and `qrouter-<router>`, legs that are veth pairs into the
 * Linux bridge standing for the switch (as access ports of the segment's VLAN), Debian's dnsmasq
 * for DHCP and Debian's nftables (`nft`) for SNAT, floating IPs and port forwards.
 * docs/tenant-networking.md describes the whole; ./dhcp-agent.ts and ./l3-agent.ts the halves.
 *
 * Needs root (CAP_NET_ADMIN, CAP_SYS_ADMIN), iproute2, procps (`sysctl`), nftables and dnsmasq.
 * Every method reads what the kernel holds and changes only what differs; failures are
 * {@link DataplaneError}s carrying the failing command's stderr.
 */
import { DataplaneError, type DhcpNetworkIntent, type RouterIntent, type TenantDataplane } from '../../domain/networking/dataplane.ts';
import type { DhcpLog } from '../dhcp/dnsmasq.ts';
import { DhcpAgent } from './dhcp-agent.ts';
import { L3Agent } from './l3-agent.ts';
import { LegWiring } from './legs.ts';
import { switchSettings, type SwitchSettings } from './settings.ts';

/** Options of {@link LinuxTenantDataplane}. */
export interface LinuxTenantDataplaneOptions {
  /** The switch the legs plug into: `{bridge, mode?, netns?, flat_vlan?}` (./settings.ts). */
  readonly switch: Readonly<Record<string, unknown>>;
  /**
   * Directory of the dataplane's files (`dhcp/<network id>/` for dnsmasq, `router/<router
   * id>/ruleset.nft`); every directory above it must be searchable by dnsmasq's user.
   */
  readonly stateDir: string;
  /** Where dnsmasq's supervision reports and the dataplane's warnings go. */
  readonly log: DhcpLog;
  /** The dnsmasq program (default /usr/sbin/dnsmasq). */
  readonly dnsmasqBinary?: string;
  /** The user dnsmasq drops to (default `nobody`). */
  readonly dnsmasqUser?: string;
}

/** The tenant dataplane on this host; see the module documentation. */
export class LinuxTenantDataplane implements TenantDataplane {
  readonly settings: SwitchSettings;
  readonly #dhcp: DhcpAgent;
  readonly #l3: L3Agent;
  #closed = false;

  /** @throws DataplaneError for bad switch settings */
  constructor(o: LinuxTenantDataplaneOptions) {
    this.settings = switchSettings(o.switch);
    const legs = new LegWiring(this.settings);
    this.#dhcp = new DhcpAgent(legs, {
      stateDir: o.stateDir,
      log: o.log,
      flatVlan: this.settings.flatVlan,
      ...(o.dnsmasqBinary ? { dnsmasqBinary: o.dnsmasqBinary } : {}),
      ...(o.dnsmasqUser ? { dnsmasqUser: o.dnsmasqUser } : {}),
    });
    this.#l3 = new L3Agent(legs, { stateDir: o.stateDir, flatVlan: this.settings.flatVlan, log: o.log });
  }

  #open(): void {
    if (this.#closed) throw new DataplaneError('the tenant dataplane is closed');
  }

  async applyDhcp(intent: DhcpNetworkIntent): Promise<void> {
    this.#open();
    await this.#dhcp.apply(intent);
  }

  async removeDhcp(networkId: string): Promise<void> {
    this.#open();
    await this.#dhcp.remove(networkId);
  }

  async applyRouter(intent: RouterIntent): Promise<void> {
    this.#open();
    await this.#l3.apply(intent);
  }

  async removeRouter(routerId: string): Promise<void> {
    this.#open();
    await this.#l3.remove(routerId);
  }

  async realised(): Promise<{ readonly dhcp: readonly string[]; readonly routers: readonly string[] }> {
    const [dhcp, routers] = await Promise.all([this.#dhcp.realised(), this.#l3.realised()]);
    return { dhcp, routers };
  }

  /** A router's nftables table as `nft list table` prints it, or null (for operators and tests). */
  routerRuleset(routerId: string): Promise<string | null> {
    return this.#l3.ruleset(routerId);
  }

  /**
   * Stop every dnsmasq this dataplane runs. Namespaces, legs and rulesets stay (routers keep
   * forwarding, clients keep their leases); the next process's `applyDhcp` starts dnsmasq again.
   */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#dhcp.close();
  }
}
