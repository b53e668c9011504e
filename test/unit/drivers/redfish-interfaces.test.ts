/**
 * The redfish driver's BIOS, RAID and virtual media interfaces against the lab over HTTP
 * (src/lab/bios.ts, src/lab/raid.ts, the lab's virtual media with Insert/Eject actions).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../../src/domain/errors.ts';
import { HardwareError, type DriverNode, type HardwareRegistry, type HardwareType } from '../../../src/domain/hardware/interfaces.ts';
import { createHardwareRegistry } from '../../../src/drivers/hardware/registry.ts';
import { startLab, type Lab } from '../../../src/lab/index.ts';

let lab: Lab;
let registry: HardwareRegistry;
let redfish: HardwareType;

function node(system: string): DriverNode {
  return {
    uuid: `uuid-${system}`,
    driverInfo: {
      redfish_address: lab.url,
      redfish_system_id: `/redfish/v1/Systems/${system}`,
      redfish_username: 'admin',
      redfish_password: 'password',
    },
  };
}

beforeAll(async () => {
  lab = await startLab({ nodes: 2, port: 0, hardware: { diskGiB: 100 } });
  registry = createHardwareRegistry({ redfish: { pollIntervalMs: 10 } });
  redfish = registry.get('redfish');
});
afterAll(async () => {
  await registry.close();
  await lab.close();
});

describe('virtual media through the actions', () => {
  it('inserts into the CD, reports it, and ejects', async () => {
    const n = node('node-0');
    await redfish.vmedia!.insert(n, 'cdrom', 'http://127.0.0.1:9/ipa.iso');
    expect(lab.systems.get('node-0').virtualMedia).toEqual({ image: 'http://127.0.0.1:9/ipa.iso', inserted: true });
    const list = await redfish.vmedia!.list(n);
    expect(list).toEqual([
      {
        path: '/redfish/v1/Managers/bmc-node-0/VirtualMedia/Cd',
        deviceTypes: ['cdrom'],
        image: 'http://127.0.0.1:9/ipa.iso',
        inserted: true,
      },
    ]);
    await redfish.vmedia!.eject(n);
    expect(lab.systems.get('node-0').virtualMedia).toEqual({ image: null, inserted: false });
    await expect(redfish.vmedia!.insert(n, 'floppy', 'http://127.0.0.1:9/x.img')).rejects.toThrow(/no virtual media device of type floppy/);
  });
});

describe('virtual media topology is remembered', () => {
  it('a second insert reads only the device it uses (its state fresh), not the system, managers and collections', async () => {
    // A proxy in front of the lab records every request the driver makes.
    const seen: string[] = [];
    const target = new URL(lab.url);
    const proxy = http.createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      const up = http.request(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
        (r) => {
          res.writeHead(r.statusCode ?? 502, r.headers);
          r.pipe(res);
        },
      );
      req.pipe(up);
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    const own = createHardwareRegistry({ redfish: { pollIntervalMs: 10 } });
    try {
      const n: DriverNode = {
        ...node('node-1'),
        driverInfo: { ...node('node-1').driverInfo, redfish_address: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}` },
      };
      const vmedia = own.get('redfish').vmedia!;
      await vmedia.insert(n, 'cdrom', 'http://127.0.0.1:9/a.iso');
      const first = seen.filter((r) => !r.includes('/SessionService'));
      expect(first).toContain('GET /redfish/v1/Systems/node-1');
      expect(first).toContain('GET /redfish/v1/Managers/bmc-node-1');
      await vmedia.eject(n);
      seen.length = 0;
      await vmedia.insert(n, 'cdrom', 'http://127.0.0.1:9/b.iso');
      expect(seen.filter((r) => !r.includes('/SessionService'))).toEqual([
        'GET /redfish/v1/Managers/bmc-node-1/VirtualMedia/Cd',
        'POST /redfish/v1/Managers/bmc-node-1/VirtualMedia/Cd/Actions/VirtualMedia.InsertMedia',
      ]);
      expect(lab.systems.get('node-1').virtualMedia).toEqual({ image: 'http://127.0.0.1:9/b.iso', inserted: true });
      // The state is read fresh: the same image inserted again is left alone (no POST).
      seen.length = 0;
      await vmedia.insert(n, 'cdrom', 'http://127.0.0.1:9/b.iso');
      expect(seen.filter((r) => !r.includes('/SessionService'))).toEqual(['GET /redfish/v1/Managers/bmc-node-1/VirtualMedia/Cd']);
      await vmedia.eject(n);
    } finally {
      await own.close();
      proxy.closeAllConnections();
      await new Promise<void>((r) => proxy.close(() => r()));
    }
  });
});

describe('BIOS', () => {
  it('reads the settings with registry metadata and applies a change at the next reset', async () => {
    const n = node('node-1');
    const settings = await redfish.bios!.getSettings(n);
    expect(settings.find((s) => s.name === 'SriovGlobalEnable')).toMatchObject({
      value: 'Disabled',
      allowable_values: ['Enabled', 'Disabled'],
    });
    await redfish.bios!.applySettings(
      n,
      [
        { name: 'SriovGlobalEnable', value: 'Enabled' },
        { name: 'TpmSecurity', value: 'false' },
      ],
      2,
    );
    expect(lab.bios.attributes('node-1')).toMatchObject({ SriovGlobalEnable: 'Enabled', TpmSecurity: false });
    expect(lab.systems.get('node-1').powerState).toBe('On');
    await redfish.bios!.factoryReset(n, 2);
    expect(lab.bios.attributes('node-1')).toMatchObject({ SriovGlobalEnable: 'Disabled', TpmSecurity: true });
  });
});

describe('RAID', () => {
  it('creates the root volume first on free drives, sized as asked; too few drives left is the BMC refusal; delete removes all', async () => {
    const n = node('node-0');
    const created = await redfish.raid!.createConfiguration(n, {
      logical_disks: [
        { size_gb: 'MAX', raid_level: '0', volume_name: 'data' },
        { size_gb: 50, raid_level: '1', is_root_volume: true, volume_name: 'os' },
      ],
    });
    expect(created.map((d) => [d.volume_name, d.raid_level, d.size_gb, d.physical_disks.length, d.is_root_volume])).toEqual([
      ['data', '0', 200, 2, false],
      ['os', '1', 50, 2, true],
    ]);
    expect(lab.raid.volumes('node-0').map((v) => v.name)).toEqual(['os', 'data']);
    const err = await redfish
      .raid!.createConfiguration(n, { logical_disks: [{ size_gb: 'MAX', raid_level: '5' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidInputError);
    expect((err as Error).message).toMatch(/every drive of controller RAID\.Integrated\.1-1 is already in a volume/);
    // Two free drives are not enough for RAID 5: the BMC refuses and says why.
    await redfish.raid!.deleteConfiguration(n);
    await redfish.raid!.createConfiguration(n, { logical_disks: [{ size_gb: 10, raid_level: '1' }] });
    const refused = await redfish
      .raid!.createConfiguration(n, { logical_disks: [{ size_gb: 'MAX', raid_level: '5' }] })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(HardwareError);
    expect((refused as Error).message).toMatch(/logical disk 0 \(RAID 5, MAX\) on 2 drive\(s\).*HTTP 400.*RAIDType/);
    await redfish.raid!.deleteConfiguration(n);
    expect(lab.raid.volumes('node-0')).toEqual([]);
  });
});
