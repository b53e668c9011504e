/**
 * Operator policy over the network API: with `get_network:provider:*` overridden to
 * `rule:admin_or_owner` (an oslo.policy YAML file), a project sees the VLAN of its own networks
 * — in the Neutron API and in `esi node network list` — while other projects still do not.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { create, net, startNetEnv, type NetEnv } from './support.ts';

let env: NetEnv;
let dir: string;
beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-netpolicy-'));
  const file = path.join(dir, 'policy.yaml');
  fs.writeFileSync(
    file,
    ['network_type', 'physical_network', 'segmentation_id'].map((a) => `"get_network:provider:${a}": "rule:admin_or_owner"`).join('\n') +
      '\n',
  );
  env = await startNetEnv({ env: { ESI_POLICY_FILE: file } });
});
afterAll(async () => {
  await env?.ts.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

it('shows VLANs to the networks’ owners when policy says so', async () => {
  const { owner, lessee } = env.p;
  const n = await create(env, owner, 'networks', 'network', { name: 'visible-vlan' });
  expect(n).toMatchObject({ 'provider:network_type': 'vlan', 'provider:physical_network': 'physnet1', 'provider:segmentation_id': 100 });
  await create(env, owner, 'rbac-policies', 'rbac_policy', {
    object_type: 'network',
    object_id: n.id,
    action: 'access_as_shared',
    target_tenant: lessee.projectId,
  });
  const seen = (await net(env, lessee, 'GET', `/networks/${n.id}`)).body.network;
  expect(seen.shared).toBe(true);
  expect(seen).not.toHaveProperty('provider:segmentation_id');
  expect((await net(env, owner, 'GET', '/networks?provider:segmentation_id=100')).body.networks.map((x: any) => x.id)).toEqual([n.id]);
  // The lessee may filter on VLANs (of its own networks) but the filter does not reveal the
  // VLAN of a network merely shared with it.
  expect((await net(env, lessee, 'GET', '/networks?provider:segmentation_id=100')).body.networks).toEqual([]);
  expect((await net(env, lessee, 'GET', '/networks')).body.networks.map((x: any) => x.id)).toEqual([n.id]);
});
