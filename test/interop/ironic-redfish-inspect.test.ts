/**
 * Interop: esi's redfish inspection against OpenStack Ironic 21.4's own code. For the same
 * Redfish systems, ironic_redfish_inspect.py runs Ironic's redfish inspect computations
 * (`RedfishInspect._detect_local_gb`, `redfish_utils.get_enabled_macs`, `CPU_ARCH_MAP`,
 * `BOOT_MODE_MAP`; Debian's python3-ironic over python3-sushy) and esi's redfish inspect
 * interface plus its inspection processing (src/domain/inspection/inventory.ts) must record the
 * same `cpus`, `cpu_arch`, `memory_mb`, `local_gb`, port MACs and `boot_mode` capability.
 *
 * Systems: the vendor mockup test/fixtures/redfish-mockups/raid-2u (RAID volumes and drives
 * behind lower-case links, NICs disabled or unhealthy, no boot mode; an IA-64 with
 * SimpleStorage only) and the lab's BMCs of each shipped model, one of them with a RAID volume.
 * A failure when `/usr/bin/python3` cannot import sushy or Ironic (see test/helpers/tools.ts).
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { HardwareRegistry } from '../../src/domain/hardware/interfaces.ts';
import { inspectionFacts } from '../../src/domain/inspection/inventory.ts';
import { createHardwareRegistry } from '../../src/drivers/hardware/registry.ts';
import { parseModelSpec, startLab, type Lab } from '../../src/lab/index.ts';
import { startMockupLab, type MockupLab } from '../../src/lab/mockup.ts';
import { describeNeeding, pythonModuleTool, TOOLS } from '../helpers/tools.ts';

const PYTHON = '/usr/bin/python3';
const HERE = path.dirname(fileURLToPath(import.meta.url));
const SCRIPT = path.join(HERE, 'ironic_redfish_inspect.py');
const MOCKUP = path.join(HERE, '../fixtures/redfish-mockups/raid-2u');

/** Fails, naming the Debian packages, when one is missing (ESI_TEST_ALLOW_MISSING_TOOLS=1 skips instead). */
const NEEDS = [TOOLS.sushy, pythonModuleTool('ironic.drivers.modules.redfish.inspect', 'python3-ironic')];

/** What Ironic (or esi) records for one system. */
interface Outcome {
  cpus: number;
  cpu_arch: string | null;
  memory_mb: number;
  local_gb: number;
  macs: string[];
  boot_mode: string | null;
}

/** Ironic 21.4's outcome for `systems` of the BMC at `url`, by path. */
function ironic(url: string, systems: readonly string[]): Promise<Record<string, Outcome>> {
  return new Promise((resolve, reject) => {
    execFile(PYTHON, [SCRIPT, url, ...systems], { timeout: 120_000, encoding: 'utf8' }, (err, stdout, stderr) =>
      err === null ? resolve(JSON.parse(stdout) as Record<string, Outcome>) : reject(new Error(`${err.message}\n${stderr}`)),
    );
  });
}

describeNeeding(NEEDS, "esi's redfish inspection equals Ironic 21.4's", () => {
  let lab: Lab;
  let mock: MockupLab;
  let registry: HardwareRegistry;
  beforeAll(async () => {
    lab = await startLab({ nodes: 4, port: 0, models: parseModelSpec('gpu,storage,small') });
    mock = await startMockupLab({ dir: MOCKUP });
    registry = createHardwareRegistry({ redfish: { pollIntervalMs: 20 } });
  });
  afterAll(async () => {
    await registry?.close();
    await mock?.close();
    await lab?.close();
  });

  /** esi's outcome for `system` of the BMC at `url`: the driver's inventory, processed. */
  async function esi(url: string, system: string): Promise<Outcome> {
    const found = await registry.get('redfish').inspect!.inspectHardware({
      uuid: system,
      driverInfo: { redfish_address: url, redfish_system_id: system, redfish_username: 'admin', redfish_password: 'password' },
    });
    const facts = inspectionFacts(found.inventory, found.pluginData);
    return { ...facts.properties, macs: facts.nics.map((n) => n.mac).sort(), boot_mode: facts.bootMode };
  }

  async function compare(url: string, systems: readonly string[]): Promise<Record<string, Outcome>> {
    const theirs = await ironic(url, systems);
    for (const s of systems) expect(await esi(url, s), s).toEqual(theirs[s]);
    return theirs;
  }

  it('the vendor mockup: RAID volumes first, NIC states, no boot mode, IA-64', async () => {
    const theirs = await compare(mock.url, ['/redfish/v1/Systems/1', '/redfish/v1/Systems/2']);
    // The numbers the API tests expect (test/api/inspection/redfish-mockup.test.ts), from Ironic itself.
    expect(theirs['/redfish/v1/Systems/1']).toMatchObject({ local_gb: 837, macs: ['0c:c4:7a:10:00:01'], boot_mode: null });
    expect(theirs['/redfish/v1/Systems/2']).toMatchObject({ cpu_arch: 'ia64', local_gb: 110, boot_mode: 'bios' });
  }, 150_000);

  it("the lab's BMCs of each model, also with a RAID volume", async () => {
    const systems = lab.systems.ids.map((id) => `/redfish/v1/Systems/${id}`);
    await compare(lab.url, systems);
    const storage = '/redfish/v1/Systems/node-1/Storage/RAID.Integrated.1-1';
    const res = await fetch(`${lab.url}${storage}/Volumes`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from('admin:password').toString('base64')}` },
      body: JSON.stringify({
        RAIDType: 'RAID1',
        Links: { Drives: [{ '@odata.id': `${storage}/Drives/Disk.Bay.4` }, { '@odata.id': `${storage}/Drives/Disk.Bay.5` }] },
      }),
    });
    expect(res.status, await res.text()).toBe(201);
    await compare(lab.url, ['/redfish/v1/Systems/node-1']);
  }, 150_000);
});
