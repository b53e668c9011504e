/**
 * The whole database schema as one Kysely type, composed from each area's table types.
 * Each area owns its `tables.ts` and its migration(s) in `./migrations/`.
 */
import type { IdentityTables } from './identity/tables.ts';
import type { InventoryTables } from './inventory/tables.ts';
import type { LeasingTables } from './leasing/tables.ts';
import type { ImageTables } from './images/tables.ts';
import type { NetworkingTables } from './networking/tables.ts';
import type { SchedulingTables } from './scheduling/tables.ts';
import type { ComputeTables } from './compute/tables.ts';
import type { HardwareTables } from './hardware/tables.ts';
import type { NodeHistoryTables } from './inventory/history-tables.ts';
import type { InspectionTables } from './inspection/tables.ts';
import type { DeployTemplateTables } from './inventory/deploy-template-tables.ts';
import type { ChangeLogTables } from './changes/tables.ts';

/** Every table of esi's database. */
export interface Database
  extends
    IdentityTables,
    InventoryTables,
    LeasingTables,
    ImageTables,
    NetworkingTables,
    SchedulingTables,
    ComputeTables,
    NodeHistoryTables,
    InspectionTables,
    HardwareTables,
    DeployTemplateTables,
    ChangeLogTables {}
