/**
 * The conductor's pure decisions: which work a node has, what a take-over does to an orphaned
 * node, when a wait times out, whether to clean, which clean steps can run, what teardown
 * clears, which nodes the power sync reads; and failure messages without secrets.
 * Sources: https://docs.openstack.org/ironic/latest/user/states.html; Ironic 21.4's
 * ironic/conductor/manager.py (`_sync_power_states`).
 */
import { describe, expect, it } from 'vitest';
import { describeError, limit, MAX_ERROR_LENGTH, scrub, secretValues } from '../../../src/conductor/errors.ts';
import { recoverable, syncable, POWER_FAILURE } from '../../../src/conductor/power-sync.ts';
import { takeoverChanges } from '../../../src/conductor/takeover.ts';
import { timeoutChanges, waitTimeoutS } from '../../../src/conductor/timeouts.ts';
import { canRunCleanStep, requestedCleanSteps } from '../../../src/conductor/tasks/clean.ts';
import { skipsAutomatedClean as skipAutomatedClean } from '../../../src/domain/inventory/node-actions.ts';
import { teardownFields } from '../../../src/conductor/tasks/deploy.ts';
import { nextWork, WAIT_STATES, WORKING_STATES } from '../../../src/conductor/tasks/work.ts';
import { failedStageChanges } from '../../../src/conductor/tasks/run.ts';
import { InvalidInputError } from '../../../src/domain/errors.ts';
import { HardwareError } from '../../../src/domain/hardware/interfaces.ts';
import { PROVISION_STATES, type ProvisionState } from '../../../src/domain/inventory/states.ts';
import { SecretBoxError } from '../../../src/domain/secrets.ts';
import { makeNode } from './fixtures.ts';

describe('nextWork', () => {
  it('a pending power change comes first', () => {
    expect(nextWork({ target_power_state: 'power on', provision_state: 'deploying', target_provision_state: 'active' })).toEqual({
      kind: 'power',
      target: 'power on',
    });
  });

  it('every working state with a target is provision work; no other state is', () => {
    for (const state of PROVISION_STATES) {
      const w = nextWork({ target_power_state: null, provision_state: state, target_provision_state: 'active' });
      if (WORKING_STATES.has(state)) expect(w, state).toEqual({ kind: 'provision', state });
      else expect(w, state).toBeNull();
    }
    expect(nextWork({ target_power_state: null, provision_state: 'deploying', target_provision_state: null })).toBeNull();
  });

  it('wait states are not work', () => {
    for (const s of WAIT_STATES)
      expect(nextWork({ target_power_state: null, provision_state: s, target_provision_state: 'active' })).toBeNull();
  });
});

describe('takeoverChanges', () => {
  const expected: Record<string, [ProvisionState, ProvisionState | null]> = {
    deploying: ['deploy failed', 'active'],
    cleaning: ['clean failed', 'available'],
    verifying: ['enroll', null],
    inspecting: ['inspect failed', 'manageable'],
    adopting: ['adopt failed', 'active'],
    rescuing: ['rescue failed', 'rescue'],
    unrescuing: ['unrescue failed', 'active'],
    deleting: ['error', null],
    servicing: ['service failed', 'active'],
  };

  it('moves every working state to its failed state with a last_error naming the dead conductor', () => {
    expect(Object.keys(expected).sort()).toEqual([...WORKING_STATES].sort());
    for (const [state, [to, target]] of Object.entries(expected)) {
      const c = takeoverChanges(
        { uuid: 'n1', provision_state: state as ProvisionState, target_power_state: null, maintenance_reason: null },
        'dead',
        'me',
        42,
      )!;
      expect(c.provision_state, state).toBe(to);
      expect(c.target_provision_state, state).toBe(target);
      expect(c.provision_updated_at).toBe(42);
      expect(c.last_error).toContain('dead');
      expect(c.last_error).toContain(state);
    }
  });

  it('also puts a node taken over while cleaning in maintenance (fault "clean failure"), keeping an existing reason', () => {
    const c = takeoverChanges(
      { uuid: 'n1', provision_state: 'cleaning', target_power_state: null, maintenance_reason: null },
      'dead',
      'me',
      1,
    )!;
    expect(c).toMatchObject({ maintenance: true, fault: 'clean failure' });
    expect(c.maintenance_reason).toBe(c.last_error);
    const kept = takeoverChanges(
      { uuid: 'n1', provision_state: 'cleaning', target_power_state: null, maintenance_reason: 'ops' },
      'dead',
      'me',
      1,
    )!;
    expect(kept.maintenance_reason).toBeUndefined();
  });

  it("removes the failed stage's agent session and capture request, keeping the rest of driver_internal_info", () => {
    const dii = {
      agent_boot: 'service',
      agent_url: 'http://10.0.0.5:9999',
      agent_token_sealed: 'x',
      capture: { image_id: 'i' },
      clean_steps: [],
    };
    const c = takeoverChanges(
      { uuid: 'n1', provision_state: 'servicing', target_power_state: null, maintenance_reason: null, driver_internal_info: dii },
      'me',
      'me',
      1,
    )!;
    expect(c.provision_state).toBe('service failed');
    expect(c.driver_internal_info).toEqual({ clean_steps: [] });
    // Nothing of a stage: driver_internal_info is not written.
    const plain = takeoverChanges(
      { uuid: 'n1', provision_state: 'deploying', target_power_state: null, maintenance_reason: null, driver_internal_info: { a: 1 } },
      'me',
      'me',
      1,
    )!;
    expect(plain.driver_internal_info).toBeUndefined();
  });

  it('aborts a pending power change; leaves stable nodes without one alone', () => {
    const c = takeoverChanges(
      { uuid: 'n1', provision_state: 'active', target_power_state: 'rebooting', maintenance_reason: null },
      'dead',
      'me',
      1,
    )!;
    expect(c).toEqual({ target_power_state: null, last_error: expect.stringMatching(/rebooting.*aborted.*dead/) });
    expect(
      takeoverChanges({ uuid: 'n1', provision_state: 'active', target_power_state: null, maintenance_reason: null }, 'dead', 'me', 1),
    ).toBeNull();
    expect(
      takeoverChanges({ uuid: 'n1', provision_state: 'clean wait', target_power_state: null, maintenance_reason: null }, 'dead', 'me', 1),
    ).toBeNull();
  });

  it('says "restarted" for the conductor\'s own locks', () => {
    expect(
      takeoverChanges({ uuid: 'n1', provision_state: 'deploying', target_power_state: null, maintenance_reason: null }, 'me', 'me', 1)!
        .last_error,
    ).toMatch(/restarted/);
  });
});

describe('timeoutChanges', () => {
  const t = { deployCallbackTimeoutS: 10, cleanCallbackTimeoutS: 20, inspectWaitTimeoutS: 0, rescueCallbackTimeoutS: 30 };
  const wait = (state: ProvisionState, since: number, extra = {}) => ({
    uuid: 'n',
    provision_state: state,
    provision_updated_at: since,
    maintenance: false,
    maintenance_reason: null,
    ...extra,
  });

  it('maps each wait state to its setting', () => {
    expect(waitTimeoutS('wait call-back', t)).toBe(10);
    expect(waitTimeoutS('clean wait', t)).toBe(20);
    expect(waitTimeoutS('inspect wait', t)).toBe(0);
    expect(waitTimeoutS('rescue wait', t)).toBe(30);
    expect(waitTimeoutS('deploying', t)).toBeNull();
  });

  it('fails a wait at the timeout, not before', () => {
    expect(timeoutChanges(wait('wait call-back', 1000), 1000 + 9_999, t)).toBeNull();
    const c = timeoutChanges(wait('wait call-back', 1000), 1000 + 10_000, t)!;
    expect(c).toMatchObject({ provision_state: 'deploy failed', target_provision_state: 'active', provision_updated_at: 11_000 });
    expect(c.last_error).toMatch(/Timed out after 10 s/);
    expect(timeoutChanges(wait('rescue wait', 0), 30_000, t)).toMatchObject({ provision_state: 'rescue failed' });
  });

  it('a clean-wait timeout also sets maintenance with fault "clean failure"', () => {
    expect(timeoutChanges(wait('clean wait', 0), 20_000, t)).toMatchObject({
      provision_state: 'clean failed',
      maintenance: true,
      fault: 'clean failure',
      clean_step: {},
    });
  });

  it('0 disables a timeout; maintenance and non-wait states are never timed out', () => {
    expect(timeoutChanges(wait('inspect wait', 0), 1e12, t)).toBeNull();
    expect(timeoutChanges(wait('wait call-back', 0, { maintenance: true }), 1e12, t)).toBeNull();
    expect(timeoutChanges(wait('deploying', 0), 1e12, t)).toBeNull();
  });
});

describe('cleaning decisions', () => {
  it('skipAutomatedClean: the node setting wins, else the configuration (Ironic skip_automated_cleaning)', () => {
    expect(skipAutomatedClean(null, true)).toBe(false);
    expect(skipAutomatedClean(null, false)).toBe(true);
    expect(skipAutomatedClean(true, false)).toBe(false);
    expect(skipAutomatedClean(false, true)).toBe(true);
  });

  it('requested clean steps and whether the node can run them', () => {
    const steps = requestedCleanSteps({
      clean_steps: [
        { interface: 'deploy', step: 'erase_devices' },
        { interface: 'bios', step: 'factory_reset', args: {} },
      ],
    });
    expect(steps).toEqual([
      { interface: 'deploy', step: 'erase_devices' },
      { interface: 'bios', step: 'factory_reset' },
    ]);
    expect(requestedCleanSteps({})).toEqual([]);
    expect(canRunCleanStep(makeNode() as never, steps[0]!)).toBe(true);
    expect(canRunCleanStep(makeNode({ deploy_interface: 'direct' }) as never, steps[0]!)).toBe(false);
  });
});

describe('teardownFields', () => {
  it('clears the instance and deploy data; drops only an automatically set lessee', () => {
    const node = makeNode({
      lessee: 'p1',
      driver_internal_info: { deploy_steps: [], agent_url: 'http://x', is_whole_disk_image: true, automatic_lessee: true, keep: 1 },
    });
    expect(teardownFields(node)).toEqual({
      instance_info: {},
      instance_uuid: null,
      allocation_uuid: null,
      deploy_step: {},
      driver_internal_info: { keep: 1 },
      lessee: null,
    });
    expect(teardownFields(makeNode({ lessee: 'p1' })).lessee).toBeUndefined();
  });
});

describe('power sync selection', () => {
  const n = (o = {}) => ({
    maintenance: false,
    reservation: null,
    target_power_state: null,
    provision_state: 'available' as ProvisionState,
    fault: null,
    ...o,
  });

  it('syncs stable, unlocked nodes with no pending power change, outside enroll and adopt failed', () => {
    expect(syncable(n())).toBe(true);
    expect(syncable(n({ provision_state: 'deploy failed' }))).toBe(true);
    for (const o of [
      { maintenance: true },
      { reservation: 'c' },
      { target_power_state: 'power on' },
      { provision_state: 'enroll' },
      { provision_state: 'adopt failed' },
      { provision_state: 'clean wait' },
      { provision_state: 'deploying' },
    ]) {
      expect(syncable(n(o)), JSON.stringify(o)).toBe(false);
    }
  });

  it('recovers only its own power-failure maintenance', () => {
    expect(recoverable(n({ maintenance: true, fault: POWER_FAILURE }))).toBe(true);
    expect(recoverable(n({ maintenance: true, fault: null }))).toBe(false);
    expect(recoverable(n({ maintenance: true, fault: POWER_FAILURE, provision_state: 'enroll' }))).toBe(false);
  });
});

describe('failure messages', () => {
  it('collects the secret values of a driver_info, at any depth', () => {
    expect(secretValues({ redfish_password: 'p4ss', redfish_username: 'admin', nested: { api_token: 'tok' }, ipmi_password: '' })).toEqual([
      'p4ss',
      'tok',
    ]);
    expect(secretValues(null)).toEqual([]);
  });

  it('scrubs secrets and inline password patterns, whatever the error', () => {
    const secrets = secretValues({ redfish_password: 'hunter22' });
    expect(
      describeError(new HardwareError('BMC said hunter22 is wrong', { reason: 'refused', nodeUuid: 'n', operation: 'power on' }), secrets),
    ).toBe('BMC said ****** is wrong');
    expect(describeError(new Error('connect with password=abc failed'), [])).toBe('Error: connect with password=****** failed');
    expect(describeError(new InvalidInputError('redfish_address is required.'))).toBe('redfish_address is required.');
    expect(describeError(new SecretBoxError('bad tag hunter22'), secrets)).toMatch(/cannot be decrypted/);
    expect(describeError('weird')).toBe('unexpected failure: weird');
    expect(scrub('a-b-a', ['a'])).toBe('******-b-******');
  });

  it('cuts long messages', () => {
    expect(limit('x'.repeat(5000))).toHaveLength(MAX_ERROR_LENGTH);
    expect(describeError(new Error('y'.repeat(5000))).endsWith('...')).toBe(true);
  });

  it('an unexpected task failure drops the power target, or fails the stage', () => {
    expect(failedStageChanges({ provision_state: 'active' }, { kind: 'power', target: 'power on' }, 'oops', 5)).toEqual({
      target_power_state: null,
      last_error: 'oops',
    });
    expect(failedStageChanges({ provision_state: 'deleting' }, { kind: 'provision', state: 'deleting' }, 'oops', 5)).toEqual({
      provision_state: 'error',
      target_provision_state: null,
      provision_updated_at: 5,
      last_error: 'oops',
    });
  });
});
