/**
 * The bare-metal port ↔ VIF (network port) check (issue 23): run at start and periodically in
 * processes with the conductor role, it finds half-bindings — a bare-metal port whose
 * `internal_info.tenant_vif_port_id` names a network port that is not bound back to it, or a
 * network port bound (`bound_port_uuid`) to a bare-metal port that does not name it — repairs
 * them, and writes a node history entry (`event_type` `vif`, `WARNING`) saying what it repaired.
 *
 * Agreement (docs/architecture.md, "Invariants across records"): a bound network port is the
 * VIF of exactly the bare-metal port it is bound to, and a bare-metal port's VIF is a network
 * port bound to it. VIF attach and detach write both sides in one transaction
 * (./vifs.ts), so a kill never splits them; what this check finds comes from elsewhere (a
 * restored backup, a hand-edited database, a bug).
 *
 * Repairs, decided from the records alone (so every process decides the same), each in one
 * transaction holding the node's and the network port's locks, with both records read again
 * under them:
 * 1. a bare-metal port whose VIF does not exist, is not bound, or is bound to another
 *    bare-metal port → the VIF is removed from the bare-metal port (Ironic's `vif_detach` of
 *    that port: `tenant_vif_port_id` and esi's attaching-project keys cleared); the network
 *    port, if any, is not touched (it is its own binding's business, rule 2);
 * 2. a network port bound to a bare-metal port that does not exist or whose VIF is another
 *    port (or none) → the network port is unbound (Neutron's unbind: binding reset, status
 *    DOWN, a trunk's sub-ports too; ./binding.ts `unbindPort`).
 * Removing rather than completing the binding matches what the switch already carries: the
 * switch port's configuration is derived from both sides agreeing (./binding.ts
 * `desiredConfigs`), so a half-binding was quarantined. Either way the bare-metal port's
 * switch port gets a new `desired_rev` and the switch reconciler is woken, so the switch is
 * programmed again from the repaired records.
 *
 * A node a conductor holds (`reservation`) is left for the next pass. A network port bound to a
 * bare-metal port that no longer exists is recorded in the history of the node its
 * `binding:host_id` names, if that node exists (else only logged).
 *
 * Cost of a pass: one read of every bare-metal port (narrow, with its node's few fields) and
 * one of the bound network ports; then per repair one short transaction.
 */
import type { Clock } from '../clock.ts';
import { switchKeyOf, unbindPort, vifOf, ATTACHED_BY, ATTACHED_BY_ADMIN, TENANT_VIF } from './binding.ts';
import type { BoundNetPort, NetworkRepository, NodePortLink, SwitchPortKey, SwitchWake } from './ports.ts';

/** Where a repair is written down for people (the node's history). */
export interface VifRepairJournal {
  /** Record `text` in the node's history (a node that does not exist records nothing); never throws. */
  record(nodeUuid: string, text: string): Promise<void>;
}

/** The log of the check (pino's shape). */
export interface VifCheckLog {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** One repair made. */
export interface VifRepair {
  /** `vif-removed` (rule 1) or `unbound` (rule 2). */
  readonly kind: 'vif-removed' | 'unbound';
  /** The node whose history records it, or null when none could be named. */
  readonly node: string | null;
  /** The bare-metal port (rule 1) or the network port (rule 2). */
  readonly port: string;
  /** The history text written. */
  readonly text: string;
}

/** What a pass did. */
export interface VifRepairReport {
  readonly repaired: readonly VifRepair[];
  /** Ports left for the next pass (their node held by a conductor, or a failed repair). */
  readonly deferred: readonly string[];
}

/** What one locked repair came to. */
type Outcome = { readonly text: string; readonly key: SwitchPortKey | null; readonly node: string | null } | 'agrees' | 'busy';

/** Checks and repairs the agreement of bare-metal ports and their VIFs (see the module documentation). */
export class VifBindingReconciler {
  constructor(
    private readonly repo: Pick<NetworkRepository, 'nodePortsIn' | 'boundPorts' | 'locked'>,
    private readonly wake: SwitchWake,
    private readonly clock: Clock,
    private readonly log: VifCheckLog,
    private readonly journal: VifRepairJournal,
  ) {}

  /**
   * One pass over every bare-metal port and bound network port. A failure on one port is
   * logged and the pass goes on (the port is then reported deferred).
   * @throws whatever the two first reads throw
   */
  async run(): Promise<VifRepairReport> {
    const nodePorts = await this.repo.nodePortsIn({ kind: 'all' });
    const bound = await this.repo.boundPorts();
    const boundById = new Map(bound.map((b) => [b.id, b]));
    const nodePortByUuid = new Map(nodePorts.map((p) => [p.uuid, p]));
    const repaired: VifRepair[] = [];
    const deferred: string[] = [];
    const attempt = async (port: string, kind: VifRepair['kind'], repair: () => Promise<Outcome>): Promise<void> => {
      try {
        const out = await repair();
        if (out === 'busy') deferred.push(port);
        else if (out !== 'agrees') {
          if (out.key !== null) this.wake.notifySwitch(out.key.switch_uuid);
          this.log.warn({ node: out.node, port, repair: kind }, `VIF check: ${out.text}`);
          if (out.node !== null) await this.journal.record(out.node, out.text);
          repaired.push({ kind, node: out.node, port, text: out.text });
        }
      } catch (err) {
        this.log.error({ err, port }, 'VIF check: could not repair a port');
        deferred.push(port);
      }
    };
    for (const np of nodePorts) {
      const vif = vifOf(np);
      if (vif !== null && boundById.get(vif)?.bound_port_uuid !== np.uuid)
        await attempt(np.uuid, 'vif-removed', () => this.removeVif(np, vif));
    }
    for (const b of bound) {
      const np = nodePortByUuid.get(b.bound_port_uuid);
      if (np === undefined || vifOf(np) !== b.id) await attempt(b.id, 'unbound', () => this.unbind(b, np ?? null));
    }
    return { repaired, deferred };
  }

  /** Rule 1: remove VIF `vif` from bare-metal port `np`, unless the records agree by now. */
  private removeVif(np: NodePortLink, vif: string): Promise<Outcome> {
    return this.repo.locked([`node:${np.node_uuid}`, `port:${vif}`], async (tx) => {
      const claim = await tx.claimNode(np.node_uuid);
      if (claim === 'reserved') return 'busy';
      if (claim === 'missing') return 'agrees';
      const fresh = (await tx.nodePorts(np.node_uuid)).find((p) => p.uuid === np.uuid);
      if (fresh === undefined || vifOf(fresh) !== vif) return 'agrees';
      const port = await tx.getPort(vif);
      if (port !== null && port.bound_port_uuid === fresh.uuid) return 'agrees';
      const now = this.clock.now();
      const info = { ...fresh.internal_info };
      delete info[TENANT_VIF];
      delete info[ATTACHED_BY];
      delete info[ATTACHED_BY_ADMIN];
      await tx.setNodePortInternalInfo(fresh.uuid, info, now);
      const key = await switchKeyOf(tx, fresh);
      if (key !== null) await tx.touchSwitchPorts([key], now);
      const was =
        port === null ? 'does not exist' : port.bound_port_uuid === null ? 'is not bound' : `is bound to port ${port.bound_port_uuid}`;
      return {
        text: `Port ${fresh.uuid} had VIF ${vif}, which ${was}; the VIF was removed from the port.`,
        key,
        node: fresh.node_uuid,
      };
    });
  }

  /** Rule 2: unbind network port `b` from a bare-metal port that does not name it. */
  private async unbind(b: BoundNetPort, target: NodePortLink | null): Promise<Outcome> {
    const locks = target === null ? [`port:${b.id}`] : [`node:${target.node_uuid}`, `port:${b.id}`];
    return this.repo.locked(locks, async (tx) => {
      if (target !== null && (await tx.claimNode(target.node_uuid)) === 'reserved') return 'busy';
      const cur = await tx.getPort(b.id);
      if (cur === null || cur.bound_port_uuid !== b.bound_port_uuid) return 'agrees';
      const np = await tx.nodePortByUuid(b.bound_port_uuid);
      if (np !== null && vifOf(np) === b.id) return 'agrees';
      const now = this.clock.now();
      // `unbindPort` finds the bare-metal port through the binding and clears its VIF only
      // when it names this port, which here it does not: only the network port changes.
      await unbindPort(tx, cur, now);
      const key = np === null ? null : await switchKeyOf(tx, np);
      if (key !== null) await tx.touchSwitchPorts([key], now);
      const had = np === null ? 'does not exist' : vifOf(np) === null ? 'has no VIF' : `has VIF ${vifOf(np)}`;
      const node = np?.node_uuid ?? (cur.binding_host_id !== '' ? cur.binding_host_id : null);
      return {
        text: `Network port ${b.id} was bound to port ${b.bound_port_uuid}, which ${had}; the network port was unbound.`,
        key,
        node,
      };
    });
  }
}
