/**
 * The crash suite's invariant checker (issue 23, docs/architecture.md "Invariants across
 * records"): reads the records straight from the database (SQLite file or PostgreSQL, the same
 * SQL) and the image store's folder, and lists every disagreement between records that must
 * agree. A list that is empty once esi has settled is the suite's pass condition; transient
 * states (a node cleaning, a lease waiting to be applied) are reported too, so a caller waits for
 * the list to empty rather than asserting at once.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { UNSTABLE_STATES } from '../../../src/domain/inventory/states.ts';

/** Access to the cloud's database: `all` runs a query (a write returns no rows). */
export interface Reader {
  all(sql: string): Promise<any[]>;
  close(): Promise<void>;
}

/** Open the database of a data directory (SQLite) or at `url` (PostgreSQL). */
export async function open(dataDir: string, url: string | null): Promise<Reader> {
  if (url !== null) {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    return { all: async (q) => (await c.query(q)).rows, close: () => c.end() };
  }
  const db = new Database(path.join(dataDir, 'esi.sqlite'), { fileMustExist: true });
  db.pragma('busy_timeout = 5000');
  return {
    all: (q) => {
      const st = db.prepare(q);
      return Promise.resolve(st.reader ? st.all() : (st.run(), []));
    },
    close: () => Promise.resolve(void db.close()),
  };
}

const json = (v: unknown): any => (typeof v === 'string' ? JSON.parse(v) : (v ?? {}));
const num = (v: unknown): number => Number(v);
/** Lease statuses that hold a node's window (esi-leap's blocking statuses). */
const BLOCKING = new Set(['created', 'active', 'wait fulfill', 'wait expire', 'wait cancel']);

/**
 * Every disagreement between the records of the cloud in `dataDir` (database at `url`, or the
 * SQLite file of the data directory), as one line each; empty when all agree.
 */
export async function violations(dataDir: string, url: string | null): Promise<string[]> {
  const r = await open(dataDir, url);
  try {
    const now = Date.now();
    const out: string[] = [];
    const nodes = await r.all(
      'select id, uuid, lessee, properties, provision_state, target_power_state, reservation, allocation_uuid, instance_uuid from nodes',
    );
    const leases = await r.all(
      'select uuid, project_id, resource_uuid, start_time, end_time, status, offer_uuid, parent_lease_uuid from leases',
    );
    const offers = await r.all('select uuid, start_time, end_time, status from offers');
    const quotas = await r.all('select project_id, max_nodes from lease_quotas where max_nodes is not null');
    out.push(...leaseNode(nodes, leases, now), ...leaseOffer(leases, offers, now), ...quota(leases, quotas, now), ...nodeSettled(nodes));
    const ports = await r.all('select uuid, internal_info, local_link_connection from ports');
    const nports = await r.all('select id, bound_port_uuid from network_ports');
    const sports = await r.all(
      'select s.name, p.port_id, p.desired_rev, p.applied_rev, p.status from switch_ports p join switches s on s.id = p.switch_uuid',
    );
    out.push(...portVif(ports, nports, sports));
    const fips = await r.all('select id, floating_port_id, floating_ip_address from floatingips');
    const pfs = await r.all('select id, floatingip_id, internal_port_id, internal_ip_address from port_forwardings');
    const ips = await r.all('select port_id, ip_address from network_ip_allocations');
    const fipPorts = await r.all("select id from network_ports where device_owner = 'network:floatingip'");
    out.push(...floatingIps(fips, pfs, ips, fipPorts));
    const allocs = await r.all('select uuid, node_id, state from allocations');
    const servers = await r.all('select uuid, node_uuid, task_state from servers where deleted_at is null');
    out.push(...allocationNode(nodes, allocs, servers));
    const images = await r.all('select id, status, size, os_hash_algo, os_hash_value from images');
    out.push(...imageFiles(path.join(dataDir, 'images'), images));
    return out;
  } finally {
    await r.close();
  }
}

/** Lease ↔ node: the current lease is carried with its lessee; nothing else is. */
function leaseNode(nodes: any[], leases: any[], now: number): string[] {
  const out: string[] = [];
  const byUuid = new Map(leases.map((l) => [l.uuid as string, l]));
  const active = leases.filter((l) => l.status === 'active');
  const isCurrent = (l: any) =>
    num(l.start_time) <= now &&
    num(l.end_time) > now &&
    !active.some(
      (s) => s.parent_lease_uuid === l.uuid && s.resource_uuid === l.resource_uuid && num(s.start_time) <= now && num(s.end_time) > now,
    );
  const nodeBy = new Map(nodes.map((n) => [n.uuid as string, n]));
  for (const l of active) {
    if (!isCurrent(l)) continue;
    const n = nodeBy.get(l.resource_uuid);
    if (n === undefined) out.push(`lease ${l.uuid} is active on node ${l.resource_uuid}, which does not exist`);
    else if (n.lessee !== l.project_id || json(n.properties).lease_uuid !== l.uuid)
      out.push(`lease ${l.uuid} is active but node ${n.uuid} has lessee ${n.lessee}, lease_uuid ${json(n.properties).lease_uuid}`);
  }
  for (const n of nodes) {
    const carried = json(n.properties).lease_uuid as string | undefined;
    if (carried !== undefined) {
      const l = byUuid.get(carried);
      if (l === undefined || l.status === 'expired' || l.status === 'deleted')
        out.push(`node ${n.uuid} carries lease ${carried}, which is ${l?.status ?? 'unknown'}`);
    }
    if (n.lessee !== null) {
      const l = carried === undefined ? undefined : byUuid.get(carried);
      if (l === undefined || l.status !== 'active' || !isCurrent(l))
        out.push(`node ${n.uuid} has lessee ${n.lessee} without a current active lease (carries ${carried}, ${l?.status})`);
    }
  }
  for (const l of leases) {
    if (l.status.startsWith('wait ')) out.push(`lease ${l.uuid} is still ${l.status}`);
    else if (l.status === 'created' && num(l.start_time) <= now) out.push(`lease ${l.uuid} is due but still created`);
    else if (l.status === 'active' && num(l.end_time) <= now) out.push(`lease ${l.uuid} is over but still active`);
  }
  return out;
}

/** Lease ↔ offer: a deleted offer has no live lease; leases within their offer; no double booking. */
function leaseOffer(leases: any[], offers: any[], now: number): string[] {
  const out: string[] = [];
  const offerBy = new Map(offers.map((o) => [o.uuid as string, o]));
  for (const l of leases) {
    if (l.offer_uuid === null || !BLOCKING.has(l.status)) continue;
    const o = offerBy.get(l.offer_uuid);
    if (o === undefined) out.push(`lease ${l.uuid} names offer ${l.offer_uuid}, which does not exist`);
    else if (o.status === 'deleted' && num(o.end_time) > now) out.push(`lease ${l.uuid} is ${l.status} but its offer ${o.uuid} is deleted`);
    else if (num(l.start_time) < num(o.start_time) || num(l.end_time) > num(o.end_time))
      out.push(`lease ${l.uuid} lies outside its offer ${o.uuid}`);
  }
  const byNode = new Map<string, any[]>();
  for (const l of leases) if (BLOCKING.has(l.status)) byNode.set(l.resource_uuid, [...(byNode.get(l.resource_uuid) ?? []), l]);
  for (const [node, ls] of byNode) {
    for (const a of ls) {
      for (const b of ls) {
        if (a.uuid >= b.uuid || a.parent_lease_uuid === b.uuid || b.parent_lease_uuid === a.uuid) continue;
        if (num(a.start_time) < num(b.end_time) && num(b.start_time) < num(a.end_time))
          out.push(`leases ${a.uuid} and ${b.uuid} overlap on node ${node}`);
      }
    }
  }
  return out;
}

/** Quotas: no project holds more nodes at once (now or later) than its `max_nodes`. */
function quota(leases: any[], quotas: any[], now: number): string[] {
  const out: string[] = [];
  for (const q of quotas) {
    const held = leases.filter((l) => l.project_id === q.project_id && BLOCKING.has(l.status) && num(l.end_time) > now);
    // The peak of held nodes is reached at some lease's start (or now).
    for (const t of [now, ...held.map((l) => Math.max(now, num(l.start_time)))]) {
      const at = new Set(held.filter((l) => num(l.start_time) <= t && num(l.end_time) > t).map((l) => l.resource_uuid as string));
      if (at.size > num(q.max_nodes)) {
        out.push(`project ${q.project_id} holds ${at.size} nodes at ${new Date(t).toISOString()} (quota ${q.max_nodes})`);
        break;
      }
    }
  }
  return out;
}

/** Nodes have settled: no lock of a task, no transient provision or power state. */
function nodeSettled(nodes: any[]): string[] {
  const out: string[] = [];
  for (const n of nodes) {
    if (n.reservation !== null) out.push(`node ${n.uuid} is still reserved by ${n.reservation}`);
    if (UNSTABLE_STATES.has(n.provision_state)) out.push(`node ${n.uuid} is still ${n.provision_state}`);
    if (n.target_power_state !== null) out.push(`node ${n.uuid} still has target power state ${n.target_power_state}`);
  }
  return out;
}

/** Bare-metal port ↔ VIF (network port) ↔ switch port. */
function portVif(ports: any[], nports: any[], sports: any[]): string[] {
  const out: string[] = [];
  const nportBy = new Map(nports.map((p) => [p.id as string, p]));
  const vifOf = new Map<string, string>();
  for (const p of ports) {
    const vif = json(p.internal_info).tenant_vif_port_id as string | undefined;
    if (vif === undefined) continue;
    vifOf.set(p.uuid, vif);
    const np = nportBy.get(vif);
    if (np === undefined) out.push(`port ${p.uuid} has VIF ${vif}, which does not exist`);
    else if (np.bound_port_uuid !== p.uuid) out.push(`port ${p.uuid} has VIF ${vif}, which is bound to ${np.bound_port_uuid}`);
  }
  for (const np of nports) {
    if (np.bound_port_uuid !== null && vifOf.get(np.bound_port_uuid) !== np.id)
      out.push(`network port ${np.id} is bound to port ${np.bound_port_uuid}, whose VIF is ${vifOf.get(np.bound_port_uuid)}`);
  }
  for (const s of sports) {
    if (s.status !== 'applied' || num(s.desired_rev) !== num(s.applied_rev))
      out.push(`switch port ${s.name}/${s.port_id} is ${s.status} (desired ${s.desired_rev}, applied ${s.applied_rev})`);
  }
  return out;
}

/** Floating IP ↔ its port and address; port forwarding ↔ its internal port's address. */
function floatingIps(fips: any[], pfs: any[], ips: any[], fipPorts: any[]): string[] {
  const out: string[] = [];
  const has = new Set(ips.map((i) => `${i.port_id} ${i.ip_address}`));
  for (const f of fips)
    if (!has.has(`${f.floating_port_id} ${f.floating_ip_address}`))
      out.push(`floating IP ${f.id} (${f.floating_ip_address}) is not an address of its port ${f.floating_port_id}`);
  for (const pf of pfs)
    if (!has.has(`${pf.internal_port_id} ${pf.internal_ip_address}`))
      out.push(`port forwarding ${pf.id} targets ${pf.internal_ip_address}, not an address of port ${pf.internal_port_id}`);
  const owned = new Set(fips.map((f) => f.floating_port_id as string));
  for (const p of fipPorts) if (!owned.has(p.id)) out.push(`network port ${p.id} is a floating IP's port without a floating IP`);
  return out;
}

/** Allocation ↔ node, server ↔ node. */
function allocationNode(nodes: any[], allocs: any[], servers: any[]): string[] {
  const out: string[] = [];
  const allocBy = new Map(allocs.map((a) => [a.uuid as string, a]));
  const nodeById = new Map(nodes.map((n) => [String(n.id), n]));
  for (const n of nodes) {
    if (n.allocation_uuid === null) continue;
    const a = allocBy.get(n.allocation_uuid);
    if (a === undefined) out.push(`node ${n.uuid} names allocation ${n.allocation_uuid}, which does not exist`);
    else if (String(a.node_id) !== String(n.id)) out.push(`node ${n.uuid} names allocation ${a.uuid}, which is on node id ${a.node_id}`);
  }
  for (const a of allocs) {
    if (a.state === 'allocating') out.push(`allocation ${a.uuid} is still allocating`);
    if (a.node_id === null) continue;
    const n = nodeById.get(String(a.node_id));
    if (n === undefined || n.allocation_uuid !== a.uuid)
      out.push(`allocation ${a.uuid} is on node id ${a.node_id}, which names ${n?.allocation_uuid}`);
  }
  const nodeBy = new Map(nodes.map((n) => [n.uuid as string, n]));
  for (const s of servers) {
    if (s.node_uuid === null) continue;
    const n = nodeBy.get(s.node_uuid);
    if (n === undefined || n.instance_uuid !== s.uuid)
      out.push(`server ${s.uuid} is on node ${s.node_uuid}, whose instance is ${n?.instance_uuid}`);
  }
  return out;
}

/** The digests of stored files already read, by path, size and modification time. */
const digests = new Map<string, string>();

/** The `algo` digest (hex) of `file`, read once per version of the file. */
function digestOf(file: string, algo: string): string {
  const st = fs.statSync(file);
  const key = `${file} ${algo} ${st.size} ${st.mtimeMs}`;
  let d = digests.get(key);
  if (d === undefined) {
    d = createHash(algo).update(fs.readFileSync(file)).digest('hex');
    digests.set(key, d);
  }
  return d;
}

/**
 * Image record ↔ file: no data without a record; an active image's data whole (its size and
 * `os_hash_value`); no image left `saving` (an upload or capture cut by a kill is put back to
 * `queued`); no temporary files.
 */
function imageFiles(dir: string, images: any[]): string[] {
  const out: string[] = [];
  const ids = new Set(images.map((i) => i.id as string));
  const stored = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => !f.startsWith('.')) : [];
  for (const f of stored) if (!ids.has(f)) out.push(`image store holds ${f}, which has no image record`);
  for (const i of images) {
    if (i.status === 'saving') out.push(`image ${i.id} is still saving`);
    if (i.status !== 'active') continue;
    if (!stored.includes(i.id)) {
      out.push(`image ${i.id} is active without its data`);
      continue;
    }
    const file = path.join(dir, i.id as string);
    const size = fs.statSync(file).size;
    if (size !== num(i.size)) out.push(`image ${i.id} is active with ${size} bytes of data, not its ${i.size}`);
    else if (i.os_hash_value !== null && digestOf(file, i.os_hash_algo as string) !== i.os_hash_value)
      out.push(`image ${i.id} is active but its data does not match its ${i.os_hash_algo} hash`);
  }
  const tmp = path.join(dir, '.tmp');
  const litter = fs.existsSync(tmp)
    ? fs.readdirSync(tmp, { recursive: true, encoding: 'utf8' }).filter((f) => fs.statSync(path.join(tmp, f)).isFile())
    : [];
  for (const f of litter) out.push(`temporary file .tmp/${f} is left in the image store`);
  return out;
}
