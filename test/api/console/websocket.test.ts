/**
 * The serial console websockets end to end, against the lab's BMC (redfish driver,
 * `redfish-serial` console, the lab's serial-over-LAN websocket): the console token proxy
 * (`access_url`, `/lease/console?token=`) and the Keystone-token stream
 * (`/baremetal/v1/nodes/{id}/states/console/stream`), for every persona; read-only lessees;
 * expired, revoked and bad tokens; the console disabled mid-session; the lease ending.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { at } from '../lease/support.ts';
import { call } from '../../helpers/harness.ts';
import { bm, startConductorEnv, waitNode, type ConductorEnv } from '../conductor/support.ts';
import { closedWithin, connect, consoleNode, consoleToken, setConsole } from './support.ts';

let env: ConductorEnv;
let node: any;
const BOOT = /esi-lab firmware: POST node-0/;

beforeAll(async () => {
  env = await startConductorEnv(5);
  node = await consoleNode(env, 'node-0');
  await setConsole(env, node.uuid, true, env.p.owner);
}, 60_000);
afterAll(async () => env?.close());

const wsBase = (): string => env.ts.url.replace(/^http/, 'ws');

/**
 * Power node-0 on at the machine (a no-op when it is on already), as the tests that read its boot
 * lines or type at it need: a powered-off machine prints no POST and echoes nothing. Each such
 * test calls it itself, since the order of the tests is shuffled.
 */
const powerOnNode0 = (): void => env.lab.systems.setPowerState('node-0', 'On');

describe('console token websocket (access_url)', () => {
  it('owner: sees the boot lines of a power on requested through the API, types, and sees the echo', async () => {
    // A machine of this test's own, still off: the boot lines can only come from this power on.
    const own = await consoleNode(env, 'node-4');
    await setConsole(env, own.uuid, true, env.p.owner);
    expect(env.lab.systems.powerState('node-4')).toBe('Off');
    const tok = await consoleToken(env, env.p.owner, own.uuid);
    const s = connect(tok.access_url);
    await expect.poll(() => s.opened()).toBe(true);
    const r = await bm(env.ts, env.p.owner, 'PUT', `/v1/nodes/${own.uuid}/states/power`, { target: 'power on' });
    expect(r.status, r.text).toBe(202);
    await s.waitFor(/esi-lab firmware: POST node-4 /);
    await s.waitFor(/memory 4 GiB OK/);
    await waitNode(env, own.uuid, (n) => n.power_state === 'power on' && n.target_power_state === null);
    s.send('owner-typed-line\r');
    await s.waitFor(/owner-typed-line\r\n/);
    expect(env.lab.serial.scrollback('node-4').toString()).toContain('owner-typed-line');
    s.close();
    expect((await closedWithin(s)).code).toBeLessThan(4000);
  });

  it('admin: reads and writes', async () => {
    powerOnNode0();
    const tok = await consoleToken(env, env.p.admin, node.uuid);
    expect(tok.token).toMatch(/^rw\./);
    const s = connect(tok.access_url);
    await s.waitFor(BOOT); // the BMC's scrollback
    s.send('admin-was-here\r');
    await s.waitFor(/admin-was-here\r\n/);
    s.close();
  });

  it('lessee: reads the console, but its keystrokes are dropped (read-only by default)', async () => {
    powerOnNode0();
    const tok = await consoleToken(env, env.p.lessee, node.uuid);
    expect(tok.token).toMatch(/^ro\./);
    const s = connect(tok.access_url);
    await s.waitFor(BOOT);
    s.send('lessee-secret\r');
    await s.waitFor(/read-only console: input ignored/);
    // Something the node prints after the keystrokes arrives, and the keystrokes never do.
    env.lab.serial.note('node-0', 'marker after lessee input');
    await s.waitFor(/marker after lessee input/);
    expect(s.text()).not.toContain('lessee-secret');
    expect(env.lab.serial.scrollback('node-0').toString()).not.toContain('lessee-secret');
    s.close();
  });

  it('an owner may ask for read-only', async () => {
    powerOnNode0();
    const tok = await consoleToken(env, env.p.owner, node.uuid);
    const s = connect(`${tok.access_url}&read_only=true`);
    await s.waitFor(BOOT);
    s.send('owner-read-only\r');
    await s.waitFor(/input ignored/);
    expect(env.lab.serial.scrollback('node-0').toString()).not.toContain('owner-read-only');
    s.close();
  });

  it('another project cannot get a token (404), anonymous 401', async () => {
    expect((await call(env.ts, env.p.other, 'POST', '/lease/v1/console_auth_tokens', { node_uuid_or_name: node.uuid })).status).toBe(404);
    expect((await call(env.ts, env.p.anonymous, 'POST', '/lease/v1/console_auth_tokens', { node_uuid_or_name: node.uuid })).status).toBe(
      401,
    );
  });

  it('bad, missing and tampered tokens are refused with 4401; a bad read_only with 4400', async () => {
    for (const url of [`${wsBase()}/lease/console?token=not-a-token`, `${wsBase()}/lease/console`, `${wsBase()}/lease/console?token=`]) {
      const s = connect(url);
      const c = await closedWithin(s);
      expect(c.code, url).toBe(4401);
      expect(c.reason).toMatch(/token/);
    }
    const tok = await consoleToken(env, env.p.lessee, node.uuid);
    const tampered = connect(`${wsBase()}/lease/console?token=${encodeURIComponent(tok.token.replace(/^ro\./, 'rw.'))}`);
    expect((await closedWithin(tampered)).code).toBe(4401);
    const bad = connect(`${tok.access_url}&read_only=sometimes`);
    expect((await closedWithin(bad)).code).toBe(4400);
    // A plain GET of the websocket endpoint is a 400 in esi-leap's format.
    const plain = await fetch(`${env.ts.url}/lease/console?token=x`);
    expect(plain.status).toBe(400);
    expect(((await plain.json()) as any).faultstring).toMatch(/websocket/);
  });

  it('a revoked token closes the open socket (4401)', async () => {
    powerOnNode0();
    const tok = await consoleToken(env, env.p.owner, node.uuid);
    const s = connect(tok.access_url);
    await s.waitFor(BOOT);
    const del = await call(env.ts, env.p.owner, 'DELETE', `/lease/v1/console_auth_tokens/${node.uuid}`);
    expect(del.status).toBe(200);
    const c = await closedWithin(s);
    expect(c).toEqual({ code: 4401, reason: 'The console token expired or was revoked.' });
    expect((await closedWithin(connect(tok.access_url))).code).toBe(4401);
  });

  it('an expired token closes the open socket and is refused afterwards', async () => {
    powerOnNode0();
    const tok = await consoleToken(env, env.p.lessee, node.uuid, 2);
    const s = connect(tok.access_url);
    await s.waitFor(BOOT);
    expect((await closedWithin(s)).code).toBe(4401);
    expect((await closedWithin(connect(tok.access_url))).code).toBe(4401);
  });

  it('the console must be enabled: refused while disabled (4400), and disabling closes open sockets (4409)', async () => {
    const n = await consoleNode(env, 'node-1');
    const tok = await consoleToken(env, env.p.owner, n.uuid);
    const refused = await closedWithin(connect(tok.access_url));
    expect(refused.code).toBe(4400);
    expect(refused.reason).toMatch(/not enabled/);
    await setConsole(env, n.uuid, true);
    const s = connect(tok.access_url);
    await expect.poll(() => s.opened()).toBe(true);
    await setConsole(env, n.uuid, false, env.p.lessee);
    const c = await closedWithin(s);
    expect(c.code).toBe(4409);
    expect(c.reason).toMatch(/disabled/);
  });

  it('an unreachable BMC closes with 4502 and a message without secrets', async () => {
    const n = await consoleNode(env, 'node-2');
    const patch = await bm(env.ts, env.p.admin, 'PATCH', `/v1/nodes/${n.uuid}`, [
      { op: 'replace', path: '/driver_info/redfish_address', value: 'http://127.0.0.1:9' },
    ]);
    expect(patch.status, patch.text).toBe(200);
    await setConsole(env, n.uuid, true);
    const tok = await consoleToken(env, env.p.owner, n.uuid);
    const c = await closedWithin(connect(tok.access_url));
    expect(c.code).toBe(4502);
    expect(c.reason).toMatch(/unreachable/);
    expect(c.reason).not.toContain('password');
  });

  it('the end of the lease closes the lessee socket', async () => {
    const n = await consoleNode(env, 'node-3', null);
    await setConsole(env, n.uuid, true);
    const lease = await call(env.ts, env.p.owner, 'POST', '/lease/v1/leases', {
      resource_uuid: n.uuid,
      project_id: env.p.lessee.projectId,
      start_time: at(-1000),
      end_time: at(4000),
    });
    expect(lease.status, lease.text).toBe(201);
    await waitNode(env, n.uuid, (x) => x.lessee === env.p.lessee.projectId, 10_000);
    const tok = await consoleToken(env, env.p.lessee, n.uuid);
    const s = connect(tok.access_url);
    const direct = connect(`${wsBase()}/baremetal/v1/nodes/${n.uuid}/states/console/stream`, { 'x-auth-token': env.p.lessee.token! });
    await expect.poll(() => s.opened() && direct.opened()).toBe(true);
    const c = await closedWithin(s, 15_000);
    expect(c.code).toBe(4401);
    // The Keystone-token stream closes too: the lessee no longer sees the node (or its console was disabled with the lease).
    expect([4409]).toContain((await closedWithin(direct, 5000)).code);
    expect((await call(env.ts, env.p.lessee, 'POST', '/lease/v1/console_auth_tokens', { node_uuid_or_name: n.uuid })).status).toBe(404);
  });
});

describe('Keystone-token console stream (console_info.url)', () => {
  const stream = (uuid: string): string => `${wsBase()}/baremetal/v1/nodes/${uuid}/states/console/stream`;

  it('console_info names the stream; owner writes, lessee reads only', async () => {
    const info = await bm(env.ts, env.p.lessee, 'GET', `/v1/nodes/${node.uuid}/states/console`);
    expect(info.body).toEqual({ console_enabled: true, console_info: { type: 'websocket', url: stream(node.uuid) } });
    powerOnNode0(); // a powered-off machine echoes nothing
    env.lab.serial.note('node-0', 'before the keystone sessions');
    const owner = connect(info.body.console_info.url, { 'x-auth-token': env.p.owner.token! });
    await owner.waitFor(/before the keystone sessions/); // the BMC's scrollback
    owner.send('via-keystone\r');
    await owner.waitFor(/via-keystone\r\n/);
    // By name, which needs microversion 1.5 or later (as every Ironic node route).
    const lessee = connect(stream(node.name), { 'x-auth-token': env.p.lessee.token!, 'x-openstack-ironic-api-version': '1.78' });
    await lessee.waitFor(/via-keystone/);
    lessee.send('lessee-keystone\r');
    await lessee.waitFor(/input ignored/);
    expect(env.lab.serial.scrollback('node-0').toString()).not.toContain('lessee-keystone');
    owner.close();
    lessee.close();
  });

  it('revoking the Keystone token closes the stream (4401)', async () => {
    const login = await fetch(`${env.ts.url}/identity/v3/auth/tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        auth: {
          identity: { methods: ['password'], password: { user: { name: 'owner1', domain: { id: 'default' }, password: 'pw-owner1' } } },
          scope: { project: { id: env.p.owner.projectId } },
        },
      }),
    });
    expect(login.status).toBe(201);
    const token = login.headers.get('x-subject-token')!;
    const s = connect(stream(node.uuid), { 'x-auth-token': token });
    env.lab.serial.note('node-0', 'before the revocation');
    await s.waitFor(/before the revocation/);
    const revoke = await fetch(`${env.ts.url}/identity/v3/auth/tokens`, {
      method: 'DELETE',
      headers: { 'x-auth-token': token, 'x-subject-token': token },
    });
    expect(revoke.status).toBe(204);
    expect(await closedWithin(s, 5000)).toEqual({ code: 4401, reason: 'Your token was revoked.' });
  });

  it('another project: 4404; anonymous: the handshake is refused (401)', async () => {
    const other = await closedWithin(connect(stream(node.uuid), { 'x-auth-token': env.p.other.token! }));
    expect(other.code).toBe(4404);
    const anon = connect(stream(node.uuid));
    const c = await closedWithin(anon);
    expect(anon.opened()).toBe(false);
    expect(c.code).toBe(1006);
    const plain = await fetch(stream(node.uuid).replace(/^ws/, 'http'));
    expect(plain.status).toBe(401);
  });

  it('an unknown node: 4404; a plain GET with a token is a 400 in Ironic format', async () => {
    const c = await closedWithin(connect(stream('no-such-node'), { 'x-auth-token': env.p.admin.token! }));
    expect(c.code).toBe(4404);
    const plain = await fetch(stream(node.uuid).replace(/^ws/, 'http'), { headers: { 'x-auth-token': env.p.admin.token! } });
    expect(plain.status).toBe(400);
    expect(JSON.parse(((await plain.json()) as any).error_message).faultstring).toMatch(/websocket/);
  });
});
