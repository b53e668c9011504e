/** What the baremetal API plugin (Ironic v1, agent endpoints, console websockets) receives. */
import type { CaptureService } from '../../domain/deploy/capture.ts';
import type { RamdiskService } from '../../domain/deploy/ramdisk.ts';
import type { InspectionService } from '../../domain/inspection/service.ts';
import type { Inventory } from '../../domain/inventory/index.ts';
import type { NodeConsoleService } from '../../domain/inventory/node-console.ts';
import type { NodeHardwareService } from '../../domain/inventory/node-hardware.ts';
import type { NodeListPlan } from '../../domain/inventory/node-service.ts';
import type { Networking } from '../../domain/networking/index.ts';
import type { Scheduling } from '../../domain/scheduling/index.ts';
import type { ApiCommonDeps } from '../common/deps.ts';
import type { StoredNodeDocument } from './node-document.ts';

/**
 * The stored display documents of nodes (./node-document.ts; the store keeps them with every
 * node version and encodes a missing or stale one afresh, so each is that of the node as read).
 */
export interface NodeDocumentReader {
  /** Documents by internal node id; missing nodes are absent, in no particular order. */
  documents(ids: readonly number[]): Promise<StoredNodeDocument[]>;
  /** The documents of one list page, in page order. */
  pageDocuments(page: NodeListPlan['page']): Promise<StoredNodeDocument[]>;
}

/** The baremetal API's dependencies. */
export interface BaremetalApiDeps extends ApiCommonDeps {
  readonly inventory: Inventory;
  /** Node display documents, for full node lists. */
  readonly nodeDocuments: NodeDocumentReader;
  /** VIF attach and detach (`…/vifs`). */
  readonly networking: Pick<Networking, 'vifs'>;
  /** Allocations (`/v1/allocations`). */
  readonly scheduling: Pick<Scheduling, 'allocations'>;
  readonly ramdisk: RamdiskService;
  readonly inspection: InspectionService;
  readonly capture: CaptureService;
  readonly consoles: NodeConsoleService;
  readonly nodeHardware: NodeHardwareService;
}
