/**
 * The deploy metrics end to end (src/server/metrics-events.ts, docs/operations.md): a lab node
 * whose redfish BMC boots esi's real deploy agent is cleaned and deployed with a raw image; the
 * scrape (parsed by the Prometheus project's text parser, ./prometheus.ts) then counts the
 * image's bytes as written once, the redfish driver's BMC calls as timed, and the `cleaning` and
 * `deploying` stages as timed.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bm, provision, waitNode, type ConductorEnv } from '../conductor/support.ts';
import { agentNode, startDeployEnv, uploadImage } from '../deploy/support.ts';
import { scrape, value } from './prometheus.ts';

const LONG = 60_000;

let env: ConductorEnv;

beforeAll(async () => {
  env = await startDeployEnv(1, { env: { ESI_CHECK_PROVISION_STATE_INTERVAL: '1' } });
}, LONG);
afterAll(async () => env?.close());

describe('deploy metrics', () => {
  it(
    "a deploy through the agent: the image's bytes counted once as written; redfish BMC calls and the cleaning and deploying stages timed",
    async () => {
      const image = randomBytes(2 * 1024 * 1024);
      const imageId = await uploadImage(env, image);
      const before = await scrape(env.ts.url);
      const { node } = await agentNode(env, 'node-0');
      const cleaned = await waitNode(
        env,
        node.uuid,
        (x) => (x.provision_state === 'available' && x.reservation === null) || / failed$/.test(x.provision_state),
        LONG,
      );
      expect(cleaned.provision_state, cleaned.last_error).toBe('available');
      const patched = await bm(env.ts, env.p.owner, 'PATCH', `/v1/nodes/${node.uuid}`, [
        { op: 'add', path: '/instance_info', value: { image_source: imageId } },
      ]);
      expect(patched.status, patched.text).toBe(200);
      await provision(env, node.uuid, 'active', {}, env.p.owner);
      const deployed = await waitNode(
        env,
        node.uuid,
        (x) => (x.provision_state === 'active' && x.reservation === null) || / failed$/.test(x.provision_state),
        LONG,
      );
      expect(deployed.provision_state, deployed.last_error).toBe('active');

      const after = await scrape(env.ts.url);
      const delta = (name: string, labels: Record<string, string> = {}): number => value(after, name, labels) - value(before, name, labels);
      // esi's agent reports the bytes it wrote: the raw image, once.
      expect(delta('esi_deploy_image_bytes_written_total')).toBe(image.length);
      expect(delta('esi_deploy_image_writes_total', { bytes_reported: 'true' })).toBe(1);
      expect(delta('esi_deploy_image_writes_total', { bytes_reported: 'false' })).toBe(0);
      for (const operation of ['set_power_state', 'set_boot_device'])
        expect(delta('esi_bmc_call_duration_seconds_count', { driver: 'redfish', operation }), operation).toBeGreaterThanOrEqual(1);
      for (const stage of ['cleaning', 'deploying'])
        expect(delta('esi_conductor_stage_duration_seconds_count', { kind: 'provision', stage }), stage).toBeGreaterThanOrEqual(2);
    },
    3 * LONG,
  );
});
