/**
 * Parsing and rendering helpers of the image API (src/api/image/): WebOb's error-format
 * negotiation, Glance's `in:` list syntax, list queries and JSON-patch documents.
 */
import { describe, expect, it } from 'vitest';
import { errorBody, negotiate } from '../../../src/api/image/errors.ts';
import { parseListQuery, parsePatch, splitInList } from '../../../src/api/image/wire.ts';
import { sortOrder } from '../../../src/domain/images/list.ts';

const V21 = 'application/openstack-images-v2.1-json-patch';
const V20 = 'application/openstack-images-v2.0-json-patch';

describe('error format negotiation (WebOb)', () => {
  it('picks JSON, HTML or plain text as WebOb does', () => {
    expect(negotiate(undefined)).toBe('plain');
    expect(negotiate('')).toBe('plain');
    expect(negotiate('application/json')).toBe('json');
    expect(negotiate('*/*')).toBe('html');
    expect(negotiate('application/json, */*')).toBe('html');
    expect(negotiate('text/html;q=0.5, application/json')).toBe('json');
    expect(negotiate('text/plain')).toBe('plain');
    expect(negotiate('application/*')).toBe('json');
  });

  it('renders the WebOb JSON body that openstacksdk reads', () => {
    const { type, body } = errorBody(404, 'No image found with ID x', '', 'application/json');
    expect(type).toBe('application/json');
    expect(JSON.parse(body)).toEqual({ message: 'No image found with ID x<br /><br />\n\n\n', code: '404 Not Found', title: 'Not Found' });
    expect(errorBody(403, '<b>', '', '*/*').body).toContain('&lt;b&gt;');
  });
});

describe('list queries', () => {
  const q = (s: string) => parseListQuery(new URLSearchParams(s));

  it('splits in: lists with quotes as Glance does', () => {
    expect(splitInList('a,b,c')).toEqual(['a', 'b', 'c']);
    expect(splitInList('"a,b",c')).toEqual(['a,b', 'c']);
    expect(() => splitInList('"a,b')).toThrow(/quote is not closed/);
    expect(() => splitInList('x"a"')).toThrow(/no comma before opening/);
  });

  it('parses filters, sorting, member status and properties', () => {
    const input = q(
      'name=in:a,b&status=active&tag=x&tag=y&size_min=10&os_hidden=true&protected=false&sort=name:asc,size&member_status=all&visibility=shared&os_distro=ubuntu&created_at=gte:2024-01-01T00:00:00Z',
    );
    expect(input.filters.name).toEqual({ values: ['a', 'b'] });
    expect(input.filters.status).toEqual({ values: ['active'] });
    expect(input.filters.tags).toEqual(['x', 'y']);
    expect(input.filters.sizeMin).toBe(10);
    expect(input.filters.osHidden).toBe(true);
    expect(input.filters.protected).toBe(false);
    expect(input.filters.properties).toEqual({ os_distro: 'ubuntu' });
    expect(input.filters.createdAt).toEqual({ op: 'gte', time: Date.UTC(2024, 0, 1) });
    expect(input.sortKeys).toEqual(['name', 'size']);
    expect(input.sortDirs).toEqual(['asc', 'desc']);
    expect(input.memberStatus).toBe('all');
    expect(input.visibility).toBe('shared');
    expect(q('name=2024-01-01T00:00:00Z').filters.name).toEqual({ values: ['2024-01-01T00:00:00Z'] });
  });

  it('refuses what Glance refuses', () => {
    expect(() => q('limit=x')).toThrow('limit param must be an integer');
    expect(() => q('limit=-1')).toThrow('limit param must be positive');
    expect(() => q('sort_key=colour')).toThrow(/Invalid sort key: colour/);
    expect(() => q('sort_dir=up')).toThrow('Invalid sort direction: up');
    expect(() => q('sort=name&sort_key=id')).toThrow('Old and new sorting syntax cannot be combined');
    expect(() => q('member_status=maybe')).toThrow('Invalid status: maybe');
    expect(() => q('visibility=secret')).toThrow('Invalid visibility value: secret');
    expect(() => q('size_max=big')).toThrow('Unable to filter on a range with a non-numeric value.');
    expect(() => q('os_hidden=maybe')).toThrow(/Invalid value 'maybe' for 'os_hidden' filter/);
    expect(() => q('name=like:x')).toThrow("Unable to filter by unknown operator 'like'.");
    expect(() => q('created_at=gte:yesterday')).toThrow(/Bad "created_at" query filter format/);
    expect(() => q('changes-since=2020-01-01')).toThrow(/no longer available on v2/);
    expect(() => q('owner=a&owner=b')).toThrow(/given more than once/);
  });

  it('completes the sort order with created_at and id, one direction for all', () => {
    expect(sortOrder([], [])).toEqual([
      { key: 'created_at', dir: 'desc' },
      { key: 'id', dir: 'desc' },
    ]);
    expect(sortOrder(['name'], ['asc'])).toEqual([
      { key: 'name', dir: 'asc' },
      { key: 'created_at', dir: 'asc' },
      { key: 'id', dir: 'asc' },
    ]);
    expect(() => sortOrder(['name', 'size', 'status'], ['asc', 'desc'])).toThrow(/does not match the number of sort keys/);
  });
});

describe('JSON-patch documents', () => {
  it('parses v2.1 (RFC 6902) and v2.0 (draft 4) operations', () => {
    expect(
      parsePatch(V21, [
        { op: 'replace', path: '/name', value: 'n' },
        { op: 'remove', path: '/a~1b' },
      ]),
    ).toEqual({
      draft4: false,
      changes: [
        { op: 'replace', path: 'name', value: 'n' },
        { op: 'remove', path: 'a/b' },
      ],
    });
    expect(parsePatch(V20, [{ add: '/k', value: 'v' }])).toEqual({ draft4: true, changes: [{ op: 'add', path: 'k', value: 'v' }] });
  });

  it('refuses other media types with 415 and malformed documents with 400', () => {
    expect(() => parsePatch('application/json', [])).toThrow(/not supported/);
    expect(() => parsePatch(V21, { op: 'add' })).toThrow('Request body must be a JSON array of operation objects.');
    expect(() => parsePatch(V21, ['x'])).toThrow('Operations must be JSON objects.');
    expect(() => parsePatch(V21, [{ path: '/name', value: 1 }])).toThrow(/Unable to find `op`/);
    expect(() => parsePatch(V21, [{ op: 'move', path: '/name' }])).toThrow(/Invalid operation: `move`/);
    expect(() => parsePatch(V21, [{ op: 'add', value: 1 }])).toThrow("Unable to find 'path' in JSON Schema change");
    expect(() => parsePatch(V21, [{ op: 'add', path: 'name', value: 1 }])).toThrow(/does not start with "\/"/);
    expect(() => parsePatch(V21, [{ op: 'add', path: '/a//b', value: 1 }])).toThrow(/adjacent/);
    expect(() => parsePatch(V21, [{ op: 'add', path: '/tags/-', value: 1 }])).toThrow("Invalid JSON pointer for this resource: '/tags/-'");
    expect(() => parsePatch(V21, [{ op: 'add', path: '/a~2', value: 1 }])).toThrow(/recognized escape/);
    expect(() => parsePatch(V21, [{ op: 'add', path: '/name' }])).toThrow('Operation "add" requires a member named "value".');
    expect(() => parsePatch(V20, [{ add: '/a', remove: '/b' }])).toThrow(/only one member/);
  });
});
