/**
 * The conflict predicate shared by the three lease paths and offer creation: the earliest
 * offer or lease overlapping a window (half-open: back-to-back is fine); and the 409 messages,
 * which name the holder of the window only to a caller that may see it.
 */
import { describe, expect, it } from 'vitest';
import { ConflictError } from '../../../src/domain/errors.ts';
import { checkLeaseWindow, checkOfferWindow, findConflict } from '../../../src/domain/leasing/conflicts.ts';
import { SEES_ALL, type Viewer } from '../../../src/domain/leasing/viewer.ts';
import type { Lease, Offer } from '../../../src/domain/leasing/model.ts';
import type { LeasingReader } from '../../../src/domain/leasing/repository.ts';
import { overlaps } from '../../../src/domain/leasing/windows.ts';

const H = 3_600_000;
const T0 = Date.UTC(2030, 0, 1);

function lease(uuid: string, from: number, to: number): Lease {
  return {
    uuid,
    name: null,
    project_id: 'l1',
    owner_id: 'o1',
    purpose: null,
    resource_type: 'ironic_node',
    resource_uuid: 'n1',
    start_time: T0 + from * H,
    end_time: T0 + to * H,
    fulfill_time: null,
    expire_time: null,
    status: 'created',
    properties: {},
    offer_uuid: null,
    parent_lease_uuid: null,
    created_at: 0,
    updated_at: 0,
  };
}

function offer(uuid: string, from: number, to: number): Offer {
  return {
    uuid,
    name: null,
    project_id: 'o1',
    lessee_id: null,
    resource_type: 'ironic_node',
    resource_uuid: 'n1',
    start_time: T0 + from * H,
    end_time: T0 + to * H,
    status: 'available',
    properties: {},
    parent_lease_uuid: null,
    created_at: 0,
    updated_at: 0,
  };
}

const win = (from: number, to: number) => ({ start: T0 + from * H, end: T0 + to * H });

describe('findConflict', () => {
  const leases = [lease('L2', 10, 12), lease('L1', 2, 4)];
  const offers = [offer('O1', 20, 30)];

  it('names the earliest conflicting lease or offer with its window', () => {
    expect(findConflict(win(3, 11), leases, offers)).toMatchObject({ kind: 'Lease', uuid: 'L1', start: T0 + 2 * H, end: T0 + 4 * H });
    expect(findConflict(win(11, 25), leases, offers)).toMatchObject({ kind: 'Lease', uuid: 'L2' });
    expect(findConflict(win(25, 26), leases, offers)).toMatchObject({ kind: 'Offer', uuid: 'O1' });
  });

  it('lets back-to-back windows and gaps through', () => {
    expect(findConflict(win(4, 10), leases, offers)).toBeUndefined();
    expect(findConflict(win(12, 20), leases, offers)).toBeUndefined();
    expect(findConflict(win(30, 40), leases, offers)).toBeUndefined();
    expect(findConflict(win(0, 2), leases, offers)).toBeUndefined();
  });

  it('catches a window that contains an existing one', () => {
    expect(findConflict(win(0, 100), [], offers)).toMatchObject({ uuid: 'O1' });
  });
});

/** A reader over fixed leases and offers: only what the conflict checks read. */
function reader(leases: readonly Lease[], offers: readonly Offer[]): LeasingReader {
  const span = (x: Lease | Offer) => ({ start: x.start_time, end: x.end_time });
  return {
    getOffer: async (uuid: string) => offers.find((o) => o.uuid === uuid) ?? null,
    getLease: async (uuid: string) => leases.find((l) => l.uuid === uuid) ?? null,
    overlappingLeases: async (scope: Record<string, string>, w: { start: number; end: number }) =>
      leases.filter(
        (l) =>
          ('offerUuid' in scope
            ? l.offer_uuid === scope.offerUuid
            : 'parentLeaseUuid' in scope
              ? l.parent_lease_uuid === scope.parentLeaseUuid
              : l.resource_uuid === scope.resourceUuid) && overlaps(w, span(l)),
      ),
    overlappingOffers: async (scope: Record<string, string>, w: { start: number; end: number }) =>
      offers.filter(
        (o) =>
          ('parentLeaseUuid' in scope ? o.parent_lease_uuid === scope.parentLeaseUuid : o.resource_uuid === scope.resourceUuid) &&
          overlaps(w, span(o)),
      ),
  } as unknown as LeasingReader;
}

const NOBODY: Viewer = { seesLease: () => false, seesOffer: () => false, seesPolicy: () => false, seesQuota: () => false };

async function message(p: Promise<void>): Promise<string> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConflictError);
  return (err as Error).message;
}

describe('conflict messages', () => {
  const theirs = { ...lease('L-o2', 2, 4), project_id: 'o2' };
  const held = [theirs, { ...lease('L-claim', 10, 12), offer_uuid: 'O-open' }];
  const open = { ...offer('O-open', 8, 20) };
  const tx = reader(held, [open, offer('O-later', 30, 40)]);
  const at = { resource_type: 'ironic_node', resource_uuid: 'n1', parent_lease_uuid: null };

  it('name the lease or offer holding the window to a caller that may see it', async () => {
    expect(await message(checkLeaseWindow(tx, at, win(3, 5), SEES_ALL))).toBe(
      'Time conflict for ironic_node n1. Lease L-o2 holds it from 2030-01-01T02:00:00 to 2030-01-01T04:00:00.',
    );
    expect(await message(checkOfferWindow(tx, at, win(35, 36), SEES_ALL))).toMatch(/Offer O-later holds it/);
  });

  it('give only the window to a caller that may not see it (direct lease, offer, claim)', async () => {
    expect(await message(checkLeaseWindow(tx, at, win(3, 5), NOBODY))).toBe(
      'Time conflict for ironic_node n1. It is taken from 2030-01-01T02:00:00 to 2030-01-01T04:00:00.',
    );
    expect(await message(checkOfferWindow(tx, at, win(35, 36), NOBODY))).toBe(
      'Time conflict for ironic_node n1. It is taken from 2030-01-02T06:00:00 to 2030-01-02T16:00:00.',
    );
    const claim = await message(checkLeaseWindow(tx, { ...at, offer_uuid: 'O-open' }, win(11, 13), NOBODY));
    expect(claim).toBe(
      'Offer O-open has no availabilities at given time range 2030-01-01T11:00:00, 2030-01-01T13:00:00. It is taken from 2030-01-01T10:00:00 to 2030-01-01T12:00:00.',
    );
    expect(claim).not.toContain('L-claim');
  });

  it('decide per object: a caller sees its own lease named and another project’s hidden', async () => {
    const mine: Viewer = { ...NOBODY, seesLease: (l) => l.project_id === 'l1' };
    expect(await message(checkLeaseWindow(tx, at, win(3, 5), mine))).toMatch(/It is taken from/);
    expect(await message(checkLeaseWindow(tx, { ...at, offer_uuid: 'O-open' }, win(11, 13), mine))).toMatch(/Lease L-claim holds it/);
  });
});
