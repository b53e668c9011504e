/**
 * A namespace's legs on the tenant and external networks, made real: veth pairs whose far end
 * is an access port of the segment's VLAN on the Linux-bridge "switch" (./settings.ts), plugged
 * in by esi's own switch driver (src/drivers/switch/linux-bridge.ts) so that the dataplane and
 * the switch agree on what a VLAN is in either mode (`vlan_filtering`: membership `vid V pvid
 * untagged`; `bridge_per_vlan`: enslaved to `<bridge>v<V>`, created when missing and deleted
 * once empty).
 *
 * Each `converge` reads the namespace (`ip -j addr show`), plans (./leg-plan.ts) and runs only
 * what differs; the bridge's links are read only when a leg is missing. A peer is plugged in when
 * it is created and the first time this process sees it (checked once, then trusted: the switch
 * is esi's own). Everything on the bridge runs one operation at a time (two VLAN bridges of one
 * name must not be created at once).
 */
import { DataplaneError } from '../../domain/networking/dataplane.ts';
import type { PortChange } from '../../domain/networking/ports.ts';
import { LinuxBridgeSwitch } from '../switch/linux-bridge.ts';
import { ip, ipBatch, ipJson, type NsLink } from './commands.ts';
import { missingLegs, planLegs, type WantedLeg } from './leg-plan.ts';
import { peerOfDevice } from './names.ts';
import type { SwitchSettings } from './settings.ts';

/** What {@link LegWiring.converge} changed. */
export interface LegChanges {
  /** Devices created. */
  readonly created: readonly string[];
  /** Addresses added (`ip/prefixlen`) by device. */
  readonly added: ReadonlyArray<{ readonly device: string; readonly address: string }>;
}

/** Wrap a switch driver failure as a dataplane one. */
function asDataplaneError(err: unknown): Error {
  return err instanceof DataplaneError ? err : new DataplaneError((err as Error).message, { cause: err });
}

/** The legs of esi's namespaces on one bridge; see the module documentation. */
export class LegWiring {
  readonly #switch: LinuxBridgeSwitch;
  readonly #bridgeNetns: string | null;
  /** Peers known to be plugged into their VLAN: peer → VLAN. */
  readonly #plugged = new Map<string, number>();
  #bridgeQueue: Promise<unknown> = Promise.resolve();

  constructor(settings: SwitchSettings) {
    this.#switch = new LinuxBridgeSwitch({ bridge: settings.bridge, mode: settings.mode, netns: settings.netns });
    this.#bridgeNetns = settings.netns;
  }

  /** Run `fn` after every earlier bridge operation of this process. */
  #onBridge<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.#bridgeQueue.then(fn);
    this.#bridgeQueue = next.catch(() => undefined);
    return next;
  }

  async #switchApply(changes: readonly PortChange[]): Promise<void> {
    if (changes.length === 0) return;
    try {
      await this.#switch.apply(changes);
    } catch (err) {
      throw asDataplaneError(err);
    }
  }

  /**
   * Make namespace `ns` hold exactly the legs `wanted` (devices of ours not wanted are removed),
   * each plugged into its VLAN, with its MAC, MTU and addresses, up.
   * @returns the devices created (none of them existed: the namespace may be a new one) and the
   *   addresses added (for gratuitous ARP)
   * @throws DataplaneError with the failing command's stderr; a second call finishes what a failed one began
   */
  async converge(ns: string, wanted: readonly WantedLeg[]): Promise<LegChanges> {
    const nsLinks = await ipJson<NsLink>(ns, ['addr', 'show']);
    const missing = missingLegs(wanted, nsLinks);
    const plan = await this.#onBridge(async () => {
      const bridgeLinks =
        missing.length > 0 ? new Set((await ipJson<NsLink>(this.#bridgeNetns, ['link', 'show'])).map((l) => l.ifname)) : new Set<string>();
      const plan = planLegs(ns, wanted, nsLinks, bridgeLinks);
      await this.#switchApply(plan.release.map((port) => ({ port, config: { mode: 'quarantine' } })));
      for (const peer of plan.release) this.#plugged.delete(peer);
      await ipBatch(ns, plan.nsDelete);
      for (const peer of plan.created) this.#plugged.delete(peer);
      for (const p of plan.orphans) await ip(this.#bridgeNetns, ['link', 'del', 'dev', p]).catch(() => undefined); // or the kernel just did
      await ipBatch(this.#bridgeNetns, plan.bridgeCreate);
      await ipBatch(this.#bridgeNetns, plan.bridgeConfigure);
      const unplugged = wanted.filter((w) => this.#plugged.get(w.peer) !== w.vlan);
      await this.#switchApply(unplugged.map((w) => ({ port: w.peer, config: { mode: 'access', vlan: w.vlan } })));
      for (const w of unplugged) this.#plugged.set(w.peer, w.vlan);
      return plan;
    });
    await ipBatch(ns, plan.nsConfigure);
    return { created: missing.map((w) => w.device), added: plan.added };
  }

  /**
   * Remove every leg of namespace `ns` (its peers released from the switch first, so that VLAN
   * bridges they empty go), and delete `orphans`: peers whose namespace is gone already (the
   * kernel is removing them itself, so they are deleted where still found, not released).
   */
  async removeAll(ns: string | null, orphans: readonly string[] = []): Promise<void> {
    const nsLinks = ns ? await ipJson<NsLink>(ns, ['link', 'show']) : [];
    const devices = nsLinks.filter((l) => peerOfDevice(l.ifname) !== null).map((l) => l.ifname);
    const peers = devices.map((d) => peerOfDevice(d)!.peer);
    await this.#onBridge(async () => {
      if (peers.length > 0) {
        const bridgeLinks = new Set((await ipJson<NsLink>(this.#bridgeNetns, ['link', 'show'])).map((l) => l.ifname));
        await this.#switchApply(peers.filter((p) => bridgeLinks.has(p)).map((port) => ({ port, config: { mode: 'quarantine' } })));
        await ipBatch(
          ns,
          devices.map((d) => `link del dev ${d}`),
        );
      }
      for (const p of orphans.filter((o) => !peers.includes(o)))
        await ip(this.#bridgeNetns, ['link', 'del', 'dev', p]).catch(() => undefined); // or the kernel just did
      for (const p of [...peers, ...orphans]) this.#plugged.delete(p);
    });
  }
}
