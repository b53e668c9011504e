/**
 * Bad BMCs (issue 6 "bad input"): an unreachable BMC, a wrong password, a BMC that never
 * answers, and loopback BMCs answering invalid JSON, an HTML page, JSON of the wrong shape or
 * an HTML error page. A power change requested through the API on each ends as Ironic's does
 * (`node_power_action`): 202, then `target_power_state` cleared, the reservation released and a
 * clear `last_error` — recorded in the node's history (ERROR, `power`) — never a stuck node, a
 * secret in a message or a dead conductor (a healthy node still powers on afterwards). A
 * `manage` on such a node fails verification back to `enroll` (history `verify`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bm,
  deadUrl,
  enroll,
  power,
  provision,
  redfishInfo,
  settled,
  startConductorEnv,
  waitNode,
  type ConductorEnv,
} from '../conductor/support.ts';
import { fixedReplyBmc, silentBmc, type BadBmc } from './bad-bmcs.ts';

let env: ConductorEnv;
const servers: BadBmc[] = [];

beforeAll(async () => {
  env = await startConductorEnv(2, { env: { ESI_POWER_SYNC_INTERVAL: '3600', ESI_BMC_TIMEOUT_S: '1', ESI_POWER_TIMEOUT: '3' } });
});
afterAll(async () => {
  await env?.close();
  await Promise.all(servers.map((s) => s.close()));
});

async function serve(p: Promise<BadBmc>): Promise<string> {
  const s = await p;
  servers.push(s);
  return s.url;
}

const SYSTEM = {
  '@odata.id': '/redfish/v1/Systems/x',
  Id: 'x',
  PowerState: 42,
  Actions: { '#ComputerSystem.Reset': { target: '/redfish/v1/Systems/x/Actions/ComputerSystem.Reset' } },
};

/** Each case: a name, where its BMC is, and what `last_error` must say. */
const CASES: Array<{ name: string; address: () => Promise<string>; password?: string; error: RegExp }> = [
  { name: 'unreachable', address: () => deadUrl(), error: /unreachable for power on of node .*ECONNREFUSED/ },
  {
    name: 'wrong-password',
    address: async () => env.lab.url,
    password: 'Wrong-Pw-Faults-1',
    error: /refused power on for node .*HTTP 401/,
  },
  { name: 'silent', address: () => serve(silentBmc()), error: /unreachable for power on of node .*no answer within 1 s/ },
  {
    name: 'invalid-json',
    address: () => serve(fixedReplyBmc(200, 'application/json', '{"PowerState": "On",')),
    error: /sent a body that is not a JSON object for power on/,
  },
  {
    name: 'html',
    address: () => serve(fixedReplyBmc(200, 'text/html', '<html><body>Login</body></html>')),
    error: /sent a body that is not a JSON object for power on/,
  },
  {
    name: 'json-array',
    address: () => serve(fixedReplyBmc(200, 'application/json', '[1, 2, 3]')),
    error: /sent a body that is not a JSON object for power on/,
  },
  {
    name: 'wrong-shape',
    address: () => serve(fixedReplyBmc(200, 'application/json', JSON.stringify(SYSTEM))),
    error: /sent an unknown PowerState 42 for power on/,
  },
  {
    name: 'html-500',
    address: () => serve(fixedReplyBmc(500, 'text/html', '<html><h1>Internal error</h1></html>')),
    error: /refused power on for node .*HTTP 500/,
  },
];

describe('power changes on bad BMCs', () => {
  for (const c of CASES) {
    it(`${c.name}: the node ends with last_error and history, not stuck`, async () => {
      const secret = `Secret-${c.name}-Pw-9`;
      const address = await c.address();
      const n = await enroll(env, {
        driver: 'redfish',
        name: `bad-${c.name}`,
        driver_info: redfishInfo(env.lab, 'node-0', {
          redfish_address: address,
          redfish_system_id: '/redfish/v1/Systems/x',
          redfish_password: c.password ?? secret,
        }),
      });
      await power(env, n.uuid, 'power on', env.p.lessee);
      const done = await settled(env, n.uuid, 20_000);
      expect(done).toMatchObject({ target_power_state: null, reservation: null, power_state: null });
      expect(done.last_error).toMatch(c.error);
      expect(done.last_error).not.toContain(c.password ?? secret);
      const h = await bm(env.ts, env.p.owner, 'GET', `/v1/nodes/${n.uuid}/history?detail=true`);
      expect(h.status, h.text).toBe(200);
      expect(h.body.history).toHaveLength(1);
      expect(h.body.history[0]).toMatchObject({ severity: 'ERROR', event_type: 'power', event: done.last_error });
      expect(h.text).not.toContain(c.password ?? secret);
      // The node takes requests again at once.
      await power(env, n.uuid, 'power off');
      await settled(env, n.uuid, 20_000);
    });
  }

  it('a manage (verify) on a bad BMC goes back to enroll with last_error and history', async () => {
    const n = await enroll(env, {
      driver: 'redfish',
      name: 'bad-verify',
      driver_info: redfishInfo(env.lab, 'node-0', { redfish_address: await serve(fixedReplyBmc(200, 'text/html', '<p>hi</p>')) }),
    });
    await provision(env, n.uuid, 'manage');
    const done = await waitNode(
      env,
      n.uuid,
      (x) => x.provision_state === 'enroll' && x.target_provision_state === null && x.last_error !== null && x.reservation === null,
      20_000,
    );
    const h = await bm(env.ts, env.p.admin, 'GET', `/v1/nodes/${n.uuid}/history/detail`);
    expect(h.body.history.at(-1)).toMatchObject({ severity: 'ERROR', event_type: 'verify', event: done.last_error });
  });

  it('the conductor still serves a healthy node afterwards', async () => {
    const n = await enroll(env, { driver: 'redfish', name: 'good-after', driver_info: redfishInfo(env.lab, 'node-1') });
    await power(env, n.uuid, 'power on');
    const done = await settled(env, n.uuid);
    expect(done).toMatchObject({ power_state: 'power on', last_error: null });
    expect(env.lab.systems.get('node-1').powerState).toBe('On');
  });
});
