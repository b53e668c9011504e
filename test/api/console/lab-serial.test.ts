/**
 * The lab BMC's serial-over-LAN service on its own (src/lab/serial.ts, src/lab/serial-routes.ts):
 * BMC authentication on the description and on the websocket upgrade, the boot lines of a power
 * on through Redfish `ComputerSystem.Reset` in the stream and in `console.log`, echo only while
 * the machine is on, the session limit, and the redfish-serial driver's errors (wrong password,
 * unknown system) as HardwareErrors without secrets.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HardwareError } from '../../../src/domain/hardware/interfaces.ts';
import { RedfishHardware } from '../../../src/drivers/hardware/redfish/index.ts';
import { serialConsoleUri, startLab, type Lab } from '../../../src/lab/index.ts';
import { closedWithin, connect } from './support.ts';

let lab: Lab;
let dir: string;
const basic = (user: string, pw: string): string => `Basic ${Buffer.from(`${user}:${pw}`).toString('base64')}`;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-lab-serial-'));
  // Agents are configured only for the data directory: no system here boots from virtual media.
  // The tests that power a system on or open sessions have one each (node-1 … node-3).
  lab = await startLab({ nodes: 4, agents: { apiUrl: 'http://127.0.0.1:9/baremetal', dataDir: dir } });
});
afterAll(async () => {
  await lab?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('lab serial console', () => {
  it('describes the service to authenticated users only', async () => {
    const url = `${lab.url}${serialConsoleUri('node-0')}`;
    expect((await fetch(url)).status).toBe(401);
    const r = await fetch(url, { headers: { authorization: basic('admin', 'password') } });
    expect(r.status).toBe(200);
    expect(await r.json()).toMatchObject({
      Id: 'SerialConsole',
      ServiceEnabled: true,
      Oem: { EsiLab: { WebSocket: serialConsoleUri('node-0') } },
    });
    expect(
      (await fetch(`${lab.url}${serialConsoleUri('node-9')}`, { headers: { authorization: basic('admin', 'password') } })).status,
    ).toBe(404);
  });

  it('refuses the websocket without the BMC credentials', async () => {
    const ws = `${lab.url.replace(/^http/, 'ws')}${serialConsoleUri('node-0')}`;
    const anon = connect(ws);
    expect((await closedWithin(anon)).code).toBe(1006);
    expect(anon.opened()).toBe(false);
    const wrong = connect(ws, { authorization: basic('admin', 'nope') });
    await closedWithin(wrong);
    expect(wrong.opened()).toBe(false);
  });

  it('streams the boot lines of a Redfish power on, logs them to console.log, and echoes only while on', async () => {
    const ws = connect(`${lab.url.replace(/^http/, 'ws')}${serialConsoleUri('node-1')}`, { authorization: basic('admin', 'password') });
    await expect.poll(() => ws.opened()).toBe(true);
    ws.send('typed-while-off\r');
    const reset = await fetch(`${lab.url}/redfish/v1/Systems/node-1/Actions/ComputerSystem.Reset`, {
      method: 'POST',
      headers: { authorization: basic('admin', 'password'), 'content-type': 'application/json' },
      body: JSON.stringify({ ResetType: 'On' }),
    });
    expect(reset.status).toBe(204);
    await ws.waitFor(
      /node-1 power on\n.*esi-lab firmware: POST node-1 \(system [0-9a-f-]{36}\), boot #1\n.*memory 4 GiB OK.*\n.*UEFI boot from the boot order/,
    );
    ws.send('typed-while-on\r');
    await ws.waitFor(/typed-while-on\r\n/);
    expect(ws.text()).not.toContain('typed-while-off');
    const log = fs.readFileSync(path.join(dir, 'lab', 'node-1', 'console.log'), 'utf8');
    expect(log).toMatch(/esi-lab firmware: POST node-1/);
    expect(log).toContain('typed-while-on');
    ws.close();
  });

  it('accepts at most 8 sessions per system (the 9th closes with 1013)', async () => {
    const url = `${lab.url.replace(/^http/, 'ws')}${serialConsoleUri('node-2')}`;
    const h = { authorization: basic('admin', 'password') };
    const open = Array.from({ length: 8 }, () => connect(url, h));
    for (const s of open) await expect.poll(() => s.opened()).toBe(true);
    const ninth = await closedWithin(connect(url, h));
    expect(ninth.code).toBe(1013);
    for (const s of open) s.close();
  });
});

describe('redfish-serial driver errors', () => {
  const driver = new RedfishHardware({ requestTimeoutMs: 3000 });
  afterAll(() => driver.close());

  it('a wrong password is a refused HardwareError that does not quote the password', async () => {
    const err = await driver.console
      .open({
        uuid: 'n-1',
        driverInfo: {
          redfish_address: lab.url,
          redfish_system_id: '/redfish/v1/Systems/node-0',
          redfish_username: 'admin',
          redfish_password: 'hunter2-wrong',
        },
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HardwareError);
    expect((err as HardwareError).reason).toBe('refused');
    expect((err as Error).message).not.toContain('hunter2-wrong');
  });

  it('an unknown system is refused (404); a BMC without the service likewise', async () => {
    const err = await driver.console
      .open({
        uuid: 'n-2',
        driverInfo: {
          redfish_address: lab.url,
          redfish_system_id: '/redfish/v1/Systems/node-7',
          redfish_username: 'admin',
          redfish_password: 'password',
        },
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HardwareError);
    expect((err as HardwareError).httpStatus).toBe(404);
  });

  it('an open session carries bytes both ways and ends with close()', async () => {
    // The port echoes only while the machine is on.
    lab.systems.setPowerState('node-3', 'On');
    const session = await driver.console.open({
      uuid: 'n-3',
      driverInfo: {
        redfish_address: lab.url,
        redfish_system_id: '/redfish/v1/Systems/node-3',
        redfish_username: 'admin',
        redfish_password: 'password',
        redfish_auth_type: 'session',
      },
    });
    let got = '';
    session.onData((c) => (got += c.toString()));
    const ended = new Promise<string>((r) => session.onClose(r));
    session.write(Buffer.from('driver-typed\r'));
    await expect.poll(() => got).toMatch(/driver-typed\r\n/);
    await session.close();
    expect(await ended).toBe('closed');
    await expect.poll(() => lab.serial.listeners('node-3')).toBe(0);
  });
});
