/**
 * Pure rules of node history: which `event_type` a conductor outcome records
 * (src/domain/inventory/history-recorder.ts) and how event text is made safe to store
 * (src/domain/inventory/history.ts).
 */
import { describe, expect, it } from 'vitest';
import { eventTypeOf, faultEventType } from '../../../src/domain/inventory/history-recorder.ts';
import { cleanEvent, MAX_EVENT_LENGTH } from '../../../src/domain/inventory/history.ts';

describe('eventTypeOf', () => {
  it('names the activity that failed from the state entered, the fault, or the fields written', () => {
    expect(eventTypeOf({ provision_state: 'deploy failed', last_error: 'x' })).toBe('deploy');
    expect(eventTypeOf({ provision_state: 'clean failed', last_error: 'x' })).toBe('cleaning');
    expect(eventTypeOf({ provision_state: 'inspect failed', last_error: 'x' })).toBe('inspection');
    expect(eventTypeOf({ provision_state: 'enroll', last_error: 'x' })).toBe('verify');
    expect(eventTypeOf({ provision_state: 'error', last_error: 'x' })).toBe('provisioning');
    expect(eventTypeOf({ provision_state: 'clean failed', fault: 'clean failure', last_error: 'x' })).toBe('cleaning');
    expect(eventTypeOf({ fault: 'power failure', maintenance: true, last_error: 'x' })).toBe('power sync');
    expect(eventTypeOf({ console_enabled: false, last_error: 'x' })).toBe('console');
    expect(eventTypeOf({ target_power_state: null, last_error: 'x' })).toBe('power');
    expect(eventTypeOf({ last_error: 'x' })).toBe('conductor');
  });

  it('maps Ironic faults, unknown ones to maintenance', () => {
    expect(faultEventType('console failure')).toBe('console');
    expect(faultEventType('rescue abort failure')).toBe('rescue');
    expect(faultEventType('something new')).toBe('maintenance');
  });
});

describe('cleanEvent', () => {
  it('keeps one line, masks inline passwords and caps the length', () => {
    expect(cleanEvent('  a\n  b\tc ')).toBe('a b c');
    expect(cleanEvent('login failed password=hunter2 for admin')).not.toContain('hunter2');
    const long = cleanEvent('x'.repeat(MAX_EVENT_LENGTH + 50));
    expect(long).toHaveLength(MAX_EVENT_LENGTH);
    expect(long.endsWith('...')).toBe(true);
  });
});
