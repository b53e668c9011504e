/**
 * Issue 23's crash suite: real `esi server` processes killed with SIGKILL at seeded random
 * instants while every flow of test/api/crash/flows.ts runs at once, then started again on the
 * same data directory (and PostgreSQL database in the api-pg project). After each restart the
 * suite waits for esi to settle and checks the invariants across records
 * (test/api/crash/invariants.ts: lease ↔ node, lease ↔ offer, quotas, port ↔ VIF ↔ switch port,
 * allocation and server ↔ node, image record ↔ file, no temporary files, no node left mid-task).
 * One round in every three is also killed during its restart (migrations, lock recovery, first
 * sweeps or just listening), then started once more.
 *
 * `ESI_CRASH_SEED=<n>` replays another sequence of kill instants (the seed is printed; a failure
 * reproduces with it), `ESI_CRASH_ROUNDS=<n>` plays more rounds (default 6). The report printed
 * at the end lists each kill: its round, its instant and the step each flow was in.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { rng } from '../../../bench/lib/random.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import { projectWithUser, tokenFor } from '../lease/processes.ts';
import { CrashCloud } from './cloud.ts';
import { writeDamage } from './damage.ts';
import type { FlowContext } from './flow-kit.ts';
import { setUpCompute } from './flows-compute.ts';
import { FLOWS, loop } from './flows.ts';
import { violations } from './invariants.ts';
import { setUpNetworks } from './setup.ts';

const SEED = Number(process.env.ESI_CRASH_SEED ?? 230023);
const ROUNDS = Number(process.env.ESI_CRASH_ROUNDS ?? 6);
/** The window in which a kill lands, ms after the flows start. */
const KILL_FROM_MS = 200;
const KILL_TO_MS = 5000;
/**
 * A kill during a restart lands up to this long after the spawn, ms: start-up takes 4–6 s here
 * (migrations, the conductor name's watch, lock recovery, the first sweeps), so most land in it
 * and some just after it listens.
 */
const RESTART_KILL_TO_MS = 8000;
/**
 * How long esi may take to settle after a restart. Below the 60 s expiry of a lease node claim on
 * purpose: a restarted process releases the claims of its previous life at once
 * (`LeaseLifecycle.releaseClaimsOfPreviousLife`); waiting out the expiry instead fails here.
 */
const SETTLE_MS = 45_000;

describe('esi killed with SIGKILL at random instants in every flow', () => {
  const cloud = new CrashCloud();
  afterAll(() => cloud.close());

  it('restarts into records that agree, every time', async () => {
    const random = rng(SEED);
    console.info(`crash suite: ESI_CRASH_SEED=${SEED}, ${ROUNDS} rounds, ${Object.keys(FLOWS).length} flows`);
    await cloud.init();
    await cloud.start();
    const admin = (await cloud.call('GET', '/identity/v3/projects?name=admin')).body.projects[0].id as string;
    const lesseeProject = await projectWithUser(cloud.url, cloud.token, 'crash-lessee', 'crash-lessee', 'pw-crash-lessee', 'lessee');
    // The lessee may also offer what it leases (a sub-lease needs esi-leap's owner role).
    const lesseeUser = (await cloud.call('GET', '/identity/v3/users?name=crash-lessee')).body.users[0].id as string;
    const ownerRole = (await cloud.call('GET', '/identity/v3/roles?name=owner')).body.roles[0]?.id as string | undefined;
    const role = ownerRole ?? (await cloud.call('POST', '/identity/v3/roles', { role: { name: 'owner' } })).body.role.id;
    expect((await cloud.call('PUT', `/identity/v3/projects/${lesseeProject}/users/${lesseeUser}/roles/${role}`)).status).toBe(204);
    const quotaProject = await projectWithUser(cloud.url, cloud.token, 'crash-quota', 'crash-quota', 'pw-crash-quota', 'lessee');
    expect((await cloud.call('PUT', `/lease/v1/quotas/${quotaProject}`, { max_nodes: 3 })).status).toBe(200);
    const net = await setUpNetworks(cloud);
    // The server flow's nodes, flavor and image (flows-compute.ts), as admin.
    const setup = { project: '', token: cloud.token };
    await setUpCompute({ cloud, round: 0, admin, lessee: setup, quota: setup, net, mark: () => undefined });

    const kills: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const steps = new Map<string, string>();
      const ctx = (name: string): FlowContext => ({
        cloud,
        round,
        admin,
        lessee: { project: lesseeProject, token: lesseeToken },
        quota: { project: quotaProject, token: quotaToken },
        net,
        mark: (step) => steps.set(name, step),
      });
      const lesseeToken = await tokenFor(cloud.url, 'crash-lessee', 'pw-crash-lessee', 'crash-lessee');
      const quotaToken = await tokenFor(cloud.url, 'crash-quota', 'pw-crash-quota', 'crash-quota');
      const running = Object.entries(FLOWS).map(([name, flow]) => loop(flow, ctx(name), name));
      const at = Math.round(KILL_FROM_MS + random() * (KILL_TO_MS - KILL_FROM_MS));
      await new Promise((r) => setTimeout(r, at));
      await cloud.kill();
      const refusals = (await Promise.all(running)).flat();
      const where = [...steps].map(([f, s]) => `${f}: ${s}`).join('; ');
      kills.push(`kill ${kills.length + 1}: round ${round}, ${at} ms into the flows — ${where}`);
      if (refusals.length > 0) console.info(`round ${round}: refusals before the kill: ${refusals.slice(0, 5).join(' | ')}`);

      if (round % 3 === 1) {
        const after = Math.round(random() * RESTART_KILL_TO_MS);
        const reached = await cloud.killDuringStart(after);
        kills.push(`kill ${kills.length + 1}: round ${round}, during the restart, ${after} ms after the spawn (${reached})`);
      }
      const restartAt = Date.now();
      await cloud.start();
      const left = await violations(cloud.dataDir, cloud.databaseUrl);
      const settled = await waitFor(
        () => violations(cloud.dataDir, cloud.databaseUrl),
        (v) => v.length === 0,
        { timeoutMs: SETTLE_MS, intervalMs: 500, what: `round ${round}: the records to agree (seed ${SEED})`, show: (v) => v.join('\n') },
      ).catch((err: unknown) => {
        console.info(kills.join('\n'));
        console.info(cloud.output().slice(-4000));
        throw err;
      });
      expect(settled).toEqual([]);
      const took = ((Date.now() - restartAt) / 1000).toFixed(1);
      console.info(
        `round ${round}: restarted and settled in ${took} s; right after the restart ${left.length} disagreement(s): ${left.slice(0, 8).join(' | ')}`,
      );
    }
    console.info(`crash suite (ESI_CRASH_SEED=${SEED}): ${kills.length} kills\n${kills.join('\n')}`);
    expect(kills.length).toBeGreaterThanOrEqual(ROUNDS);

    // The checker sees each kind of damage (so the rounds above looked), and esi repairs all of
    // it once it starts again.
    await cloud.kill();
    const damage = await writeDamage(cloud.dataDir, cloud.databaseUrl);
    const seen = await violations(cloud.dataDir, cloud.databaseUrl);
    for (const d of damage)
      expect(
        seen.some((v) => v.includes(d.expect)),
        `${d.what}: ${seen.join('\n')}`,
      ).toBe(true);
    const repairFrom = Date.now();
    await cloud.start();
    await waitFor(
      () => violations(cloud.dataDir, cloud.databaseUrl),
      (v) => v.length === 0,
      { timeoutMs: SETTLE_MS, intervalMs: 500, what: 'the damage to be repaired', show: (v) => v.join('\n') },
    );
    console.info(`damage written: ${damage.map((d) => d.what).join('; ')}; repaired in ${((Date.now() - repairFrom) / 1000).toFixed(1)} s`);
  }, 900_000);
});
