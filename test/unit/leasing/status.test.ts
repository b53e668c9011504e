/**
 * The lease and offer state machines (https://github.com/CCI-MOC/esi-leap esi_leap/common/statuses.py) and the boundaries the lease
 * manager schedules from them.
 */
import { describe, expect, it } from 'vitest';
import { LEASE_STATUSES, type LeaseStatus } from '../../../src/domain/leasing/model.ts';
import {
  isLeaseFinal,
  leaseNextBoundary,
  leaseStatusesAccepting,
  leaseTransition,
  offerNextBoundary,
  offerStatusesAccepting,
  offerTransition,
  LEASE_BLOCKING,
  LEASE_DELETABLE,
} from '../../../src/domain/leasing/status.ts';

describe('lease state machine', () => {
  it('walks the normal life: created → active → expired', () => {
    expect(leaseTransition('created', 'fulfill')).toBe('active');
    expect(leaseTransition('active', 'expire')).toBe('expired');
  });

  it('parks refused node changes in wait states and leaves them on success', () => {
    expect(leaseTransition('created', 'fulfill_busy')).toBe('wait fulfill');
    expect(leaseTransition('wait fulfill', 'fulfill')).toBe('active');
    expect(leaseTransition('active', 'expire_busy')).toBe('wait expire');
    expect(leaseTransition('wait expire', 'expire')).toBe('expired');
    expect(leaseTransition('active', 'cancel_busy')).toBe('wait cancel');
    expect(leaseTransition('wait cancel', 'cancel')).toBe('deleted');
  });

  it('cancels from every deletable status (esi-leap LEASE_CAN_DELETE) and requests cancels the same way', () => {
    for (const s of LEASE_DELETABLE) {
      expect(leaseTransition(s, 'cancel')).toBe('deleted');
      expect(leaseTransition(s, 'request_cancel')).toBe('wait cancel');
    }
    expect(leaseTransition('wait expire', 'request_cancel')).toBeNull();
  });

  it('never leaves a final status', () => {
    for (const s of ['expired', 'deleted'] as LeaseStatus[]) {
      expect(isLeaseFinal(s)).toBe(true);
      for (const t of ['fulfill', 'fulfill_busy', 'expire', 'expire_busy', 'request_cancel', 'cancel', 'cancel_busy', 'fail'] as const) {
        expect(leaseTransition(s, t)).toBeNull();
      }
    }
  });

  it('does not fulfil an active, expiring or cancelling lease', () => {
    expect(leaseTransition('active', 'fulfill')).toBeNull();
    expect(leaseTransition('wait expire', 'fulfill')).toBeNull();
    expect(leaseTransition('wait cancel', 'fulfill')).toBeNull();
  });

  it('expires a lease in error at its end (esi-leap leaves it on the node)', () => {
    expect(leaseTransition('error', 'expire')).toBe('expired');
  });

  it('sends every live status to error on an unexpected failure', () => {
    for (const s of LEASE_STATUSES.filter((x) => !isLeaseFinal(x))) expect(leaseTransition(s, 'fail')).toBe('error');
  });

  it('lists the from-statuses of a trigger for conditional updates', () => {
    expect(leaseStatusesAccepting('fulfill').sort()).toEqual(['created', 'wait fulfill']);
    expect(leaseStatusesAccepting('expire').sort()).toEqual(['active', 'created', 'error', 'wait expire', 'wait fulfill']);
  });

  it('blocks windows with every non-final lease', () => {
    expect([...LEASE_BLOCKING].sort()).toEqual(LEASE_STATUSES.filter((s) => !isLeaseFinal(s)).sort());
  });
});

describe('offer state machine', () => {
  it('expires and cancels from available and error only', () => {
    expect(offerTransition('available', 'expire')).toBe('expired');
    expect(offerTransition('error', 'cancel')).toBe('deleted');
    expect(offerTransition('error', 'expire')).toBe('expired');
    expect(offerTransition('expired', 'cancel')).toBeNull();
    expect(offerTransition('deleted', 'expire')).toBeNull();
    expect(offerStatusesAccepting('cancel').sort()).toEqual(['available', 'error']);
  });
});

describe('next boundaries', () => {
  const lease = (status: LeaseStatus, startTime = 100, endTime = 200) => ({ status, start_time: startTime, end_time: endTime });

  it('waits for the start of a pending lease, then for its end', () => {
    expect(leaseNextBoundary(lease('created'), 50)).toBe(100);
    expect(leaseNextBoundary(lease('wait fulfill'), 150)).toBe(100); // due now
    expect(leaseNextBoundary(lease('active'), 150)).toBe(200);
    expect(leaseNextBoundary(lease('error'), 150)).toBe(200);
    expect(leaseNextBoundary(lease('wait expire'), 250)).toBe(200);
  });

  it('goes straight to the end of a pending lease that already ended', () => {
    expect(leaseNextBoundary(lease('created'), 250)).toBe(200);
  });

  it('makes a pending cancel due now and final leases never', () => {
    expect(leaseNextBoundary(lease('wait cancel'), 123)).toBe(123);
    expect(leaseNextBoundary(lease('expired'), 0)).toBeNull();
    expect(leaseNextBoundary(lease('deleted'), 0)).toBeNull();
  });

  it('ends offers at their end time unless they are final', () => {
    expect(offerNextBoundary({ status: 'available', end_time: 9 })).toBe(9);
    expect(offerNextBoundary({ status: 'error', end_time: 9 })).toBe(9);
    expect(offerNextBoundary({ status: 'deleted', end_time: 9 })).toBeNull();
  });
});
