/**
 * The scheduler's filters, weighers and explanations (src/domain/scheduling/): each filter
 * rejects what it should and says why; weighers put exact matches and small machines first
 * and break ties deterministically per request; an explanation names the closest nodes and the
 * filters that rejected them.
 */
import { describe, expect, it } from 'vitest';
import { compileFilters, allFailures } from '../../../src/domain/scheduling/filters.ts';
import { customResourceClass } from '../../../src/domain/scheduling/model.ts';
import { describeExplanation, explain, schedule } from '../../../src/domain/scheduling/scheduler.ts';
import { compareWeights, weigh } from '../../../src/domain/scheduling/weighers.ts';
import { node, request } from './fixtures.ts';

const failing = (n: ReturnType<typeof node>, req = request()): string[] => allFailures(compileFilters(req), n).map((f) => f.filter);

describe('filters', () => {
  it('pass a free node of the project that meets the request', () => {
    expect(failing(node())).toEqual([]);
  });

  it('reject nodes that are not free: state, maintenance, instance, unknown or failed power', () => {
    expect(failing(node({ provisionState: 'active' }))).toEqual(['provision_state']);
    expect(failing(node({ maintenance: true }))).toEqual(['maintenance']);
    expect(failing(node({ instanceUuid: 'i-1' }))).toEqual(['instance']);
    expect(failing(node({ powerState: null }))).toEqual(['power_state']);
    expect(failing(node({ powerState: 'error' }))).toEqual(['power_state']);
  });

  it('tenancy: leased to the project, or owned and not leased to anyone else; any node for tenancy any', () => {
    expect(failing(node({ owner: 'p2', lessee: 'p1' }))).toEqual([]);
    expect(failing(node({ owner: 'p1', lessee: 'p2' }))).toEqual(['tenancy']);
    expect(failing(node({ owner: 'p2' }))).toEqual(['tenancy']);
    expect(failing(node({ owner: 'p2', lessee: 'p3' }), request({ tenancy: { kind: 'any' } }))).toEqual([]);
  });

  it('resource class: exact for allocations, normalised custom class for flavors', () => {
    expect(customResourceClass('baremetal-gold')).toBe('CUSTOM_BAREMETAL_GOLD');
    expect(customResourceClass('CUSTOM_X')).toBe('CUSTOM_X');
    const exact = request({ resourceClass: { name: 'baremetal-gold', match: 'exact' } });
    expect(failing(node({ resourceClass: 'baremetal-gold' }), exact)).toEqual([]);
    expect(failing(node({ resourceClass: 'Baremetal-Gold' }), exact)).toEqual(['resource_class']);
    const custom = request({ resourceClass: { name: 'CUSTOM_BAREMETAL_GOLD', match: 'custom' } });
    expect(failing(node({ resourceClass: 'baremetal.gold' }), custom)).toEqual([]);
    expect(failing(node({ resourceClass: 'baremetal' }), custom)).toEqual(['resource_class']);
    expect(failing(node({ resourceClass: null }), custom)).toEqual(['resource_class']);
  });

  it('traits: required present, forbidden absent; the reason names both kinds', () => {
    const req = request({ requiredTraits: ['CUSTOM_GPU', 'CUSTOM_NVME'], forbiddenTraits: ['CUSTOM_SLOW'] });
    expect(failing(node({ traits: ['CUSTOM_GPU', 'CUSTOM_NVME', 'CUSTOM_OTHER'] }), req)).toEqual([]);
    const bad = allFailures(compileFilters(req), node({ traits: ['CUSTOM_GPU', 'CUSTOM_SLOW'] }));
    expect(bad).toEqual([{ filter: 'traits', reason: 'missing trait CUSTOM_NVME; has forbidden trait CUSTOM_SLOW' }]);
  });

  it('sizes: exact or at least; an unknown size fails', () => {
    const req = request({ sizes: { memory_mb: { value: 16384, mode: 'exact' }, cpus: { value: 4, mode: 'min' } } });
    expect(failing(node(), req)).toEqual([]);
    expect(failing(node({ memoryMb: 32768 }), req)).toEqual(['memory_mb']);
    expect(failing(node({ cpus: 2 }), req)).toEqual(['cpus']);
    expect(failing(node({ cpus: null }), req)).toEqual(['cpus']);
    expect(allFailures(compileFilters(req), node({ memoryMb: 8192 }))[0]!.reason).toBe('memory_mb 8192 is not 16384');
  });

  it('cpu_arch, capabilities (Nova operators) and candidate nodes', () => {
    const n = node({ capabilities: { boot_mode: 'uefi', cpu_vt: 'true', gen: '3' } });
    expect(failing(n, request({ cpuArch: 'aarch64' }))).toEqual(['cpu_arch']);
    expect(
      failing(
        n,
        request({
          capabilities: [
            { key: 'boot_mode', spec: 'uefi' },
            { key: 'gen', spec: '>= 2' },
          ],
        }),
      ),
    ).toEqual([]);
    expect(failing(n, request({ capabilities: [{ key: 'boot_mode', spec: '<or> bios <or> legacy' }] }))).toEqual(['capabilities']);
    expect(failing(n, request({ capabilities: [{ key: 'missing', spec: 'x' }] }))).toEqual(['capabilities']);
    expect(failing(n, request({ candidates: new Set(['other']) }))).toEqual(['candidate_nodes']);
    expect(failing(n, request({ candidates: new Set([n.uuid]) }))).toEqual([]);
  });
});

describe('weighers', () => {
  it('put an exact match first, then the smallest surplus: big machines stay free', () => {
    const big = node({ name: 'big', memoryMb: 131072, cpus: 64 });
    const mid = node({ name: 'mid', memoryMb: 32768, cpus: 16 });
    const exact = node({ name: 'exact', memoryMb: 16384, cpus: 8 });
    const req = request({ sizes: { memory_mb: { value: 16384, mode: 'min' }, cpus: { value: 8, mode: 'min' } } });
    expect(schedule([big, mid, exact], req).map((n) => n.name)).toEqual(['exact', 'mid', 'big']);
  });

  it('prefer nodes without unrequested traits among equal sizes, and the allocation name first', () => {
    const gpu = node({ name: 'gpu', traits: ['CUSTOM_GPU'] });
    const plain = node({ name: 'plain' });
    expect(schedule([gpu, plain], request()).map((n) => n.name)).toEqual(['plain', 'gpu']);
    expect(schedule([gpu, plain], request({ preferName: 'gpu' })).map((n) => n.name)).toEqual(['gpu', 'plain']);
  });

  it('break ties by a hash of the seed: the same for one request, spread across requests', () => {
    const nodes = Array.from({ length: 20 }, () => node());
    const a1 = schedule(nodes, request({ seed: 'a' })).map((n) => n.uuid);
    const a2 = schedule([...nodes].reverse(), request({ seed: 'a' })).map((n) => n.uuid);
    expect(a1).toEqual(a2);
    const firsts = new Set(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].map((seed) => schedule(nodes, request({ seed }))[0]!.uuid));
    expect(firsts.size).toBeGreaterThan(3);
  });

  it('weights compare by name preference, surplus, extra traits, tie', () => {
    const w = weigh([node({ name: 'x', memoryMb: 16384 }), node({ memoryMb: 8192 })], request({ preferName: 'x' }));
    expect(compareWeights(w[0]!, w[1]!)).toBeLessThan(0);
    expect(w[1]!.surplus).toBeLessThan(w[0]!.surplus);
  });
});

describe('explanations', () => {
  it('count eliminations per filter, name the closest nodes with every failing filter', () => {
    const req = request({ resourceClass: { name: 'gold', match: 'exact' }, sizes: { memory_mb: { value: 65536, mode: 'min' } } });
    const nodes = [
      node({ name: 'small-gold', resourceClass: 'gold', memoryMb: 32768 }),
      node({ name: 'busy-gold', resourceClass: 'gold', memoryMb: 65536, provisionState: 'active' }),
      node({ name: 'cleaning-gold', resourceClass: 'gold', memoryMb: 65536, provisionState: 'cleaning' }),
      node({ name: 'silver', resourceClass: 'silver', memoryMb: 65536 }),
      node({ name: 'tiny-silver', resourceClass: 'silver', memoryMb: 1024, maintenance: true }),
    ];
    expect(schedule(nodes, req)).toEqual([]);
    const e = explain(nodes, req);
    expect(e.considered).toBe(5);
    expect(e.eliminated).toEqual([
      { filter: 'resource_class', count: 2 },
      { filter: 'provision_state', count: 2, detail: 'active 1, cleaning 1' },
      { filter: 'memory_mb', count: 1 },
    ]);
    expect(e.closest.map((c) => c.name)).toEqual(['small-gold', 'busy-gold', 'cleaning-gold', 'silver', 'tiny-silver']);
    expect(e.closest.at(-1)!.failures.map((f) => f.filter)).toEqual(['resource_class', 'maintenance', 'memory_mb']);
    const text = describeExplanation(e);
    expect(text).toContain('none of the 5 nodes considered fits.');
    expect(text).toContain('provision_state: 2 (active 1, cleaning 1)');
    expect(text).toContain('small-gold (memory_mb: memory_mb 32768 < 65536)');
  });

  it('say so when there is nothing to consider', () => {
    expect(describeExplanation(explain([], request()))).toMatch(/no nodes to consider/);
  });
});
