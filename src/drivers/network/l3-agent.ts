/**
 * The router half of the tenant dataplane, as Neutron's L3 agent (legacy routers): per router a
 * namespace `qrouter-<router id>` that forwards (`net.ipv4.ip_forward=1`), a leg `qr-<port>` on
 * each attached subnet with the subnet's gateway address, a leg `qg-<port>` on the external
 * network with the gateway address and every floating IP (as /32, so the kernel answers ARP for
 * them there), the default route via the external subnet's gateway, and the nftables table of
 * ./nft-ruleset.ts (SNAT, floating IPs, port forwards).
 *
 * `apply` runs, in order: the namespace (created when missing, with its sysctls), the ruleset
 * (written to `<stateDir>/router/<router id>/ruleset.nft` and applied with `nft -f`, atomically),
 * then the legs and addresses, then the default route. The ruleset goes before the addresses so
 * that a new floating IP is never answered by the router itself before its DNAT exists. Each step
 * reads the kernel first and changes only what differs, so a second `apply` after a failure
 * finishes the first; a new floating IP costs four short commands (nft, and `ip` to read the
 * addresses, add one and read the routes).
 *
 * In the namespace: `net.ipv4.conf.all.arp_ignore=1` and `arp_announce=2` (a leg answers ARP
 * only for its own addresses, so the floating IPs are not announced on tenant networks).
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { DataplaneError, type RouterIntent } from '../../domain/networking/dataplane.ts';
import { writeFileAtomic } from '../dhcp/files.ts';
import {
  addNamespace,
  deleteNamespace,
  inNamespace,
  ipBatch,
  ipJson,
  namespaceIdentity,
  namespaceNames,
  type NsRoute,
} from './commands.ts';
import { planDefaultRoute, segmentVlanMtu, type WantedLeg } from './leg-plan.ts';
import type { LegWiring } from './legs.ts';
import { ROUTER_NS_PREFIX, checkId, idOfNamespace, legNames, routerNamespace } from './names.ts';
import { NFT_TABLE, ifaceAddress, ipv4, publishedAddresses, renderRuleset } from './nft-ruleset.ts';
import { KeyedQueue } from './queue.ts';

/** Options of {@link L3Agent}. */
export interface L3AgentOptions {
  /** Directory of the dataplane's files; a router's go to `<stateDir>/router/<router id>/`. */
  readonly stateDir: string;
  /** The flat networks' VLAN on the bridge. */
  readonly flatVlan: number;
  /** Where warnings go (a gratuitous ARP that could not be sent). */
  readonly log: (level: 'info' | 'warn' | 'error', msg: string) => void;
}

/** The sysctls of a router namespace. */
export const ROUTER_SYSCTLS = ['net.ipv4.ip_forward=1', 'net.ipv4.conf.all.arp_ignore=1', 'net.ipv4.conf.all.arp_announce=2'];

const MAC = /^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/;

/** What a router intent means for the kernel. @throws DataplaneError for a bad intent (nothing applied) */
export function routerPlan(
  intent: RouterIntent,
  flatVlan: number,
): { ns: string; legs: WantedLeg[]; ruleset: string; defaultRoute: { via: string; dev: string } | null } {
  const ns = routerNamespace(intent.router_id);
  const leg = (
    kind: 'interface' | 'gateway',
    p: { port_id: string; mac: string; segment: RouterIntent['interfaces'][number]['segment'] },
    addresses: string[],
  ): WantedLeg => {
    const mac = String(p.mac).toLowerCase();
    if (!MAC.test(mac)) throw new DataplaneError(`router ${intent.router_id}: port ${p.port_id} MAC '${p.mac}' is not one`);
    return { kind, ...legNames(kind, p.port_id), mac, ...segmentVlanMtu(p.segment, flatVlan), addresses };
  };
  const legs = intent.interfaces.map((i) => leg('interface', i, [ifaceAddress(i.address, `interface ${i.port_id} address`).address]));
  const gw = intent.gateway;
  let defaultRoute: { via: string; dev: string } | null = null;
  if (gw) {
    const own = ifaceAddress(gw.address, 'gateway address');
    const floating = publishedAddresses(intent).filter((a) => a !== own.ip);
    const g = leg('gateway', gw, [own.address, ...floating.map((a) => `${a}/32`)]);
    legs.push(g);
    if (gw.nexthop !== null) defaultRoute = { via: ipv4(gw.nexthop, 'gateway nexthop'), dev: g.device };
  }
  const ruleset = renderRuleset(intent, {
    gateway: gw ? legNames('gateway', gw.port_id).device : null,
    interfaces: legs.filter((l) => l.kind === 'interface').map((l) => l.device),
  });
  return { ns, legs, ruleset, defaultRoute };
}

/** The router half of the dataplane; see the module documentation. */
export class L3Agent {
  readonly #o: L3AgentOptions;
  readonly #legs: LegWiring;
  readonly #queue = new KeyedQueue();
  /** Routers whose namespace's sysctls this process has set. */
  readonly #prepared = new Set<string>();

  constructor(legs: LegWiring, o: L3AgentOptions) {
    this.#legs = legs;
    this.#o = o;
  }

  #dir(routerId: string): string {
    return path.join(path.resolve(this.#o.stateDir), 'router', routerId);
  }

  /** Make router `intent.router_id` match the intent. */
  apply(intent: RouterIntent): Promise<void> {
    const id = checkId(intent.router_id, 'router id');
    return this.#queue.run(id, () => this.#apply(id, intent));
  }

  async #apply(id: string, intent: RouterIntent): Promise<void> {
    const { ns, legs, ruleset, defaultRoute } = routerPlan(intent, this.#o.flatVlan);
    if ((await namespaceIdentity(ns)) === null) {
      await addNamespace(ns);
      this.#prepared.delete(id);
    }
    const file = path.join(this.#dir(id), 'ruleset.nft');
    await fs.mkdir(this.#dir(id), { recursive: true, mode: 0o755 });
    await writeFileAtomic(file, ruleset);
    await inNamespace(ns, 'nft', ['-f', file]);
    const changes = await this.#legs.converge(ns, legs);
    // A namespace new to this process, or whose legs were all made anew (deleted and created
    // again by someone else: a namespace's inode number is reused, so it cannot tell).
    if (!this.#prepared.has(id) || (changes.created.length > 0 && changes.created.length === legs.length)) {
      await inNamespace(ns, 'sysctl', ['-q', '-w', ...ROUTER_SYSCTLS]);
      this.#prepared.add(id);
    }
    const routes = await ipJson<NsRoute>(ns, ['route', 'show', 'default']);
    await ipBatch(ns, planDefaultRoute(defaultRoute, routes));
    await this.#announce(ns, changes.added);
  }

  /**
   * Gratuitous ARP for each address just added (as Neutron's L3 agent sends with `arping -U`),
   * so that neighbours that cached another MAC for it, or are waiting for one, learn it at once.
   * Best effort: BusyBox's `arping` (Debian busybox-static); a failure is logged, not thrown.
   */
  async #announce(ns: string, added: ReadonlyArray<{ device: string; address: string }>): Promise<void> {
    await Promise.all(
      added.map(({ device, address }) => {
        const ip = address.split('/')[0]!;
        return inNamespace(ns, 'busybox', ['arping', '-U', '-c', '1', '-w', '1', '-I', device, ip]).catch((err: Error) =>
          this.#o.log('warn', `router namespace ${ns}: gratuitous ARP for ${ip} on ${device} not sent: ${err.message}`),
        );
      }),
    );
  }

  /** Remove the router: its legs (peers released from the switch), namespace (ruleset with it) and files. */
  remove(routerId: string): Promise<void> {
    const id = checkId(routerId, 'router id');
    return this.#queue.run(id, async () => {
      const ns = routerNamespace(id);
      if ((await namespaceIdentity(ns)) !== null) {
        await this.#legs.removeAll(ns);
        await deleteNamespace(ns);
      }
      this.#prepared.delete(id);
      await fs.rm(this.#dir(id), { recursive: true, force: true });
    });
  }

  /** The router's table as `nft list table` prints it, or null when the namespace or table is missing (for checks). */
  async ruleset(routerId: string): Promise<string | null> {
    const ns = routerNamespace(routerId);
    if ((await namespaceIdentity(ns)) === null) return null;
    return inNamespace(ns, 'nft', ['list', 'table', ...NFT_TABLE.split(' ')]).catch(() => null);
  }

  /** The routers whose namespace exists. */
  async realised(): Promise<string[]> {
    return (await namespaceNames()).flatMap((n) => idOfNamespace(n, ROUTER_NS_PREFIX) ?? []);
  }
}
