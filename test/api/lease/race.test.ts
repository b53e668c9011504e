/**
 * Issue 3, item 5: two claims of the same window at the same instant, sent to two separate API
 * processes (`node bin/esi.js server --roles api`, twice) that share one PostgreSQL database,
 * yield exactly one lease — every time, over many rounds. The same holds for a quota: two
 * simultaneous claims of different nodes by one project whose quota allows one node at a time.
 * (PostgreSQL only: SQLite is one process by design.)
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { formatLeaseTime } from '../../../src/domain/leasing/time.ts';
import { describePostgresOnly } from '../../helpers/harness.ts';
import {
  createDatabase,
  http,
  registerIdleConductor,
  projectWithUser,
  startServerProcess,
  tokenFor,
  type ServerProcess,
  type TempDatabase,
} from './processes.ts';

const ADMIN_PW = 'race-admin-password';
const ROUNDS = 25;
const HOUR = 3_600_000;
const T = Math.ceil((Date.now() + 10 * 86_400_000) / HOUR) * HOUR;

describePostgresOnly('two API processes sharing PostgreSQL', () => {
  let db: TempDatabase;
  const servers: ServerProcess[] = [];
  let a: string;
  let b: string;
  const tokens: Record<string, string> = {};
  const offers: string[] = [];

  beforeAll(async () => {
    db = await createDatabase();
    const env = { ESI_ADMIN_PASSWORD: ADMIN_PW, ESI_SECRET_KEY: randomBytes(32).toString('base64') };
    // The first process creates the schema; the second finds it migrated.
    servers.push(await startServerProcess(['--roles', 'api', '--database-url', db.url], env));
    servers.push(await startServerProcess(['--roles', 'api', '--database-url', db.url], env));
    [a, b] = servers.map((s) => s.url) as [string, string];
    await registerIdleConductor(db);
    const admin = await tokenFor(a, 'admin', ADMIN_PW, 'admin');
    const owner = await projectWithUser(a, admin, 'o1', 'owner1', 'pw-owner1', 'owner');
    await projectWithUser(a, admin, 'l1', 'lessee1', 'pw-lessee1', 'lessee');
    await projectWithUser(b, admin, 'l2', 'lessee2', 'pw-lessee2', 'lessee');
    tokens.owner = await tokenFor(a, 'owner1', 'pw-owner1', 'o1');
    tokens.l1 = await tokenFor(a, 'lessee1', 'pw-lessee1', 'l1');
    tokens.l2 = await tokenFor(b, 'lessee2', 'pw-lessee2', 'l2');
    tokens.admin = admin;
    for (let i = 0; i < 3; i++) {
      const node = await http(
        `${a}/baremetal/v1/nodes`,
        'POST',
        admin,
        { driver: 'fake-hardware', name: `race-${i}`, owner },
        { 'x-openstack-ironic-api-version': '1.82' },
      );
      expect(node.status, JSON.stringify(node.body)).toBe(201);
      const offer = await http(`${a}/lease/v1/offers`, 'POST', tokens.owner, {
        resource_uuid: node.body.uuid,
        start_time: formatLeaseTime(T),
        end_time: formatLeaseTime(T + 1000 * HOUR),
      });
      expect(offer.status, JSON.stringify(offer.body)).toBe(201);
      offers.push(offer.body.uuid);
    }
  }, 120_000);

  afterAll(async () => {
    for (const s of servers) await s.stop();
    await db?.drop();
  });

  it(`the same window claimed on both processes at once: exactly one 201 in each of ${ROUNDS} rounds`, async () => {
    const outcomes: number[][] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const window = { start_time: formatLeaseTime(T + round * HOUR), end_time: formatLeaseTime(T + (round + 1) * HOUR) };
      const results = await Promise.all([
        http(`${a}/lease/v1/offers/${offers[0]}/claim`, 'POST', tokens.l1!, window),
        http(`${b}/lease/v1/offers/${offers[0]}/claim`, 'POST', tokens.l2!, window),
      ]);
      outcomes.push(results.map((r) => r.status).sort());
      for (const r of results.filter((x) => x.status === 409))
        expect(r.body.faultstring).toContain('has no availabilities at given time range');
    }
    expect(outcomes).toEqual(Array.from({ length: ROUNDS }, () => [201, 409]));
    // Both processes see the same ROUNDS leases on the offer, one per window.
    for (const base of [a, b]) {
      const listed = await http(`${base}/lease/v1/leases?view=all&offer_uuid=${offers[0]}`, 'GET', tokens.admin!);
      expect(listed.body.leases).toHaveLength(ROUNDS);
      expect(new Set(listed.body.leases.map((l: any) => l.start_time)).size).toBe(ROUNDS);
    }
  });

  it('a quota of one node: two simultaneous claims of different nodes on the two processes give one lease', async () => {
    const q = await http(`${a}/lease/v1/quotas/l1`, 'PUT', tokens.admin!, { max_nodes: 1 });
    expect(q.status, JSON.stringify(q.body)).toBe(200);
    const outcomes: number[][] = [];
    for (let round = 0; round < 10; round++) {
      const window = { start_time: formatLeaseTime(T + (100 + round) * HOUR), end_time: formatLeaseTime(T + (101 + round) * HOUR) };
      const results = await Promise.all([
        http(`${a}/lease/v1/offers/${offers[1]}/claim`, 'POST', tokens.l1!, window),
        http(`${b}/lease/v1/offers/${offers[2]}/claim`, 'POST', tokens.l1!, window),
      ]);
      outcomes.push(results.map((r) => r.status).sort());
    }
    expect(outcomes).toEqual(Array.from({ length: 10 }, () => [201, 403]));
  });
});
