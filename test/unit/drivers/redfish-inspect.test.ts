/**
 * The redfish inspect interface (src/drivers/hardware/redfish/inspect.ts) against the lab's
 * BMCs of each shipped model (with the root device Ironic 21.4 picks, also after a RAID volume
 * was created), and against BMCs on loopback that answer malformed inventory (a HardwareError
 * `invalid-response` that names no secret) or processor architectures as the schema spells
 * them (Ironic's `CPU_ARCH_MAP`).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HardwareError, type HardwareRegistry } from '../../../src/domain/hardware/interfaces.ts';
import { createHardwareRegistry } from '../../../src/drivers/hardware/registry.ts';
import { parseModelSpec, startLab, type Lab } from '../../../src/lab/index.ts';

let lab: Lab;
let registry: HardwareRegistry;

beforeAll(async () => {
  lab = await startLab({ nodes: 4, port: 0, models: parseModelSpec('gpu,storage,small') });
  registry = createHardwareRegistry({ redfish: { pollIntervalMs: 20, requestTimeoutMs: 2000 } });
});
afterAll(async () => {
  await registry?.close();
  await lab?.close();
});

const info = (address: string, system: string) => ({
  redfish_address: address,
  redfish_system_id: `/redfish/v1/Systems/${system}`,
  redfish_username: 'admin',
  redfish_password: 'sekrit-pw',
  redfish_auth_type: 'basic',
});

describe('redfish inspect', () => {
  it.each(['node-0', 'node-1', 'node-2', 'node-3'])('%s: the inventory equals the lab description', async (system) => {
    const hw = lab.systems.get(system).machine;
    const found = await registry
      .get('redfish')
      .inspect!.inspectHardware({ uuid: 'u', driverInfo: { ...info(lab.url, system), redfish_password: 'password' } });
    const inv = found.inventory as any;
    expect(inv.cpu.count).toBe(hw.cpu.sockets * hw.cpu.coresPerSocket * hw.cpu.threadsPerCore);
    expect(inv.cpu.architecture).toBe('x86_64');
    expect(inv.memory.physical_mb).toBe(hw.memoryMiB);
    expect(inv.disks.map((d: any) => [d.name, d.size, d.rotational, d.serial, d.wwn])).toEqual(
      hw.disks.map((d) => [d.name, d.sizeBytes, d.rotational, d.serial, d.wwn]),
    );
    expect(inv.interfaces.map((n: any) => n.mac_address)).toEqual(hw.nics.map((n) => n.mac));
    expect(inv.boot.current_boot_mode).toBe(hw.bootMode);
    expect((found.pluginData.pci_devices as unknown[]).length).toBe(hw.gpus.length);
    // The root device: the smallest disk of at least 4 GiB (the lab has no RAID volumes yet).
    const root = hw.disks.filter((d) => d.sizeBytes >= 4 * 1024 ** 3).sort((a, b) => a.sizeBytes - b.sizeBytes)[0];
    expect(found.pluginData.root_disk === null ? null : (found.pluginData.root_disk as any).size).toBe(root?.sizeBytes ?? null);
  });

  it('a RAID volume does not beat a smaller SimpleStorage device: Ironic takes the smaller of the two sources', async () => {
    // node-1 (storage): 2 × 480 GB SSD, 24 × 16 TB HDD. A RAID0 volume over two HDDs (32 TB) is the
    // storage source's root (volumes before drives); SimpleStorage lists the 480 GB SSDs, and
    // Ironic's _detect_local_gb keeps the smaller of the two.
    const storage = '/redfish/v1/Systems/node-1/Storage/RAID.Integrated.1-1';
    const res = await fetch(`${lab.url}${storage}/Volumes`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from('admin:password').toString('base64')}` },
      body: JSON.stringify({
        RAIDType: 'RAID0',
        Name: 'scratch',
        Links: { Drives: [{ '@odata.id': `${storage}/Drives/Disk.Bay.2` }, { '@odata.id': `${storage}/Drives/Disk.Bay.3` }] },
      }),
    });
    expect(res.status, await res.text()).toBe(201);
    const found = await registry
      .get('redfish')
      .inspect!.inspectHardware({ uuid: 'u', driverInfo: { ...info(lab.url, 'node-1'), redfish_password: 'password' } });
    expect(found.pluginData.root_disk).toMatchObject({ size: 480e9 });
  });

  it('an unknown ProcessorArchitecture is named in the failure; the schema spelling IA-64 maps to ia64', async () => {
    const arch = { value: 'Power' };
    const bodies = (): Record<string, unknown> => ({
      '/redfish/v1/Systems/s1': {
        Id: 's1',
        Processors: { '@odata.id': '/redfish/v1/Systems/s1/Processors' },
        MemorySummary: { TotalSystemMemoryGiB: 8 },
        Boot: { BootSourceOverrideMode: 'Unknown' },
      },
      '/redfish/v1/Systems/s1/Processors': { Members: [{ '@odata.id': '/redfish/v1/Systems/s1/Processors/p' }] },
      '/redfish/v1/Systems/s1/Processors/p': { Id: 'p', ProcessorType: 'CPU', TotalThreads: 4, ProcessorArchitecture: arch.value },
    });
    const server = http.createServer((req, res) => {
      const body = bodies()[req.url ?? ''];
      res.writeHead(body === undefined ? 404 : 200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body ?? { error: { code: 'Base.1.0.ResourceMissingAtURI', message: 'missing' } }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const inspect = () => registry.get('redfish').inspect!.inspectHardware({ uuid: 'u', driverInfo: info(url, 's1') });
      await expect(inspect()).rejects.toThrow(/unknown ProcessorArchitecture "Power"/);
      arch.value = 'IA64';
      await expect(inspect()).rejects.toThrow(/unknown ProcessorArchitecture "IA64"/);
      arch.value = 'IA-64';
      const found = await inspect();
      expect((found.inventory as any).cpu.architecture).toBe('ia64');
      // A BootSourceOverrideMode that is neither UEFI nor Legacy is no boot mode; no storage: no root device.
      expect((found.inventory as any).boot.current_boot_mode).toBeNull();
      expect(found.pluginData.root_disk).toBeNull();
      arch.value = 'ARM';
      expect(((await inspect()).inventory as any).cpu.architecture).toBe('arm');
    } finally {
      server.close();
    }
  });

  it('a BMC answering malformed inventory: HardwareError invalid-response, no secret in the message', async () => {
    const bodies: Record<string, unknown> = {
      '/redfish/v1/Systems/s1': {
        Id: 's1',
        PowerState: 'On',
        Processors: { '@odata.id': '/redfish/v1/Systems/s1/Processors' },
        MemorySummary: { TotalSystemMemoryGiB: 'lots' },
      },
      '/redfish/v1/Systems/s1/Processors': { Members: [{ '@odata.id': '/redfish/v1/Systems/s1/Processors/p' }, 'junk'] },
      '/redfish/v1/Systems/s1/Processors/p': { Id: 'p', ProcessorType: 'CPU', TotalThreads: 4, ProcessorArchitecture: 'x86' },
    };
    const server = http.createServer((req, res) => {
      const body = bodies[req.url ?? ''];
      res.writeHead(body === undefined ? 404 : 200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body ?? { error: { code: 'Base.1.0.ResourceMissingAtURI', message: 'missing' } }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const err = await registry
        .get('redfish')
        .inspect!.inspectHardware({ uuid: 'u', driverInfo: info(url, 's1') })
        .then(
          () => null,
          (e: unknown) => e,
        );
      expect(err).toBeInstanceOf(HardwareError);
      expect((err as HardwareError).reason).toBe('invalid-response');
      expect((err as Error).message).toMatch(/Memory/);
      expect((err as Error).message).not.toContain('sekrit-pw');
    } finally {
      server.close();
    }
  });
});
