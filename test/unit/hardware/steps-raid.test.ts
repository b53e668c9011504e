/**
 * Pure rules of the hardware settings: the target RAID configuration schema
 * (src/domain/hardware/raid.ts) and the validation of out-of-band clean steps against a
 * node's interfaces (src/domain/hardware/clean-steps.ts), with property checks (fast-check).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../../src/domain/errors.ts';
import { isOutOfBandStep, validateCleanSteps, type CleanStepNode } from '../../../src/domain/hardware/clean-steps.ts';
import type { HardwareType } from '../../../src/domain/hardware/interfaces.ts';
import { parseRaidTarget, raidGeometry, RAID_LEVELS } from '../../../src/domain/hardware/raid.ts';

const hwWith = (members: Partial<Record<'bios' | 'raid' | 'firmware', object>>): HardwareType =>
  ({ name: 'test-hw', ...members }) as unknown as HardwareType;
const node = (extra: Partial<CleanStepNode> = {}): CleanStepNode => ({
  uuid: 'n1',
  bios_interface: 'redfish',
  raid_interface: 'redfish',
  management_interface: 'redfish',
  target_raid_config: {},
  ...extra,
});

describe('parseRaidTarget', () => {
  it('accepts {} and every valid logical disk, and keeps only known keys', () => {
    expect(parseRaidTarget({})).toEqual({ logical_disks: [] });
    fc.assert(
      fc.property(
        fc.array(
          fc.record(
            {
              size_gb: fc.oneof(fc.nat(100_000), fc.constant('MAX' as const)),
              raid_level: fc.constantFrom(...RAID_LEVELS),
              volume_name: fc.option(fc.string({ minLength: 1, maxLength: 20 }), { nil: undefined }),
              number_of_physical_disks: fc.option(fc.integer({ min: 1, max: 24 }), { nil: undefined }),
            },
            { requiredKeys: ['size_gb', 'raid_level'] },
          ),
          { minLength: 1, maxLength: 6 },
        ),
        (disks) => {
          const clean = disks.map((d) => Object.fromEntries(Object.entries(d).filter(([, v]) => v !== undefined)));
          expect(parseRaidTarget({ logical_disks: clean }).logical_disks).toEqual(clean);
        },
      ),
    );
  });

  it('refuses anything else with InvalidInputError', () => {
    for (const bad of [
      null,
      [],
      'x',
      { logical_disks: 1 },
      { logical_disks: [{ size_gb: 1.5, raid_level: '1' }] },
      { logical_disks: [{ size_gb: 1, raid_level: 1 }] },
    ]) {
      expect(() => parseRaidTarget(bad)).toThrow(InvalidInputError);
    }
  });

  it('geometry: usable drives never exceed the drives and meet the minimum', () => {
    for (const level of RAID_LEVELS) {
      const g = raidGeometry(level);
      for (let n = g.minDrives; n <= 24; n++) {
        expect(g.usable(n)).toBeGreaterThanOrEqual(1);
        expect(g.usable(n)).toBeLessThanOrEqual(n);
      }
    }
  });
});

describe('validateCleanSteps', () => {
  const full = hwWith({ bios: {}, raid: {}, firmware: {} });

  it('passes known steps with valid arguments and leaves deploy/power steps to others', () => {
    expect(() =>
      validateCleanSteps(node({ target_raid_config: { logical_disks: [{ size_gb: 1, raid_level: '0' }] } }), full, [
        { interface: 'bios', step: 'apply_configuration', args: { settings: [{ name: 'A', value: 1 }] } },
        { interface: 'raid', step: 'create_configuration', args: { delete_existing: false } },
        { interface: 'raid', step: 'delete_configuration' },
        {
          interface: 'management',
          step: 'update_firmware',
          args: { firmware_images: [{ url: 'https://x/y', checksum: 'a'.repeat(64), wait: 5 }] },
        },
        { interface: 'deploy', step: 'anything' },
      ]),
    ).not.toThrow();
  });

  it('fake implementations accept any step; no-bios and missing driver support refuse', () => {
    expect(() => validateCleanSteps(node({ bios_interface: 'fake' }), hwWith({}), [{ interface: 'bios', step: 'whatever' }])).not.toThrow();
    expect(() => validateCleanSteps(node({ bios_interface: 'no-bios' }), full, [{ interface: 'bios', step: 'factory_reset' }])).toThrow(
      /interface is "no-bios"/,
    );
    expect(() =>
      validateCleanSteps(node(), hwWith({ bios: {} }), [
        { interface: 'management', step: 'update_firmware', args: { firmware_images: [{ url: 'http://a/b' }] } },
      ]),
    ).toThrow(/test-hw hardware type has no firmware support/);
  });

  it('isOutOfBandStep only for known steps of real implementations', () => {
    expect(isOutOfBandStep(node(), full, { interface: 'bios', step: 'factory_reset' })).toBe(true);
    expect(isOutOfBandStep(node({ bios_interface: 'fake' }), full, { interface: 'bios', step: 'factory_reset' })).toBe(false);
    expect(isOutOfBandStep(node(), full, { interface: 'bios', step: 'nope' })).toBe(false);
    expect(isOutOfBandStep(node(), hwWith({}), { interface: 'raid', step: 'delete_configuration' })).toBe(false);
  });
});
