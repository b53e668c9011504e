/**
 * Migration 0015 (switch ports are owned, issue 14): the `switch_port_cabling` table — which
 * node a switch port is cabled to (its *registration*, set by an admin) and which bare-metal
 * port of that node holds it (its *claim*). See src/domain/networking/cabling.ts.
 *
 * | column                | what |
 * |-----------------------|------|
 * | `switch_uuid`         | the switch (rows go with it: `on delete cascade`) |
 * | `port_id`             | the switch's name for the port (`local_link_connection.port_id`) |
 * | `node_id`             | the node the switch port is registered to (rows go with it) |
 * | `baremetal_port_uuid` | the bare-metal port that holds the switch port, or null |
 * | `claimed_at`          | epoch ms of that claim (a claim whose port never wrote its cabling expires) |
 * | `registered_at`       | epoch ms of the registration |
 *
 * Existing data: each switch port that bare-metal ports already name is registered to the node
 * of the oldest such port, which holds it — what esi programmed before this migration.
 */
import { sql, type Kysely } from 'kysely';

/** Create the table and register the cabling esi already had. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('switch_port_cabling')
    .addColumn('switch_uuid', 'text', (c) => c.notNull().references('switches.id').onDelete('cascade'))
    .addColumn('port_id', 'text', (c) => c.notNull())
    .addColumn('node_id', 'bigint', (c) => c.notNull().references('nodes.id').onDelete('cascade'))
    .addColumn('baremetal_port_uuid', 'text')
    .addColumn('claimed_at', 'bigint')
    .addColumn('registered_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('switch_port_cabling_pk', ['switch_uuid', 'port_id'])
    .execute();
  await db.schema.createIndex('switch_port_cabling_port_idx').on('switch_port_cabling').column('baremetal_port_uuid').execute();
  await db.schema.createIndex('switch_port_cabling_node_idx').on('switch_port_cabling').column('node_id').execute();

  const switches = (await sql<{ id: string; name: string; switch_id: string }>`select id, name, switch_id from switches`.execute(db)).rows;
  if (switches.length === 0) return;
  const byName = new Map(switches.map((s) => [s.name, s.id]));
  const byId = new Map(switches.map((s) => [s.switch_id.toLowerCase(), s.id]));
  const ports = (
    await sql<{
      uuid: string;
      node_id: number;
      local_link_connection: string;
    }>`select uuid, node_id, local_link_connection from ports order by id`.execute(db)
  ).rows;
  const now = Date.now();
  const seen = new Set<string>();
  for (const p of ports) {
    let llc: Record<string, unknown>;
    try {
      llc = JSON.parse(p.local_link_connection) as Record<string, unknown>;
    } catch {
      continue;
    }
    const portId = typeof llc.port_id === 'string' ? llc.port_id : '';
    const info = typeof llc.switch_info === 'string' ? llc.switch_info : '';
    const sw = info !== '' ? byName.get(info) : typeof llc.switch_id === 'string' ? byId.get(llc.switch_id.toLowerCase()) : undefined;
    if (portId === '' || sw === undefined || seen.has(`${sw}\u0000${portId}`)) continue;
    seen.add(`${sw}\u0000${portId}`);
    await sql`insert into switch_port_cabling (switch_uuid, port_id, node_id, baremetal_port_uuid, claimed_at, registered_at)
      values (${sw}, ${portId}, ${Number(p.node_id)}, ${p.uuid}, ${now}, ${now})`.execute(db);
  }
}

/** Drop the table. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('switch_port_cabling').ifExists().execute();
}
