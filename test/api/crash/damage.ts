/**
 * Damage the crash suite writes into a stopped cloud's records and files, to show that the
 * invariant checker (invariants.ts) sees each kind of disagreement — so that a suite that finds
 * none after its kills has looked — and that esi, started again, repairs every one of them.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { open } from './invariants.ts';

/** One disagreement written: what the checker must say about it. */
export interface Damage {
  readonly what: string;
  /** A fragment of the checker's line for it. */
  readonly expect: string;
}

const quote = (s: string) => `'${s.replace(/'/g, "''")}'`;

/**
 * Write the damage into the cloud at `dataDir` (database at `url`, else its SQLite file); the
 * process must be stopped. Uses two nodes that carry no lease and are not allocated, a network
 * port that is not bound and a bare-metal port without a VIF (the suite's flows leave them).
 * @returns the damage written
 * @throws when the records hold no such node or port
 */
export async function writeDamage(dataDir: string, url: string | null): Promise<Damage[]> {
  const db = await open(dataDir, url);
  try {
    const nodes = await db.all(`select uuid, properties from nodes where lessee is null and allocation_uuid is null order by id`);
    const free = nodes.filter((n) => JSON.parse(n.properties).lease_uuid === undefined);
    const [a, b] = [free[0], free[1]];
    const np = (await db.all('select id from network_ports where bound_port_uuid is null'))[0];
    const bare = (await db.all('select uuid, internal_info from ports order by id')).find(
      (p) => JSON.parse(p.internal_info).tenant_vif_port_id === undefined,
    );
    if (a === undefined || b === undefined || np === undefined || bare === undefined)
      throw new Error('no free node, unbound network port or bare-metal port without a VIF to damage');
    const out: Damage[] = [];

    const gone = randomUUID();
    const props = JSON.stringify({ ...JSON.parse(a.properties), lease_uuid: gone });
    await db.all(`update nodes set lessee = 'crash-ghost', properties = ${quote(props)} where uuid = ${quote(a.uuid)}`);
    out.push({ what: 'a node carrying a lease that does not exist', expect: `node ${a.uuid} carries lease ${gone}` });

    const ghostPort = randomUUID();
    await db.all(`update network_ports set bound_port_uuid = ${quote(ghostPort)} where id = ${quote(np.id)}`);
    out.push({
      what: 'a network port bound to a bare-metal port that does not exist',
      expect: `network port ${np.id} is bound to port ${ghostPort}`,
    });

    const ghostVif = randomUUID();
    const info = JSON.stringify({ ...JSON.parse(bare.internal_info), tenant_vif_port_id: ghostVif });
    await db.all(`update ports set internal_info = ${quote(info)} where uuid = ${quote(bare.uuid)}`);
    out.push({ what: 'a bare-metal port whose VIF does not exist', expect: `port ${bare.uuid} has VIF ${ghostVif}, which does not exist` });

    const ghostAlloc = randomUUID();
    await db.all(`update nodes set allocation_uuid = ${quote(ghostAlloc)} where uuid = ${quote(b.uuid)}`);
    out.push({
      what: 'a node naming an allocation that does not exist',
      expect: `node ${b.uuid} names allocation ${ghostAlloc}`,
    });

    const server = randomUUID();
    await db.all(
      `insert into servers (uuid, name, project_id, user_id, flavor, node_uuid, reservation_id, hostname, created_at) values (${quote(server)}, 'crash-ghost', 'crash', 'crash', '{}', ${quote(b.uuid)}, 'r-crash', 'crash-ghost', ${Date.now()})`,
    );
    out.push({ what: 'a live server whose node does not name it', expect: `server ${server} is on node ${b.uuid}` });

    const images = path.join(dataDir, 'images');
    const orphan = randomUUID();
    fs.mkdirSync(images, { recursive: true });
    fs.writeFileSync(path.join(images, orphan), 'data of an image whose record is gone');
    out.push({ what: 'stored image data without a record', expect: `image store holds ${orphan}` });

    // A dead process's temporary folder (a pid above any this machine gives out).
    const tmp = path.join(images, '.tmp', `${os.hostname()}~99999999`);
    fs.mkdirSync(tmp, { recursive: true });
    fs.writeFileSync(path.join(tmp, `${orphan}.part`), 'half an upload');
    out.push({ what: 'a temporary upload file of a dead process', expect: `temporary file .tmp/${os.hostname()}~99999999/` });
    return out;
  } finally {
    await db.close();
  }
}
