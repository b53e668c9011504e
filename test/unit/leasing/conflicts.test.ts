/**
 * The conflict predicate shared by the three lease paths and offer creation: the earliest
 * offer or lease overlapping a window (half-open: back-to-back is fine).
 */
import { describe, expect, it } from 'vitest';
import { findConflict } from '../../../src/domain/leasing/conflicts.ts';
import type { Lease, Offer } from '../../../src/domain/leasing/model.ts';

const H = 3_600_000;
const T0 = Date.UTC(2030, 0, 1);

function lease(uuid: string, from: number, to: number): Lease {
  return {
    uuid,
    name: null,
    projectId: 'l1',
    ownerId: 'o1',
    purpose: null,
    resourceType: 'ironic_node',
    resourceUuid: 'n1',
    startTime: T0 + from * H,
    endTime: T0 + to * H,
    fulfillTime: null,
    expireTime: null,
    status: 'created',
    properties: {},
    offerUuid: null,
    parentLeaseUuid: null,
    createdAt: 0,
    updatedAt: 0,
  };
}

function offer(uuid: string, from: number, to: number): Offer {
  return {
    uuid,
    name: null,
    projectId: 'o1',
    lesseeId: null,
    resourceType: 'ironic_node',
    resourceUuid: 'n1',
    startTime: T0 + from * H,
    endTime: T0 + to * H,
    status: 'available',
    properties: {},
    parentLeaseUuid: null,
    createdAt: 0,
    updatedAt: 0,
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
