/**
 * The provision state machine against Ironic 21.4's ironic/common/states.py
 * (https://docs.openstack.org/ironic/latest/user/states.html), written out here independently
 * of the implementation's table: every transition, every refused (state, event) pair, target
 * semantics and the state sets.
 */
import { describe, expect, it } from 'vitest';
import { InvalidStateError } from '../../../src/domain/errors.ts';
import {
  allTransitions,
  canApply,
  DELETE_ALLOWED_STATES,
  isStable,
  next,
  PROVISION_STATES,
  PROVISION_VERBS,
  UPDATE_ALLOWED_STATES,
  VERB_EVENTS,
  type ProvisionEvent,
  type ProvisionState,
} from '../../../src/domain/inventory/states.ts';

/** Ironic 21.4 states.py transitions, one line per (from, event, to). */
const SPEC: Array<[ProvisionState, ProvisionEvent, ProvisionState]> = [
  ['enroll', 'manage', 'verifying'],
  ['verifying', 'done', 'manageable'],
  ['verifying', 'fail', 'enroll'],
  ['manageable', 'provide', 'cleaning'],
  ['manageable', 'clean', 'cleaning'],
  ['manageable', 'inspect', 'inspecting'],
  ['manageable', 'adopt', 'adopting'],
  ['inspecting', 'done', 'manageable'],
  ['inspecting', 'wait', 'inspect wait'],
  ['inspecting', 'fail', 'inspect failed'],
  ['adopting', 'done', 'active'],
  ['adopting', 'fail', 'adopt failed'],
  ['available', 'manage', 'manageable'],
  ['available', 'deploy', 'deploying'],
  ['deploying', 'wait', 'wait call-back'],
  ['wait call-back', 'resume', 'deploying'],
  ['deploying', 'done', 'active'],
  ['deploying', 'fail', 'deploy failed'],
  ['wait call-back', 'fail', 'deploy failed'],
  ['wait call-back', 'delete', 'deleting'],
  ['deploy failed', 'deploy', 'deploying'],
  ['deploy failed', 'rebuild', 'deploying'],
  ['deploy failed', 'delete', 'deleting'],
  ['active', 'rebuild', 'deploying'],
  ['active', 'delete', 'deleting'],
  ['active', 'rescue', 'rescuing'],
  ['deleting', 'clean', 'cleaning'],
  ['deleting', 'fail', 'error'],
  ['cleaning', 'done', 'available'],
  ['cleaning', 'wait', 'clean wait'],
  ['cleaning', 'fail', 'clean failed'],
  ['cleaning', 'manage', 'manageable'],
  ['clean wait', 'resume', 'cleaning'],
  ['clean wait', 'fail', 'clean failed'],
  ['clean wait', 'abort', 'clean failed'],
  ['clean failed', 'manage', 'manageable'],
  ['inspect wait', 'done', 'manageable'],
  ['inspect wait', 'fail', 'inspect failed'],
  ['inspect wait', 'abort', 'inspect failed'],
  // Ironic 2023.2+ built-in agent inspection: the agent's inspection data resumes the node
  // (`continue_inspection`), beyond the 21.4 reference (docs/inspection.md).
  ['inspect wait', 'resume', 'inspecting'],
  ['inspect failed', 'manage', 'manageable'],
  ['inspect failed', 'inspect', 'inspecting'],
  ['error', 'rebuild', 'deploying'],
  ['error', 'delete', 'deleting'],
  ['adopt failed', 'adopt', 'adopting'],
  ['adopt failed', 'manage', 'manageable'],
  ['rescuing', 'done', 'rescue'],
  ['rescuing', 'wait', 'rescue wait'],
  ['rescuing', 'fail', 'rescue failed'],
  ['rescue wait', 'resume', 'rescuing'],
  ['rescue wait', 'fail', 'rescue failed'],
  ['rescue wait', 'abort', 'rescue failed'],
  ['rescue wait', 'delete', 'deleting'],
  ['rescue', 'rescue', 'rescuing'],
  ['rescue', 'unrescue', 'unrescuing'],
  ['rescue', 'delete', 'deleting'],
  ['rescue failed', 'rescue', 'rescuing'],
  ['rescue failed', 'unrescue', 'unrescuing'],
  ['rescue failed', 'delete', 'deleting'],
  ['unrescuing', 'done', 'active'],
  ['unrescuing', 'fail', 'unrescue failed'],
  ['unrescue failed', 'rescue', 'rescuing'],
  ['unrescue failed', 'unrescue', 'unrescuing'],
  ['unrescue failed', 'delete', 'deleting'],
  // esi's internal event: a lease ended on an available node, which is cleaned.
  ['available', 'reclaim', 'cleaning'],
  // Servicing (Ironic 2023.2), used by esi's image capture.
  ['active', 'service', 'servicing'],
  ['servicing', 'wait', 'service wait'],
  ['servicing', 'done', 'active'],
  ['servicing', 'fail', 'service failed'],
  ['service wait', 'resume', 'servicing'],
  ['service wait', 'fail', 'service failed'],
  ['service wait', 'abort', 'service failed'],
  ['service failed', 'service', 'servicing'],
  ['service failed', 'abort', 'active'],
  ['service failed', 'delete', 'deleting'],
];

const EVENTS: ProvisionEvent[] = [
  'deploy',
  'delete',
  'rebuild',
  'manage',
  'provide',
  'inspect',
  'abort',
  'clean',
  'adopt',
  'rescue',
  'unrescue',
  'done',
  'fail',
  'wait',
  'resume',
  'reclaim',
  'service',
];

describe('provision FSM', () => {
  it('has exactly the transitions of the reference', () => {
    const key = (t: [string, string, string]) => t.join(' | ');
    const actual = allTransitions()
      .map((t) => key([t.from, t.event, t.to]))
      .sort();
    expect(actual).toEqual(SPEC.map(key).sort());
  });

  it.each(SPEC)('%s --%s--> %s', (from, event, to) => {
    expect(canApply(from, event)).toBe(true);
    expect(next(from, event).state).toBe(to);
  });

  it('refuses every (state, event) pair not in the reference', () => {
    const allowed = new Set(SPEC.map(([f, e]) => `${f}|${e}`));
    let refused = 0;
    for (const state of PROVISION_STATES) {
      for (const event of EVENTS) {
        if (allowed.has(`${state}|${event}`)) continue;
        refused++;
        expect(canApply(state, event), `${state} ${event}`).toBe(false);
        expect(() => next(state, event)).toThrow(InvalidStateError);
      }
    }
    expect(refused).toBe(PROVISION_STATES.length * EVENTS.length - SPEC.length);
  });

  it('maps API verbs to events as Ironic', () => {
    expect(VERB_EVENTS).toMatchObject({ active: 'deploy', deploy: 'deploy', deleted: 'delete', undeploy: 'delete', rebuild: 'rebuild' });
    for (const v of ['manage', 'provide', 'inspect', 'abort', 'clean', 'adopt', 'rescue', 'unrescue'] as const)
      expect(VERB_EVENTS[v]).toBe(v);
    expect(PROVISION_VERBS).toHaveLength(13);
    expect(canApply('available', 'active')).toBe(true);
    expect(canApply('active', 'deleted')).toBe(true);
    expect(canApply('active', 'undeploy')).toBe(true);
    expect(next('available', 'deploy').state).toBe('deploying');
  });

  it('refuses user verbs from states that do not accept them', () => {
    expect(canApply('enroll', 'provide')).toBe(false);
    expect(canApply('enroll', 'active')).toBe(false);
    expect(canApply('wait call-back', 'abort')).toBe(false); // no abort from wait call-back in 21.4
    expect(canApply('deploying', 'deleted')).toBe(false);
    expect(canApply('available', 'provide')).toBe(false);
    expect(() => next('manageable', 'active')).toThrow(/can not be performed.*manageable/);
  });

  it('sets targets: transient states get their default target, stable states none', () => {
    expect(next('enroll', 'manage')).toEqual({ state: 'verifying', target: 'manageable' });
    expect(next('manageable', 'provide')).toEqual({ state: 'cleaning', target: 'available' });
    expect(next('available', 'active')).toEqual({ state: 'deploying', target: 'active' });
    expect(next('active', 'deleted')).toEqual({ state: 'deleting', target: 'available' });
    expect(next('manageable', 'inspect')).toEqual({ state: 'inspecting', target: 'manageable' });
    expect(next('active', 'rescue')).toEqual({ state: 'rescuing', target: 'rescue' });
    expect(next('rescue', 'unrescue')).toEqual({ state: 'unrescuing', target: 'active' });
    expect(next('available', 'manage')).toEqual({ state: 'manageable', target: null });
    expect(next('deploying', 'done')).toEqual({ state: 'active', target: null });
    expect(next('verifying', 'fail')).toEqual({ state: 'enroll', target: null });
  });

  it('lets a manual clean target manageable, and keeps the target of failure states', () => {
    expect(next('manageable', 'clean', 'manageable')).toEqual({ state: 'cleaning', target: 'manageable' });
    expect(next('deploying', 'fail')).toEqual({ state: 'deploy failed', target: 'active' });
    expect(next('clean wait', 'abort')).toEqual({ state: 'clean failed', target: 'available' });
    expect(next('inspect wait', 'abort')).toEqual({ state: 'inspect failed', target: 'manageable' });
    expect(next('available', 'manage', 'active')).toEqual({ state: 'manageable', target: null });
  });

  it('knows stability and the state sets', () => {
    const stable = PROVISION_STATES.filter(isStable).sort();
    expect(stable).toEqual(['active', 'available', 'enroll', 'error', 'manageable', 'rescue']);
    expect([...DELETE_ALLOWED_STATES].sort()).toEqual(['adopt failed', 'available', 'enroll', 'manageable']);
    expect(UPDATE_ALLOWED_STATES.has('deploy failed')).toBe(true);
    expect(UPDATE_ALLOWED_STATES.has('deploying')).toBe(false);
  });
});
