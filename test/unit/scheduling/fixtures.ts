/**
 * Scheduler test fixtures: nodes in the scheduler's view and a placement request with
 * defaults (project `p1`, no resource class, nothing wanted).
 */
import type { PlacementRequest, SchedNode } from '../../../src/domain/scheduling/model.ts';
import { fnv1a } from '../../../src/domain/scheduling/weighers.ts';

let counter = 0;

/** A free node of project p1 (available, powered off, 8 cpus / 16 GiB / 100 GiB, x86_64). */
export function node(over: Partial<Omit<SchedNode, 'traits'>> & { traits?: string[] } = {}): SchedNode {
  counter += 1;
  const { traits, ...rest } = over;
  const uuid = `00000000-0000-4000-8000-${String(counter).padStart(12, '0')}`;
  return {
    uuid,
    version: 1,
    hash: fnv1a(uuid),
    name: `n${counter}`,
    owner: 'p1',
    lessee: null,
    resourceClass: 'baremetal',
    provisionState: 'available',
    maintenance: false,
    powerState: 'power off',
    instanceUuid: null,
    cpus: 8,
    memoryMb: 16384,
    localGb: 100,
    cpuArch: 'x86_64',
    capabilities: {},
    ...rest,
    traits: new Set(traits ?? []),
  };
}

/** A placement request (project p1, seed `s`) with `over` applied. */
export function request(over: Partial<PlacementRequest> = {}): PlacementRequest {
  return {
    resourceClass: null,
    requiredTraits: [],
    forbiddenTraits: [],
    sizes: {},
    cpuArch: null,
    capabilities: [],
    candidates: null,
    tenancy: { kind: 'project', projectId: 'p1' },
    preferName: null,
    seed: 's',
    ...over,
  };
}
