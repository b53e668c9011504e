/**
 * Helpers of the scheduling API tests: free fake-hardware nodes (available, powered off) made
 * through the API plus a forced state, and waiting for allocations to be processed.
 */
import { expect } from 'vitest';
import type { Persona, Personas, TestServer } from '../../helpers/harness.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import { bm, createNode, forceNode } from '../baremetal/helpers.ts';

export { bm, expectError, fault, forceNode } from '../baremetal/helpers.ts';

/**
 * A fake-hardware node, `available` and `power off` (what `manage` + `provide` would give),
 * owned by o1 unless `body` says otherwise (no lessee by default).
 * @returns the node JSON as created
 */
export async function freeNode(ts: TestServer, p: Personas, body: Record<string, unknown> = {}): Promise<any> {
  const n = await createNode(ts, p, {
    lessee: null,
    resource_class: 'gold',
    properties: { cpus: 8, memory_mb: 16384, local_gb: 100, cpu_arch: 'x86_64' },
    ...body,
  });
  await forceNode(ts, n.uuid, { provision_state: 'available', power_state: 'power off' });
  return n;
}

/** Poll an allocation (as `who`) until it is no longer `allocating`; returns it. */
export function settledAllocation(ts: TestServer, who: Persona, uuid: string, timeoutMs = 10_000): Promise<any> {
  return waitFor(
    async () => {
      const r = await bm(ts, who, 'GET', `/v1/allocations/${uuid}`);
      expect(r.status, r.text).toBe(200);
      return r.body;
    },
    (a) => a.state !== 'allocating',
    { timeoutMs, intervalMs: 25, what: `allocation ${uuid} to be no longer allocating` },
  );
}

/** Number of rows of a scheduling or compute table. */
export async function rows(ts: TestServer, table: 'allocations' | 'flavors' | 'keypairs' | 'servers' | 'flavor_projects'): Promise<number> {
  const r = await ts.server.services.store.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(r.n);
}
