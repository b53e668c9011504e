/**
 * The ramdisk endpoints (https://docs.openstack.org/api-ref/baremetal/#utility) through a real server and a lab node that
 * the conductor boots into the agent for cleaning (`clean wait`): lookup by MAC and by UUID,
 * the one-shot agent token, heartbeat rules, the same answers whoever calls (the endpoints are
 * public: a Keystone token changes nothing), and bad input in Ironic's error format.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bm, expectError, getNode, startConductorEnv, waitNode, type ConductorEnv } from '../conductor/support.ts';
import { agentNode, AGENT_VERSION } from './support.ts';

/** Lab systems: one fresh node per test (a lookup or heartbeat changes the node for good). */
const SYSTEMS = 6;

describe('ramdisk endpoints: lookup and heartbeat', () => {
  let env: ConductorEnv;
  let used = 0;
  let system: string;
  let node: any;
  let mac: string;

  beforeAll(async () => {
    env = await startConductorEnv(SYSTEMS);
  });
  afterAll(async () => {
    await env?.close();
  });
  // Each test gets a node of its own, never looked up, that waits for its agent in `clean wait`.
  beforeEach(async () => {
    expect(used, 'more tests than lab systems').toBeLessThan(SYSTEMS);
    system = `node-${used++}`;
    ({ node, mac } = await agentNode(env, system));
    await waitNode(env, node.uuid, (n) => n.provision_state === 'clean wait' && n.reservation === null);
  });

  /** The agent's lookup by MAC: the one-shot agent token. */
  async function agentToken(): Promise<string> {
    const look = await bm(env.ts, null, 'GET', `/v1/lookup?addresses=${mac}`, undefined, AGENT_VERSION);
    expect(look.status, look.text).toBe(200);
    const token = look.body.config.agent_token;
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    return token;
  }

  it('the conductor booted the agent from virtual media for cleaning and waits for it', async () => {
    const n = await getNode(env, node.uuid);
    expect(n.driver_internal_info.agent_boot).toBe('clean');
    const sys = env.lab.systems.get(system);
    expect(sys.powerState).toBe('On');
    expect(sys.lastBootOverride).toBe('Cd');
  });

  it('lookup finds the node by MAC for every caller; the token is shown on the first lookup only', async () => {
    const first = await bm(env.ts, env.p.anonymous, 'GET', `/v1/lookup?addresses=${mac},zz:zz`, undefined, AGENT_VERSION);
    expect(first.status, first.text).toBe(200);
    expect(first.body.node.uuid).toBe(node.uuid);
    expect(first.body.node.links[0].href).toContain(`/baremetal/v1/nodes/${node.uuid}`);
    expect(first.body.config.agent_token_required).toBe(true);
    expect(first.body.config.heartbeat_timeout).toBe(300);
    const token = first.body.config.agent_token;
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(first.body.node.driver_internal_info.agent_secret_token).toBe('******');
    for (const who of [env.p.admin, env.p.owner, env.p.lessee, env.p.other, env.p.anonymous]) {
      const again = await bm(env.ts, who, 'GET', `/v1/lookup?node_uuid=${node.uuid}`, undefined, AGENT_VERSION);
      expect(again.status, `${who.name}: ${again.text}`).toBe(200);
      expect(again.body.config.agent_token).toBe('******');
      expect(again.text).not.toContain(token);
    }
    // The API never shows the token or its sealed copy.
    const shown = await getNode(env, node.uuid);
    expect(JSON.stringify(shown)).not.toContain(token);
    expect(shown.driver_internal_info.agent_secret_token).toBe('******');
    expect(shown.driver_internal_info.agent_token_sealed).toBe('******');
  });

  it('lookup refuses bad input (400), finds nothing for unknown MACs or nodes outside the lookup states (404)', async () => {
    expectError(await bm(env.ts, null, 'GET', '/v1/lookup', undefined, AGENT_VERSION), 400, /addresses|node_uuid/);
    expectError(await bm(env.ts, null, 'GET', '/v1/lookup?addresses=not-a-mac', undefined, AGENT_VERSION), 400);
    expectError(await bm(env.ts, null, 'GET', '/v1/lookup?node_uuid=nope', undefined, AGENT_VERSION), 400, /UUID/);
    expectError(
      await bm(env.ts, null, 'GET', '/v1/lookup?addresses=00:11:22:33:44:55&bogus=1', undefined, AGENT_VERSION),
      400,
      /Unexpected/,
    );
    expectError(await bm(env.ts, null, 'GET', '/v1/lookup?addresses=00:11:22:33:44:55', undefined, AGENT_VERSION), 404);
    expectError(await bm(env.ts, null, 'GET', `/v1/lookup?addresses=${mac}`, undefined, '1.21'), 404);
    const idle = await bm(env.ts, env.p.admin, 'POST', '/v1/nodes', { driver: 'fake-hardware', name: 'idle' });
    expectError(await bm(env.ts, null, 'GET', `/v1/lookup?node_uuid=${idle.body.uuid}`, undefined, AGENT_VERSION), 404);
  });

  it('heartbeat: token required, wrong token refused, bad URL refused, unknown node 404 — for every caller', async () => {
    const token = await agentToken();
    for (const who of [env.p.admin, env.p.owner, env.p.lessee, env.p.other, env.p.anonymous]) {
      const hb = (body: unknown, ident = node.uuid) => bm(env.ts, who, 'POST', `/v1/heartbeat/${ident}`, body, AGENT_VERSION);
      expectError(await hb({ callback_url: 'http://127.0.0.1:9' }), 400, /token/i);
      expectError(await hb({ callback_url: 'http://127.0.0.1:9', agent_token: 'wrong' }), 400, /token/i);
      expectError(await hb({ callback_url: 'ftp://x', agent_token: token }), 400, /callback_url/);
      expectError(await hb({ callback_url: 'http://u:p@127.0.0.1:9', agent_token: token }), 400, /callback_url/);
      expectError(await hb({ callback_url: 'http://127.0.0.1:9', agent_token: token, surprise: 1 }), 400, /surprise/);
      expectError(await hb('[1,2]'), 400);
      expectError(await hb({ callback_url: 'http://127.0.0.1:9', agent_token: token }, '00000000-0000-0000-0000-000000000000'), 404);
    }
    const n = await getNode(env, node.uuid);
    expect(n.provision_state).toBe('clean wait');
    expect(n.driver_internal_info.agent_url).toBeUndefined();
  });

  it('a good heartbeat records the agent and resumes cleaning; an agent that does not answer fails it', async () => {
    const token = await agentToken();
    // Nothing listens on port 9: the conductor cannot reach the "agent".
    const ok = await bm(
      env.ts,
      null,
      'POST',
      `/v1/heartbeat/${node.uuid}`,
      { callback_url: 'http://127.0.0.1:9', agent_token: token, agent_version: '9.4.1' },
      AGENT_VERSION,
    );
    expect(ok.status, ok.text).toBe(202);
    expect(ok.text).toBe('');
    const failed = await waitNode(env, node.uuid, (n) => n.provision_state === 'clean failed');
    expect(failed.last_error).toMatch(/clean\.get_clean_steps.*could not be reached/);
    expect(failed.maintenance).toBe(true);
    expect(failed.fault).toBe('clean failure');
    expect(failed.power_state).toBe('power off');
    expect(failed.driver_internal_info.agent_url).toBeUndefined();
    expect(env.lab.systems.powerState(system)).toBe('Off');
  });

  it('a callback_url different from the recorded agent URL is refused', async () => {
    // An "agent" that holds the conductor's first command until released: the node stays in
    // `cleaning` with its agent URL recorded meanwhile.
    let release: () => void = () => {};
    const held = new Promise<void>((r) => (release = r));
    const slow = http.createServer((_req, res) => void held.then(() => res.writeHead(500).end('{"faultstring":"released"}')));
    await new Promise<void>((r) => slow.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(slow.address() as AddressInfo).port}`;
    try {
      const t = await agentToken();
      const first = await bm(env.ts, null, 'POST', `/v1/heartbeat/${node.uuid}`, { callback_url: url, agent_token: t }, AGENT_VERSION);
      expect(first.status, first.text).toBe(202);
      await waitNode(env, node.uuid, (n) => n.provision_state === 'cleaning' && n.reservation !== null);
      const same = await bm(env.ts, null, 'POST', `/v1/heartbeat/${node.uuid}`, { callback_url: url, agent_token: t }, AGENT_VERSION);
      expect(same.status, same.text).toBe(202);
      expectError(
        await bm(
          env.ts,
          null,
          'POST',
          `/v1/heartbeat/${node.uuid}`,
          { callback_url: 'http://127.0.0.1:10', agent_token: t },
          AGENT_VERSION,
        ),
        400,
        /differs/,
      );
      release();
      const failed = await waitNode(env, node.uuid, (n) => n.provision_state === 'clean failed');
      expect(failed.last_error).toMatch(/HTTP 500: released/);
    } finally {
      release();
      await new Promise((r) => slow.close(r));
    }
  });
});
