/**
 * The ordered, frozen list of database migrations. Names sort in the order they run.
 * Never edit a released migration: add a new one.
 */
import type { Migration } from 'kysely';
import * as identity from './0001_identity.ts';
import * as inventory from './0002_inventory.ts';
import * as leasing from './0003_leasing.ts';
import * as leasingPolicies from './0004_leasing_policies.ts';
import * as images from './0005_images.ts';
import * as inventoryRender from './0006_inventory_render.ts';
import * as provisioning from './0007_provisioning.ts';
import * as networking from './0008_networking.ts';
import * as scheduling from './0010_scheduling.ts';
import * as nodeHistory from './0014_node_history.ts';
import * as inspection from './0011_inspection.ts';
import * as biosRaid from './0013_bios_raid.ts';
import * as switchPortCabling from './0015_switch_port_cabling.ts';
import * as l3 from './0016_l3.ts';
import * as inventoryResources from './0017_inventory_resources.ts';
import * as deployTemplates from './0018_deploy_templates.ts';
import * as floatingIps from './0019_floating_ips.ts';
import * as networkQuotas from './0020_network_quotas.ts';
import * as identityGroupsAppCreds from './0021_identity_groups_appcreds.ts';
import * as volumeWriters from './0022_volume_writers.ts';
import * as ipAllocationOrder from './0023_ip_allocation_order.ts';
import * as vifRowCover from './0024_vif_row_cover.ts';
import * as changeLog from './0025_change_log.ts';
import * as changeNotify from './0026_change_notify.ts';
import * as conductorDeadAfter from './0027_conductor_dead_after.ts';
import * as leaseOfferWindows from './0028_lease_offer_windows.ts';
import * as apiProcesses from './0029_api_processes.ts';

/** Migrations by name, for Kysely's `Migrator`. */
export const migrations: Record<string, Migration> = {
  '0001_identity': identity,
  '0002_inventory': inventory,
  '0003_leasing': leasing,
  '0004_leasing_policies': leasingPolicies,
  '0005_images': images,
  '0006_inventory_render': inventoryRender,
  '0007_provisioning': provisioning,
  '0008_networking': networking,
  '0010_scheduling': scheduling,
  '0014_node_history': nodeHistory,
  '0011_inspection': inspection,
  '0013_bios_raid': biosRaid,
  '0015_switch_port_cabling': switchPortCabling,
  '0016_l3': l3,
  '0017_inventory_resources': inventoryResources,
  '0018_deploy_templates': deployTemplates,
  '0019_floating_ips': floatingIps,
  '0020_network_quotas': networkQuotas,
  '0021_identity_groups_appcreds': identityGroupsAppCreds,
  '0022_volume_writers': volumeWriters,
  '0023_ip_allocation_order': ipAllocationOrder,
  '0024_vif_row_cover': vifRowCover,
  '0025_change_log': changeLog,
  '0026_change_notify': changeNotify,
  '0027_conductor_dead_after': conductorDeadAfter,
  '0028_lease_offer_windows': leaseOfferWindows,
  '0029_api_processes': apiProcesses,
};
