/**
 * `ESI_CONDUCTOR_DEAD_AFTER` (issue 21): the silence after which a conductor is dead, its own
 * setting — three heartbeat intervals unless set, at least two (a shorter one would declare a
 * conductor dead between two of its own heartbeats).
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/server/config.ts';

describe('ESI_CONDUCTOR_DEAD_AFTER', () => {
  it('defaults to three heartbeat intervals', () => {
    expect(loadConfig({}, {}).conductor).toMatchObject({ heartbeatIntervalS: 10, deadAfterS: 30 });
    expect(loadConfig({}, { ESI_CONDUCTOR_HEARTBEAT_INTERVAL: '2' }).conductor).toMatchObject({ heartbeatIntervalS: 2, deadAfterS: 6 });
  });

  it('is read as given, down to two heartbeat intervals', () => {
    expect(loadConfig({}, { ESI_CONDUCTOR_HEARTBEAT_INTERVAL: '2', ESI_CONDUCTOR_DEAD_AFTER: '4' }).conductor.deadAfterS).toBe(4);
    expect(loadConfig({}, { ESI_CONDUCTOR_DEAD_AFTER: '120' }).conductor.deadAfterS).toBe(120);
  });

  it('refuses less than two heartbeat intervals, naming both settings', () => {
    const load = (): unknown => loadConfig({}, { ESI_CONDUCTOR_HEARTBEAT_INTERVAL: '5', ESI_CONDUCTOR_DEAD_AFTER: '9' });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(/ESI_CONDUCTOR_DEAD_AFTER \(9 s\) must be at least twice ESI_CONDUCTOR_HEARTBEAT_INTERVAL \(5 s\)/);
  });
});
