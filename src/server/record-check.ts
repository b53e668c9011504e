/**
 * Wiring of the record check (issue 23, docs/architecture.md "Invariants across records"): the
 * bare-metal port ↔ VIF check over the networking repository, waking the switch reconciler for
 * the switch ports it changes, and the allocation and server ↔ node check over the store;
 * both write their repairs into node history at `WARNING` (`event_type` `vif` and `allocation`).
 */
import type { Logger } from 'pino';
import { RecordCheckWorker } from '../conductor/record-check.ts';
import type { Clock } from '../domain/clock.ts';
import type { NodeHistory } from '../domain/inventory/history.ts';
import type { Networking } from '../domain/networking/index.ts';
import { VifBindingReconciler } from '../domain/networking/vif-check.ts';
import { AllocationNodeReconciler } from '../domain/scheduling/allocation-check.ts';
import type { Store } from '../store/database.ts';
import type { NodeDocumentCodec } from '../store/inventory/node-display.ts';
import { KyselyAllocationLinks } from '../store/scheduling/link-check.ts';

/** What {@link createRecordCheckWorker} needs from the rest of the process. */
export interface RecordCheckWiring {
  readonly store: Store;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly history: NodeHistory;
  readonly networking: Pick<Networking, 'repo' | 'wake'>;
  /** The format of node display documents, stored with every node the check writes. */
  readonly nodeDocuments: NodeDocumentCodec;
}

/** Build the record check worker (run by processes with the conductor role). */
export function createRecordCheckWorker(w: RecordCheckWiring): RecordCheckWorker {
  const log = w.logger.child({ component: 'record-check' });
  const vifs = new VifBindingReconciler(w.networking.repo, w.networking.wake, w.clock, log, {
    record: (node, text) => w.history.record(node, { eventType: 'vif', severity: 'WARNING', event: text }),
  });
  const allocations = new AllocationNodeReconciler(new KyselyAllocationLinks(w.store.db, w.nodeDocuments), w.clock, log, {
    record: (node, text) => w.history.record(node, { eventType: 'allocation', severity: 'WARNING', event: text }),
  });
  return new RecordCheckWorker([vifs, allocations], log);
}
