/**
 * The redfish driver against the real lab over HTTP: power (state read back from the lab),
 * boot device, system discovery, session/Basic/auto auth, session re-creation, credential
 * errors without secrets, unreachable BMCs.
 */
import net from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../../src/domain/errors.ts';
import { HardwareError, type DriverNode, type HardwareRegistry, type HardwareType } from '../../../src/domain/hardware/interfaces.ts';
import { createHardwareRegistry } from '../../../src/drivers/hardware/registry.ts';
import { startLab, type Lab } from '../../../src/lab/index.ts';

let lab: Lab;
let registry: HardwareRegistry;
let redfish: HardwareType;

function node(system: string, extra: Record<string, unknown> = {}): DriverNode {
  return {
    uuid: `uuid-${system}`,
    driverInfo: {
      redfish_address: lab.url,
      redfish_system_id: `/redfish/v1/Systems/${system}`,
      redfish_username: 'admin',
      redfish_password: 'password',
      ...extra,
    },
  };
}

/** Sessions currently open on the lab (read with Basic auth, which opens none). */
async function sessionCount(): Promise<number> {
  const res = await fetch(`${lab.url}/redfish/v1/SessionService/Sessions`, {
    headers: { authorization: `Basic ${Buffer.from('admin:password').toString('base64')}` },
  });
  return ((await res.json()) as { 'Members@odata.count': number })['Members@odata.count'];
}

async function caught(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a rejection');
}

beforeAll(async () => {
  lab = await startLab({ nodes: 3, port: 0 });
  registry = createHardwareRegistry({ redfish: { pollIntervalMs: 20 } });
  redfish = registry.get('redfish');
});
afterAll(async () => {
  await registry.close();
  await lab.close();
});
beforeEach(() => {
  for (const id of lab.systems.ids) {
    lab.systems.setIgnoreResets(id, false);
    lab.systems.setPowerState(id, 'Off');
  }
});

describe('driver_info', () => {
  it('describes its keys (with those of its default pxe boot and direct deploy) and requires redfish_address', () => {
    expect(Object.keys(redfish.driverProperties()).sort()).toEqual([
      'deploy_kernel',
      'deploy_ramdisk',
      'redfish_address',
      'redfish_auth_type',
      'redfish_password',
      'redfish_system_id',
      'redfish_username',
      'redfish_verify_ca',
    ]);
    expect(redfish.driverProperties().redfish_address).toMatch(/Required/);
    expect(() => redfish.validateDriverInfo({})).toThrow(/redfish_address is missing/);
    expect(() => redfish.validateDriverInfo({ redfish_address: lab.url })).not.toThrow();
    expect(() => redfish.validateDriverInfo({ redfish_address: 'bmc.example.com' })).not.toThrow();
  });

  it('lists every invalid key in one InvalidInputError, never echoing the password', () => {
    const err = (() => {
      try {
        redfish.validateDriverInfo({
          redfish_address: 'ftp://x',
          redfish_auth_type: 'kerberos',
          redfish_system_id: 'node-0',
          redfish_verify_ca: 'maybe',
          redfish_password: 'hunter2',
        });
      } catch (e) {
        return e as Error;
      }
      throw new Error('no error');
    })();
    expect(err).toBeInstanceOf(InvalidInputError);
    for (const key of ['redfish_address', 'redfish_auth_type', 'redfish_system_id', 'redfish_verify_ca', 'redfish_password']) {
      expect(err.message).toContain(key);
    }
    expect(err.message).not.toContain('hunter2');
    expect(() => redfish.validateDriverInfo({ redfish_address: 'http://admin:pw@127.0.0.1:1' })).toThrow(/must not contain credentials/);
  });

  it('refuses bad driver_info before contacting the BMC', async () => {
    await expect(redfish.power.getPowerState({ uuid: 'n', driverInfo: {} })).rejects.toBeInstanceOf(InvalidInputError);
  });
});

describe('power', () => {
  it('reads the power state', async () => {
    expect(await redfish.power.getPowerState(node('node-0'))).toBe('power off');
    lab.systems.setPowerState('node-0', 'On');
    expect(await redfish.power.getPowerState(node('node-0'))).toBe('power on');
  });

  it('powers on and off, returning once the lab reports the state', async () => {
    await redfish.power.setPowerState(node('node-0'), 'power on');
    expect(lab.systems.powerState('node-0')).toBe('On');
    await redfish.power.setPowerState(node('node-0'), 'power on');
    expect(lab.systems.powerState('node-0')).toBe('On');
    await redfish.power.setPowerState(node('node-0'), 'power off');
    expect(lab.systems.powerState('node-0')).toBe('Off');
    await redfish.power.setPowerState(node('node-0'), 'soft rebooting');
    expect(lab.systems.powerState('node-0')).toBe('On');
    await redfish.power.setPowerState(node('node-0'), 'soft power off');
    expect(lab.systems.powerState('node-0')).toBe('Off');
  });

  it('reboots: ForceOff then On when on, On when off (one boot each)', async () => {
    const boots = () => lab.systems.get('node-1').bootCount;
    const b0 = boots();
    await redfish.power.setPowerState(node('node-1'), 'rebooting');
    expect(lab.systems.powerState('node-1')).toBe('On');
    expect(boots()).toBe(b0 + 1);
    const events: string[] = [];
    const stop = lab.subscribe((e) => events.push(e.type === 'power' ? e.powerState : 'boot'));
    await redfish.power.setPowerState(node('node-1'), 'rebooting');
    stop();
    expect(events).toEqual(['Off', 'On', 'boot']);
    expect(boots()).toBe(b0 + 2);
  });

  it('throws a timeout HardwareError when the BMC never gets there', async () => {
    lab.systems.setIgnoreResets('node-2', true);
    const started = Date.now();
    const err = await caught(redfish.power.setPowerState(node('node-2'), 'power on', 0.3));
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(err).toBeInstanceOf(HardwareError);
    expect((err as HardwareError).reason).toBe('timeout');
    expect(err.message).toMatch(/Timed out after 0\.3 s .* power on .*PowerState Off/);
  });

  it('supports every power target', async () => {
    expect(await redfish.power.supportedPowerStates(node('node-0'))).toEqual([
      'power on',
      'power off',
      'rebooting',
      'soft power off',
      'soft rebooting',
    ]);
  });
});

describe('management', () => {
  it('sets and reads the boot device, once or persistent', async () => {
    await redfish.management.setBootDevice(node('node-0'), 'pxe', true);
    expect(lab.systems.get('node-0').boot).toMatchObject({ target: 'Pxe', enabled: 'Continuous' });
    expect(await redfish.management.getBootDevice(node('node-0'))).toEqual({ bootDevice: 'pxe', persistent: true });
    await redfish.management.setBootDevice(node('node-0'), 'disk', false);
    expect(lab.systems.get('node-0').boot).toMatchObject({ target: 'Hdd', enabled: 'Once' });
    expect(await redfish.management.getBootDevice(node('node-0'))).toEqual({ bootDevice: 'disk', persistent: false });
    await redfish.management.setBootDevice(node('node-0'), 'cdrom', false);
    await redfish.management.setBootDevice(node('node-0'), 'bios', true);
    expect(lab.systems.get('node-0').boot).toMatchObject({ target: 'BiosSetup', enabled: 'Continuous' });
  });

  it('lists the supported boot devices from the allowable values', async () => {
    expect(await redfish.management.supportedBootDevices(node('node-0'))).toEqual(['pxe', 'disk', 'cdrom', 'bios']);
  });

  it('refuses an unknown boot device', async () => {
    await expect(redfish.management.setBootDevice(node('node-0'), 'floppy' as 'pxe', true)).rejects.toBeInstanceOf(InvalidInputError);
  });
});

describe('system discovery', () => {
  it('uses the only system when redfish_system_id is absent, else refuses', async () => {
    const single = await startLab({ nodes: 1 });
    try {
      const n = { uuid: 'single', driverInfo: { redfish_address: single.url, redfish_username: 'admin', redfish_password: 'password' } };
      await redfish.power.setPowerState(n, 'power on');
      expect(single.systems.powerState('node-0')).toBe('On');
    } finally {
      await single.close();
    }
    const n = node('node-0', { redfish_system_id: undefined });
    await expect(redfish.power.getPowerState(n)).rejects.toThrow(/redfish_system_id is required.*has 3 systems/);
  });

  it('reports an unknown system as a refused 404', async () => {
    const err = await caught(redfish.power.getPowerState(node('node-9')));
    expect(err).toBeInstanceOf(HardwareError);
    expect((err as HardwareError).httpStatus).toBe(404);
  });
});

describe('authentication', () => {
  it('session auth opens one cached session and re-creates it after a 401', async () => {
    const local = createHardwareRegistry().get('redfish') as HardwareType & { close(): Promise<void> };
    lab.expireSessions();
    try {
      const n = node('node-0', { redfish_auth_type: 'session' });
      await local.power.getPowerState(n);
      await local.management.getBootDevice(n);
      await local.power.getPowerState(node('node-1', { redfish_auth_type: 'session' }));
      expect(await sessionCount()).toBe(1);
      lab.expireSessions();
      expect(await local.power.getPowerState(n)).toBe('power off');
      expect(await sessionCount()).toBe(1);
    } finally {
      await local.close();
    }
    expect(await sessionCount()).toBe(0);
  });

  it('basic auth opens no session', async () => {
    const local = createHardwareRegistry();
    lab.expireSessions();
    try {
      await local.get('redfish').power.setPowerState(node('node-0', { redfish_auth_type: 'basic' }), 'power on');
      expect(lab.systems.powerState('node-0')).toBe('On');
      expect(await sessionCount()).toBe(0);
    } finally {
      await local.close();
    }
  });

  it('auto auth prefers a session', async () => {
    const local = createHardwareRegistry();
    lab.expireSessions();
    try {
      await local.get('redfish').power.getPowerState(node('node-0'));
      expect(await sessionCount()).toBe(1);
    } finally {
      await local.close();
    }
  });

  it.each(['session', 'basic', 'auto'])('a wrong password (%s) is a HardwareError with HTTP 401 and no secret', async (authType) => {
    const n = node('node-0', { redfish_auth_type: authType, redfish_password: 'Wr0ngPa55' });
    const err = await caught(redfish.power.setPowerState(n, 'power on'));
    expect(err).toBeInstanceOf(HardwareError);
    expect((err as HardwareError).reason).toBe('refused');
    expect((err as HardwareError).httpStatus).toBe(401);
    expect(err.message).toContain(`Redfish BMC at ${lab.url} refused power on for node uuid-node-0`);
    expect(err.message).toContain('HTTP 401');
    expect(err.message).not.toContain('Wr0ngPa55');
    expect(err.message).not.toContain(Buffer.from('admin:Wr0ngPa55').toString('base64'));
    expect(lab.systems.powerState('node-0')).toBe('Off');
  });

  it('never reuses a session cached for the right password when the password is wrong', async () => {
    const local = createHardwareRegistry();
    try {
      await local.get('redfish').power.getPowerState(node('node-0', { redfish_auth_type: 'session' }));
      const err = await caught(
        local.get('redfish').power.getPowerState(node('node-0', { redfish_auth_type: 'session', redfish_password: 'x' })),
      );
      expect((err as HardwareError).httpStatus).toBe(401);
    } finally {
      await local.close();
    }
  });
});

describe('unreachable BMC', () => {
  it('fails fast when nothing listens', async () => {
    const server = net.createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as net.AddressInfo).port;
    await new Promise<void>((r) => server.close(() => r()));
    const err = await caught(redfish.power.getPowerState(node('node-0', { redfish_address: `http://127.0.0.1:${port}` })));
    expect(err).toBeInstanceOf(HardwareError);
    expect((err as HardwareError).reason).toBe('unreachable');
    expect(err.message).toContain(`Redfish BMC at http://127.0.0.1:${port} is unreachable for get power state of node uuid-node-0`);
    expect(err.message).not.toContain('password');
  });

  it('gives up after the request timeout when the BMC never answers', async () => {
    const sockets: net.Socket[] = [];
    const server = net.createServer((s) => sockets.push(s));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as net.AddressInfo).port;
    const local = createHardwareRegistry({ redfish: { requestTimeoutMs: 300 } });
    try {
      const started = Date.now();
      const err = await caught(
        local
          .get('redfish')
          .power.getPowerState(node('node-0', { redfish_address: `http://127.0.0.1:${port}`, redfish_auth_type: 'basic' })),
      );
      expect(Date.now() - started).toBeGreaterThanOrEqual(250);
      expect(err).toBeInstanceOf(HardwareError);
      expect((err as HardwareError).reason).toBe('unreachable');
      expect(err.message).toMatch(/no answer within 0\.3 s/);
    } finally {
      await local.close();
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
