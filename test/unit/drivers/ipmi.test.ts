/**
 * The ipmi driver against real openipmi `ipmi_sim` BMCs over RMCP+ with Debian's ipmitool:
 * power (read back from the simulated chassis), boot devices, wrong password, unreachable BMC,
 * Serial-over-LAN; plus driver_info validation and the parsers of ipmitool's output.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../../src/domain/errors.ts';
import { HardwareError, type DriverNode, type HardwareRegistry, type HardwareType } from '../../../src/domain/hardware/interfaces.ts';
import { parseIpmiDriverInfo } from '../../../src/drivers/hardware/ipmi/driver-info.ts';
import { Ipmitool } from '../../../src/drivers/hardware/ipmi/ipmitool.ts';
import { parseBootParam5 } from '../../../src/drivers/hardware/ipmi/management.ts';
import { parsePowerStatus } from '../../../src/drivers/hardware/ipmi/power.ts';
import { createHardwareRegistry } from '../../../src/drivers/hardware/registry.ts';
import { ConfigError, loadConfig } from '../../../src/server/config.ts';
import { startIpmiSim, type IpmiSimBmc } from '../../helpers/ipmi-sim.ts';
import { describeNeeding, IPMI_TOOLS } from '../../helpers/tools.ts';

async function caught(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a rejection');
}

/** ipmitool 1.8.19's `chassis bootparam get 5` output for a persistent PXE setting. */
const PERSISTENT_PXE = `Boot parameter version: 1
Boot parameter 5 is valid/unlocked
Boot parameter data: c004000000
 Boot Flags :
   - Boot Flag Valid
   - Options apply to all future boots
   - BIOS PC Compatible (legacy) boot
   - Boot Device Selector : Force PXE
   - BIOS verbosity : System Default
`;

describe('ipmi driver_info', () => {
  it('accepts Ironic keys with defaults, numbers as strings as the CLI sends them', () => {
    const info = parseIpmiDriverInfo({ ipmi_address: '10.0.0.5', ipmi_username: 'admin', ipmi_password: 'pw', ipmi_port: '6230' });
    expect(info).toMatchObject({
      address: '10.0.0.5',
      port: 6230,
      cipherSuite: 3,
      privLevel: 'ADMINISTRATOR',
      protocolVersion: '2.0',
      disableBootTimeout: true,
    });
    expect(parseIpmiDriverInfo({ ipmi_address: 'bmc-1.example.com', ipmi_cipher_suite: 17, ipmi_priv_level: 'operator' })).toMatchObject({
      port: 623,
      cipherSuite: 17,
      privLevel: 'OPERATOR',
      username: null,
      password: null,
    });
  });

  it('names every bad key and never quotes the password', () => {
    const err = (() => {
      try {
        parseIpmiDriverInfo({
          ipmi_port: 70000,
          ipmi_cipher_suite: 'x',
          ipmi_priv_level: 'root',
          ipmi_password: 'hunter2-but-way-too-long-for-ipmi',
          ipmi_hex_kg_key: 'ab',
        });
      } catch (e) {
        return e as InvalidInputError;
      }
      throw new Error('expected an error');
    })();
    expect(err).toBeInstanceOf(InvalidInputError);
    for (const key of ['ipmi_address', 'ipmi_port', 'ipmi_cipher_suite', 'ipmi_priv_level', 'ipmi_password', 'ipmi_hex_kg_key'])
      expect(err.message).toContain(key);
    expect(err.message).not.toContain('hunter2');
    expect(() => parseIpmiDriverInfo({ ipmi_address: 'a b; rm -rf /' })).toThrow(/ipmi_address must be a host name/);
    expect(() => parseIpmiDriverInfo({ ipmi_address: '-oProxyCommand=x' })).toThrow(/ipmi_address/);
    expect(() => parseIpmiDriverInfo({ ipmi_address: 'bmc', ipmi_force_boot_device: 'True' })).toThrow(/ipmi_force_boot_device/);
    expect(() => parseIpmiDriverInfo({ ipmi_address: 'bmc', ipmi_force_boot_device: false, ipmi_bridging: 'no' })).not.toThrow();
  });

  it('puts the password in the environment, never on the command line', () => {
    const tool = new Ipmitool();
    const info = parseIpmiDriverInfo({ ipmi_address: '127.0.0.1', ipmi_username: 'admin', ipmi_password: 's3cret-pw' });
    const args = tool.connectionArgs(info);
    expect(args).toContain('-E');
    expect(args.join(' ')).not.toContain('s3cret-pw');
    expect(args).not.toContain('-P');
    expect(tool.childEnv(info).IPMI_PASSWORD).toBe('s3cret-pw');
  });
});

describe('hardware configuration', () => {
  it('enables every known type by default, a chosen list with ESI_ENABLED_HARDWARE_TYPES, and refuses unknown ones', () => {
    expect(loadConfig({}, {}).hardware).toEqual({
      enabledTypes: ['fake-hardware', 'ipmi', 'redfish'],
      ipmi: { commandTimeoutS: 10, commandRetries: 2 },
    });
    expect(loadConfig({}, { ESI_BMC_TIMEOUT_S: '7' }).hardware.ipmi.commandTimeoutS).toBe(7);
    const c = loadConfig({}, { ESI_ENABLED_HARDWARE_TYPES: 'redfish, ipmi', ESI_IPMI_COMMAND_TIMEOUT: '5', ESI_IPMI_COMMAND_RETRIES: '0' });
    expect(c.hardware).toEqual({ enabledTypes: ['redfish', 'ipmi'], ipmi: { commandTimeoutS: 5, commandRetries: 0 } });
    expect(() => loadConfig({}, { ESI_ENABLED_HARDWARE_TYPES: 'ipmi,ilo' })).toThrow(ConfigError);
    expect(() => loadConfig({}, { ESI_ENABLED_HARDWARE_TYPES: ' , ' })).toThrow(/at least one/);
    expect(() => loadConfig({}, { ESI_IPMI_COMMAND_TIMEOUT: '0' })).toThrow(/ipmi_command_timeout/);
  });
});

describe('ipmitool output parsing', () => {
  it('reads power status and boot flags as Ironic does', () => {
    expect(parsePowerStatus('Chassis Power is on\n')).toBe('power on');
    expect(parsePowerStatus('Chassis Power is off\n')).toBe('power off');
    expect(parsePowerStatus('garbage')).toBeNull();
    expect(parseBootParam5(PERSISTENT_PXE)).toEqual({ bootDevice: 'pxe', persistent: true });
    expect(
      parseBootParam5(
        PERSISTENT_PXE.replace('Options apply to all future boots', 'Options apply to only next boot').replace(
          'Force PXE',
          'Force Boot from CD/DVD',
        ),
      ),
    ).toEqual({
      bootDevice: 'cdrom',
      persistent: false,
    });
    expect(parseBootParam5(PERSISTENT_PXE.replace('Force PXE', 'No override'))).toEqual({ bootDevice: null, persistent: true });
    expect(parseBootParam5('nothing')).toBeNull();
  });
});

describeNeeding(IPMI_TOOLS, 'ipmi driver against ipmi_sim', () => {
  let bmc: IpmiSimBmc;
  let registry: HardwareRegistry;
  let ipmi: HardwareType;
  const node = (extra: Record<string, unknown> = {}): DriverNode => ({ uuid: 'uuid-ipmi-0', driverInfo: { ...bmc.driverInfo, ...extra } });

  // A fresh BMC for each test: tests read its control log, power state and serial line.
  beforeEach(async () => {
    bmc = await startIpmiSim({ name: 'ipmi-0' });
  }, 30_000);
  afterEach(async () => bmc?.stop());

  beforeAll(() => {
    registry = createHardwareRegistry({
      ipmi: {
        pollIntervalMs: 50,
        packetTimeoutS: 1,
        packetRetries: 1,
        retries: 1,
        retryDelayMs: 50,
        commandTimeoutS: 10,
        keepaliveIntervalMs: 300,
      },
    });
    ipmi = registry.get('ipmi');
  });
  afterAll(async () => {
    await registry?.close();
  });

  it('is registered with Ironic interface names and properties', () => {
    expect(registry.names()).toContain('ipmi');
    expect(ipmi.enabledInterfaces.power).toEqual(['ipmitool']);
    expect(ipmi.enabledInterfaces.management).toEqual(['ipmitool']);
    expect(ipmi.enabledInterfaces.console[0]).toBe('ipmitool-socat');
    expect(ipmi.driverProperties().ipmi_address).toMatch(/Required/);
    expect(ipmi.console?.name).toBe('ipmitool-socat');
  });

  it('powers on, off, reboots and soft-powers off, as the simulated chassis sees it', async () => {
    await ipmi.power.setPowerState(node(), 'power off');
    expect(await ipmi.power.getPowerState(node())).toBe('power off');
    await ipmi.power.setPowerState(node(), 'power on');
    expect(await bmc.power()).toBe('on');
    expect(await ipmi.power.getPowerState(node())).toBe('power on');

    const before = (await bmc.controlLog()).length;
    await ipmi.power.setPowerState(node(), 'rebooting');
    expect(await bmc.power()).toBe('on');
    expect((await bmc.controlLog()).slice(before).filter((l) => l.startsWith('set'))).toEqual(['set power 0', 'set power 1']);

    await ipmi.power.setPowerState(node(), 'soft power off');
    expect(await bmc.power()).toBe('off');
    expect(await bmc.controlLog()).toContain('set shutdown 1');

    await ipmi.power.setPowerState(node(), 'soft rebooting');
    expect(await ipmi.power.getPowerState(node())).toBe('power on');
    expect(await ipmi.power.supportedPowerStates(node())).toContain('soft rebooting');
  });

  it('sends nothing when the node is already in the wanted state', async () => {
    await ipmi.power.setPowerState(node(), 'power on');
    const before = (await bmc.controlLog()).length;
    await ipmi.power.setPowerState(node(), 'power on');
    expect((await bmc.controlLog()).slice(before).filter((l) => l.startsWith('set'))).toEqual([]);
  });

  it('sets and reads back every boot device, one-time and persistent', async () => {
    const simName = { pxe: 'pxe', disk: 'default', cdrom: 'cdrom', bios: 'bios' } as const;
    for (const device of ['pxe', 'disk', 'cdrom', 'bios'] as const) {
      for (const persistent of [false, true]) {
        await ipmi.management.setBootDevice(node(), device, persistent);
        expect(await bmc.bootDevice()).toBe(simName[device]);
        const read = await ipmi.management.getBootDevice(node());
        expect(read.bootDevice).toBe(device);
        // ipmi_sim keeps only the device (bmc_chassis.c returns data byte 1 as 0), so the
        // persistence bit always reads back as "only next boot" from it.
        expect(read.persistent).toBe(false);
      }
    }
    expect(await ipmi.management.supportedBootDevices(node())).toEqual(['pxe', 'disk', 'cdrom', 'bios']);
  });

  it('refuses a wrong password without retrying and without the password in the message', async () => {
    const before = (await bmc.controlLog()).length;
    const err = await caught(ipmi.power.setPowerState(node({ ipmi_password: 'WrongPassw0rd' }), 'power off'));
    expect(err).toBeInstanceOf(HardwareError);
    expect((err as HardwareError).reason).toBe('refused');
    expect(err.message).toMatch(/IPMI BMC at 127\.0\.0\.1:\d+ refused power off for node uuid-ipmi-0/);
    expect(err.message).not.toContain('WrongPassw0rd');
    expect(err.message).not.toContain(bmc.password);
    expect((await bmc.controlLog()).length).toBe(before);
    const user = await caught(ipmi.power.getPowerState(node({ ipmi_username: 'nobody' })));
    expect((user as HardwareError).reason).toBe('refused');
  });

  it('reports an unreachable BMC as unreachable, bounded by the timeouts', async () => {
    const started = Date.now();
    const err = await caught(ipmi.power.getPowerState(node({ ipmi_port: 9 })));
    expect(err).toBeInstanceOf(HardwareError);
    expect((err as HardwareError).reason).toBe('unreachable');
    expect(err.message).toMatch(/could not be reached for get power state/);
    // Two runs (retries: 1) of ipmitool with -N 1 -R 1, each killed at 10 s at the latest.
    expect(Date.now() - started).toBeLessThan(20_000);
  }, 30_000);

  it('rejects invalid driver_info before running ipmitool', async () => {
    await expect(ipmi.power.getPowerState({ uuid: 'x', driverInfo: { ipmi_port: 1 } })).rejects.toBeInstanceOf(InvalidInputError);
    expect(() => ipmi.validateDriverInfo(bmc.driverInfo)).not.toThrow();
  });

  it('streams the serial console over Serial-over-LAN both ways, and reopens after close', async () => {
    await bmc.serial.connected;
    const session = await ipmi.console!.open(node());
    const chunks: Buffer[] = [];
    session.onData((c) => chunks.push(c));
    const text = (): string => Buffer.concat(chunks).toString('latin1');
    bmc.serial.write('Booting esi test node\r\nlogin: ');
    await expect.poll(text, { timeout: 10_000 }).toContain('login: ');
    session.write(Buffer.from('root\r'));
    await expect.poll(() => bmc.serial.received().toString('latin1'), { timeout: 10_000 }).toContain('root\r');
    await expect.poll(text, { timeout: 10_000 }).toContain('root');
    // The simulated node prints its power changes on the serial line.
    // It reads the chassis every 500 ms: the node is off for two readings before it is powered
    // on, and each change is awaited before the next.
    await ipmi.power.setPowerState(node(), 'power off');
    await new Promise((r) => setTimeout(r, 1_200));
    await ipmi.management.setBootDevice(node(), 'pxe', false);
    await ipmi.power.setPowerState(node(), 'power on');
    await expect.poll(text, { timeout: 10_000 }).toMatch(/ipmi-0: powered on, booting from pxe/);
    await ipmi.power.setPowerState(node(), 'power off');
    await expect.poll(text, { timeout: 10_000 }).toMatch(/ipmi-0: powered off/);
    const closed = new Promise<string>((r) => session.onClose(r));
    await session.close();
    expect(await closed).toBe('closed');
    await session.close();

    // A second session works: the first was deactivated (and open() deactivates stale ones).
    const again = await ipmi.console!.open(node());
    const more: Buffer[] = [];
    again.onData((c) => more.push(c));
    bmc.serial.write('second session\r\n');
    await expect.poll(() => Buffer.concat(more).toString('latin1'), { timeout: 10_000 }).toContain('second session');
    await again.close();
  }, 60_000);

  it('ends a session whose BMC stops answering, with the reason, through onClose', async () => {
    const lone = await startIpmiSim({ name: 'ipmi-lone' });
    await lone.serial.connected;
    const session = await ipmi.console!.open({ uuid: 'uuid-ipmi-lone', driverInfo: lone.driverInfo });
    const closed = new Promise<string>((r) => session.onClose(r));
    await lone.stop();
    expect(await closed).toMatch(/IPMI BMC at 127\.0\.0\.1:\d+ could not be reached for check console BMC for node uuid-ipmi-lone/);
    session.write(Buffer.from('ignored after the end'));
    await session.close();
  }, 30_000);

  it('refuses a console with a wrong password', async () => {
    const err = await caught(ipmi.console!.open(node({ ipmi_password: 'WrongPassw0rd' })));
    expect((err as HardwareError).reason).toBe('refused');
    expect(err.message).not.toContain('WrongPassw0rd');
  });
});
