/**
 * The deploy agent with the options the ramdisk's /init gives it from ironic-python-agent's
 * kernel parameters (src/ramdisk/init.sh → src/agent/main.ts), against a small HTTP server of
 * the test playing the baremetal API on 127.0.0.1: several comma-separated API URLs (the first
 * that answers is used), a pre-shared `ipa-agent-token` used when the lookup shows the token as
 * `******` (Ironic pre-generates it for virtual media boots), `ipa-global-request-id` sent as
 * `X-OpenStack-Request-ID`, `--advertise-host auto` (the address that routes to the API), and
 * inspection without a lab description (the machine's own /proc and /sys).
 */
import fs from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { runAgent } from '../../../src/agent/main.ts';
import { MIB, startHttp, tempDir } from '../agent/support.ts';
import { waitUntilTrue } from '../../helpers/wait-for.ts';

const NODE_UUID = '1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f';
const PRESHARED = 'pre-shared-token-0123456789abcdef0123456789';
const REQ = 'req-6f0e1d2c-3b4a-4958-8776-655443322110';

describe('the agent as the ramdisk starts it', () => {
  const t = tempDir('ramdisk-agent');
  afterAll(() => t.rm());

  it('takes the first API URL that answers, uses the pre-shared token, sends the request id, advertises its route to the API, posts the machine inventory', async () => {
    const api = await startHttp((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      const json = (status: number, body: unknown) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (url.pathname === '/baremetal/') return json(200, { default_version: { id: 'v1', version: '1.82' } });
      if (url.pathname === '/baremetal/v1/continue_inspection') return json(202, { uuid: NODE_UUID });
      if (url.pathname === '/baremetal/v1/lookup')
        return json(200, { node: { uuid: NODE_UUID, properties: {} }, config: { agent_token: '******', heartbeat_timeout: 300 } });
      if (url.pathname === `/baremetal/v1/heartbeat/${NODE_UUID}`) return res.writeHead(202).end();
      return res.writeHead(404).end();
    });
    // Port 1 on 127.0.0.1 refuses connections: the second URL is the one that answers.
    const agent = await runAgent({
      apiUrl: `http://127.0.0.1:1/baremetal,${api.url}/baremetal`,
      macs: ['52:54:00:00:00:0a'],
      diskPath: t.file('disk.img'),
      diskSizeBytes: 8 * MIB,
      listenHost: '127.0.0.1',
      listenPort: 0,
      advertiseHost: 'auto',
      consoleLog: t.file('console.log'),
      heartbeatIntervalS: 0.1,
      inspectionCallbackUrl: `${api.url}/baremetal/v1/continue_inspection`,
      agentToken: PRESHARED,
      globalRequestId: REQ,
    });
    try {
      await waitUntilTrue(() => api.requests.some((r) => r.url.includes('/heartbeat/')), { timeoutMs: 20_000, what: 'a heartbeat' });
      // The route to 127.0.0.1 is from 127.0.0.1.
      expect(agent.callbackUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const beat = api.requests.find((r) => r.url.includes('/heartbeat/'))!;
      expect(JSON.parse(beat.body.toString())).toMatchObject({ callback_url: agent.callbackUrl, agent_token: PRESHARED });
      for (const r of api.requests.filter((x) => !x.url.includes('continue_inspection')))
        expect(r.headers['x-openstack-request-id'], r.url).toBe(REQ);
      // Inspection from this machine's /proc and /sys: at least its CPU count and memory.
      const posted = JSON.parse(api.requests.find((r) => r.url.includes('continue_inspection'))!.body.toString()) as Record<string, any>;
      expect(posted.inventory.cpu.count).toBeGreaterThan(0);
      expect(posted.inventory.memory.total).toBeGreaterThan(0);
      const text = fs.readFileSync(t.file('console.log'), 'utf8');
      expect(text).toContain(`API ${api.url}/baremetal answers; using it`);
      expect(text).toContain('lookup: the API shows the agent token as issued; using the pre-shared token');
      expect(text).not.toContain(PRESHARED);
    } finally {
      await agent.stop('test over');
      await api.close();
    }
  });
});
