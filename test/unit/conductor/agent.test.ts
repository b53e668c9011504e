/**
 * The conductor's agent flows in isolation: which nodes use the agent, the steps of a cleaning,
 * the agent token and image temp URLs, heartbeat URL checks, and the deploy stage against a
 * real HTTP peer speaking the agent's command API (fake-hardware node: no BMC needed).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentCleanSteps, isAgentCleanStep } from '../../../src/conductor/agent/clean-flow.ts';
import { AgentClient, describeCommandError } from '../../../src/conductor/agent/client.ts';
import { runAgentDeploy } from '../../../src/conductor/agent/deploy-flow.ts';
import { agentBootDevice, defaultAgentClient, usesAgent, type AgentEnv } from '../../../src/conductor/agent/env.ts';
import { ServiceImageInfo } from '../../../src/conductor/agent/image-info.ts';
import { agentTokenMatches, hashAgentToken, newAgentToken } from '../../../src/domain/deploy/agent-token.ts';
import { callbackUrl } from '../../../src/domain/deploy/ramdisk.ts';
import { ImageTempUrls, signImageTempUrl, verifyImageTempUrl } from '../../../src/domain/deploy/temp-url.ts';
import type { ConductorChanges } from '../../../src/domain/inventory/ports.ts';
import { makeEnv, makeNode } from './fixtures.ts';

describe('agent selection and steps', () => {
  it('uses the agent only for direct deploys with an agent ramdisk; boots it from cdrom unless network boot with a ramdisk', () => {
    expect(usesAgent(makeNode({ deploy_interface: 'direct', driver_info: { deploy_iso: 'x' } }))).toBe(true);
    expect(usesAgent(makeNode({ deploy_interface: 'direct', driver_info: { deploy_kernel: 'k', deploy_ramdisk: 'x' } }))).toBe(true);
    expect(usesAgent(makeNode({ deploy_interface: 'direct', driver_info: { deploy_ramdisk: 'x' } }))).toBe(false);
    expect(usesAgent(makeNode({ deploy_interface: 'direct', driver_info: {} }))).toBe(false);
    expect(usesAgent(makeNode({ deploy_interface: 'fake', driver_info: { deploy_iso: 'x' } }))).toBe(false);
    expect(agentBootDevice(makeNode({ boot_interface: 'pxe', driver_info: { deploy_ramdisk: 'r' } }))).toBe('pxe');
    expect(agentBootDevice(makeNode({ boot_interface: 'pxe', driver_info: { deploy_iso: 'i' } }))).toBe('cdrom');
    expect(agentBootDevice(makeNode({ boot_interface: 'redfish-virtual-media', driver_info: { deploy_ramdisk: 'r' } }))).toBe('cdrom');
  });

  it('automated cleaning erases metadata, and the whole disk when driver_info asks; manual steps as requested', () => {
    expect(agentCleanSteps(makeNode(), null).map((s) => s.step)).toEqual(['erase_devices_metadata']);
    expect(agentCleanSteps(makeNode({ driver_info: { agent_erase_devices: true } }), null).map((s) => s.step)).toEqual([
      'erase_devices_metadata',
      'erase_devices',
    ]);
    expect(agentCleanSteps(makeNode(), [{ interface: 'deploy', step: 'erase_devices' }])).toEqual([
      { interface: 'deploy', step: 'erase_devices' },
    ]);
    // The owner's lease policy asks for a full erase: automated cleaning only.
    expect(agentCleanSteps(makeNode(), null, true).map((s) => s.step)).toEqual(['erase_devices_metadata', 'erase_devices']);
    expect(agentCleanSteps(makeNode(), [{ interface: 'deploy', step: 'erase_devices_metadata' }], true).map((s) => s.step)).toEqual([
      'erase_devices_metadata',
    ]);
    expect(isAgentCleanStep({ interface: 'deploy', step: 'erase_devices' })).toBe(true);
    expect(isAgentCleanStep({ interface: 'deploy', step: 'toString' })).toBe(false);
    expect(isAgentCleanStep({ interface: 'bios', step: 'erase_devices' })).toBe(false);
  });

  it('describes agent command errors of every shape', () => {
    expect(describeCommandError({ type: 'ImageChecksumError', message: 'bad sum', details: 'bad sum' })).toBe(
      'ImageChecksumError: bad sum',
    );
    expect(describeCommandError('plain')).toBe('plain');
    expect(describeCommandError(null)).toBe('no error details');
    expect(describeCommandError({ code: 500 })).toBe('{"code":500}');
  });
});

describe('agent token, temp URLs, callback URLs', () => {
  it('stores only a hash of the token and matches it in constant time', () => {
    const t = newAgentToken();
    const h = hashAgentToken(t);
    expect(h).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(h).not.toContain(t);
    expect(agentTokenMatches(h, t)).toBe(true);
    expect(agentTokenMatches(h, `${t}x`)).toBe(false);
    expect(agentTokenMatches(undefined, t)).toBe(false);
    expect(agentTokenMatches(t, t)).toBe(false);
  });

  it('signs image temp URLs that expire and grant one image only', () => {
    const env = makeEnv();
    const now = Date.UTC(2030, 0, 1);
    const url = new URL(signImageTempUrl(env.box, 'http://h:1', 'img-1', now, 60));
    expect(url.pathname).toBe('/image/v2/images/img-1/file');
    const sig = url.searchParams.get('temp_url_sig');
    const exp = url.searchParams.get('temp_url_expires');
    expect(verifyImageTempUrl(env.box, 'img-1', sig, exp, now + 59_000)).toBe(true);
    expect(verifyImageTempUrl(env.box, 'img-1', sig, exp, now + 61_000)).toBe(false);
    expect(verifyImageTempUrl(env.box, 'img-2', sig, exp, now)).toBe(false);
    expect(verifyImageTempUrl(env.box, 'img-1', sig, String(Number(exp) + 1000), now)).toBe(false);
    expect(verifyImageTempUrl(env.box, 'img-1', 'f'.repeat(64), exp, now)).toBe(false);
    expect(verifyImageTempUrl(env.box, 'img-1', undefined, exp, now)).toBe(false);
    expect(verifyImageTempUrl(makeEnv().box, 'img-1', sig, exp, now)).toBe(false);
  });

  it('accepts only http(s) callback URLs without credentials', () => {
    expect(callbackUrl('http://127.0.0.1:9999/')).toBe('http://127.0.0.1:9999');
    for (const bad of ['ftp://x', 'nope', 'http://u:p@h', 42, null, `http://h/${'a'.repeat(3000)}`])
      expect(() => callbackUrl(bad)).toThrow(/callback_url/);
  });
});

describe('the deploy stage with an agent (real HTTP peer)', () => {
  let peer: http.Server;
  let peerUrl = '';
  let seen: Array<{ name: string; params: any; token: string | null }> = [];
  let failWrite = false;
  let flushedWrite = false;
  let gets = 0;

  beforeAll(async () => {
    peer = http.createServer((req, res) => {
      const url = new URL(req.url!, 'http://x');
      if (req.method === 'GET') gets++;
      let raw = '';
      req.on('data', (c) => (raw += c));
      req.on('end', () => {
        const body = raw ? JSON.parse(raw) : null;
        if (body) seen.push({ name: body.name, params: body.params, token: url.searchParams.get('agent_token') });
        const failed = failWrite && body?.name === 'deploy.execute_deploy_step';
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            id: 'c1',
            command_name: body?.name ?? 'x',
            command_status: failed ? 'FAILED' : 'SUCCEEDED',
            command_error: failed ? { type: 'ImageChecksumError', message: 'checksum mismatch' } : null,
            command_result: flushedWrite && body?.name === 'deploy.execute_deploy_step' ? { deploy_result: { disk_flushed: true } } : {},
          }),
        );
      });
    });
    await new Promise<void>((r) => peer.listen(0, '127.0.0.1', r));
    peerUrl = `http://127.0.0.1:${(peer.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => peer.close(() => r())));

  function agentEnv(env: ReturnType<typeof makeEnv>, recorded: ConductorChanges[]): AgentEnv {
    const images = new ServiceImageInfo(
      () => {
        throw new Error('no image service in this test');
      },
      new ImageTempUrls(env.box, 'http://h', () => 0),
      60,
      {
        contextOf: () => {
          throw new Error('no identity service in this test');
        },
      },
    );
    return { images, record: async (_u, c) => void recorded.push(c), client: defaultAgentClient, commandTimeoutS: 5 };
  }

  const instance = {
    image_source: 'http://images/disk.raw',
    image_os_hash_algo: 'sha256',
    image_os_hash_value: 'a'.repeat(64),
    configdrive: { meta_data: { hostname: 'h1' } },
  };

  /** A node whose agent called back (its session at the test's peer), in `deploying`. */
  const calledBack = (env: ReturnType<typeof makeEnv>, token: string, extra: Record<string, unknown> = {}) =>
    makeNode({
      provision_state: 'deploying',
      target_provision_state: 'active',
      deploy_interface: 'direct',
      driver_info: { deploy_iso: 'iso' },
      instance_info: instance,
      driver_internal_info: { agent_boot: 'deploy', agent_url: peerUrl, agent_token_sealed: env.box.seal(token), ...extra },
    });

  it('boots the agent and waits; after the call-back writes the image, syncs and ends active with the session wiped', async () => {
    const env = makeEnv();
    const recorded: ConductorChanges[] = [];
    const agent = agentEnv(env, recorded);
    const node = makeNode({
      provision_state: 'deploying',
      target_provision_state: 'active',
      deploy_interface: 'direct',
      driver_info: { deploy_iso: 'iso' },
      instance_info: instance,
    });
    const booted = await runAgentDeploy(env, agent, node);
    expect(booted.provision_state).toBe('wait call-back');
    expect(booted.driver_internal_info?.agent_boot).toBe('deploy');
    expect(booted.deploy_step).toMatchObject({ interface: 'deploy', step: 'deploy' });

    seen = [];
    const token = newAgentToken();
    const called = makeNode({
      ...node,
      driver_internal_info: {
        ...booted.driver_internal_info,
        agent_url: peerUrl,
        agent_token_sealed: env.box.seal(token),
        agent_secret_token: hashAgentToken(token),
      },
    });
    const done = await runAgentDeploy(env, agent, called);
    expect(done.provision_state, String(done.last_error)).toBe('active');
    expect(seen.map((s) => s.name)).toEqual(['deploy.execute_deploy_step', 'standby.sync']);
    expect(seen.every((s) => s.token === token)).toBe(true);
    const write = seen[0]!.params;
    expect(write.step.step).toBe('write_image');
    expect(write.step.args.image_info).toMatchObject({
      urls: ['http://images/disk.raw'],
      os_hash_algo: 'sha256',
      disk_format: 'raw',
      node_uuid: node.uuid,
    });
    expect(write.step.args.configdrive).toEqual({ meta_data: { hostname: 'h1' } });
    expect(JSON.stringify(write.node)).not.toContain(token);
    expect(done.driver_internal_info).not.toHaveProperty('agent_url');
    expect(done.driver_internal_info).not.toHaveProperty('agent_token_sealed');
    expect(done.deploy_step).toEqual({});
    expect(recorded.map((c) => (c.deploy_step as any)?.step)).toEqual(['write_image', 'prepare_instance_boot']);
  });

  it('an agent that reports the disk flushed is not asked for standby.sync', async () => {
    const env = makeEnv();
    const token = newAgentToken();
    flushedWrite = true;
    try {
      seen = [];
      const node = calledBack(env, token);
      const done = await runAgentDeploy(env, agentEnv(env, []), node);
      expect(done.provision_state, String(done.last_error)).toBe('active');
      expect(seen.map((s) => s.name)).toEqual(['deploy.execute_deploy_step']);
    } finally {
      flushedWrite = false;
    }
  });

  it('a write whose outcome the watcher recorded goes on without asking the agent again; a recorded FAILED fails the deploy', async () => {
    const env = makeEnv();
    const token = newAgentToken();
    const waiting = (outcome: Record<string, unknown>) =>
      calledBack(env, token, { agent_command: { id: 'c9', name: 'deploy.execute_deploy_step', deadline: Date.now() + 60_000, outcome } });
    seen = [];
    gets = 0;
    const done = await runAgentDeploy(
      env,
      agentEnv(env, []),
      waiting({ command_status: 'SUCCEEDED', command_result: { deploy_result: { disk_flushed: true } }, command_error: null }),
    );
    expect(done.provision_state, String(done.last_error)).toBe('active');
    expect(gets).toBe(0);
    expect(seen).toEqual([]);
    expect(done.driver_internal_info).not.toHaveProperty('agent_command');

    const failed = await runAgentDeploy(
      env,
      agentEnv(env, []),
      waiting({
        command_status: 'FAILED',
        command_result: null,
        command_error: { type: 'ImageDownloadError', message: 'connection reset' },
      }),
    );
    expect(failed.provision_state).toBe('deploy failed');
    expect(failed.last_error).toMatch(/deploy\.write_image failed .*FAILED: ImageDownloadError: connection reset/);
    expect(gets).toBe(0);
  });

  it('a FAILED write_image → deploy failed naming the step and the agent error; an image without checksum fails before booting', async () => {
    const env = makeEnv();
    const agent = agentEnv(env, []);
    const token = newAgentToken();
    failWrite = true;
    try {
      const node = calledBack(env, token);
      const out = await runAgentDeploy(env, agent, node);
      expect(out.provision_state).toBe('deploy failed');
      expect(out.last_error).toMatch(/Deploy step deploy\.write_image failed .*FAILED: ImageChecksumError: checksum mismatch/);
      expect(out.driver_internal_info).not.toHaveProperty('agent_url');
    } finally {
      failWrite = false;
    }
    const unverified = makeNode({
      provision_state: 'deploying',
      target_provision_state: 'active',
      deploy_interface: 'direct',
      driver_info: { deploy_iso: 'iso' },
      instance_info: { image_source: 'http://x/y' },
    });
    const refused = await runAgentDeploy(env, agent, unverified);
    expect(refused.provision_state).toBe('deploy failed');
    expect(refused.last_error).toMatch(/image_os_hash_algo/);
  });

  it('an agent that cannot be reached is an AgentError saying so', async () => {
    const client = new AgentClient('http://127.0.0.1:9', 't', { requestTimeoutMs: 2000 });
    await expect(client.run('standby.sync', {}, Date.now() + 2000)).rejects.toThrow(/could not be reached for standby\.sync/);
  });
});
