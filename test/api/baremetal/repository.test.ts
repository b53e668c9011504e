/**
 * The node repository's conductor-facing contract on a real database (SQLite and PostgreSQL):
 * atomic `reserve`, holder-only `release`, `listPending`, `applyConductorResult`, and the
 * optimistic, reservation-aware `update`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPersonas, startTestServer, type Personas, type TestServer } from '../../helpers/harness.ts';
import { createNode, forceNode } from './helpers.ts';

let ts: TestServer;
let p: Personas;
const repo = () => ts.server.services.inventory.nodeRepository;

beforeAll(async () => {
  // These tests check the intent the API records; no conductor may act on it meanwhile.
  ts = await startTestServer({ env: { ESI_CONDUCTOR_WORKERS: '0' } });
  p = await createPersonas(ts);
});
afterAll(async () => ts?.close());

describe('node repository for the conductor', () => {
  it('reserve is atomic: of many concurrent attempts exactly one wins', async () => {
    const n = await createNode(ts, p, { name: 'race' });
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => repo().reserve(n.uuid, `host-${i}`)));
    expect(results.filter(Boolean)).toHaveLength(1);
    const holder = `host-${results.indexOf(true)}`;
    expect((await repo().get(n.uuid))!.reservation).toBe(holder);
    await repo().release(n.uuid, 'someone-else');
    expect((await repo().get(n.uuid))!.reservation).toBe(holder);
    await repo().release(n.uuid, holder);
    expect((await repo().get(n.uuid))!.reservation).toBeNull();
    expect(await repo().reserve('00000000-0000-4000-8000-00000000dead', 'h')).toBe(false);
  });

  it('update is optimistic and refuses reserved nodes', async () => {
    const n = await createNode(ts, p, { name: 'opt' });
    const node = (await repo().get(n.uuid))!;
    const ok = await repo().update(n.uuid, node.version, { description: 'one' }, Date.now());
    expect(ok.ok).toBe(true);
    expect(await repo().update(n.uuid, node.version, { description: 'two' }, Date.now())).toEqual({ ok: false, reason: 'stale' });
    const v = (await repo().get(n.uuid))!.version;
    await repo().reserve(n.uuid, 'h1');
    expect(await repo().update(n.uuid, v + 1, { description: 'three' }, Date.now())).toEqual({ ok: false, reason: 'reserved' });
    expect(await repo().update('00000000-0000-4000-8000-00000000dead', 1, { description: 'x' }, Date.now())).toEqual({
      ok: false,
      reason: 'missing',
    });
    expect((await repo().get(n.uuid))!.description).toBe('one');
    await repo().release(n.uuid, 'h1');
  });

  it('listPending returns unreserved nodes with a pending target, not failed ones', async () => {
    const power = await createNode(ts, p, { name: 'pend-power' });
    const prov = await createNode(ts, p, { name: 'pend-prov' });
    const failed = await createNode(ts, p, { name: 'pend-failed' });
    const held = await createNode(ts, p, { name: 'pend-held' });
    await forceNode(ts, power.uuid, { target_power_state: 'power on' });
    await forceNode(ts, prov.uuid, { provision_state: 'verifying', target_provision_state: 'manageable' });
    await forceNode(ts, failed.uuid, { provision_state: 'deploy failed', target_provision_state: 'active' });
    await forceNode(ts, held.uuid, { target_power_state: 'power off' });
    await repo().reserve(held.uuid, 'h2');
    const pending = (await repo().listPending(100)).map((n) => n.name);
    expect(pending).toContain('pend-power');
    expect(pending).toContain('pend-prov');
    expect(pending).not.toContain('pend-failed');
    expect(pending).not.toContain('pend-held');
    expect((await repo().listPending(1)).length).toBe(1);
  });

  it('applyConductorResult writes regardless of the reservation and bumps the version', async () => {
    const n = await createNode(ts, p, { name: 'result' });
    await repo().reserve(n.uuid, 'h3');
    const before = (await repo().get(n.uuid))!;
    const after = await repo().applyConductorResult(
      n.uuid,
      { power_state: 'power on', target_power_state: null, last_error: null },
      Date.now(),
    );
    expect(after).toMatchObject({ power_state: 'power on', target_power_state: null, reservation: 'h3' });
    expect(after!.version).toBe(before.version + 1);
    expect(await repo().applyConductorResult('00000000-0000-4000-8000-00000000dead', {}, Date.now())).toBeNull();
  });
});
