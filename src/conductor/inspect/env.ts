/**
 * What the inspection flows need besides the common task environment ({@link InspectionEnv}),
 * supplied by the composition root through the conductor.
 */
import type { InspectionRepository } from '../../domain/inspection/ports.ts';
import type { InspectionRule } from '../../domain/inspection/rules.ts';
import type { PortRepository } from '../../domain/inventory/ports.ts';
import type { InspectionCabling } from './cabling.ts';

/** The inspection part of a task's environment. */
export interface InspectionEnv {
  /** Stored inventories and the conductor's port writes. */
  readonly store: InspectionRepository;
  /** Port reads (the node's current ports). */
  readonly ports: Pick<PortRepository, 'list'>;
  /** The operator's inspection rules (read once from configuration). */
  readonly rules: readonly InspectionRule[];
  /** This conductor's hostname: the reservation it holds on the node. */
  readonly host: string;
  /** Checks the cabling LLDP reports as the inspection's requester (absent: no networking). */
  readonly cabling?: InspectionCabling;
}
