/**
 * Flavor extra specs as esi reads them (src/domain/scheduling/flavor-request.ts) and Nova's
 * capability operators (capabilities.ts).
 */
import { describe, expect, it } from 'vitest';
import { matchesSpec } from '../../../src/domain/scheduling/capabilities.ts';
import { checkExtraSpec, flavorPlacement } from '../../../src/domain/scheduling/flavor-request.ts';

const flavor = (extra_specs: Record<string, string>, sizes = { vcpus: 8, ram: 16384, disk: 100 }) => ({ ...sizes, extra_specs });

describe('flavor extra specs', () => {
  it('a Nova-style bare-metal flavor: class, zeroed standard resources, traits, capabilities', () => {
    const p = flavorPlacement(
      flavor({
        'resources:CUSTOM_BAREMETAL_GOLD': '1',
        'resources:VCPU': '0',
        'resources:MEMORY_MB': '0',
        'resources:DISK_GB': '0',
        'trait:CUSTOM_RAID': 'required',
        'trait:HW_CPU_X86_SGX': 'forbidden',
        'capabilities:boot_mode': 'uefi',
        'capabilities:gen': '>= 3',
        'hw:cpu_policy': 'dedicated',
      }),
    );
    expect(p.resourceClass).toEqual({ name: 'CUSTOM_BAREMETAL_GOLD', match: 'custom' });
    expect(p.sizes).toEqual({});
    expect(p.requiredTraits).toEqual(['CUSTOM_RAID']);
    expect(p.forbiddenTraits).toEqual(['HW_CPU_X86_SGX']);
    expect(p.capabilities).toEqual([
      { key: 'boot_mode', spec: 'uefi' },
      { key: 'gen', spec: '>= 3' },
    ]);
    expect(p.instanceCapabilities).toEqual({ boot_mode: 'uefi' });
  });

  it('sizes default to at-least; esi:match overrides, zeroed resources ignore; 0 is no requirement', () => {
    expect(flavorPlacement(flavor({})).sizes).toEqual({
      cpus: { value: 8, mode: 'min' },
      memory_mb: { value: 16384, mode: 'min' },
      local_gb: { value: 100, mode: 'min' },
    });
    const p = flavorPlacement(flavor({ 'esi:match:memory_mb': 'exact', 'resources:VCPU': '0', 'esi:match:local_gb': 'ignore' }));
    expect(p.sizes).toEqual({ memory_mb: { value: 16384, mode: 'exact' } });
    const z = flavorPlacement(flavor({ 'resources:MEMORY_MB': '0', 'esi:match:memory_mb': 'exact' }, { vcpus: 0, ram: 4096, disk: 0 }));
    expect(z.sizes).toEqual({ memory_mb: { value: 4096, mode: 'exact' } });
  });

  it('cpu_arch from capabilities:cpu_arch or esi:cpu_arch, consistent', () => {
    expect(flavorPlacement(flavor({ 'capabilities:cpu_arch': 'aarch64' })).cpuArch).toBe('aarch64');
    expect(flavorPlacement(flavor({ 'esi:cpu_arch': 'x86_64' })).cpuArch).toBe('x86_64');
    expect(() => flavorPlacement(flavor({ 'esi:cpu_arch': 'x86_64', 'capabilities:cpu_arch': 'aarch64' }))).toThrow(
      /two CPU architectures/,
    );
  });

  it('refuses specs esi cannot apply, with the reason', () => {
    const bad: Array<[string, string, RegExp]> = [
      ['resources:CUSTOM_GOLD', '2', /one whole unit/],
      ['resources:MEMORY_MB', '4096', /may only be 0/],
      ['resources:PCI_DEVICE', '1', /CUSTOM_<RESOURCE_CLASS>/],
      ['trait:CUSTOM_X', 'preferred', /required" or "forbidden/],
      ['trait:not-a-trait', 'required', /Invalid trait/],
      ['capabilities:gen', '>= three', /compares numbers/],
      ['capabilities:gen', '<in>', /needs a value/],
      ['esi:match:memory_mb', 'roughly', /exact, min or ignore/],
      ['esi:match:gpus', 'exact', /applies to cpus/],
      ['esi:colour', 'blue', /Unknown esi extra spec/],
    ];
    for (const [k, v, re] of bad) expect(() => checkExtraSpec(k, v), `${k}=${v}`).toThrow(re);
    expect(() => flavorPlacement(flavor({ 'resources:CUSTOM_A': '1', 'resources:CUSTOM_B': '1' }))).toThrow(
      /two bare-metal resource classes/,
    );
    expect(() => checkExtraSpec('quota:disk_read_bytes_sec', 'anything')).not.toThrow();
  });
});

describe('capability operators (Nova extra_specs_ops)', () => {
  it.each([
    ['uefi', 'uefi', true],
    ['uefi', 'bios', false],
    ['4', '= 3', true],
    ['2', '= 3', false],
    ['3', '== 3.0', true],
    ['3', '!= 3', false],
    ['3', '<= 3', true],
    ['abc', 's== abc', true],
    ['abc', 's!= abc', false],
    ['abc', 's< abd', true],
    ['abc', 's>= abd', false],
    ['x86_64,avx2', '<in> avx2', true],
    ['x86_64 avx2 sse4', '<all-in> avx2 sse4', true],
    ['x86_64 avx2', '<all-in> avx2 sse4', false],
    ['b', '<or> a <or> b', true],
    ['c', '<or> a <or> b', false],
    ['many', '>= 2', false],
  ])('%s against "%s" → %s', (value, spec, expected) => {
    expect(matchesSpec(value, spec)).toBe(expected);
  });

  it('an absent capability never matches', () => {
    expect(matchesSpec(undefined, 'uefi')).toBe(false);
  });
});
