/**
 * Events across processes (issue 21, item 1): a conductor process acts on the changes other
 * processes commit as soon as PostgreSQL notifies them (src/store/change-listener.ts), instead
 * of at its next lease sweep (30 s) or pending-work poll (1 s).
 *
 * - A lease or offer created, changed or deleted elsewhere goes to the lease manager's change
 *   path (`changed`, the same one the API of this process uses): its next boundary is read and
 *   scheduled at once, and processed at once when due.
 * - A node changed elsewhere (an API replica recorded a power or provision target, another
 *   conductor finished a stage, …) is offered to the conductor (`notifyNode`): it reads the
 *   node and runs its work only when the node maps to it and has work.
 * - After the listening connection was lost and is back: a lease sweep and a pending-work
 *   poll now (`resync`), since hints sent meanwhile are gone. The periodic sweep and poll stay
 *   as the safety net.
 *
 * Hints of this process's own writes are skipped (it told its parts in-process already).
 */
import type { ChangeHints } from '../domain/changes/hints.ts';
import type { ScheduleRef } from '../domain/leasing/index.ts';

/** What the conductor side of a process offers to hints. */
export interface HintTargets {
  /** The lease manager: `changed` schedules one offer or lease, `resync` sweeps them all (when running). */
  readonly leases: { changed(ref: ScheduleRef): void; resync(): void };
  /** The conductor: `notifyNode` queues a node's work, `resync` polls the pending work (when running). */
  readonly nodes: { notifyNode(uuid: string): void; resync(): void };
}

/**
 * Route change hints to the lease manager and the conductor of this process.
 * @returns a function that stops the routing
 */
export function routeChangeHints(hints: ChangeHints, to: HintTargets): () => void {
  return hints.subscribe({
    hint(h) {
      if (h.local) return;
      if (h.kind === 'node') {
        if (h.op !== 'delete') to.nodes.notifyNode(h.id);
      } else {
        to.leases.changed({ kind: h.kind, uuid: h.id });
      }
    },
    resync() {
      to.leases.resync();
      to.nodes.resync();
    },
  });
}
