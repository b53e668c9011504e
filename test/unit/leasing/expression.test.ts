/**
 * Hardware expressions (src/domain/leasing/expression.ts): infix syntax, Blazar's JSON form,
 * typed comparisons, missing properties, traits and capabilities, and parse errors that name the
 * position.
 */
import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../../src/domain/errors.ts';
import { matches, parseExpression, type HardwareFacts } from '../../../src/domain/leasing/expression.ts';

const gpuNode: HardwareFacts = {
  name: 'gpu-1',
  resourceClass: 'gpu',
  traits: ['CUSTOM_GPU_A100', 'HW_CPU_X86_AVX2'],
  properties: {
    memory_mb: 65536,
    cpus: 32,
    local_gb: '2000',
    gpus: 2,
    cpu_arch: 'x86_64',
    vendor: 'acme',
    secure: 'True',
    capabilities: 'boot_mode:uefi,cpu_vt:true',
  },
};
const smallNode: HardwareFacts = {
  name: 'small-1',
  resourceClass: 'baremetal',
  traits: [],
  properties: { memory_mb: 16384, cpus: 8, local_gb: 1000, cpu_arch: 'aarch64' },
};

const ok = (text: string | unknown[], node: HardwareFacts): boolean => matches(parseExpression(text), node);

describe('infix expressions', () => {
  it('the examples of ESI: ">= 48 GiB and >= 1 GPU" and ">= 16 GiB and >= 1 TB disk"', () => {
    const big = 'memory_mb >= 49152 and gpus >= 1';
    const disk = 'memory_mb >= 16384 and local_gb >= 1000';
    expect(ok(big, gpuNode)).toBe(true);
    expect(ok(big, smallNode)).toBe(false);
    expect(ok(disk, gpuNode)).toBe(true); // local_gb "2000" is a numeric string
    expect(ok(disk, smallNode)).toBe(true);
  });

  it('every operator, with numbers compared as numbers', () => {
    expect(ok('cpus == 32', gpuNode)).toBe(true);
    expect(ok('cpus = 32', gpuNode)).toBe(true);
    expect(ok('cpus != 32', gpuNode)).toBe(false);
    expect(ok('cpus > 31 and cpus < 33 and cpus >= 32 and cpus <= 32', gpuNode)).toBe(true);
    expect(ok('memory_mb > 9', smallNode)).toBe(true); // not a string comparison ("16384" < "9")
    expect(ok('local_gb >= 1e3', smallNode)).toBe(true);
  });

  it('strings: quoted, bare words on the right, and ordering only between numbers', () => {
    expect(ok('cpu_arch == "x86_64"', gpuNode)).toBe(true);
    expect(ok("cpu_arch == 'x86_64'", smallNode)).toBe(false);
    expect(ok('cpu_arch == aarch64', smallNode)).toBe(true);
    expect(ok('cpu_arch >= "a"', gpuNode)).toBe(false);
  });

  it('in / not in with lists and with traits', () => {
    expect(ok('vendor in ["acme", "initech"]', gpuNode)).toBe(true);
    expect(ok('vendor not in ["acme"]', gpuNode)).toBe(false);
    expect(ok('cpus in [8, 16]', smallNode)).toBe(true);
    expect(ok('"CUSTOM_GPU_A100" in traits', gpuNode)).toBe(true);
    expect(ok('CUSTOM_GPU_A100 in traits', smallNode)).toBe(false);
    expect(ok('CUSTOM_GPU_A100 not in traits', smallNode)).toBe(true);
  });

  it('and binds tighter than or; not and parentheses', () => {
    expect(ok('cpus == 1 or cpus == 8 and cpu_arch == aarch64', smallNode)).toBe(true);
    expect(ok('(cpus == 1 or cpus == 8) and cpu_arch == x86_64', smallNode)).toBe(false);
    expect(ok('not (gpus >= 1)', smallNode)).toBe(true);
    expect(ok('NOT gpus >= 1 AND cpus >= 8', smallNode)).toBe(true);
  });

  it('a missing property makes the comparison false (even !=)', () => {
    expect(ok('gpus >= 1', smallNode)).toBe(false);
    expect(ok('gpus != 0', smallNode)).toBe(false);
    expect(ok('gpus == 0', smallNode)).toBe(false);
  });

  it('booleans, resource_class, name, capabilities and $names', () => {
    expect(ok('secure == true', gpuNode)).toBe(true);
    expect(ok('secure == false', gpuNode)).toBe(false);
    expect(ok('resource_class == gpu and name == "gpu-1"', gpuNode)).toBe(true);
    expect(ok('capabilities.boot_mode == uefi', gpuNode)).toBe(true);
    expect(ok('capabilities.boot_mode == uefi', smallNode)).toBe(false);
    expect(ok('$memory_mb >= 65536', gpuNode)).toBe(true);
  });

  it('the empty expression matches everything', () => {
    expect(ok('', smallNode)).toBe(true);
    expect(ok('   ', gpuNode)).toBe(true);
  });
});

describe("Blazar's JSON form", () => {
  it('single comparison, and/or lists, as arrays or text', () => {
    expect(ok(['>=', '$memory_mb', '4096'], smallNode)).toBe(true);
    expect(ok(['and', ['>=', '$memory_mb', '32768'], ['==', '$cpu_arch', 'x86_64']], gpuNode)).toBe(true);
    expect(ok(['or', ['==', '$cpu_arch', 'sparc'], ['==', '$cpu_arch', 'aarch64']], smallNode)).toBe(true);
    expect(ok('["==", "$cpu_arch", "x86_64"]', gpuNode)).toBe(true);
    expect(ok([], gpuNode)).toBe(true);
  });

  it('refuses malformed lists', () => {
    expect(() => parseExpression(['~', '$a', '1'])).toThrow(/Blazar form/);
    expect(() => parseExpression(['and'])).toThrow(/at least one operand/);
    expect(() => parseExpression(['==', '$a', { x: 1 }] as never)).toThrow(/operands must be/);
  });
});

describe('parse errors name the position', () => {
  const cases: Array<[string, RegExp]> = [
    ['memory_mb >=', /character 13: expected a name or a value/],
    ['memory_mb 4096', /character 11: expected an operator/],
    ['(cpus > 1', /expected "\)"/],
    ['cpus > 1 and', /ends too early/],
    ['cpus > 1 cpus', /unexpected "cpus"/],
    ['cpus # 1', /unexpected character "#"/],
    ['cpus in 3', /needs a list/],
    ['cpus in [[1]]', /cannot be nested/],
    ['and > 1', /got "and"/],
  ];
  for (const [text, message] of cases) {
    it(JSON.stringify(text), () => {
      let error: unknown;
      try {
        parseExpression(text);
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(InvalidInputError);
      expect((error as Error).message).toMatch(message);
    });
  }

  it('refuses expressions longer than 2000 characters', () => {
    expect(() => parseExpression(`cpus > 1${' and cpus > 1'.repeat(200)}`)).toThrow(/longer than 2000/);
  });
});
