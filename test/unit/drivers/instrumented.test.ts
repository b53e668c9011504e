/**
 * The BMC call decorator (src/drivers/hardware/instrumented.ts): every promise-returning method
 * of a hardware type's interfaces is timed once, by driver, interface and operation (snake case);
 * failures are reported with their reason and still reject with their own error; synchronous
 * members and the type's own methods pass through untimed; the drivers' private fields, their
 * `instanceof` and replaced methods keep working.
 */
import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../../src/domain/errors.ts';
import { HardwareError } from '../../../src/domain/hardware/interfaces.ts';
import { FakeHardware } from '../../../src/drivers/hardware/fake.ts';
import { failureOf, instrumentHardware, snake, type BmcCall } from '../../../src/drivers/hardware/instrumented.ts';
import { createHardwareRegistry } from '../../../src/drivers/hardware/registry.ts';

const NODE = { uuid: '11111111-2222-3333-4444-555555555555', driverInfo: {} };

function setup(): { calls: BmcCall[]; registry: ReturnType<typeof instrumentHardware> } {
  const calls: BmcCall[] = [];
  const registry = instrumentHardware(createHardwareRegistry({ enabled: ['fake-hardware', 'redfish'] }), { bmcCall: (c) => calls.push(c) });
  return { calls, registry };
}

describe('instrumentHardware', () => {
  it('times each interface call once, labelled by driver, interface and snake-case operation, with the driver as this', async () => {
    const { calls, registry } = setup();
    const hw = registry.get('fake-hardware');
    expect(hw).toBe(registry.get('fake-hardware'));
    expect(hw).toBeInstanceOf(FakeHardware);
    await hw.power.setPowerState(NODE, 'power on');
    expect(await hw.power.getPowerState(NODE)).toBe('power on');
    await hw.management.setBootDevice(NODE, 'disk', true);
    expect(calls.map((c) => [c.driver, c.iface, c.operation, c.failure])).toEqual([
      ['fake-hardware', 'power', 'set_power_state', null],
      ['fake-hardware', 'power', 'get_power_state', null],
      ['fake-hardware', 'management', 'set_boot_device', null],
    ]);
    for (const c of calls) expect(c.seconds).toBeGreaterThanOrEqual(0);
    // The type's own members are not BMC calls; its private fields still work through the proxy.
    expect(hw.driverProperties()).toEqual(new FakeHardware().driverProperties());
    (hw as FakeHardware).reset();
    expect(await hw.power.getPowerState(NODE)).toBe('power off');
    expect(registry.names()).toEqual(['fake-hardware', 'redfish']);
    await registry.close();
  });

  it('a failed call rejects with its own error and is reported with its reason', async () => {
    const { calls, registry } = setup();
    const hw = registry.get('fake-hardware');
    const err = await hw.management.setBootDevice(NODE, 'floppy' as never, false).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidInputError);
    expect(calls.at(-1)).toMatchObject({ operation: 'set_boot_device', failure: 'invalid-input' });
    const refused = new HardwareError('BMC refused', { reason: 'refused', nodeUuid: NODE.uuid, operation: 'power on' });
    hw.power.setPowerState = async () => {
      throw refused;
    };
    await expect(hw.power.setPowerState(NODE, 'power on')).rejects.toBe(refused);
    expect(calls.at(-1)).toMatchObject({ iface: 'power', operation: 'set_power_state', failure: 'refused' });
    expect(failureOf(new Error('x'))).toBe('other');
    await registry.close();
  });

  it('synchronous results pass through untimed; an observer that throws never breaks a call', async () => {
    const registry = instrumentHardware(createHardwareRegistry({ enabled: ['fake-hardware'] }), {
      bmcCall: () => {
        throw new Error('observer down');
      },
    });
    const hw = registry.get('fake-hardware');
    const power = hw.power as unknown as { describe?: () => string };
    (hw.power as unknown as Record<string, unknown>).describe = () => 'sync';
    expect(power.describe!()).toBe('sync');
    await expect(hw.power.getPowerState(NODE)).resolves.toBe('power off');
    await registry.close();
  });

  it('names operations and interfaces in snake case', () => {
    expect(snake('getPowerState')).toBe('get_power_state');
    expect(snake('bootMode')).toBe('boot_mode');
    expect(snake('power')).toBe('power');
  });
});
