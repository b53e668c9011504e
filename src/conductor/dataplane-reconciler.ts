/**
 * The dataplane reconciler: the network node's background worker that keeps the tenant
 * dataplane (a DHCP server per network, a router per Neutron router — src/drivers/network/)
 * equal to what the database records, as Neutron's DHCP and L3 agents keep theirs equal to the
 * Neutron server's view.
 *
 * - Intents come from the networking area (src/domain/networking/intents.ts); applying one is
 *   idempotent and whole, so the reconciler only decides *what* to apply, never how.
 * - Woken in-process when the API records a change (`notifyDhcp`, `notifyRouter`, `notifyAll`
 *   through the networking area's wake relay); every `pollMs` a full pass compares every
 *   desired intent with what was last applied and with what the kernel holds (`realised()`: a
 *   namespace that vanished is rebuilt; one nobody wants any more is removed) — so changes
 *   recorded by other processes arrive within one period. Every `resyncEvery` passes each
 *   intent is applied again even when unchanged, which restores a ruleset or address someone
 *   removed by hand.
 * - One key at a time (`dhcp:<network>`, `router:<router>`): a change arriving while its key is
 *   being applied queues one more apply right after.
 * - A failed apply is logged with the dataplane's reason and retried at the next pass.
 * - Only the process configured as the network node runs it (`ESI_DATAPLANE_BRIDGE`); two
 *   network nodes on one set of VLANs would both answer DHCP, so configure one.
 */
import { createHash } from 'node:crypto';
import type { DataplaneWake, Networking, TenantDataplane } from '../domain/networking/index.ts';
import type { ConductorLog } from './runtime.ts';
import type { BackgroundWorker } from './worker.ts';

/** Settings of the reconciler. */
export interface DataplaneReconcilerOptions {
  /** Period of the full pass, ms. */
  readonly pollMs: number;
  /** Every this many full passes, unchanged intents are applied again (≥ 1). */
  readonly resyncEvery: number;
}

/** A unit of work: one network's DHCP service or one router. */
type Key = `dhcp:${string}` | `router:${string}`;

const digest = (v: unknown): string => createHash('sha256').update(JSON.stringify(v)).digest('hex');

/** See the module documentation. */
export class DataplaneReconciler implements BackgroundWorker, DataplaneWake {
  readonly name = 'dataplane-reconciler';
  /** The digest of the intent last applied per key (absent: never applied or removed). */
  readonly #applied = new Map<Key, string>();
  readonly #queue = new Set<Key>();
  #full = false;
  #running: Promise<void> | null = null;
  #timer: NodeJS.Timeout | null = null;
  #passes = 0;
  #stopped = true;

  constructor(
    private readonly networking: Networking,
    private readonly dataplane: TenantDataplane,
    private readonly log: ConductorLog,
    private readonly options: DataplaneReconcilerOptions,
  ) {}

  async start(): Promise<void> {
    this.#stopped = false;
    // Networks whose subnets predate DHCP ports get theirs now (Neutron's DHCP agent's port).
    try {
      await this.networking.dhcpPorts.ensureAll();
    } catch (err) {
      this.log.error({ err }, 'dataplane: making the DHCP ports failed');
    }
    this.networking.dataplane.attach(this);
    this.#timer = setInterval(() => this.notifyAll(), this.options.pollMs);
    this.#timer.unref();
    this.notifyAll();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.networking.dataplane.attach(null);
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await this.idle();
    await this.dataplane.close();
  }

  notifyDhcp(networkId: string): void {
    this.#enqueue(`dhcp:${networkId}`);
  }

  notifyRouter(routerId: string): void {
    this.#enqueue(`router:${routerId}`);
  }

  /** A change whose reach is not known (or the period): a full pass. */
  notifyAll(): void {
    if (this.#stopped) return;
    this.#full = true;
    this.#kick();
  }

  /** Wait until nothing is queued or running (tests and benchmarks). */
  async idle(): Promise<void> {
    while (this.#running !== null) await this.#running;
  }

  #enqueue(key: Key): void {
    if (this.#stopped) return;
    this.#queue.add(key);
    this.#kick();
  }

  #kick(): void {
    if (this.#running !== null) return;
    this.#running = this.#drain().finally(() => {
      this.#running = null;
    });
  }

  async #drain(): Promise<void> {
    while (!this.#stopped && (this.#full || this.#queue.size > 0)) {
      if (this.#full) {
        this.#full = false;
        await this.#fullPass();
        continue;
      }
      const key = this.#queue.values().next().value as Key;
      this.#queue.delete(key);
      await this.#reconcile(key, false);
    }
  }

  /** Every desired key and every realised one, each reconciled. */
  async #fullPass(): Promise<void> {
    let keys: Key[];
    let realised: { dhcp: readonly string[]; routers: readonly string[] };
    try {
      const intents = this.networking.intents;
      const [nets, routers] = [await intents.dhcpNetworkIds(), await intents.routerIds()];
      realised = await this.dataplane.realised();
      keys = [
        ...new Set<Key>([
          ...nets.map((id) => `dhcp:${id}` as const),
          ...realised.dhcp.map((id) => `dhcp:${id}` as const),
          ...routers.map((id) => `router:${id}` as const),
          ...realised.routers.map((id) => `router:${id}` as const),
          ...this.#applied.keys(),
        ]),
      ];
    } catch (err) {
      this.log.error({ err }, 'dataplane: reading the intents failed');
      return;
    }
    this.#passes += 1;
    const resync = this.#passes % Math.max(1, this.options.resyncEvery) === 0;
    const present = new Set<Key>([
      ...realised.dhcp.map((id) => `dhcp:${id}` as const),
      ...realised.routers.map((id) => `router:${id}` as const),
    ]);
    for (const key of keys) {
      if (this.#stopped) return;
      // Applied before but gone from the kernel (a namespace deleted by hand): apply again.
      if (!present.has(key)) this.#applied.delete(key);
      await this.#reconcile(key, resync);
    }
  }

  /** Make one key's realisation match its intent. */
  async #reconcile(key: Key, force: boolean): Promise<void> {
    const [kind, id] = key.startsWith('dhcp:') ? (['dhcp', key.slice(5)] as const) : (['router', key.slice(7)] as const);
    try {
      const intent = kind === 'dhcp' ? await this.networking.intents.dhcpIntentOf(id) : await this.networking.intents.routerIntentOf(id);
      const wanted = intent !== null && (kind === 'router' || (intent as { subnets: readonly unknown[] }).subnets.length > 0);
      if (!wanted) {
        if (kind === 'dhcp') await this.dataplane.removeDhcp(id);
        else await this.dataplane.removeRouter(id);
        if (this.#applied.delete(key)) this.log.info({ [kind === 'dhcp' ? 'network' : 'router']: id }, `dataplane: ${kind} removed`);
        return;
      }
      const d = digest(intent);
      if (!force && this.#applied.get(key) === d) return;
      const started = Date.now();
      if (kind === 'dhcp') await this.dataplane.applyDhcp(intent as Parameters<TenantDataplane['applyDhcp']>[0]);
      else await this.dataplane.applyRouter(intent as Parameters<TenantDataplane['applyRouter']>[0]);
      const changed = this.#applied.get(key) !== d;
      this.#applied.set(key, d);
      if (changed) this.log.info({ [kind === 'dhcp' ? 'network' : 'router']: id, ms: Date.now() - started }, `dataplane: ${kind} applied`);
    } catch (err) {
      this.#applied.delete(key);
      this.log.warn(
        { [kind === 'dhcp' ? 'network' : 'router']: id, err: (err as Error).message },
        `dataplane: ${kind} failed; retried at the next pass`,
      );
    }
  }
}
