/**
 * The node and port stores of this process: the node repository (which stores each node's
 * baremetal display document beside its row), the node history that conductor writes carrying
 * an error or a fault record through, and the port repository.
 */
import type { Logger } from 'pino';
import type { Clock } from '../domain/clock.ts';
import { newUuid } from '../domain/ids.ts';
import { HistoryRecorder, recordingNodeRepository } from '../domain/inventory/index.ts';
import type { NodeRepository } from '../domain/inventory/ports.ts';
import { NODE_DOCUMENT_CODEC } from '../api/baremetal/node-document.ts';
import type { Store } from '../store/database.ts';
import { KyselyNodeHistoryRepository } from '../store/inventory/history-repository.ts';
import { KyselyNodeRepository } from '../store/inventory/node-repository.ts';
import { KyselyPortRepository } from '../store/inventory/port-repository.ts';
import type { Config } from './config.ts';

/** The stores {@link openNodeStores} builds. */
export interface NodeStores {
  /** The plain node repository (reads of display documents, the API's node lists). */
  readonly nodeRepository: KyselyNodeRepository;
  /** The node repository whose writes record node history (what every flow writes through). */
  readonly recordedNodes: NodeRepository;
  readonly historyRepository: KyselyNodeHistoryRepository;
  readonly history: HistoryRecorder;
  readonly portRepository: KyselyPortRepository;
}

/**
 * Build the node stores over `store` and rebuild, once, the display documents that are missing
 * or were made by other code (reads are correct either way, as they encode such nodes'
 * documents afresh; this keeps them fast).
 */
export async function openNodeStores(o: { config: Config; clock: Clock; logger: Logger; store: Store }): Promise<NodeStores> {
  // Every node write stores the baremetal API's display document of the node, whose format
  // only the API knows (src/api/baremetal/node-document.ts).
  const nodeRepository = new KyselyNodeRepository(o.store.db, o.clock, NODE_DOCUMENT_CODEC, o.store.selectArrays);
  await nodeRepository.refreshDisplays();
  // Node history (docs/power-sync.md).
  const historyRepository = new KyselyNodeHistoryRepository(o.store.db);
  const history = new HistoryRecorder({
    repository: historyRepository,
    clock: o.clock,
    maxEntries: o.config.conductor.nodeHistoryMaxEntries,
    host: o.config.conductor.hostname,
    newUuid,
    onError: (err, node) => o.logger.error({ err, node }, 'node history: recording an entry failed'),
  });
  return {
    nodeRepository,
    recordedNodes: recordingNodeRepository(nodeRepository, history),
    historyRepository,
    history,
    portRepository: new KyselyPortRepository(o.store.db, o.store.selectArrays),
  };
}
