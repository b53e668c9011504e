/**
 * The deploy agent's life (src/agent/main.ts `runAgent`) against a small HTTP server of the
 * test that plays Ironic's ramdisk API on 127.0.0.1 (https://docs.openstack.org/api-ref/baremetal/#utility): the
 * microversion read from `GET /`, lookups retried until one answers with an agent token,
 * heartbeats with the callback URL, the token and the agent version at the right microversion,
 * the command API guarded by that token, and the agent stopping on `stop()` or `standby.power_off`.
 */
import fs from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { runAgent } from '../../../src/agent/main.ts';
import { AGENT_VERSION } from '../../../src/agent/server.ts';
import { MIB, startHttp, tempDir, type TestHttp } from './support.ts';
import { waitUntilTrue } from '../../helpers/wait-for.ts';

const NODE_UUID = '5d0b5d47-6a8f-4f6a-9d7e-0e9a2f1f7a11';
const TOKEN = 'one-time-agent-token-abcdef';

/** Wait until `cond()` holds (polling every 20 ms), failing after `ms`. */
async function until(cond: () => boolean, ms = 5000): Promise<void> {
  await waitUntilTrue(cond, { timeoutMs: ms, intervalMs: 20 });
}

/**
 * A ramdisk API: `GET /baremetal/` answers `rootVersion` (or 500 when null); lookups answer in
 * turn from `lookups` (the last one repeats); heartbeats answer `heartbeatStatus`.
 */
function ramdiskApi(o: {
  rootVersion: string | null;
  lookups: Array<'404' | 'masked' | 'token'>;
  heartbeatStatus: number;
}): Promise<TestHttp> {
  let n = 0;
  return startHttp((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (req.method === 'GET' && url.pathname === '/baremetal/') {
      if (o.rootVersion === null) return res.writeHead(500).end('oops');
      return res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ default_version: { id: 'v1', version: o.rootVersion } }));
    }
    if (req.method === 'GET' && url.pathname === '/baremetal/v1/lookup') {
      const what = o.lookups[Math.min(n++, o.lookups.length - 1)]!;
      if (what === '404')
        return res
          .writeHead(404, { 'content-type': 'application/json' })
          .end('{"error_message": "{\\"faultstring\\": \\"Node not found\\"}"}');
      const token = what === 'token' ? TOKEN : '******';
      return res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(
          JSON.stringify({ node: { uuid: NODE_UUID, name: 'n1', properties: {} }, config: { agent_token: token, heartbeat_timeout: 300 } }),
        );
    }
    if (req.method === 'POST' && url.pathname === `/baremetal/v1/heartbeat/${NODE_UUID}`) {
      if (o.heartbeatStatus === 202) return res.writeHead(202).end();
      return res
        .writeHead(o.heartbeatStatus, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error_message: JSON.stringify({ faultstring: 'Unknown agent token' }) }));
    }
    return res.writeHead(404).end();
  });
}

describe('runAgent', () => {
  const t = tempDir('main');
  afterAll(() => t.rm());

  it('looks itself up until the API knows it, heartbeats with its callback URL and token, and serves commands with that token', async () => {
    const api = await ramdiskApi({ rootVersion: '1.82', lookups: ['404', 'token'], heartbeatStatus: 202 });
    const disk = t.file('disk1.img');
    const log = t.file('console1.log');
    const agent = await runAgent({
      apiUrl: `${api.url}/baremetal/`,
      macs: ['52:54:00:00:00:01', '52:54:00:00:00:02'],
      nodeUuid: NODE_UUID,
      diskPath: disk,
      diskSizeBytes: 8 * MIB,
      listenHost: '127.0.0.1',
      listenPort: 0,
      consoleLog: log,
      heartbeatIntervalS: 0.1,
    });
    try {
      // The disk is created sparse at the requested size.
      expect(fs.statSync(disk).size).toBe(8 * MIB);
      expect(agent.callbackUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      await until(() => api.requests.filter((r) => r.url.includes('/heartbeat/')).length >= 2);
      const lookups = api.requests.filter((r) => r.url.startsWith('/baremetal/v1/lookup'));
      expect(lookups).toHaveLength(2);
      const q = new URL(lookups[0]!.url, 'http://x').searchParams;
      expect(q.get('addresses')).toBe('52:54:00:00:00:01,52:54:00:00:00:02');
      expect(q.get('node_uuid')).toBe(NODE_UUID);
      // min(server max 1.82, 1.62) for the lookup, min(1.82, 1.68) for heartbeats.
      expect(lookups.every((r) => r.headers['x-openstack-ironic-api-version'] === '1.62')).toBe(true);
      const beats = api.requests.filter((r) => r.url.includes('/heartbeat/'));
      expect(beats[0]!.method).toBe('POST');
      expect(beats[0]!.headers['x-openstack-ironic-api-version']).toBe('1.68');
      expect(JSON.parse(beats[0]!.body.toString())).toEqual({
        callback_url: agent.callbackUrl,
        agent_token: TOKEN,
        agent_version: AGENT_VERSION,
      });
      // Lookups start only after GET / was read.
      expect(api.requests[0]!.url).toBe('/baremetal/');

      // The command API takes the token of the lookup, and only it.
      const cmd = (token: string) =>
        fetch(`${agent.callbackUrl}/v1/commands/?wait=true&agent_token=${token}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ name: 'clean.get_clean_steps', params: {} }),
        });
      expect((await cmd('wrong')).status).toBe(401);
      const ok = await cmd(TOKEN);
      expect(ok.status).toBe(200);
      const body = (await ok.json()) as any;
      expect(body.command_status).toBe('SUCCEEDED');
      expect(body.command_result.clean_steps.GenericHardwareManager.map((s: any) => s.step)).toEqual([
        'erase_devices_metadata',
        'erase_devices',
      ]);

      const text = fs.readFileSync(log, 'utf8');
      expect(text).toMatch(/lookup: HTTP 404; retrying/);
      expect(text).toMatch(new RegExp(`looked up as node ${NODE_UUID}`));
      expect(text).toMatch(/command clean\.get_clean_steps succeeded/);
      expect(text).not.toContain(TOKEN);
    } finally {
      await agent.stop('test over');
      await api.close();
    }
    expect(await agent.stopped).toBe('test over');
    // Stopped: no command API, no more heartbeats.
    await expect(fetch(`${agent.callbackUrl}/v1/status`)).rejects.toThrow();
    const count = api.requests.length;
    await new Promise((r) => setTimeout(r, 250));
    expect(api.requests.length).toBe(count);
  });

  it('without a server version assumes 1.31, skips lookups without a usable token, logs refused heartbeats, and powers off on command', async () => {
    const api = await ramdiskApi({ rootVersion: null, lookups: ['masked', 'token'], heartbeatStatus: 400 });
    const log = t.file('console2.log');
    const disk = t.file('disk2.img');
    fs.writeFileSync(disk, Buffer.alloc(MIB));
    const agent = await runAgent({
      apiUrl: `${api.url}/baremetal`,
      macs: ['52:54:00:00:00:03'],
      diskPath: disk,
      listenHost: '0.0.0.0',
      listenPort: 0,
      consoleLog: log,
      heartbeatIntervalS: 0.1,
    });
    try {
      // A wildcard listen address is advertised as loopback; an existing disk keeps its size.
      expect(agent.callbackUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(fs.statSync(disk).size).toBe(MIB);
      await until(() => api.requests.filter((r) => r.url.includes('/heartbeat/')).length >= 2);
      expect(
        api.requests.filter((r) => r.url.startsWith('/baremetal/v1/')).every((r) => r.headers['x-openstack-ironic-api-version'] === '1.31'),
      ).toBe(true);
      expect(new URL(api.requests.find((r) => r.url.includes('/lookup'))!.url, 'http://x').searchParams.has('node_uuid')).toBe(false);
      const text = fs.readFileSync(log, 'utf8');
      expect(text).toMatch(/lookup: HTTP 200 without a usable agent token; retrying/);
      expect(text).toMatch(/heartbeat refused: HTTP 400 Unknown agent token/);
      const off = await fetch(`${agent.callbackUrl}/v1/commands/?agent_token=${TOKEN}&wait=true`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'standby.power_off', params: {} }),
      });
      expect(((await off.json()) as any).command_status).toBe('SUCCEEDED');
      expect(await agent.stopped).toBe('powering off');
      expect(fs.readFileSync(log, 'utf8')).toMatch(/agent powering off/);
    } finally {
      await agent.stop();
      await api.close();
    }
  });

  it('refuses to start without a MAC or node UUID, or without a disk and a size', async () => {
    const base = { apiUrl: 'http://127.0.0.1:1/baremetal', diskPath: t.file('nodisk.img'), listenHost: '127.0.0.1', listenPort: 0 };
    await expect(runAgent({ ...base, macs: [] })).rejects.toThrow(/at least one --mac or --node-uuid/);
    await expect(runAgent({ ...base, macs: ['52:54:00:00:00:09'] })).rejects.toThrow(/does not exist and no --disk-size-gb was given/);
  });
});
