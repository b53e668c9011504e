/**
 * The fake-hardware driver and the hardware registry.
 */
import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../../src/domain/errors.ts';
import { HardwareError, INTERFACE_KINDS, type DriverNode } from '../../../src/domain/hardware/interfaces.ts';
import { FakeHardware } from '../../../src/drivers/hardware/fake.ts';
import { createHardwareRegistry } from '../../../src/drivers/hardware/registry.ts';

const n1: DriverNode = { uuid: 'node-1', driverInfo: {} };
const n2: DriverNode = { uuid: 'node-2', driverInfo: {} };

describe('fake-hardware', () => {
  it('starts powered off and reports the last state set, per node', async () => {
    const fake = new FakeHardware();
    expect(await fake.power.getPowerState(n1)).toBe('power off');
    await fake.power.setPowerState(n1, 'power on');
    expect(await fake.power.getPowerState(n1)).toBe('power on');
    expect(await fake.power.getPowerState(n2)).toBe('power off');
    await fake.power.setPowerState(n1, 'soft power off');
    expect(await fake.power.getPowerState(n1)).toBe('power off');
    await fake.power.setPowerState(n1, 'rebooting');
    expect(await fake.power.getPowerState(n1)).toBe('power on');
    await fake.power.setPowerState(n1, 'power off');
    await fake.power.setPowerState(n1, 'soft rebooting');
    expect(await fake.power.getPowerState(n1)).toBe('power on');
  });

  it('keeps the boot device, starting at Ironic fake answer pxe/not persistent', async () => {
    const fake = new FakeHardware();
    expect(await fake.management.getBootDevice(n1)).toEqual({ bootDevice: 'pxe', persistent: false });
    await fake.management.setBootDevice(n1, 'disk', true);
    expect(await fake.management.getBootDevice(n1)).toEqual({ bootDevice: 'disk', persistent: true });
    expect(await fake.management.getBootDevice(n2)).toEqual({ bootDevice: 'pxe', persistent: false });
    expect(await fake.management.supportedBootDevices(n1)).toEqual(['pxe', 'disk', 'cdrom', 'bios']);
  });

  it('refuses unsupported boot devices and power targets', async () => {
    const fake = new FakeHardware({ bootDevices: ['pxe'] });
    await expect(fake.management.setBootDevice(n1, 'disk', false)).rejects.toBeInstanceOf(InvalidInputError);
    await expect(fake.power.setPowerState(n1, 'explode' as 'power on')).rejects.toBeInstanceOf(InvalidInputError);
    await expect(fake.power.setPowerState(n1, 'power on', -1)).rejects.toBeInstanceOf(InvalidInputError);
    expect(() => new FakeHardware({ delayMs: -5 })).toThrow(InvalidInputError);
  });

  it('applies changes after the configured delay', async () => {
    const fake = new FakeHardware({ delayMs: 60 });
    const pending = fake.power.setPowerState(n1, 'power on');
    expect(await fake.power.getPowerState(n1)).toBe('power off');
    await pending;
    expect(await fake.power.getPowerState(n1)).toBe('power on');
  });

  it('times out when the delay exceeds the timeout, leaving the state unchanged', async () => {
    const fake = new FakeHardware({ delayMs: 5000 });
    const started = Date.now();
    const err = await fake.power.setPowerState(n1, 'power on', 0.1).then(
      () => null,
      (e: unknown) => e,
    );
    expect(Date.now() - started).toBeLessThan(2000);
    expect(err).toBeInstanceOf(HardwareError);
    expect((err as HardwareError).reason).toBe('timeout');
    expect(await fake.power.getPowerState(n1)).toBe('power off');
  });

  it('accepts any driver_info object and lists every interface kind', () => {
    const fake = new FakeHardware();
    // Only its default vendor interface has properties: Ironic's fake vendor's B1 and B2.
    expect(fake.driverProperties()).toEqual({ B1: 'B1 description. Required.', B2: 'B2 description. Required.' });
    expect(() => fake.validateDriverInfo({ anything: 1 })).not.toThrow();
    expect(Object.keys(fake.enabledInterfaces).sort()).toEqual([...INTERFACE_KINDS].sort());
    expect(fake.enabledInterfaces.power).toEqual(['fake']);
  });
});

describe('hardware registry', () => {
  it('holds fake-hardware, ipmi and redfish, and refuses unknown names', async () => {
    const registry = createHardwareRegistry();
    expect(registry.names()).toEqual(['fake-hardware', 'ipmi', 'redfish']);
    expect(registry.get('fake-hardware').name).toBe('fake-hardware');
    expect(registry.get('redfish').enabledInterfaces.power).toEqual(['redfish']);
    expect(() => registry.get('idrac')).toThrow(InvalidInputError);
    expect(() => registry.get('idrac')).toThrow(/Cannot find the hardware type "idrac"/);
    await registry.close();
    await registry.close();
  });

  it('enables only the named drivers', async () => {
    const registry = createHardwareRegistry({ enabled: ['fake-hardware'] });
    expect(registry.names()).toEqual(['fake-hardware']);
    expect(() => registry.get('redfish')).toThrow(InvalidInputError);
    expect(() => createHardwareRegistry({ enabled: ['nope'] })).toThrow(InvalidInputError);
    await registry.close();
  });
});
