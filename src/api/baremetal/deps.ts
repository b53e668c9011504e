/** What the baremetal API plugin (Ironic v1, agent endpoints, console websockets) receives. */
import type { CaptureService } from '../../domain/deploy/capture.ts';
import type { RamdiskService } from '../../domain/deploy/ramdisk.ts';
import type { InspectionService } from '../../domain/inspection/service.ts';
import type { Inventory } from '../../domain/inventory/index.ts';
import type { NodeConsoleService } from '../../domain/inventory/node-console.ts';
import type { NodeHardwareService } from '../../domain/inventory/node-hardware.ts';
import type { Networking } from '../../domain/networking/index.ts';
import type { Scheduling } from '../../domain/scheduling/index.ts';
import type { ApiCommonDeps } from '../common/deps.ts';

/** The baremetal API's dependencies. */
export interface BaremetalApiDeps extends ApiCommonDeps {
  readonly inventory: Inventory;
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
