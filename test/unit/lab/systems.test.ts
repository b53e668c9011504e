/**
 * The lab's systems, managers and chassis over real HTTP: representations, reset semantics,
 * boot override validation and its one-time use, virtual media (DSP2046).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startLab, type Lab, type LabEvent } from '../../../src/lab/index.ts';
import { ADMIN, call, messageIds } from './helpers.ts';

let lab: Lab;
const SYS = '/redfish/v1/Systems/node-0';
const RESET = `${SYS}/Actions/ComputerSystem.Reset`;

beforeAll(async () => {
  lab = await startLab({ nodes: 3, port: 0, hardware: (i) => ({ memoryGiB: 4 + i }) });
});
afterAll(async () => {
  await lab.close();
});
beforeEach(async () => {
  lab.systems.setPowerState('node-0', 'Off');
  lab.systems.setIgnoreResets('node-0', false);
  await call(lab, 'PATCH', SYS, ADMIN, { Boot: { BootSourceOverrideTarget: 'None', BootSourceOverrideEnabled: 'Disabled' } });
});

describe('representations', () => {
  it('lists N systems, managers and chassis', async () => {
    const systems = await call(lab, 'GET', '/redfish/v1/Systems');
    expect(systems.body['Members@odata.count']).toBe(3);
    expect(systems.body.Members).toEqual([0, 1, 2].map((i) => ({ '@odata.id': `/redfish/v1/Systems/node-${i}` })));
    expect(lab.systems.ids).toEqual(['node-0', 'node-1', 'node-2']);
    const managers = await call(lab, 'GET', '/redfish/v1/Managers');
    expect(managers.body.Members[0]).toEqual({ '@odata.id': '/redfish/v1/Managers/bmc-node-0' });
    const chassis = await call(lab, 'GET', '/redfish/v1/Chassis');
    expect(chassis.body['Members@odata.count']).toBe(3);
  });

  it('renders a ComputerSystem with what Ironic reads', async () => {
    const r = await call(lab, 'GET', '/redfish/v1/Systems/node-1');
    expect(r.status).toBe(200);
    expect(r.headers.get('etag')).toMatch(/^"[0-9a-f]+"$/);
    const s = r.body;
    expect(s).toMatchObject({
      '@odata.id': '/redfish/v1/Systems/node-1',
      Id: 'node-1',
      PowerState: 'Off',
      Status: { State: 'Enabled', Health: 'OK' },
      IndicatorLED: 'Off',
      Boot: { BootSourceOverrideTarget: 'None', BootSourceOverrideEnabled: 'Disabled', BootSourceOverrideMode: 'UEFI' },
      MemorySummary: { TotalSystemMemoryGiB: 5 },
      Links: {
        ManagedBy: [{ '@odata.id': '/redfish/v1/Managers/bmc-node-1' }],
        Chassis: [{ '@odata.id': '/redfish/v1/Chassis/chassis-node-1' }],
      },
      EthernetInterfaces: { '@odata.id': '/redfish/v1/Systems/node-1/EthernetInterfaces' },
      Processors: { '@odata.id': '/redfish/v1/Systems/node-1/Processors' },
      SimpleStorage: { '@odata.id': '/redfish/v1/Systems/node-1/SimpleStorage' },
    });
    expect(s['@odata.type']).toMatch(/^#ComputerSystem\.v1_\d+_\d+\.ComputerSystem$/);
    // The lab's own facts (src/lab/render-system.ts): a simulated system, on no lab switch.
    expect(s.Oem).toEqual({ EsiLab: { '@odata.type': '#EsiLabComputerSystem.v1_0_0.EsiLabComputerSystem', Backend: 'simulated' } });
    expect(s.Boot['BootSourceOverrideTarget@Redfish.AllowableValues']).toEqual(expect.arrayContaining(['Pxe', 'Hdd', 'Cd', 'BiosSetup']));
    expect(s.ProcessorSummary.Count).toBeGreaterThan(0);
    expect(typeof s.ProcessorSummary.Model).toBe('string');
    expect(s.Actions['#ComputerSystem.Reset']).toEqual({
      target: '/redfish/v1/Systems/node-1/Actions/ComputerSystem.Reset',
      'ResetType@Redfish.AllowableValues': [
        'On',
        'ForceOff',
        'GracefulShutdown',
        'GracefulRestart',
        'ForceRestart',
        'Nmi',
        'ForceOn',
        'PushPowerButton',
      ],
    });
    expect(s.UUID).toBe(lab.systems.get('node-1').uuid);
    expect(s.UUID).not.toBe(lab.systems.get('node-0').uuid);
    expect((await call(lab, 'GET', '/redfish/v1/Systems/node-1')).body.UUID).toBe(s.UUID);
  });

  it('renders one NIC with a stable MAC, processors and four equal disks', async () => {
    const nics = await call(lab, 'GET', `${SYS}/EthernetInterfaces`);
    expect(nics.body['Members@odata.count']).toBe(1);
    const nic = await call(lab, 'GET', nics.body.Members[0]['@odata.id']);
    expect(nic.body.MACAddress).toMatch(/^52:54:00(:[0-9a-f]{2}){3}$/);
    expect(nic.body.MACAddress).toBe(lab.systems.get('node-0').mac);
    expect((await call(lab, 'GET', nics.body.Members[0]['@odata.id'])).body.MACAddress).toBe(nic.body.MACAddress);
    const macs = new Set(lab.systems.ids.map((id) => lab.systems.get(id).mac));
    expect(macs.size).toBe(3);

    const cpus = await call(lab, 'GET', `${SYS}/Processors`);
    const cpu = await call(lab, 'GET', cpus.body.Members[0]['@odata.id']);
    expect(cpu.body).toMatchObject({ ProcessorType: 'CPU', ProcessorArchitecture: 'x86', TotalThreads: 2 });
    const storage = await call(lab, 'GET', `${SYS}/SimpleStorage`);
    const ctrl = await call(lab, 'GET', storage.body.Members[0]['@odata.id']);
    expect(ctrl.body.Devices).toHaveLength(4);
    for (const d of ctrl.body.Devices) expect(d).toMatchObject({ CapacityBytes: 20 * 1024 ** 3, Status: { State: 'Enabled' } });
  });

  it('derives the same identities from the same seed', async () => {
    const a = await startLab({ nodes: 2, seed: 'fixed' });
    const b = await startLab({ nodes: 2, seed: 'fixed' });
    try {
      expect(a.systems.get('node-1').uuid).toBe(b.systems.get('node-1').uuid);
      expect(a.systems.get('node-1').mac).toBe(b.systems.get('node-1').mac);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('renders the manager with its virtual media and the chassis', async () => {
    const m = await call(lab, 'GET', '/redfish/v1/Managers/bmc-node-0');
    expect(m.body).toMatchObject({ Id: 'bmc-node-0', ManagerType: 'BMC', Links: { ManagerForServers: [{ '@odata.id': SYS }] } });
    const vms = await call(lab, 'GET', m.body.VirtualMedia['@odata.id']);
    expect(vms.body['Members@odata.count']).toBe(1);
    const cd = await call(lab, 'GET', vms.body.Members[0]['@odata.id']);
    expect(cd.body).toMatchObject({ Id: 'Cd', MediaTypes: ['CD', 'DVD'], Inserted: false, Image: null });
    const c = await call(lab, 'GET', '/redfish/v1/Chassis/chassis-node-0');
    expect(c.body).toMatchObject({ ChassisType: 'RackMount', Links: { ComputerSystems: [{ '@odata.id': SYS }] } });
  });

  it('inserts and ejects virtual media through the actions and PATCH', async () => {
    const cd = '/redfish/v1/Managers/bmc-node-0/VirtualMedia/Cd';
    const ins = await call(lab, 'POST', `${cd}/Actions/VirtualMedia.InsertMedia`, ADMIN, { Image: 'http://x/boot.iso' });
    expect(ins.status).toBe(204);
    expect(lab.systems.get('node-0').virtualMedia).toEqual({ image: 'http://x/boot.iso', inserted: true });
    expect((await call(lab, 'GET', `${SYS}/VirtualMedia/Cd`)).body.Inserted).toBe(true);
    expect((await call(lab, 'POST', `${cd}/Actions/VirtualMedia.InsertMedia`, ADMIN, {})).status).toBe(400);
    expect((await call(lab, 'POST', `${cd}/Actions/VirtualMedia.EjectMedia`, ADMIN)).status).toBe(204);
    expect(lab.systems.get('node-0').virtualMedia.inserted).toBe(false);
    const patched = await call(lab, 'PATCH', cd, ADMIN, { Image: 'http://x/y.iso', Inserted: true });
    expect(patched.status).toBe(200);
    expect(lab.systems.get('node-0').virtualMedia.image).toBe('http://x/y.iso');
    await call(lab, 'PATCH', cd, ADMIN, { Image: null, Inserted: false });
    expect(lab.systems.get('node-0').virtualMedia.inserted).toBe(false);
  });
});

describe('ComputerSystem.Reset', () => {
  const cases: [string, 'On' | 'Off', 'On' | 'Off'][] = [
    ['On', 'Off', 'On'],
    ['On', 'On', 'On'],
    ['ForceOn', 'Off', 'On'],
    ['ForceOff', 'On', 'Off'],
    ['ForceOff', 'Off', 'Off'],
    ['GracefulShutdown', 'On', 'Off'],
    ['GracefulRestart', 'On', 'On'],
    ['GracefulRestart', 'Off', 'On'],
    ['ForceRestart', 'On', 'On'],
    ['ForceRestart', 'Off', 'On'],
    ['PushPowerButton', 'On', 'Off'],
    ['PushPowerButton', 'Off', 'On'],
    ['Nmi', 'On', 'On'],
    ['Nmi', 'Off', 'Off'],
  ];
  it.each(cases)('%s from %s leaves the system %s (204)', async (resetType, from, to) => {
    lab.systems.setPowerState('node-0', from);
    const r = await call(lab, 'POST', RESET, ADMIN, { ResetType: resetType });
    expect(r.status).toBe(204);
    expect(r.text).toBe('');
    expect(lab.systems.powerState('node-0')).toBe(to);
    expect((await call(lab, 'GET', SYS)).body.PowerState).toBe(to);
  });

  it('refuses unknown, missing and mistyped reset types with 400', async () => {
    const unknown = await call(lab, 'POST', RESET, ADMIN, { ResetType: 'Explode' });
    expect(unknown.status).toBe(400);
    expect(messageIds(unknown.body)).toEqual(['Base.1.11.ActionParameterValueNotInList']);
    expect(unknown.body.error['@Message.ExtendedInfo'][0].Message).toContain('Explode');
    const missing = await call(lab, 'POST', RESET, ADMIN, {});
    expect(messageIds(missing.body)).toEqual(['Base.1.11.ActionParameterMissing']);
    const typed = await call(lab, 'POST', RESET, ADMIN, { ResetType: 3 });
    expect(typed.status).toBe(400);
    expect(lab.systems.powerState('node-0')).toBe('Off');
  });

  it('accepts but ignores resets when told to act broken', async () => {
    lab.systems.setIgnoreResets('node-0', true);
    expect((await call(lab, 'POST', RESET, ADMIN, { ResetType: 'On' })).status).toBe(204);
    expect(lab.systems.powerState('node-0')).toBe('Off');
  });

  it('announces power changes and boots to subscribers', async () => {
    const events: LabEvent[] = [];
    const stop = lab.subscribe((e) => events.push(e));
    await call(lab, 'POST', RESET, ADMIN, { ResetType: 'On' });
    await call(lab, 'POST', RESET, ADMIN, { ResetType: 'ForceRestart' });
    stop();
    await call(lab, 'POST', RESET, ADMIN, { ResetType: 'ForceOff' });
    expect(events).toEqual([
      { type: 'power', systemId: 'node-0', powerState: 'On' },
      { type: 'boot', systemId: 'node-0', override: null, mode: 'UEFI' },
      { type: 'boot', systemId: 'node-0', override: null, mode: 'UEFI' },
    ]);
  });
});

describe('boot override', () => {
  it('PATCHes Boot and IndicatorLED and answers the updated system', async () => {
    const r = await call(lab, 'PATCH', SYS, ADMIN, {
      Boot: { BootSourceOverrideTarget: 'Pxe', BootSourceOverrideEnabled: 'Continuous', BootSourceOverrideMode: 'Legacy' },
      IndicatorLED: 'Blinking',
    });
    expect(r.status).toBe(200);
    expect(r.body.Boot).toMatchObject({
      BootSourceOverrideTarget: 'Pxe',
      BootSourceOverrideEnabled: 'Continuous',
      BootSourceOverrideMode: 'Legacy',
    });
    expect(lab.systems.get('node-0')).toMatchObject({
      boot: { target: 'Pxe', enabled: 'Continuous', mode: 'Legacy' },
      indicatorLed: 'Blinking',
    });
    await call(lab, 'PATCH', SYS, ADMIN, { Boot: { BootSourceOverrideMode: 'UEFI' }, IndicatorLED: 'Off' });
  });

  it('validates against the allowable values and changes nothing on error', async () => {
    const bad = [
      [{ Boot: { BootSourceOverrideTarget: 'Floppy' } }, 'PropertyValueNotInList'],
      [{ Boot: { BootSourceOverrideTarget: 'Pxe', BootSourceOverrideEnabled: 'Always' } }, 'PropertyValueNotInList'],
      [{ Boot: { BootSourceOverrideMode: 'BIOS' } }, 'PropertyValueNotInList'],
      [{ Boot: { BootSourceOverrideTarget: 7 } }, 'PropertyValueTypeError'],
      [{ IndicatorLED: 'Purple' }, 'PropertyValueNotInList'],
      [{ PowerState: 'On' }, 'PropertyNotWritable'],
      [{ Boot: { 'BootSourceOverrideTarget@Redfish.AllowableValues': [] } }, 'PropertyNotWritable'],
      [{ Colour: 'blue' }, 'PropertyUnknown'],
      [{ Boot: 'Pxe' }, 'PropertyValueTypeError'],
    ] as const;
    for (const [body, id] of bad) {
      const r = await call(lab, 'PATCH', SYS, ADMIN, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(messageIds(r.body), JSON.stringify(body)).toEqual([`Base.1.11.${id}`]);
    }
    expect(lab.systems.get('node-0')).toMatchObject({ boot: { target: 'None', enabled: 'Disabled' }, powerState: 'Off' });
  });

  it('honours If-Match', async () => {
    const etag = (await call(lab, 'GET', SYS)).headers.get('etag')!;
    const stale = await call(lab, 'PATCH', SYS, ADMIN, { Boot: { BootSourceOverrideTarget: 'Cd' } }, { 'if-match': '"stale"' });
    expect(stale.status).toBe(412);
    expect(lab.systems.get('node-0').boot.target).toBe('None');
    const ok = await call(lab, 'PATCH', SYS, ADMIN, { Boot: { BootSourceOverrideTarget: 'Cd' } }, { 'if-match': etag });
    expect(ok.status).toBe(200);
    expect(lab.systems.get('node-0').boot.target).toBe('Cd');
  });

  it('uses a Once override for one boot, then disables it; Continuous stays', async () => {
    await call(lab, 'PATCH', SYS, ADMIN, { Boot: { BootSourceOverrideTarget: 'Pxe', BootSourceOverrideEnabled: 'Once' } });
    const before = lab.systems.get('node-0').bootCount;
    await call(lab, 'POST', RESET, ADMIN, { ResetType: 'On' });
    expect(lab.systems.get('node-0')).toMatchObject({
      bootCount: before + 1,
      lastBootOverride: 'Pxe',
      boot: { target: 'Pxe', enabled: 'Disabled' },
    });
    await call(lab, 'POST', RESET, ADMIN, { ResetType: 'ForceRestart' });
    expect(lab.systems.get('node-0').lastBootOverride).toBeNull();

    await call(lab, 'PATCH', SYS, ADMIN, { Boot: { BootSourceOverrideTarget: 'Hdd', BootSourceOverrideEnabled: 'Continuous' } });
    await call(lab, 'POST', RESET, ADMIN, { ResetType: 'GracefulRestart' });
    await call(lab, 'POST', RESET, ADMIN, { ResetType: 'GracefulRestart' });
    expect(lab.systems.get('node-0')).toMatchObject({ lastBootOverride: 'Hdd', boot: { target: 'Hdd', enabled: 'Continuous' } });
  });
});
