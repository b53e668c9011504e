/**
 * The composition root's product: every long-lived service of one esi process, built once
 * from the configuration and passed to the API plugins, the conductor and the lease manager.
 */
import type { Logger } from 'pino';
import type { Clock } from '../domain/clock.ts';
import type { Identity } from '../domain/identity/index.ts';
import type { Inventory } from '../domain/inventory/index.ts';
import type { NodeConsoleService } from '../domain/inventory/node-console.ts';
import type { Leasing } from '../domain/leasing/index.ts';
import type { LeaseNodeReconciler } from '../domain/leasing/reconcile.ts';
import type { ApiHeartbeat } from '../domain/leasing/api-claims.ts';
import type { Images } from '../domain/images/index.ts';
import type { RamdiskService } from '../domain/deploy/ramdisk.ts';
import type { NetworkBootService } from '../domain/deploy/network-boot.ts';
import type { BootMediaService } from '../domain/deploy/boot-media.ts';
import type { InspectionService } from '../domain/inspection/service.ts';
import type { CaptureService } from '../domain/deploy/capture.ts';
import type { ImageTempUrls } from '../domain/deploy/temp-url.ts';
import type { LeaseManager } from '../conductor/lease-manager.ts';
import type { SwitchReconciler } from '../conductor/switch-reconciler.ts';
import type { Networking } from '../domain/networking/index.ts';
import type { Policy } from '../domain/policy/types.ts';
import type { BackgroundWorker } from '../conductor/worker.ts';
import type { Store } from '../store/database.ts';
import type { Config } from './config.ts';
import type { EsiMetrics } from './metrics.ts';
import type { Scheduling } from '../domain/scheduling/index.ts';
import type { Compute } from '../domain/compute/index.ts';
import type { NodeHardwareService } from '../domain/inventory/node-hardware.ts';
import type { NodeDocumentReader } from '../api/baremetal/deps.ts';

export type { BackgroundWorker };

/** Services shared by every part of one process. */
export interface Services {
  readonly config: Config;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly store: Store;
  readonly policy: Policy;
  readonly identity: Identity;
  /** Background workers to run when this process has the `conductor` role. */
  readonly workers: readonly BackgroundWorker[];
  /** Nodes, ports, drivers and conductors (baremetal API, conductor, lease manager). */
  readonly inventory: Inventory;
  /** The stored node display documents (the baremetal API's full node lists). */
  readonly nodeDocuments: NodeDocumentReader;
  // --- leasing (offers, leases, lease manager) ---
  readonly leasing: Leasing;
  /** The lease manager (also in `workers`); tests poke it with `runDue()` / `sweep()`. */
  readonly leaseManager: LeaseManager;
  /** The lease ↔ node check (run by a worker at start and periodically); tests run it with `run()`. */
  readonly leaseCheck: LeaseNodeReconciler;
  /** Without the conductor role: the heartbeat whose id this process's lease claims carry (main.ts runs it); else null. */
  readonly apiHeartbeat: ApiHeartbeat | null;
  /** Images: metadata, data upload/download, members (image API). */
  readonly images: Images;
  /** Deploy agent lookup and heartbeat (baremetal API ramdisk endpoints). */
  readonly ramdisk: RamdiskService;
  /** Per-node virtual media ISOs (`/boot/media`). */
  readonly bootMedia: BootMediaService;
  /** iPXE scripts for network boot (`/boot`). */
  readonly networkBoot: NetworkBootService;
  /** Inspection data from the agent and stored inventories (baremetal API). */
  readonly inspection: InspectionService;
  /** Signed, expiring image data URLs for the deploy agent (image API and conductor). */
  readonly imageTempUrls: ImageTempUrls;
  /** Image capture of active nodes (baremetal API `…/capture`, an esi addition). */
  readonly capture: CaptureService;
  /** Networks, subnets, ports, trunks, RBAC, VIFs and switches (network API, VIF routes). */
  readonly networking: Networking;
  /** The switch reconciler (also in `workers`); tests wait for it with `idle()`. */
  readonly switchReconciler: SwitchReconciler;
  /** Allocations and the scheduler (baremetal API `/v1/allocations`, compute API servers). */
  readonly scheduling: Scheduling;
  /** Flavors, key pairs and servers (compute API). */
  readonly compute: Compute;
  /** Opens nodes' serial consoles for the console websockets (lease and baremetal APIs). */
  readonly consoles: NodeConsoleService;
  /** Node BIOS settings cache and RAID targets (baremetal API `…/bios`, `…/states/raid`). */
  readonly nodeHardware: NodeHardwareService;
  /** The Prometheus metrics `GET /metrics` serves (src/server/metrics.ts); null with `ESI_METRICS=false`. */
  readonly metrics: EsiMetrics | null;
}
