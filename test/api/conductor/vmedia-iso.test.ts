/**
 * Honest virtual media: a `redfish-virtual-media` node whose agent ISO is not an http(s) URL
 * (here `file:///tmp/x.iso`) cannot boot the deploy agent — the BMC fetches the ISO itself and
 * esi neither serves nor resolves other references — so every flow that boots the agent is
 * refused before anything changes (src/domain/deploy/readiness.ts), as a missing ramdisk is
 * (./provision.test.ts "honest provisioning"): `PUT …/states/provision` answers 400 naming the key
 * and what to use instead for `inspect` (agent inspection), `provide` (automated cleaning) and
 * `active`; `GET …/validate` reports boot and deploy false with the same reason. Who may ask is
 * unchanged: admin, owner and lessee get the 400, another project 404, anonymous 401.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bm,
  enrollRedfish,
  expectError,
  getNode,
  patchNode,
  pick,
  provision,
  settled,
  startConductorEnv,
  type ConductorEnv,
} from './support.ts';
import type { Persona } from '../../helpers/harness.ts';

let env: ConductorEnv;

beforeAll(async () => {
  env = await startConductorEnv(1, { env: { ESI_POWER_TIMEOUT: '3' } });
});
afterAll(async () => env?.close());

/** What the 400 says: the key, its value, and the two ways that work. */
const REASON =
  /'deploy_iso' "file:\/\/\/tmp\/x\.iso" cannot be booted from: use an http\(s\) URL of the ISO .*or remove 'deploy_iso' and set 'deploy_kernel' and 'deploy_ramdisk'/;

describe('a virtual media node whose deploy_iso is a file:// URL', () => {
  it('inspect, provide and active answer 400 with the reason for admin, owner and lessee; another project 404; anonymous 401; validate says why', async () => {
    const n = await enrollRedfish(
      env,
      'node-0',
      { deploy_interface: 'direct', boot_interface: 'redfish-virtual-media', inspect_interface: 'agent', name: 'file-iso' },
      { deploy_iso: 'file:///tmp/x.iso' },
    );
    await provision(env, n.uuid, 'manage');
    expect((await settled(env, n.uuid)).provision_state).toBe('manageable');
    const put = (who: Persona, target: string) => bm(env.ts, who, 'PUT', `/v1/nodes/${n.uuid}/states/provision`, { target });
    const refused = async (target: string, purpose: string, state: string) => {
      for (const who of [env.p.admin, env.p.owner, env.p.lessee]) {
        const res = await put(who, target);
        expectError(res, 400, REASON);
        expect(res.text, `${target} as ${who.name}`).toContain(`Cannot validate redfish-virtual-media boot for ${purpose}`);
      }
      expectError(await put(env.p.other, target), 404);
      expectError(await put(env.p.anonymous, target), 401);
      expect(pick(await getNode(env, n.uuid))).toMatchObject({ provision_state: state, target_provision_state: null, last_error: null });
    };

    await refused('inspect', 'inspection', 'manageable');
    await refused('provide', 'cleaning', 'manageable');

    const validate = await bm(env.ts, env.p.owner, 'GET', `/v1/nodes/${n.uuid}/validate`);
    expect(validate.status, validate.text).toBe(200);
    expect(validate.body.deploy).toEqual({ result: false, reason: expect.stringMatching(REASON) });
    expect(validate.body.boot).toEqual({ result: false, reason: expect.stringMatching(REASON) });
    expect(validate.body.inspect).toEqual({ result: false, reason: expect.stringMatching(REASON) });
    expectError(await bm(env.ts, env.p.other, 'GET', `/v1/nodes/${n.uuid}/validate`), 404);
    expectError(await bm(env.ts, env.p.anonymous, 'GET', `/v1/nodes/${n.uuid}/validate`), 401);

    // Without automated cleaning `provide` owes no wipe; the deploy is still refused.
    expect((await patchNode(env, n.uuid, [{ op: 'add', path: '/automated_clean', value: false }])).status).toBe(200);
    await provision(env, n.uuid, 'provide');
    expect((await settled(env, n.uuid)).provision_state).toBe('available');
    const image = [{ op: 'add', path: '/instance_info/image_source', value: 'http://images.example/os.raw' }];
    expect((await patchNode(env, n.uuid, image)).status).toBe(200);
    await refused('active', 'deploy', 'available');

    // An http(s) ISO is what virtual media boots: the same node validates.
    expect(
      (await patchNode(env, n.uuid, [{ op: 'replace', path: '/driver_info/deploy_iso', value: 'http://lab/esi-agent.iso' }])).status,
    ).toBe(200);
    const ok = await bm(env.ts, env.p.owner, 'GET', `/v1/nodes/${n.uuid}/validate`);
    expect(ok.body.deploy).toEqual({ result: true });
    expect(ok.body.boot).toEqual({ result: true });
  });
});
