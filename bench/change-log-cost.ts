/**
 * Benchmark `change-log-cost` (issue 20, item 6): what the change log's triggers (migration
 * 0025) cost the hottest writes, measured A/B in one process on two stores of the same schema,
 * one with the triggers and one without, in alternating rounds (the order flips every round) so
 * that the machine's load weighs on both alike:
 * - `node visible change` — a power state change and the display document's second statement,
 *   as the node repository writes them (the trigger logs a row);
 * - `node lock churn` — `reservation` only (the trigger's condition runs, nothing is logged);
 * - `lease insert` — a new lease (logged).
 * Reports the median time per write of each and the ratio with/without. `--pg` measures
 * PostgreSQL too (fresh schemas, dropped after); `--quick` fewer writes.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { openStore, type Store } from '../src/store/database.ts';
import * as changeLog from '../src/store/migrations/0025_change_log.ts';
import type { Benchmark, BenchOptions } from './lib/options.ts';
import { busyWarning, printTable, writeResults } from './lib/report.ts';

type Write = (store: Store, nodes: readonly string[], i: number) => Promise<void>;

const WRITES: Record<string, Write> = {
  'node visible change': async (s, nodes, i) => {
    const uuid = nodes[i % nodes.length]!;
    await s.db
      .updateTable('nodes')
      .set({ power_state: i % 2 ? 'power on' : 'power off', version: sql`version + 1`, updated_at: Date.now() } as never)
      .where('uuid', '=', uuid)
      .execute();
    await s.db
      .updateTable('nodes')
      .set({ display: '{}', display_version: sql`version` } as never)
      .where('uuid', '=', uuid)
      .execute();
  },
  'node lock churn': async (s, nodes, i) => {
    await s.db
      .updateTable('nodes')
      .set({ reservation: i % 2 ? null : 'c1', version: sql`version + 1`, updated_at: Date.now() } as never)
      .where('uuid', '=', nodes[i % nodes.length]!)
      .execute();
  },
  'lease insert': async (s, nodes, i) => {
    const now = Date.now();
    await s.db
      .insertInto('leases')
      .values({
        uuid: randomUUID(),
        name: null,
        project_id: 'p-lessee',
        owner_id: 'p-owner',
        purpose: null,
        resource_type: 'ironic_node',
        resource_uuid: nodes[i % nodes.length]!,
        start_time: now + i * 1000,
        end_time: now + i * 1000 + 500,
        fulfill_time: null,
        expire_time: null,
        status: 'created',
        properties: '{}',
        offer_uuid: null,
        parent_lease_uuid: null,
        created_at: now,
        updated_at: now,
      })
      .execute();
  },
};

/** A store with esi's schema, with or without the change log's triggers, and 1,000 nodes. */
async function openSide(pgUrl: string | null, schema: string, triggers: boolean): Promise<{ store: Store; nodes: string[] }> {
  const store = pgUrl
    ? await openStore({ databaseUrl: pgUrl, pgSchema: schema })
    : await openStore({ sqlitePath: path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'esi-clc-')), 'esi.db') });
  if (!triggers) await changeLog.down(store.db as never);
  const nodes: string[] = [];
  for (let i = 0; i < 1000; i++) {
    const uuid = randomUUID();
    await sql`insert into nodes (version, uuid, name, driver, conductor_group, owner, traits, driver_info, driver_internal_info, instance_info, properties, extra, network_data, clean_step, deploy_step, raid_config, target_raid_config, provision_state, maintenance, protected, retired, console_enabled, created_at)
      values (1, ${uuid}, ${`clc-${i}`}, 'fake-hardware', '', 'p-owner', '[]', '{}', '{}', '{}', '{"memory_mb": 65536}', '{}', '{}', '{}', '{}', '{}', '{}', 'available', 0, 0, 0, 0, ${Date.now()})`.execute(
      store.db,
    );
    nodes.push(uuid);
  }
  return { store, nodes };
}

async function runEngine(pgUrl: string | null, writes: number, log: (l: string) => void): Promise<Array<Record<string, unknown>>> {
  const engine = pgUrl ? 'postgres' : 'sqlite';
  const tag = `clc_${process.pid}`;
  const on = await openSide(pgUrl, `${tag}_on`, true);
  const off = await openSide(pgUrl, `${tag}_off`, false);
  const times: Record<string, { on: number[]; off: number[] }> = {};
  try {
    for (let round = 0; round < 6; round++) {
      for (const [name, write] of Object.entries(WRITES)) {
        const t = (times[name] ??= { on: [], off: [] });
        const sides =
          round % 2 === 0
            ? ([
                ['on', on],
                ['off', off],
              ] as const)
            : ([
                ['off', off],
                ['on', on],
              ] as const);
        for (const [label, side] of sides) {
          const t0 = performance.now();
          for (let i = 0; i < writes; i++) await write(side.store, side.nodes, round * writes + i);
          t[label].push(((performance.now() - t0) * 1000) / writes);
        }
      }
      log(`${engine}: round ${round + 1}/6`);
    }
  } finally {
    if (pgUrl) for (const s of ['on', 'off']) await sql.raw(`drop schema if exists ${tag}_${s} cascade`).execute(on.store.db);
    await on.store.close();
    await off.store.close();
  }
  const median = (a: number[]): number => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!;
  return Object.entries(times).map(([write, t]) => ({
    engine,
    write,
    with_us: median(t.on),
    without_us: median(t.off),
    ratio: median(t.on) / median(t.off),
  }));
}

/** The `change-log-cost` benchmark. */
export const changeLogCostBenchmark: Benchmark = {
  name: 'change-log-cost',
  description: 'cost of the change log triggers (migration 0025) on node updates and lease inserts, A/B in one process',
  async run(options: BenchOptions) {
    const writes = options.quick ? 500 : 3000;
    const rows = await runEngine(null, writes, options.log);
    if (options.pgUrl) rows.push(...(await runEngine(options.pgUrl, Math.round(writes / 3), options.log)));
    printTable(
      `change log triggers — median µs per write over 6 alternating rounds of ${writes} (PostgreSQL ${Math.round(writes / 3)})`,
      ['engine', 'write', 'with triggers', 'without', 'ratio'],
      rows.map((r) => [
        r.engine as string,
        r.write as string,
        (r.with_us as number).toFixed(1),
        (r.without_us as number).toFixed(1),
        (r.ratio as number).toFixed(2),
      ]),
    );
    const busy = busyWarning('during the run');
    if (busy) console.log(busy);
    options.log(`results written to ${writeResults('change-log-cost', { writes, rows })}`);
  },
};
