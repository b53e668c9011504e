/**
 * Pure parts of the `esi` CLI: OS_* settings, API error messages, --property filters and the
 * output formats.
 */
import { describe, expect, it } from 'vitest';
import { convertValue, filterByProperties, pair, parseJsonObject, parsePropertyFilter } from '../../../src/cli/filters.ts';
import { cellText, printList, printShow } from '../../../src/cli/output.ts';
import { apiErrorMessage, CliError, settingsFromEnv } from '../../../src/cli/session.ts';

const base = { OS_AUTH_URL: 'http://h:1/identity/v3', OS_USERNAME: 'u', OS_PASSWORD: 'p' };

describe('settingsFromEnv', () => {
  it('reads project scope by name with domains, defaulting domains to id default', () => {
    const s = settingsFromEnv({ ...base, OS_PROJECT_NAME: 'o1' });
    expect(s.scope).toEqual({ kind: 'project', name: 'o1', domain: { id: 'default' } });
    expect(s.userDomain).toEqual({ id: 'default' });
    expect(s.interface).toBe('public');
    const named = settingsFromEnv({ ...base, OS_PROJECT_NAME: 'o1', OS_PROJECT_DOMAIN_NAME: 'Default', OS_USER_DOMAIN_NAME: 'Default' });
    expect(named.scope).toEqual({ kind: 'project', name: 'o1', domain: { name: 'Default' } });
    expect(named.userDomain).toEqual({ name: 'Default' });
  });
  it('prefers system scope, then project id', () => {
    expect(settingsFromEnv({ ...base, OS_PROJECT_NAME: 'x', OS_SYSTEM_SCOPE: 'all' }).scope).toEqual({ kind: 'system' });
    expect(settingsFromEnv({ ...base, OS_PROJECT_NAME: 'x', OS_PROJECT_ID: 'pid' }).scope).toMatchObject({ kind: 'project', id: 'pid' });
    expect(settingsFromEnv(base).scope).toEqual({ kind: 'unscoped' });
  });
  it('accepts OS_TOKEN without a password; accepts publicURL-style interfaces', () => {
    const s = settingsFromEnv({ OS_AUTH_URL: 'https://h/identity', OS_TOKEN: 't', OS_INTERFACE: 'internalURL' });
    expect(s.token).toBe('t');
    expect(s.interface).toBe('internal');
  });
  it('explains what is missing or wrong, without secrets', () => {
    const cases: Array<[NodeJS.ProcessEnv, RegExp]> = [
      [{}, /OS_AUTH_URL is not set/],
      [{ ...base, OS_AUTH_URL: 'ftp://x' }, /not an http\(s\) URL/],
      [{ OS_AUTH_URL: 'http://h' }, /OS_USERNAME/],
      [{ ...base, OS_PASSWORD: '' }, /OS_PASSWORD is not set/],
      [{ ...base, OS_SYSTEM_SCOPE: 'some' }, /OS_SYSTEM_SCOPE must be "all"/],
      [{ ...base, OS_INTERFACE: 'private' }, /OS_INTERFACE/],
    ];
    for (const [env, re] of cases) {
      expect(() => settingsFromEnv(env)).toThrow(re);
      expect(() => settingsFromEnv(env)).toThrow(CliError);
    }
  });
});

describe('apiErrorMessage', () => {
  it('reads esi-leap, Ironic, Keystone and plain bodies', () => {
    expect(apiErrorMessage({ faultcode: 'Client', faultstring: 'Offer x not found.', debuginfo: null }, 404)).toBe('Offer x not found.');
    expect(apiErrorMessage({ error_message: JSON.stringify({ faultstring: 'Node y could not be found.' }) }, 404)).toBe(
      'Node y could not be found.',
    );
    expect(apiErrorMessage({ error_message: 'plain' }, 400)).toBe('plain');
    expect(apiErrorMessage({ error: { code: 401, title: 'Unauthorized', message: 'Nope.' } }, 401)).toBe('Nope.');
    expect(apiErrorMessage({ message: 'm' }, 500)).toBe('m');
    expect(apiErrorMessage('Bad Gateway\nmore', 502)).toBe('Bad Gateway');
    expect(apiErrorMessage(null, 503)).toBe('request failed with status 503');
  });
});

describe('--property filters', () => {
  const recs = [
    { uuid: 'a', resource_properties: { cpus: 8, memory_mb: '16384', gpu: 'a100' } },
    { uuid: 'b', resource_properties: { cpus: 4, memory_mb: 8192 } },
    { uuid: 'c', properties: { cpus: '16' } },
  ];
  const ids = (f: string[]) => filterByProperties(recs, f).map((r) => r.uuid);
  it('compares numbers numerically and strings exactly; keys must exist', () => {
    expect(ids(['cpus>=8'])).toEqual(['a', 'c']);
    expect(ids(['cpus>8'])).toEqual(['c']);
    expect(ids(['cpus<8'])).toEqual(['b']);
    expect(ids(['memory_mb>=10000'])).toEqual(['a']);
    expect(ids(['gpu=a100'])).toEqual(['a']);
    expect(ids(['gpu>=1'])).toEqual([]);
    expect(ids(['cpus>=4', 'memory_mb<=8192'])).toEqual(['b']);
    expect(ids([])).toEqual(['a', 'b', 'c']);
  });
  it('parses like esileapclient and rejects other shapes', () => {
    expect(parsePropertyFilter(' cpus >= 8')).toEqual({ key: 'cpus', op: '>=', value: 8 });
    expect(parsePropertyFilter('x=1.5')).toEqual({ key: 'x', op: '=', value: 1.5 });
    expect(convertValue('abc')).toBe('abc');
    expect(() => parsePropertyFilter('cpus~8')).toThrow(CliError);
    expect(() => parsePropertyFilter('=8')).toThrow(CliError);
  });
  it('--properties must be a JSON object; ranges take two values', () => {
    expect(parseJsonObject('{"a": 1}')).toEqual({ a: 1 });
    for (const bad of ['[1]', '1', 'null', '{x']) expect(() => parseJsonObject(bad)).toThrow(CliError);
    expect(pair(['a', 'b'], '--x')).toEqual(['a', 'b']);
    expect(pair(undefined, '--x')).toBeUndefined();
    expect(() => pair(['a'], '--x')).toThrow(/exactly two values/);
  });
});

describe('output', () => {
  const capture = () => {
    let out = '';
    return { write: (s: string) => (out += s), get: () => out };
  };
  const rows = [
    ['u1', { a: 1 }, null, true],
    ['u2', [1, 2], 'x', false],
  ];
  const labels = ['UUID', 'Props', 'Name', 'Flag'];
  it('cellText writes None, True/False and JSON', () => {
    expect([cellText(null), cellText(undefined), cellText(true), cellText({ a: 1 }), cellText(3)]).toEqual([
      'None',
      '',
      'True',
      '{"a":1}',
      '3',
    ]);
  });
  it('lists as table, json, yaml and value, with -c selection in command order', () => {
    const t = capture();
    printList(labels, rows, { format: 'table', column: [] }, t.write);
    expect(t.get()).toBe(
      [
        '+------+---------+------+-------+',
        '| UUID | Props   | Name | Flag  |',
        '+------+---------+------+-------+',
        '| u1   | {"a":1} | None | True  |',
        '| u2   | [1,2]   | x    | False |',
        '+------+---------+------+-------+',
        '',
      ].join('\n'),
    );
    const j = capture();
    printList(labels, rows, { format: 'json', column: ['Name', 'UUID'] }, j.write);
    expect(JSON.parse(j.get())).toEqual([
      { UUID: 'u1', Name: null },
      { UUID: 'u2', Name: 'x' },
    ]);
    const v = capture();
    printList(labels, rows, { format: 'value', column: ['UUID', 'Flag'] }, v.write);
    expect(v.get()).toBe('u1 True\nu2 False\n');
    const y = capture();
    printList(labels, rows.slice(0, 1), { format: 'yaml', column: ['UUID'] }, y.write);
    expect(y.get()).toBe('- UUID: u1\n');
    const empty = capture();
    printList(labels, [], { format: 'table', column: ['UUID', 'Name'] }, empty.write);
    expect(empty.get()).toBe(['+------+------+', '| UUID | Name |', '+------+------+', ''].join('\n'));
    const emptyValue = capture();
    printList(labels, [], { format: 'value', column: [] }, emptyValue.write);
    expect(emptyValue.get()).toBe('');
    expect(() => printList(labels, rows, { format: 'table', column: ['nope'] }, () => {})).toThrow(/No recognized column names/);
  });
  it('shows a record as Field/Value', () => {
    const t = capture();
    printShow(
      [
        ['id', 'x'],
        ['props', { k: 'v' }],
      ],
      { format: 'table', column: [] },
      t.write,
    );
    expect(t.get()).toBe(
      [
        '+-------+-----------+',
        '| Field | Value     |',
        '+-------+-----------+',
        '| id    | x         |',
        '| props | {"k":"v"} |',
        '+-------+-----------+',
        '',
      ].join('\n'),
    );
    const v = capture();
    printShow(
      [
        ['id', 'x'],
        ['n', null],
      ],
      { format: 'value', column: [] },
      v.write,
    );
    expect(v.get()).toBe('x\nNone\n');
  });
});
