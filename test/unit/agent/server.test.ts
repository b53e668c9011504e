/**
 * The deploy agent's command API (src/agent/server.ts) and command runner (commands.ts), over
 * real HTTP on 127.0.0.1, with ironic-python-agent's wire behaviour (https://docs.openstack.org/ironic-python-agent/latest/admin/how_it_works.html): the root and status documents, agent token checks (401), unknown commands (400),
 * one command at a time (409), `wait=true`, results by id (404 for an unknown one), bad bodies
 * (400, 413), progress while RUNNING and the CLEAN_VERSION_MISMATCH status.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CommandRunner, type CommandHandler, type CommandProgress } from '../../../src/agent/commands.ts';
import { AgentCommandError, imageChecksumError } from '../../../src/agent/errors.ts';
import { AGENT_VERSION, startCommandServer, tokenMatches } from '../../../src/agent/server.ts';

const TOKEN = 'agent-token-0123456789';

/** A command the test ends: `release()` resolves it; `progress` reports through it. */
function controllable(): {
  handler: CommandHandler;
  release(value?: Record<string, unknown>): void;
  fail(err: Error): void;
  progress(p: CommandProgress): void;
  started: Promise<void>;
} {
  let release!: (v: Record<string, unknown>) => void;
  let fail!: (e: Error) => void;
  let report: (p: CommandProgress) => void = () => undefined;
  let started!: () => void;
  const startedP = new Promise<void>((r) => (started = r));
  return {
    handler: (_params, progress) => {
      report = progress;
      started();
      return new Promise((resolve, reject) => {
        release = resolve;
        fail = reject;
      });
    },
    release: (v = { done: true }) => release(v),
    fail: (e) => fail(e),
    progress: (p) => report(p),
    started: startedP,
  };
}

/** A raw HTTP request: status and parsed JSON body. */
function request(
  url: string,
  method: string,
  body?: string | Buffer,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, body: text === '' ? null : JSON.parse(text) });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('agent command runner', () => {
  it('reports progress while RUNNING, then the result; failures carry IPA error objects', async () => {
    const slow = controllable();
    const runner = new CommandRunner(
      new Map<string, CommandHandler>([
        ['standby.slow', slow.handler],
        ['standby.bad', async () => Promise.reject(imageChecksumError('sha256 differs'))],
        ['standby.crash', async () => Promise.reject(new Error('disk on fire'))],
        [
          'clean.mismatch',
          async () =>
            Promise.reject(
              new AgentCommandError('CleanVersionMismatch', 500, 'Clean version mismatch', 'generic_hardware_manager: 1.2 vs 0.9'),
            ),
        ],
      ]),
    );
    const r = runner.start('standby.slow', {});
    expect(r).toMatchObject({ command_name: 'slow', command_status: 'RUNNING', command_error: null, command_result: null });
    await slow.started;
    slow.progress({ phase: 'download', bytes: 10, total: 100 });
    expect(runner.get(r.id)?.command_result).toEqual({ progress: { phase: 'download', bytes: 10, total: 100 } });
    // A second command while one runs: AgentIsBusy.
    expect(() => runner.start('standby.bad', {})).toThrow(expect.objectContaining({ type: 'AgentIsBusy', code: 409 }));
    // wait() gives up after its timeout; the command is still RUNNING.
    await runner.wait(r.id, 20);
    expect(runner.get(r.id)?.command_status).toBe('RUNNING');
    slow.release({ result: 'ok' });
    await runner.wait(r.id, 5000);
    expect(runner.get(r.id)).toMatchObject({ command_status: 'SUCCEEDED', command_result: { result: 'ok' } });
    // Progress after the end is ignored.
    slow.progress({ phase: 'late', bytes: 1, total: null });
    expect(runner.get(r.id)?.command_result).toEqual({ result: 'ok' });

    const bad = runner.start('standby.bad', {});
    await runner.wait(bad.id, 5000);
    expect(bad).toMatchObject({
      command_status: 'FAILED',
      command_result: null,
      command_error: { type: 'ImageChecksumError', code: 500, message: 'Error verifying image checksum', details: 'sha256 differs' },
    });
    const crash = runner.start('standby.crash', {});
    await runner.wait(crash.id, 5000);
    expect(crash.command_error).toEqual({
      type: 'CommandExecutionError',
      code: 500,
      message: 'Command execution failed',
      details: 'disk on fire',
    });
    const mismatch = runner.start('clean.mismatch', {});
    await runner.wait(mismatch.id, 5000);
    expect(mismatch.command_status).toBe('CLEAN_VERSION_MISMATCH');
    expect(mismatch.command_error).toMatchObject({ type: 'CleanVersionMismatch' });
    expect(runner.list().map((x) => x.command_name)).toEqual(['slow', 'bad', 'crash', 'mismatch']);
    await runner.wait('no-such-id', 5000);
  });

  it('tells its listener when a command has finished, whatever the outcome', async () => {
    const finished: string[] = [];
    const runner = new CommandRunner(
      new Map<string, CommandHandler>([
        ['standby.sync', async () => null],
        ['deploy.boom', async () => Promise.reject(new Error('boom'))],
      ]),
      (r) => finished.push(`${r.command_name}:${r.command_status}`),
    );
    const ok = runner.start('standby.sync', {});
    await runner.wait(ok.id, 5000);
    const bad = runner.start('deploy.boom', {});
    await runner.wait(bad.id, 5000);
    await expect.poll(() => finished).toEqual(['sync:SUCCEEDED', 'boom:FAILED']);
  });

  it('refuses unknown commands and extensions', () => {
    const runner = new CommandRunner(new Map([['standby.sync', async () => null]]));
    expect(() => runner.start('standby.fly', {})).toThrow(
      expect.objectContaining({ type: 'InvalidCommandError', code: 400, details: 'Unknown command: standby.fly' }),
    );
    expect(() => runner.start('rescue.finalize_rescue', {})).toThrow(expect.objectContaining({ details: 'Unknown extension: rescue' }));
  });

  it('compares tokens in full', () => {
    expect(tokenMatches(TOKEN, TOKEN)).toBe(true);
    expect(tokenMatches(`${TOKEN}x`, TOKEN)).toBe(false);
    expect(tokenMatches('', TOKEN)).toBe(false);
  });
});

describe('agent command API', () => {
  let server: http.Server;
  let base: string;
  let slow = controllable();
  let token: string | null = TOKEN;

  beforeAll(async () => {
    const handlers = new Map<string, CommandHandler>([
      ['standby.echo', async (params) => ({ echo: params })],
      ['standby.slow', (params, progress) => slow.handler(params, progress)],
    ]);
    const started = await startCommandServer({
      host: '127.0.0.1',
      port: 0,
      runner: new CommandRunner(handlers),
      token: () => token,
      waitLimitMs: 300,
    });
    server = started.server;
    base = `http://127.0.0.1:${started.port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  const post = (query: string, body: unknown) =>
    request(`${base}/v1/commands/?${query}`, 'POST', typeof body === 'string' ? body : JSON.stringify(body));

  it('GET / and /v1/status describe the agent', async () => {
    const root = await request(`${base}/`, 'GET');
    expect(root.status).toBe(200);
    expect(root.body).toMatchObject({ name: 'OpenStack Ironic Python Agent API', default_version: { id: 'v1' } });
    const status = await request(`${base}/v1/status`, 'GET');
    expect(status.status).toBe(200);
    expect(status.body.version).toBe(AGENT_VERSION);
    expect(Math.abs(status.body.started_at - Date.now() / 1000)).toBeLessThan(60);
    expect((await request(`${base}/v1/nothing`, 'GET')).status).toBe(404);
    expect((await request(`${base}/v1/status`, 'DELETE')).status).toBe(405);
  });

  it('refuses commands without the agent token, with a wrong one, and before the lookup gave one (401)', async () => {
    const missing = await post('wait=true', { name: 'standby.echo', params: {} });
    expect(missing).toEqual({
      status: 401,
      body: { faultcode: 'Client', faultstring: 'Unauthorized: agent_token is required', debuginfo: null },
    });
    const wrong = await post(`agent_token=${TOKEN}x`, { name: 'standby.echo', params: {} });
    expect(wrong.status).toBe(401);
    expect(wrong.body.faultstring).toBe('Unauthorized: agent_token does not match');
    expect(JSON.stringify(wrong.body)).not.toContain(TOKEN);
    token = null;
    try {
      expect((await post(`agent_token=${TOKEN}`, { name: 'standby.echo', params: {} })).status).toBe(401);
    } finally {
      token = TOKEN;
    }
    // Polling needs no token (real Ironic polls without one), but a wrong one is refused.
    expect((await request(`${base}/v1/commands/`, 'GET')).status).toBe(200);
    expect((await request(`${base}/v1/commands/?agent_token=nope`, 'GET')).status).toBe(401);
  });

  it('runs a command with wait=true and shows it by id and in the list', async () => {
    const res = await post(`wait=true&agent_token=${TOKEN}`, { name: 'standby.echo', params: { a: 1 } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      command_name: 'echo',
      command_status: 'SUCCEEDED',
      command_error: null,
      command_result: { echo: { a: 1 } },
    });
    const one = await request(`${base}/v1/commands/${res.body.id}`, 'GET');
    expect(one).toEqual({ status: 200, body: res.body });
    const list = await request(`${base}/v1/commands`, 'GET');
    expect(list.body.commands.map((c: any) => c.id)).toContain(res.body.id);
    const unknown = await request(`${base}/v1/commands/00000000-0000-4000-8000-000000000000`, 'GET');
    expect(unknown.status).toBe(404);
    expect(unknown.body.faultcode).toBe('Client');
  });

  it('refuses an unknown command (400), a bad name or params (400), a bad JSON body (400) and a too large one (413)', async () => {
    const unknown = await post(`agent_token=${TOKEN}`, { name: 'standby.fly', params: {} });
    expect(unknown.status).toBe(400);
    expect(unknown.body.faultstring).toBe('Invalid command: Unknown command: standby.fly');
    expect((await post(`agent_token=${TOKEN}`, { name: 'fly', params: {} })).status).toBe(400);
    expect((await post(`agent_token=${TOKEN}`, { name: 'standby.echo', params: [1] })).body.faultstring).toMatch(
      /"params" must be an object/,
    );
    expect((await post(`agent_token=${TOKEN}`, '{"name": ')).body.faultstring).toBe('Invalid command: the body is not valid JSON');
    expect((await post(`agent_token=${TOKEN}`, '[1, 2]')).body.faultstring).toBe('Invalid command: the body must be a JSON object');
    // A body announced larger than 100 MiB is refused before it is read.
    const big = await new Promise<number>((resolve, reject) => {
      const req = http.request(
        `${base}/v1/commands/?agent_token=${TOKEN}`,
        { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(101 * 1024 * 1024) } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
          req.destroy();
        },
      );
      req.on('error', reject);
      req.write('{"name": "standby.echo", "params": {"x": "');
    });
    expect(big).toBe(413);
    // A chunked body (no Content-Length) is refused once it passes the limit.
    const streamed = await new Promise<{ status: number; body: any }>((resolve, reject) => {
      const req = http.request(
        `${base}/v1/commands/?agent_token=${TOKEN}`,
        { method: 'POST', headers: { 'content-type': 'application/json' } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
            req.destroy();
          });
        },
      );
      // The agent closes the connection after its answer: writing on may fail with EPIPE/ECONNRESET.
      req.on('error', (e: NodeJS.ErrnoException) => (['EPIPE', 'ECONNRESET'].includes(e.code ?? '') ? undefined : reject(e)));
      const block = Buffer.alloc(4 * 1024 * 1024, 0x61);
      let sent = 0;
      const pump = () => {
        while (sent <= 104 * 1024 * 1024 && !req.destroyed) {
          sent += block.length;
          if (!req.write(block)) return void req.once('drain', pump);
        }
        req.end();
      };
      pump();
    });
    expect(streamed.status).toBe(413);
    expect(streamed.body.faultstring).toBe('Request body larger than 104857600 bytes');
  });

  it('while a command runs: progress in its result, wait=true returns RUNNING after its limit, another command is busy (409)', async () => {
    slow = controllable();
    const started = await post(`agent_token=${TOKEN}`, { name: 'standby.slow', params: {} });
    expect(started.status).toBe(200);
    expect(started.body.command_status).toBe('RUNNING');
    await slow.started;
    slow.progress({ phase: 'download', bytes: 5, total: 10 });
    const t0 = Date.now();
    const waited = await request(`${base}/v1/commands/${started.body.id}?wait=true`, 'GET');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
    expect(waited.body).toMatchObject({
      command_status: 'RUNNING',
      command_result: { progress: { phase: 'download', bytes: 5, total: 10 } },
    });
    const busy = await post(`agent_token=${TOKEN}`, { name: 'standby.echo', params: {} });
    expect(busy.status).toBe(409);
    expect(busy.body.faultstring).toMatch(/^Agent is busy: executing command slow/);
    setTimeout(() => slow.release({ result: 'done' }), 50);
    const done = await request(`${base}/v1/commands/${started.body.id}?wait=true`, 'GET');
    expect(done.body).toMatchObject({ command_status: 'SUCCEEDED', command_result: { result: 'done' } });
    expect((await post(`agent_token=${TOKEN}`, { name: 'standby.echo', params: {} })).status).toBe(200);
  });
});
