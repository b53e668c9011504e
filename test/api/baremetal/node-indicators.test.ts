/**
 * Node indicators (LEDs) and NMI (`GET|PUT /v1/nodes/{node}/management/indicators[/{name}]`,
 * `PUT …/management/inject_nmi`), as Ironic 21.4: the fake-hardware driver (Ironic's fake
 * indicators, no set, no NMI) and a redfish node on a lab BMC (the System's `IndicatorLED`,
 * `ComputerSystem.Reset` with `Nmi`), for every persona; and an ipmi node on openipmi's
 * `ipmi_sim` (no indicators; NMI is `ipmitool power diag`, which ipmi_sim refuses).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLab, type Lab } from '../../../src/lab/index.ts';
import { createPersonas, startTestServer, type Personas, type TestServer } from '../../helpers/harness.ts';
import { ipmiSims } from '../../helpers/ipmi-sim.ts';
import { describeNeeding, IPMI_TOOLS } from '../../helpers/tools.ts';
import { bm, createNode, expectError, forceNode } from './helpers.ts';

let ts: TestServer;
let p: Personas;
let lab: Lab;
let fake: any;
let rf: any;
let sysUuid: string;

beforeAll(async () => {
  lab = await startLab({ nodes: 1, port: 0 });
  // No conductor: nothing else takes the node's lock meanwhile.
  ts = await startTestServer({ env: { ESI_CONDUCTOR_WORKERS: '0' } });
  p = await createPersonas(ts);
  fake = await createNode(ts, p, { name: 'leds' });
  rf = await createNode(ts, p, {
    name: 'leds-rf',
    driver: 'redfish',
    driver_info: {
      redfish_address: lab.url,
      redfish_system_id: '/redfish/v1/Systems/node-0',
      redfish_username: 'admin',
      redfish_password: 'password',
    },
  });
  sysUuid = lab.systems.get('node-0').uuid;
});
afterAll(async () => {
  await ts?.close();
  await lab?.close();
});

describe('fake-hardware indicators', () => {
  it("lists Ironic's fake indicators with links for admin, owner and lessee; others 404/401", async () => {
    const url = `/v1/nodes/${fake.uuid}/management/indicators`;
    for (const who of [p.admin, p.owner, p.lessee]) {
      const r = await bm(ts, who, 'GET', url);
      expect(r.status, r.text).toBe(200);
      expect(r.body.indicators.map((i: any) => [i.name, i.component, i.readonly, i.states])).toEqual([
        ['led-0@chassis', 'chassis', true, ['off', 'on']],
        ['led@system', 'system', false, ['blinking', 'off', 'on']],
      ]);
      expect(r.body.indicators[0].links).toEqual([
        { href: `${ts.url}/baremetal/v1/nodes/${fake.uuid}/management/indicators/led-0@chassis`, rel: 'self' },
        { href: `${ts.url}/baremetal/nodes/${fake.uuid}/management/indicators/led-0@chassis`, rel: 'bookmark' },
      ]);
    }
    // Links name the node as the request did (Ironic).
    const byName = await bm(ts, p.admin, 'GET', `/v1/nodes/leds/management/indicators`);
    expect(byName.body.indicators[1].links[0].href).toMatch(/\/v1\/nodes\/leds\/management\/indicators\/led@system$/);
    // Ironic 21.4 does not gate the indicator routes on 1.63.
    expect((await bm(ts, p.admin, 'GET', url, undefined, '1.62')).status).toBe(200);
    expectError(await bm(ts, p.other, 'GET', url), 404);
    expectError(await bm(ts, p.anonymous, 'GET', url), 401);
  });

  it('reads one indicator; bad names are 400 as Ironic', async () => {
    const url = `/v1/nodes/${fake.uuid}/management/indicators`;
    for (const who of [p.admin, p.owner, p.lessee]) {
      expect((await bm(ts, who, 'GET', `${url}/led@system`)).body).toEqual({ state: 'on' });
    }
    expectError(await bm(ts, p.other, 'GET', `${url}/led@system`), 404);
    expectError(await bm(ts, p.anonymous, 'GET', `${url}/led@system`), 401);
    expectError(await bm(ts, p.admin, 'GET', `${url}/led`), 400, /Malformed indicator name "led"/);
    expectError(await bm(ts, p.admin, 'GET', `${url}/led@moon`), 400, /Invalid component moon specified/);
    expectError(await bm(ts, p.admin, 'GET', `${url}/nope@system`), 400, /Invalid indicator nope specified/);
    expectError(await bm(ts, p.admin, 'GET', `/v1/nodes/absent/management/indicators/led@system`), 404);
  });

  it('cannot set an indicator nor inject an NMI (UnsupportedDriverExtension, 400)', async () => {
    const url = `/v1/nodes/${fake.uuid}/management`;
    expectError(
      await bm(ts, p.admin, 'PUT', `${url}/indicators/led@system`, { state: 'blinking' }),
      400,
      /Driver fake-hardware does not support set_indicator_state \(disabled or not implemented\)/,
    );
    expectError(await bm(ts, p.owner, 'PUT', `${url}/indicators/led@system`, { state: 'off' }), 400, /set_indicator_state/);
    expectError(await bm(ts, p.lessee, 'PUT', `${url}/indicators/led@system`, { state: 'off' }), 403);
    expectError(await bm(ts, p.other, 'PUT', `${url}/indicators/led@system`, { state: 'off' }), 404);
    expectError(await bm(ts, p.anonymous, 'PUT', `${url}/indicators/led@system`, { state: 'off' }), 401);
    expectError(await bm(ts, p.admin, 'PUT', `${url}/inject_nmi`, {}), 400, /Driver fake-hardware does not support inject_nmi/);
    expectError(await bm(ts, p.owner, 'PUT', `${url}/inject_nmi`), 400, /inject_nmi/);
    expectError(await bm(ts, p.lessee, 'PUT', `${url}/inject_nmi`), 403);
    expectError(await bm(ts, p.other, 'PUT', `${url}/inject_nmi`), 404);
    expectError(await bm(ts, p.anonymous, 'PUT', `${url}/inject_nmi`), 401);
    expectError(await bm(ts, p.admin, 'PUT', `${url}/inject_nmi`, {}, '1.28'), 404, /Resource could not be found/);
  });
});

describe('redfish indicators and NMI on a lab BMC', () => {
  it("lists the System's IndicatorLED, named by its UUID, and reads and sets it", async () => {
    const url = `/v1/nodes/${rf.uuid}/management/indicators`;
    const list = await bm(ts, p.lessee, 'GET', url);
    expect(list.status, list.text).toBe(200);
    const name = `${sysUuid}@system`;
    // Ironic's order: the Chassis (the lab's one, with the system's UUID) first, then the System.
    expect(list.body.indicators.map((i: any) => [i.name, i.component, i.readonly, i.states])).toEqual([
      [`${sysUuid}@chassis`, 'chassis', false, ['blinking', 'off', 'on']],
      [name, 'system', false, ['blinking', 'off', 'on']],
    ]);
    const before = lab.systems.get('node-0').indicatorLed;
    expect((await bm(ts, p.lessee, 'GET', `${url}/${name}`)).body).toEqual({ state: before === 'Lit' ? 'on' : before.toLowerCase() });

    const set = await bm(ts, p.owner, 'PUT', `${url}/${name}`, { state: 'BLINKING' });
    expect(set.status, set.text).toBe(204);
    expect(set.text).toBe('');
    expect(lab.systems.get('node-0').indicatorLed).toBe('Blinking');
    expect((await bm(ts, p.admin, 'GET', `${url}/${name}`)).body).toEqual({ state: 'blinking' });
    expect((await bm(ts, p.admin, 'PUT', `${url}/${name}`, { state: 'on' })).status).toBe(204);
    expect(lab.systems.get('node-0').indicatorLed).toBe('Lit');
    // The chassis LED is PATCHed on the Chassis (the lab shows one LED on both).
    expect((await bm(ts, p.owner, 'PUT', `${url}/${sysUuid}@chassis`, { state: 'off' })).status).toBe(204);
    expect(lab.systems.get('node-0').indicatorLed).toBe('Off');
    expect((await bm(ts, p.lessee, 'GET', `${url}/${sysUuid}@chassis`)).body).toEqual({ state: 'off' });
    expect((await bm(ts, p.admin, 'PUT', `${url}/${name}`, { state: 'on' })).status).toBe(204);

    expectError(await bm(ts, p.lessee, 'PUT', `${url}/${name}`, { state: 'off' }), 403);
    expectError(await bm(ts, p.other, 'PUT', `${url}/${name}`, { state: 'off' }), 404);
    expectError(await bm(ts, p.anonymous, 'PUT', `${url}/${name}`, { state: 'off' }), 401);
    expect(lab.systems.get('node-0').indicatorLed).toBe('Lit');
  });

  it('refuses bad input with 400', async () => {
    const url = `/v1/nodes/${rf.uuid}/management/indicators`;
    const name = `${sysUuid}@system`;
    expectError(await bm(ts, p.admin, 'PUT', `${url}/${name}`, { state: 'disco' }), 400, /Invalid indicator state disco/);
    expectError(await bm(ts, p.admin, 'PUT', `${url}/${name}`, { state: 'unknown' }), 400, /cannot be unknown/);
    expectError(await bm(ts, p.admin, 'PUT', `${url}/${name}`, {}), 400, /"state" is a required property/);
    expectError(await bm(ts, p.admin, 'PUT', `${url}/${name}`, { state: 1 }), 400);
    expectError(await bm(ts, p.admin, 'PUT', `${url}/${name}`, { state: 'on', colour: 'red' }), 400, /unexpected field/);
    expectError(await bm(ts, p.admin, 'PUT', `${url}/nope@system`, { state: 'on' }), 400, /Unknown indicator nope for component system/);
    expectError(await bm(ts, p.admin, 'GET', `${url}/nope@disk`), 400, /Unknown indicator nope for component disk/);
    expectError(await bm(ts, p.admin, 'PUT', `${url}/nope`, { state: 'on' }), 400, /Malformed indicator name/);
    expectError(await bm(ts, p.admin, 'PUT', `/v1/nodes/${rf.uuid}/management/inject_nmi`, { why: 1 }), 400, /unexpected field/);
  });

  it('injects an NMI (ComputerSystem.Reset Nmi): admin and owner; lessee 403; others 404/401; 409 while locked', async () => {
    const url = `/v1/nodes/${rf.uuid}/management/inject_nmi`;
    const power = lab.systems.powerState('node-0');
    for (const who of [p.admin, p.owner]) {
      const r = await bm(ts, who, 'PUT', url, {});
      expect(r.status, r.text).toBe(204);
      expect(r.text).toBe('');
    }
    expect(lab.systems.powerState('node-0')).toBe(power);
    expectError(await bm(ts, p.lessee, 'PUT', url), 403);
    expectError(await bm(ts, p.other, 'PUT', url), 404);
    expectError(await bm(ts, p.anonymous, 'PUT', url), 401);
    await forceNode(ts, rf.uuid, { reservation: 'conductor-x' });
    try {
      expectError(await bm(ts, p.admin, 'PUT', url), 409);
      expectError(await bm(ts, p.admin, 'PUT', `/v1/nodes/${rf.uuid}/management/indicators/${sysUuid}@system`, { state: 'off' }), 409);
      expect((await bm(ts, p.admin, 'GET', `/v1/nodes/${rf.uuid}/management/indicators`)).status).toBe(200);
    } finally {
      await forceNode(ts, rf.uuid, { reservation: null });
    }
  });
});

describeNeeding(IPMI_TOOLS, 'ipmi indicators and NMI', () => {
  const sims = ipmiSims();
  let node: any;
  beforeAll(async () => {
    const [b] = await sims.start(1, { password: 'Nmi-Pw-123' });
    node = await createNode(ts, p, { name: 'leds-ipmi', driver: 'ipmi', driver_info: { ...b!.driverInfo } });
  }, 60_000);
  afterAll(async () => sims.stop());

  it('has no indicators (UnsupportedDriverExtension, 400)', async () => {
    const url = `/v1/nodes/${node.uuid}/management/indicators`;
    expectError(await bm(ts, p.owner, 'GET', url), 400, /Driver ipmi does not support get_supported_indicators/);
    expectError(await bm(ts, p.lessee, 'GET', `${url}/x@system`), 400, /Driver ipmi does not support get_indicator_state/);
    expectError(await bm(ts, p.admin, 'PUT', `${url}/x@system`, { state: 'on' }), 400, /Driver ipmi does not support set_indicator_state/);
  });

  it("sends `power diag` for an NMI; the simulator's refusal is a 500 without the password", async () => {
    const r = await bm(ts, p.owner, 'PUT', `/v1/nodes/${node.uuid}/management/inject_nmi`);
    expectError(r, 500, /diag/i);
    expect(r.text).not.toContain('Nmi-Pw-123');
    expectError(await bm(ts, p.lessee, 'PUT', `/v1/nodes/${node.uuid}/management/inject_nmi`), 403);
  });
});
