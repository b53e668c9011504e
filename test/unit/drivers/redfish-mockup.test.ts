/**
 * The redfish driver against a vendor-style Redfish mockup (test/fixtures/redfish-mockups/
 * acme-1u: DMTF mockup layout, one `index.json` per resource) served by the lab's mockup
 * server (src/lab/mockup.ts): power, boot device, BIOS read with the vendor's attribute
 * registry, BIOS apply through the settings object and a reset, and virtual media on a BMC
 * that advertises no InsertMedia/EjectMedia actions (the PATCH fallback).
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../../src/domain/errors.ts';
import type { DriverNode, HardwareRegistry, HardwareType } from '../../../src/domain/hardware/interfaces.ts';
import { createHardwareRegistry } from '../../../src/drivers/hardware/registry.ts';
import { loadMockup, startMockupLab, type MockupLab } from '../../../src/lab/mockup.ts';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../fixtures/redfish-mockups/acme-1u');
let mock: MockupLab;
let registry: HardwareRegistry;
let redfish: HardwareType;
let node: DriverNode;

// A fresh mockup for each test: tests change its power, boot, BIOS and media state.
beforeEach(async () => {
  mock = await startMockupLab({ dir: DIR });
  registry = createHardwareRegistry({ redfish: { pollIntervalMs: 10 } });
  redfish = registry.get('redfish');
  // No redfish_system_id: the mockup has exactly one system, which the driver must find.
  node = { uuid: 'mockup-node', driverInfo: { redfish_address: mock.url, redfish_username: 'admin', redfish_password: 'password' } };
});
afterEach(async () => {
  await registry.close();
  await mock.close();
});

describe('loading a mockup', () => {
  it('maps each index.json to its URI and finds the systems', () => {
    const tree = loadMockup(DIR);
    expect(tree.get('/redfish/v1')?.RedfishVersion).toBe('1.6.0');
    expect(tree.has('/redfish/v1/Managers/1/VirtualMedia/CD1')).toBe(true);
    expect(mock.systems).toEqual(['/redfish/v1/Systems/1']);
    expect(() => loadMockup(path.join(DIR, 'redfish', 'v1', 'Systems', '1', 'Bios', 'Settings', 'nothing'))).toThrow(
      /not a Redfish mockup/,
    );
  });

  it('`esi lab --mockup <dir>` serves it from the command line', async () => {
    const child = spawn(process.execPath, [path.join(ROOT, 'bin', 'esi.js'), 'lab', '--mockup', DIR, '--port', '0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          const m = /at (http:\/\/\S+)/.exec(out);
          if (m) resolve(m[1]!);
        });
        child.on('exit', (code) => reject(new Error(`esi lab exited with ${code}: ${out}`)));
      });
      const res = await fetch(`${url}/redfish/v1/Systems/1`, {
        headers: { authorization: `Basic ${Buffer.from('admin:password').toString('base64')}` },
      });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { Model: string }).Model).toBe('A1U-220');
    } finally {
      child.kill('SIGTERM');
    }
  });

  it('needs credentials except for the service root', async () => {
    expect((await fetch(`${mock.url}/redfish/v1/`)).status).toBe(200);
    expect((await fetch(`${mock.url}/redfish/v1/Systems/1`)).status).toBe(401);
  });
});

describe('driver interfaces on vendor payloads', () => {
  it('power: reads On, powers off and on through ComputerSystem.Reset', async () => {
    expect(await redfish.power.getPowerState(node)).toBe('power on');
    await redfish.power.setPowerState(node, 'power off', 2);
    expect(mock.resource('/redfish/v1/Systems/1')?.PowerState).toBe('Off');
    await redfish.power.setPowerState(node, 'power on', 2);
    expect(await redfish.power.getPowerState(node)).toBe('power on');
  });

  it('boot device: sets a persistent PXE override and reads it back; supported devices come from the allowable values', async () => {
    await redfish.management.setBootDevice(node, 'pxe', true);
    expect(mock.resource('/redfish/v1/Systems/1')?.Boot).toMatchObject({
      BootSourceOverrideTarget: 'Pxe',
      BootSourceOverrideEnabled: 'Continuous',
    });
    expect(await redfish.management.getBootDevice(node)).toEqual({ bootDevice: 'pxe', persistent: true });
    expect(await redfish.management.supportedBootDevices(node)).toEqual(['pxe', 'disk', 'cdrom', 'bios']);
  });

  it('BIOS: reads the attributes with the vendor registry metadata', async () => {
    const settings = await redfish.bios!.getSettings(node);
    const by = Object.fromEntries(settings.map((s) => [s.name, s]));
    expect(Object.keys(by)).toHaveLength(10);
    expect(by.PowerProfile).toMatchObject({
      value: 'MaxPerf',
      attribute_type: 'Enumeration',
      allowable_values: ['MaxPerf', 'Balanced', 'PowerSaver'],
      reset_required: true,
    });
    expect(by.ProcCoreDisable).toMatchObject({ value: '0', attribute_type: 'Integer', lower_bound: 0, upper_bound: 7 });
    expect(by.AdminPhone).toMatchObject({ value: '', attribute_type: 'String', max_length: 24 });
  });

  it('BIOS: applies settings through the pending settings object and a reset', async () => {
    await redfish.bios!.applySettings(
      node,
      [
        { name: 'PowerProfile', value: 'Balanced' },
        { name: 'ProcCoreDisable', value: '2' },
      ],
      2,
    );
    const attrs = mock.resource('/redfish/v1/Systems/1/Bios')?.Attributes as Record<string, unknown>;
    expect(attrs).toMatchObject({ PowerProfile: 'Balanced', ProcCoreDisable: 2 });
    expect(mock.resource('/redfish/v1/Systems/1/Bios/Settings')?.Attributes).toEqual({});
    const err = await redfish.bios!.applySettings(node, [{ name: 'PowerProfile', value: 'Ludicrous' }], 2).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidInputError);
    expect((err as Error).message).toMatch(/allowed values are MaxPerf, Balanced, PowerSaver/);
  });

  it('virtual media: inserts and ejects by PATCH when the BMC advertises no actions', async () => {
    const before = await redfish.vmedia!.list(node);
    expect(before.map((d) => [d.path, d.deviceTypes, d.inserted])).toEqual([
      ['/redfish/v1/Managers/1/VirtualMedia/Floppy1', ['floppy', 'usb'], false],
      ['/redfish/v1/Managers/1/VirtualMedia/CD1', ['cdrom'], false],
    ]);
    await redfish.vmedia!.insert(node, 'cdrom', 'http://images.example/boot.iso');
    expect(mock.resource('/redfish/v1/Managers/1/VirtualMedia/CD1')).toMatchObject({
      Image: 'http://images.example/boot.iso',
      Inserted: true,
      WriteProtected: true,
    });
    await redfish.vmedia!.insert(node, 'cdrom', 'http://images.example/other.iso');
    expect(mock.resource('/redfish/v1/Managers/1/VirtualMedia/CD1')).toMatchObject({
      Image: 'http://images.example/other.iso',
      Inserted: true,
    });
    await redfish.vmedia!.eject(node, 'cdrom');
    expect(mock.resource('/redfish/v1/Managers/1/VirtualMedia/CD1')).toMatchObject({ Image: null, Inserted: false });
    await expect(redfish.vmedia!.insert(node, 'cdrom', 'file:///etc/passwd')).rejects.toThrow(/http\(s\) URL/);
  });
});
