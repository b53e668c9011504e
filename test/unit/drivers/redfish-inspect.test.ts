/**
 * The redfish inspect interface (src/drivers/hardware/redfish/inspect.ts) against the lab's
 * BMCs of each shipped model, and against a BMC that answers malformed inventory (a real HTTP
 * server on loopback): a HardwareError `invalid-response` that names no secret.
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
