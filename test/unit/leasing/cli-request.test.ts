/**
 * The pure parts of `esi lease request` and `esi quota` (src/cli/commands/lease-request.ts,
 * quota.ts): group specs, `--property` filters turned into an expression, durations, the request
 * body, quota limits and records.
 */
import { describe, expect, it } from 'vitest';
import { parseDuration, parseGroupSpec, propertiesToExpression, requestBody } from '../../../src/cli/commands/lease-request.ts';
import { parseLimit, quotaRecord } from '../../../src/cli/commands/quota.ts';
import { matches, parseExpression } from '../../../src/domain/leasing/expression.ts';

const base = { group: [] as string[], trait: [] as string[], property: [] as string[] };

describe('esi lease request options', () => {
  it('--group "COUNT [class=RC] [trait=T]…[: EXPRESSION]"', () => {
    expect(parseGroupSpec('3: memory_mb >= 49152 and gpus >= 1')).toEqual({ count: 3, properties: 'memory_mb >= 49152 and gpus >= 1' });
    expect(parseGroupSpec('1 class=storage trait=CUSTOM_A trait=CUSTOM_B : local_gb >= 1000')).toEqual({
      count: 1,
      resource_class: 'storage',
      traits: ['CUSTOM_A', 'CUSTOM_B'],
      properties: 'local_gb >= 1000',
    });
    expect(parseGroupSpec('2')).toEqual({ count: 2 });
    expect(() => parseGroupSpec('x: a > 1')).toThrow(/start with the number of nodes/);
    expect(() => parseGroupSpec('1 colour=red')).toThrow(/unknown "colour=red"/);
  });

  it('--property filters become one expression that the server evaluates like the client filter', () => {
    const expr = propertiesToExpression(['memory_mb>=49152', 'cpu_arch=x86_64', 'gpus > 0', 'vendor!=acme']);
    expect(expr).toBe('memory_mb >= 49152 and cpu_arch == "x86_64" and gpus > 0 and vendor != "acme"');
    const node = {
      name: 'n',
      resourceClass: null,
      traits: [],
      properties: { memory_mb: 65536, cpu_arch: 'x86_64', gpus: 1, vendor: 'initech' },
    };
    expect(matches(parseExpression(expr), node)).toBe(true);
    expect(() => propertiesToExpression(['memory_mb'])).toThrow(/Invalid property filter format/);
  });

  it('durations in d, h, m, s', () => {
    expect([parseDuration('3d'), parseDuration('36h'), parseDuration('90m'), parseDuration('45'), parseDuration('1.5h')]).toEqual([
      259_200_000, 129_600_000, 5_400_000, 45_000, 5_400_000,
    ]);
    expect(() => parseDuration('soon')).toThrow(/Invalid --duration/);
  });

  it('builds one group from --count/--property/--where, with --duration from the start', () => {
    const body = requestBody({
      ...base,
      count: '2',
      property: ['gpus>=1'],
      where: 'cpu_arch == x86_64 or cpu_arch == aarch64',
      startTime: '2030-01-01T00:00:00',
      duration: '3d',
      name: 'n',
    });
    expect(body).toEqual({
      groups: [{ count: 2, properties: 'gpus >= 1 and (cpu_arch == x86_64 or cpu_arch == aarch64)' }],
      start_time: '2030-01-01T00:00:00',
      end_time: '2030-01-04T00:00:00',
      name: 'n',
    });
    expect(requestBody({ ...base }, Date.UTC(2030, 0, 1))).toEqual({ groups: [{ count: 1 }] });
    expect(requestBody({ ...base, duration: '1h' }, Date.UTC(2030, 0, 1))).toMatchObject({
      start_time: '2030-01-01T00:00:00',
      end_time: '2030-01-01T01:00:00',
    });
    expect(() => requestBody({ ...base, group: ['1'], count: '1' })).toThrow(/Use either --group/);
    expect(() => requestBody({ ...base, duration: '1h', endTime: '2030-01-01T00:00:00' })).toThrow(/either --end-time or --duration/);
  });
});

describe('esi quota options', () => {
  it('limits: whole numbers or none', () => {
    expect(parseLimit('--max-nodes', '10')).toBe(10);
    expect(parseLimit('--max-nodes', 'none')).toBeNull();
    expect(() => parseLimit('--max-nodes', '-1')).toThrow(/whole number or "none"/);
  });

  it('a quota as a flat, sorted record', () => {
    expect(
      quotaRecord({
        project_id: 'p',
        project: 'l1',
        max_nodes: 2,
        max_node_hours: null,
        window_hours: 720,
        usage: { nodes_now: 1, peak_nodes: 2, node_hours_in_window: 3.5 },
      }),
    ).toEqual([
      ['max_node_hours', null],
      ['max_nodes', 2],
      ['project', 'l1'],
      ['project_id', 'p'],
      ['usage_node_hours_in_window', 3.5],
      ['usage_nodes_now', 1],
      ['usage_peak_nodes', 2],
      ['window_hours', 720],
    ]);
  });
});
