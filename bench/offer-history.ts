/**
 * The lease history of the `offer-list` benchmark: one owner's nodes of a few resource
 * classes, re-offered once a year, with leases back to back in fixed slots over years of
 * history and a couple of months of future bookings — "a busy real cloud" of issue 22. Rows are
 * written with multi-row INSERTs (lease-env.ts), never through the API.
 *
 * Per node: slots of {@link SLOT_DAYS} days ending {@link FUTURE_SLOTS} slots after now; one
 * lease per slot, starting 0–3 days into it and 1 hour to 20 days long; past leases `expired`
 * (one in ten `deleted`: cancelled), the current one `active`, future ones `created`. Offers: one
 * per year of history, `expired`, and the current one `available` from the start of this year
 * of history to a year from now; each lease belongs to the offer whose window holds its start.
 */
import { randomUUID } from 'node:crypto';
import { bulkInsert, seedLeases, seedNodes, type LeaseBench, type SeedLease } from './lease-env.ts';
import { rng } from './lib/random.ts';

const D = 86_400_000;

/** Slot length: one lease per node per slot. */
export const SLOT_DAYS = 30;
/** Slots after now (future bookings). */
export const FUTURE_SLOTS = 2;
/** Offer length of the yearly re-offers. */
const OFFER_DAYS = 365;

/** The resource class the benchmark lists, and the others of the fleet. */
export const ASKED_CLASS = 'fc430';
const OTHER_CLASSES = ['r740xd', 'gpu-a100', 'storage-hdd', 'fc830', 'm620'];

/** Shape of a seeded history. */
export interface HistoryShape {
  readonly nodes: number;
  /** Nodes of {@link ASKED_CLASS}; the others are spread over the other classes. */
  readonly askedNodes: number;
  /** Leases per node (slots). */
  readonly leasesPerNode: number;
}

/** What was seeded. */
export interface History {
  readonly nodes: number;
  readonly askedNodes: number;
  readonly offers: number;
  readonly availableOffers: number;
  readonly leases: number;
  readonly pastLeases: number;
  readonly futureLeases: number;
}

/**
 * Seed the history (see the module comment) relative to `now`.
 * @returns counts of what was written
 */
export async function seedHistory(bench: LeaseBench, shape: HistoryShape, now: number): Promise<History> {
  const nodes = await seedNodes(bench, shape.nodes, (i) => ({
    name: `hist-${i}`,
    resourceClass: i < shape.askedNodes ? ASKED_CLASS : OTHER_CLASSES[i % OTHER_CLASSES.length]!,
    properties: { memory_mb: 131072, cpus: 40 },
  }));
  const first = now - (shape.leasesPerNode - FUTURE_SLOTS) * SLOT_DAYS * D;
  // Yearly offers from `first`; the last one (holding now) stays available to now + 1 year.
  const years = Math.max(1, Math.ceil((now - first) / (OFFER_DAYS * D)));
  const offerStart = (k: number) => first + k * OFFER_DAYS * D;
  const random = rng(22);
  const created = Date.now();
  let offers = 0;
  let availableOffers = 0;
  let leases = 0;
  let past = 0;
  let future = 0;
  let batch: SeedLease[] = [];
  let offerRows: Array<Record<string, unknown>> = [];
  const t = Date.now();
  for (let i = 0; i < nodes.length; i++) {
    const node = nodes[i]!;
    const offerUuids: string[] = [];
    for (let k = 0; k < years; k++) {
      const last = k === years - 1;
      const uuid = randomUUID();
      offerUuids.push(uuid);
      offerRows.push({
        uuid,
        name: null,
        project_id: bench.owner.id,
        lessee_id: null,
        resource_type: 'ironic_node',
        resource_uuid: node,
        start_time: offerStart(k),
        end_time: last ? now + OFFER_DAYS * D : offerStart(k + 1),
        status: last ? 'available' : 'expired',
        properties: '{}',
        parent_lease_uuid: null,
        created_at: created + offers,
        updated_at: created,
      });
      offers++;
      if (last) availableOffers++;
    }
    for (let j = 0; j < shape.leasesPerNode; j++) {
      const start = Math.round(first + j * SLOT_DAYS * D + random() * 3 * D);
      const end = start + Math.round(3_600_000 + random() * (20 * D - 3_600_000));
      const status = end <= now ? (random() < 0.1 ? 'deleted' : 'expired') : start <= now ? 'active' : 'created';
      if (end <= now) past++;
      if (start > now) future++;
      const k = Math.min(years - 1, Math.floor((start - first) / (OFFER_DAYS * D)));
      batch.push({
        node,
        offer: offerUuids[k]!,
        project: bench.lessees[Math.floor(random() * bench.lessees.length)]!.id,
        start,
        end,
        status,
      });
    }
    if (batch.length >= 20_000 || i === nodes.length - 1) {
      await bulkInsert(bench, 'offers', offerRows);
      await seedLeases(bench, batch);
      leases += batch.length;
      batch = [];
      offerRows = [];
      bench.log(`${bench.label}: ${leases.toLocaleString('en-US')} leases (${((Date.now() - t) / 1000).toFixed(0)} s)`);
    }
  }
  return { nodes: nodes.length, askedNodes: shape.askedNodes, offers, availableOffers, leases, pastLeases: past, futureLeases: future };
}
