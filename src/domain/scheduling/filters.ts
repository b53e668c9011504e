/**
 * Scheduler filters: each decides whether one node can take a placement request, and says why
 * not. Pure functions; a request's active filters are compiled once ({@link compileFilters}) and
 * then run over every node.
 *
 * | filter            | a node passes when (source) |
 * |-------------------|-----------------------------|
 * | `candidate_nodes` | it is one of the request's candidates (Ironic allocation `candidate_nodes`) |
 * | `tenancy`         | the project may use it: leased to the project, or owned by it and leased to nobody else (esi; Ironic: owner or lessee); any node for `tenancy: any` |
 * | `resource_class`  | its resource class is the wanted one (Ironic: equal; a flavor's `resources:CUSTOM_X=1`: the node's class normalised as Nova's ironic driver does) |
 * | `provision_state` | it is `available` (Ironic allocation candidates; Nova: schedulable) |
 * | `maintenance`     | it is not in maintenance |
 * | `instance`        | it has no `instance_uuid` (no instance, no allocation) |
 * | `power_state`     | its power state is known (not null, not `error`): Ironic skips nodes with no power state, Nova nodes in power `error` |
 * | `traits`          | it has every required trait and no forbidden one (Ironic allocation traits; Nova `trait:X=required/forbidden`) |
 * | `cpu_arch`        | `properties.cpu_arch` equals the wanted one |
 * | `capabilities`    | every `capabilities:<key>` spec matches `properties.capabilities` (Nova ComputeCapabilitiesFilter) |
 * | `cpus`, `memory_mb`, `local_gb` | the property equals the wanted amount (`exact`) or is at least it (`min`); an unknown property fails (Nova's exact-match filters, docs/scheduling.md) |
 */
import { matchesSpec } from './capabilities.ts';
import { customResourceClass, type PlacementRequest, type SchedNode, type SizeKey } from './model.ts';

/** A compiled filter: null when the node passes, else why it does not. */
export interface Filter {
  readonly name: string;
  readonly test: (node: SchedNode) => string | null;
}

const SIZE_OF: Readonly<Record<SizeKey, (n: SchedNode) => number | null>> = {
  cpus: (n) => n.cpus,
  memory_mb: (n) => n.memoryMb,
  local_gb: (n) => n.localGb,
};

/** The filters that apply to a request, cheapest and most selective first. */
export function compileFilters(req: PlacementRequest): Filter[] {
  const out: Filter[] = [];
  if (req.candidates !== null) {
    const c = req.candidates;
    out.push({ name: 'candidate_nodes', test: (n) => (c.has(n.uuid) ? null : 'not one of the candidate nodes') });
  }
  if (req.tenancy.kind === 'project') {
    const p = req.tenancy.projectId;
    out.push({
      name: 'tenancy',
      test: (n) => {
        if (n.lessee === p) return null;
        if (n.owner === p) return n.lessee === null ? null : 'leased to another project';
        return 'neither owned nor leased by the project';
      },
    });
  }
  const rc = req.resourceClass;
  if (rc !== null) {
    const exact = rc.match === 'exact';
    let lastRaw: string | null = null;
    let lastNorm = '';
    out.push({
      name: 'resource_class',
      test: (n) => {
        const have = n.resourceClass;
        if (have === null) return `no resource class (wanted ${rc.name})`;
        if (exact) return have === rc.name ? null : `resource class ${have} (wanted ${rc.name})`;
        // Fleets have few classes: remember the last normalisation.
        if (have !== lastRaw) {
          lastRaw = have;
          lastNorm = customResourceClass(have);
        }
        return lastNorm === rc.name ? null : `resource class ${have} (${lastNorm}; wanted ${rc.name})`;
      },
    });
  }
  out.push({
    name: 'provision_state',
    test: (n) => (n.provisionState === 'available' ? null : `provision state ${n.provisionState} (must be available)`),
  });
  out.push({ name: 'maintenance', test: (n) => (n.maintenance ? 'in maintenance' : null) });
  out.push({ name: 'instance', test: (n) => (n.instanceUuid === null ? null : `already holds instance ${n.instanceUuid}`) });
  out.push({
    name: 'power_state',
    test: (n) => (n.powerState === null ? 'power state unknown' : n.powerState === 'error' ? 'power state error' : null),
  });
  if (req.requiredTraits.length > 0 || req.forbiddenTraits.length > 0) {
    const required = req.requiredTraits;
    const forbidden = req.forbiddenTraits;
    out.push({
      name: 'traits',
      test: (n) => {
        let missing: string[] | null = null;
        for (const t of required) if (!n.traits.has(t)) (missing ??= []).push(t);
        let present: string[] | null = null;
        for (const t of forbidden) if (n.traits.has(t)) (present ??= []).push(t);
        if (missing === null && present === null) return null;
        return [missing ? `missing trait ${missing.join(', ')}` : '', present ? `has forbidden trait ${present.join(', ')}` : '']
          .filter(Boolean)
          .join('; ');
      },
    });
  }
  if (req.cpuArch !== null) {
    const arch = req.cpuArch;
    out.push({ name: 'cpu_arch', test: (n) => (n.cpuArch === arch ? null : `cpu_arch ${n.cpuArch ?? 'unknown'} (wanted ${arch})`) });
  }
  if (req.capabilities.length > 0) {
    const caps = req.capabilities;
    out.push({
      name: 'capabilities',
      test: (n) => {
        const bad = caps.filter((c) => !matchesSpec(n.capabilities[c.key], c.spec));
        if (bad.length === 0) return null;
        return bad.map((c) => `capability ${c.key}=${n.capabilities[c.key] ?? '(unset)'} does not match "${c.spec}"`).join('; ');
      },
    });
  }
  for (const key of ['memory_mb', 'cpus', 'local_gb'] as const) {
    const want = req.sizes[key];
    if (want === undefined) continue;
    const get = SIZE_OF[key];
    const { value, mode } = want;
    out.push({
      name: key,
      test: (n) => {
        const have = get(n);
        if (have === null) return `${key} unknown (wanted ${mode === 'exact' ? '' : 'at least '}${value})`;
        if (mode === 'exact') return have === value ? null : `${key} ${have} is not ${value}`;
        return have >= value ? null : `${key} ${have} < ${value}`;
      },
    });
  }
  return out;
}

/** The first filter a node fails, or null when it passes them all. */
export function firstFailure(filters: readonly Filter[], node: SchedNode): { filter: string; reason: string } | null {
  for (const f of filters) {
    const reason = f.test(node);
    if (reason !== null) return { filter: f.name, reason };
  }
  return null;
}

/** Every filter a node fails (empty when it passes). */
export function allFailures(filters: readonly Filter[], node: SchedNode): Array<{ filter: string; reason: string }> {
  const out: Array<{ filter: string; reason: string }> = [];
  for (const f of filters) {
    const reason = f.test(node);
    if (reason !== null) out.push({ filter: f.name, reason });
  }
  return out;
}
