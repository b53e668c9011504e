/**
 * The lab's BIOS, RAID and update resources over HTTP, checked directly (the driver checks
 * requests before sending them, so these are the BMC's own refusals): Redfish error bodies for
 * unknown, read-only and invalid BIOS attributes, pending settings applied only at reset,
 * impossible volumes, and firmware images from non-loopback URLs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLab, type Lab } from '../../../src/lab/index.ts';
import { call } from './helpers.ts';
import { waitFor } from '../../helpers/wait-for.ts';

let lab: Lab;
const SYS = '/redfish/v1/Systems/node-0';
const STORAGE = `${SYS}/Storage/RAID.Integrated.1-1`;

beforeAll(async () => {
  lab = await startLab({ nodes: 1, port: 0 });
});
afterAll(async () => lab.close());

const messageId = (res: { body: any }): string => res.body.error['@Message.ExtendedInfo'][0].MessageId;

describe('BIOS', () => {
  it('links Bios from the system and its registry from the service', async () => {
    expect((await call(lab, 'GET', SYS)).body.Bios['@odata.id']).toBe(`${SYS}/Bios`);
    const bios = (await call(lab, 'GET', `${SYS}/Bios`)).body;
    expect(bios['@Redfish.Settings'].SettingsObject['@odata.id']).toBe(`${SYS}/Bios/Settings`);
    const file = (await call(lab, 'GET', `/redfish/v1/Registries/${bios.AttributeRegistry}`)).body;
    const reg = (await call(lab, 'GET', file.Location[0].Uri)).body;
    expect(reg.RegistryEntries.Attributes.map((a: any) => a.AttributeName)).toEqual(Object.keys(bios.Attributes));
  });

  it('refuses unknown, read-only, mistyped and out-of-range attributes, staging nothing', async () => {
    const patch = (Attributes: unknown) => call(lab, 'PATCH', `${SYS}/Bios/Settings`, undefined, { Attributes });
    const cases: [unknown, number, string][] = [
      [{ Warp: 'On' }, 400, 'Base.1.11.PropertyUnknown'],
      [{ SystemServiceTag: 'X' }, 400, 'Base.1.11.PropertyNotWritable'],
      [{ ProcTurboMode: 'Maybe' }, 400, 'Base.1.11.PropertyValueNotInList'],
      [{ ProcTurboMode: true }, 400, 'Base.1.11.PropertyValueTypeError'],
      [{ NumaNodesPerSocket: 9 }, 400, 'Base.1.11.PropertyValueOutOfRange'],
      [{ AssetTag: 'x'.repeat(64) }, 400, 'Base.1.11.PropertyValueOutOfRange'],
      [{ ProcTurboMode: 'Disabled', Warp: 'On' }, 400, 'Base.1.11.PropertyUnknown'],
    ];
    for (const [attrs, status, id] of cases) {
      const res = await patch(attrs);
      expect(res.status, JSON.stringify(attrs)).toBe(status);
      expect(messageId(res)).toBe(id);
    }
    expect(lab.bios.pending('node-0')).toEqual({});
  });

  it('applies pending settings at the next boot only', async () => {
    expect((await call(lab, 'PATCH', `${SYS}/Bios/Settings`, undefined, { Attributes: { ProcTurboMode: 'Disabled' } })).status).toBe(200);
    expect((await call(lab, 'GET', `${SYS}/Bios`)).body.Attributes.ProcTurboMode).toBe('Enabled');
    expect((await call(lab, 'GET', `${SYS}/Bios/Settings`)).body.Attributes).toEqual({ ProcTurboMode: 'Disabled' });
    lab.systems.setPowerState('node-0', 'On');
    expect((await call(lab, 'GET', `${SYS}/Bios`)).body.Attributes.ProcTurboMode).toBe('Disabled');
    expect(lab.bios.pending('node-0')).toEqual({});
  });
});

describe('RAID volumes', () => {
  const drive = (i: number) => ({ '@odata.id': `${STORAGE}/Drives/Disk.Bay.${i}` });
  it('refuses impossible volumes with the reason and creates possible ones', async () => {
    const post = (body: unknown) => call(lab, 'POST', `${STORAGE}/Volumes`, undefined, body);
    expect(messageId(await post({ RAIDType: 'RAID5', Links: { Drives: [drive(0), drive(1)] } }))).toBe('Base.1.11.PropertyValueConflict');
    expect(messageId(await post({ RAIDType: 'RAID10', Links: { Drives: [drive(0), drive(1), drive(2)] } }))).toBe(
      'Base.1.11.PropertyValueConflict',
    );
    expect(messageId(await post({ RAIDType: 'RAID1', CapacityBytes: 21 * 1024 ** 3, Links: { Drives: [drive(0), drive(1)] } }))).toBe(
      'Base.1.11.PropertyValueOutOfRange',
    );
    expect(messageId(await post({ RAIDType: 'RAID7', Links: { Drives: [drive(0)] } }))).toBe('Base.1.11.PropertyValueNotInList');
    expect(messageId(await post({ RAIDType: 'RAID0', Links: { Drives: [{ '@odata.id': `${STORAGE}/Drives/Disk.Bay.7` }] } }))).toBe(
      'Base.1.11.ResourceMissingAtURI',
    );
    const ok = await post({ RAIDType: 'RAID1', Links: { Drives: [drive(0), drive(1)] }, Name: 'os' });
    expect(ok.status).toBe(201);
    expect(ok.headers.get('location')).toBe(`${STORAGE}/Volumes/${ok.body.Id}`);
    expect(ok.body).toMatchObject({ RAIDType: 'RAID1', CapacityBytes: 20 * 1024 ** 3, Name: 'os' });
    expect(messageId(await post({ RAIDType: 'RAID0', Links: { Drives: [drive(1)] } }))).toBe('Base.1.11.ResourceInUse');
    expect((await call(lab, 'DELETE', ok.headers.get('location')!)).status).toBe(204);
    expect((await call(lab, 'GET', `${STORAGE}/Volumes`)).body.Members).toEqual([]);
  });
});

describe('firmware updates', () => {
  it('refuses images that are not on a loopback address and unknown targets', async () => {
    const post = (body: unknown) => call(lab, 'POST', '/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate', undefined, body);
    expect((await post({ ImageURI: 'http://192.0.2.1/x.bin', Targets: [SYS] })).status).toBe(400);
    expect((await post({ ImageURI: 'http://127.0.0.1:9/x.bin', Targets: ['/redfish/v1/Systems/nope'] })).status).toBe(400);
    expect((await post({ ImageURI: 'http://127.0.0.1:9/x.bin' })).status).toBe(400);
    // A loopback URL nobody serves: accepted, and the task fails saying why.
    const started = await post({ ImageURI: 'http://127.0.0.1:9/x.bin', Targets: [SYS] });
    expect(started.status).toBe(202);
    const taskUri = started.headers.get('location')!;
    const task = await waitFor(
      async () => (await call(lab, 'GET', taskUri)).body,
      (t) => t.TaskState !== 'Running',
      { timeoutMs: 5_000, intervalMs: 20, what: 'the firmware task finished' },
    );
    expect(task).toMatchObject({ TaskState: 'Exception', TaskStatus: 'Critical' });
    expect(task.Messages[0].Message).toMatch(/The firmware update failed/);
    expect(lab.systems.get('node-0').firmwareVersions).toEqual({ BIOS: '1.0.0', BMC: '1.0.0' });
  });
});
