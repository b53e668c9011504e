/**
 * CLI output (src/cli/output.ts; issue 19, item 5): a `-c` that names no column of a command
 * that changes state is refused before anything is sent (nothing is created), `-c` matches a
 * list's label and the field name alike (`uuid` = `UUID`, `start_time` = `Start Time`), and
 * `-f csv` prints a header and quoted strings. Personas: the owner offers, the lessee requests
 * and claims, another project sees none of it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createPersonas, startTestServer, type Personas, type TestServer } from '../../helpers/harness.ts';
import { esi, personaEnv } from './support.ts';

let ts: TestServer;
let p: Personas;
let node: string;
const DAY = 86_400_000;
const start = Math.ceil((Date.now() + 5 * DAY) / 3_600_000) * 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString().slice(0, 19);

beforeAll(async () => {
  ts = await startTestServer();
  p = await createPersonas(ts);
  const n = await call(
    ts,
    p.admin,
    'POST',
    '/baremetal/v1/nodes',
    { name: 'col-1', driver: 'fake-hardware', owner: p.owner.projectId },
    { 'x-openstack-ironic-api-version': '1.78' },
  );
  expect(n.status, n.text).toBe(201);
  node = n.body.uuid;
});
afterAll(async () => ts?.close());

/** Rows of a leasing table. */
async function countRows(on: TestServer, table: 'offers' | 'leases'): Promise<number> {
  const r = await on.server.services.store.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

describe('-c and -f csv', () => {
  it('a bad -c on offer create, lease request and offer claim sends nothing and creates nothing', async () => {
    const offers = await countRows(ts, 'offers');
    const bad = await esi(
      ['offer', 'create', node, '--start-time', iso(start), '--end-time', iso(start + 30 * DAY), '-c', 'nonsense'],
      personaEnv(ts, 'owner'),
    );
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^esi: No recognized column names in \["nonsense"\]\. Recognized columns are \[/);
    expect(await countRows(ts, 'offers')).toBe(offers);

    const made = await esi(
      ['offer', 'create', node, '--start-time', iso(start), '--end-time', iso(start + 30 * DAY), '-f', 'value', '-c', 'uuid'],
      personaEnv(ts, 'owner'),
    );
    expect(made.code, made.stderr).toBe(0);
    const offer = made.stdout.trim();
    expect(offer).toMatch(/^[0-9a-f-]{36}$/);

    const leases = await countRows(ts, 'leases');
    const badRequest = await esi(
      ['lease', 'request', '--count', '1', '--start-time', iso(start), '--duration', '1h', '-c', 'nope'],
      personaEnv(ts, 'lessee'),
    );
    expect(badRequest.code).toBe(1);
    const badClaim = await esi(
      ['offer', 'claim', offer, '--start-time', iso(start), '--end-time', iso(start + DAY), '-c', 'nope'],
      personaEnv(ts, 'lessee'),
    );
    expect(badClaim.code).toBe(1);
    expect(await countRows(ts, 'leases')).toBe(leases);

    // The list's label or the field name: `-c uuid` picks `UUID` of the leases a request made.
    const requested = await esi(
      ['lease', 'request', '--count', '1', '--start-time', iso(start), '--duration', '1h', '-f', 'value', '-c', 'uuid', '-c', 'start_time'],
      personaEnv(ts, 'lessee'),
    );
    expect(requested.code, requested.stderr).toBe(0);
    expect(requested.stdout).toMatch(/^[0-9a-f-]{36} \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/);
    expect(await countRows(ts, 'leases')).toBe(leases + 1);
  });

  it('-f csv: a header line, then strings quoted; another project lists nothing but the header', async () => {
    const mine = await esi(['lease', 'list', '-f', 'csv', '-c', 'UUID', '-c', 'Resource'], personaEnv(ts, 'lessee'));
    expect(mine.code, mine.stderr).toBe(0);
    const lines = mine.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('"UUID","Resource"');
    expect(lines.length).toBeGreaterThanOrEqual(2);
    for (const line of lines.slice(1)) expect(line).toMatch(/^"[0-9a-f-]{36}","col-1"$/);
    const theirs = await esi(['lease', 'list', '-f', 'csv', '-c', 'UUID'], personaEnv(ts, 'other'));
    expect(theirs.code, theirs.stderr).toBe(0);
    expect(theirs.stdout).toBe('"UUID"\n');
    const shown = await esi(['offer', 'list', '-f', 'csv', '-c', 'uuid'], personaEnv(ts, 'owner'));
    expect(shown.stdout.split('\n')[0]).toBe('"UUID"');
  });
});
