/**
 * The inventory resource repositories of one store (chassis, portgroups, volume connectors and
 * targets; migration 0017), as `createInventory` takes them.
 */
import type { InventoryResourceRepositories } from '../../domain/inventory/resource-ports.ts';
import type { Db } from '../database.ts';
import { KyselyChassisRepository } from './chassis-repository.ts';
import { KyselyPortgroupRepository } from './portgroup-repository.ts';
import { KyselyVolumeConnectorRepository, KyselyVolumeTargetRepository } from './volume-repositories.ts';

/** Build the resource repositories over a Kysely handle. */
export function openInventoryResources(db: Db): InventoryResourceRepositories {
  return {
    chassis: new KyselyChassisRepository(db),
    portgroups: new KyselyPortgroupRepository(db),
    volumeConnectors: new KyselyVolumeConnectorRepository(db),
    volumeTargets: new KyselyVolumeTargetRepository(db),
  };
}
