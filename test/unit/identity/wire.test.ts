/**
 * Pure helpers of the identity wire layer: Keystone validation messages, times, the catalogue,
 * request parsing and the error mapping.
 */
import { describe, expect, it } from 'vitest';
import { Type } from '@sinclair/typebox';
import { ConflictError, ForbiddenError, InvalidInputError, NotFoundError, UnauthorizedError } from '../../../src/domain/errors.ts';
import { buildCatalog, CATALOG_SERVICES } from '../../../src/api/identity/catalog.ts';
import { toKeystoneError } from '../../../src/api/identity/errors.ts';
import {
  assignmentListQuery,
  authRequest,
  projectCreateInput,
  projectFilter,
  queryBool,
  userUpdateInput,
} from '../../../src/api/identity/inputs.ts';
import { keystoneTime } from '../../../src/api/identity/links.ts';
import { renderProject, renderToken } from '../../../src/api/identity/render.ts';
import { holdsNul, MAX_DEPTH, nestingDepth, Nullable, parseBody, rejectNulInUrl } from '../../../src/api/identity/validation.ts';

function message(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('expected a throw');
}

describe('parseBody messages (Keystone/jsonschema wording)', () => {
  const S = Type.Object(
    { user: Type.Object({ name: Type.String({ minLength: 1, maxLength: 3 }), password: Type.Optional(Nullable(Type.String())) }) },
    { additionalProperties: false },
  );
  it('names the field path and the problem', () => {
    expect(message(() => parseBody(S, { user: { name: 1 } }))).toBe("Invalid input for field 'user/name': 1 is not of type 'string'");
    expect(message(() => parseBody(S, { user: {} }))).toBe("Invalid input for field 'user': 'name' is a required property");
    expect(message(() => parseBody(S, {}))).toBe("'user' is a required property");
    expect(message(() => parseBody(S, { user: { name: 'a' }, x: 1 }))).toBe("Additional properties are not allowed ('x' was unexpected)");
    expect(message(() => parseBody(S, { user: { name: '' } }))).toBe("Invalid input for field 'user/name': '' is too short");
    expect(message(() => parseBody(S, { user: { name: 'abcd' } }))).toBe("Invalid input for field 'user/name': 'abcd' is too long");
    expect(message(() => parseBody(S, null))).toBe("None is not of type 'object'");
  });
  it('never echoes a password value', () => {
    const m = message(() => parseBody(S, { user: { name: 'a', password: 12345678 } }));
    expect(m).toBe("Invalid input for field 'user/password': '******' is not of type 'string', 'null'");
  });
  it('masks passwords inside echoed objects and cuts deep values', () => {
    expect(message(() => parseBody(S, [{ user: { name: 'a', password: 'hunter2' } }]))).toBe(
      '[{"user":{"name":"a","password":"******"}}] is not of type \'object\'',
    );
    expect(message(() => parseBody(S, { user: { name: { a: { b: { c: { d: 1 } } } } } }))).toBe(
      'Invalid input for field \'user/name\': {"a":{"b":{"c":{…}}}} is not of type \'string\'',
    );
  });
  it('refuses bodies nested deeper than MAX_DEPTH without overflowing the stack', () => {
    const deep = JSON.parse(`${'['.repeat(50_000)}${']'.repeat(50_000)}`);
    expect(nestingDepth(deep, MAX_DEPTH)).toBe(MAX_DEPTH + 1);
    expect(nestingDepth({ a: [1, { b: 2 }] }, MAX_DEPTH)).toBe(3);
    expect(nestingDepth('x', MAX_DEPTH)).toBe(0);
    expect(message(() => parseBody(S, deep))).toBe(`The request body is nested too deeply (more than ${MAX_DEPTH} levels).`);
  });
  it('refuses NUL characters in body strings and keys, path parameters and queries', () => {
    expect(holdsNul({ a: ['x', { b: 'y\u0000' }] })).toBe(true);
    expect(holdsNul({ 'k\u0000': 1 })).toBe(true);
    expect(holdsNul({ a: ['x', { b: 'y' }] })).toBe(false);
    expect(message(() => parseBody(S, { user: { name: 'a\u0000' } }))).toMatch(/NUL character/);
    expect(() => rejectNulInUrl({ id: 'a\u0000' }, {})).toThrow(InvalidInputError);
    expect(() => rejectNulInUrl({ id: 'a' }, { name: 'b' })).not.toThrow();
  });
  it('returns valid values unchanged and throws InvalidInputError otherwise', () => {
    const v = { user: { name: 'ab' } };
    expect(parseBody(S, v)).toBe(v);
    expect(() => parseBody(S, 'x')).toThrow(InvalidInputError);
  });
});

describe('keystoneTime', () => {
  it('prints microseconds and Z', () => {
    expect(keystoneTime(Date.UTC(2026, 0, 1))).toBe('2026-01-01T00:00:00.000000Z');
    expect(keystoneTime(Date.UTC(2026, 11, 31, 23, 59, 59, 123))).toBe('2026-12-31T23:59:59.123000Z');
  });
});

describe('buildCatalog', () => {
  it('lists every service with three interfaces and stable ids', () => {
    const c = buildCatalog('http://h:1', 'R1');
    expect(c.map((s) => s.type)).toEqual(CATALOG_SERVICES.map((s) => s.type));
    for (const s of c) {
      expect(s.endpoints.map((e) => e.interface)).toEqual(['public', 'internal', 'admin']);
      for (const e of s.endpoints) expect(e).toMatchObject({ region: 'R1', region_id: 'R1' });
    }
    expect(c.find((s) => s.type === 'lease')!.endpoints[0]!.url).toBe('http://h:1/lease');
    expect(buildCatalog('http://other', 'R1')[0]!.id).toBe(c[0]!.id);
    const ids = c.flatMap((s) => [s.id, ...s.endpoints.map((e) => e.id)]);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('request parsing', () => {
  it('authRequest: password by name and domain, project scope by name', () => {
    const r = authRequest({
      auth: {
        identity: { methods: ['password'], password: { user: { name: 'u', domain: { name: 'Default' }, password: 'p' } } },
        scope: { project: { name: 'o1', domain: { id: 'default' } } },
      },
    });
    expect(r).toEqual({
      method: 'password',
      credentials: { userName: 'u', domainName: 'Default', password: 'p' },
      scope: { kind: 'project', projectName: 'o1', domainId: 'default' },
    });
  });
  it('authRequest: token method, system and unscoped', () => {
    expect(authRequest({ auth: { identity: { methods: ['token'], token: { id: 't' } }, scope: { system: { all: true } } } })).toEqual({
      method: 'token',
      token: 't',
      scope: { kind: 'system' },
    });
    expect(authRequest({ auth: { identity: { methods: ['token'], token: { id: 't' } }, scope: 'unscoped' } }).scope).toEqual({
      kind: 'unscoped',
    });
  });
  it('authRequest: no scope (or an empty one) leaves it to default scoping', () => {
    const identity = { methods: ['password'], password: { user: { id: 'u', password: 'p' } } };
    expect(authRequest({ auth: { identity } }).scope).toEqual({ kind: 'default' });
    expect(authRequest({ auth: { identity, scope: {} } }).scope).toEqual({ kind: 'default' });
  });
  it('authRequest: unsupported methods are 401, domain scope 400', () => {
    expect(() => authRequest({ auth: { identity: { methods: ['totp'] } } })).toThrow(UnauthorizedError);
    expect(() =>
      authRequest({ auth: { identity: { methods: ['token'], token: { id: 't' } }, scope: { domain: { id: 'default' } } } }),
    ).toThrow(InvalidInputError);
  });
  it('projectCreateInput keeps extra attributes and tags, drops read-only ones', () => {
    const input = projectCreateInput({ project: { name: 'p', tags: ['a', 'a'], email: 'e', id: 'ignored', links: {} } });
    expect(input).toEqual({ name: 'p', domainId: null, parentId: null, extra: { email: 'e', tags: ['a'] } });
  });
  it('userUpdateInput refuses domain changes and keeps description as extra', () => {
    expect(() => userUpdateInput({ user: { domain_id: 'x' } })).toThrow(InvalidInputError);
    expect(userUpdateInput({ user: { description: 'd' } })).toEqual({ extra: { description: 'd' } });
  });
  it('queryBool and filters', () => {
    expect(queryBool({ a: '' }, 'a')).toBe(true);
    expect(queryBool({ a: 'False' }, 'a')).toBe(false);
    expect(queryBool({}, 'a')).toBeUndefined();
    expect(() => queryBool({ a: 'maybe' }, 'a')).toThrow(InvalidInputError);
    expect(projectFilter({ parent_id: 'default' })).toEqual({ domainId: 'default', parentId: null });
    expect(assignmentListQuery({ 'user.id': 'u', effective: '', include_names: 'True' })).toEqual({
      query: { userId: 'u', effective: true },
      includeNames: true,
      matchesNothing: false,
    });
    expect(assignmentListQuery({ 'group.id': 'g', 'scope.domain.id': 'd' })).toEqual({
      query: { groupId: 'g', domainId: 'd' },
      includeNames: false,
      matchesNothing: false,
    });
    expect(assignmentListQuery({ 'scope.OS-INHERIT:inherited_to': 'projects' }).matchesNothing).toBe(true);
    expect(() => assignmentListQuery({ 'group.id': 'g', effective: '' })).toThrow(/effective and group/);
  });
});

describe('rendering', () => {
  it('renders a top-level project with its domain as parent and extra attributes', () => {
    const p = renderProject(
      { id: 'p1', name: 'n', domain_id: 'default', parent_id: null, description: '', enabled: true, extra: { email: 'e', id: 'spoof' } },
      'http://h/identity/v3',
    );
    expect(p).toMatchObject({ id: 'p1', parent_id: 'default', email: 'e', tags: [], links: { self: 'http://h/identity/v3/projects/p1' } });
  });
  it('renders unscoped tokens without roles or catalog', () => {
    const t = renderToken(
      {
        record: {
          id: 'x',
          user_id: 'u',
          project_id: null,
          system_scope: null,
          methods: ['password'],
          roles: [],
          audit_id: 'a',
          issued_at: 0,
          expires_at: 1000,
          revoked_at: null,
        },
        user: { id: 'u', name: 'n', domain_id: 'default', default_project_id: null, enabled: true, extra: {} },
        project: null,
      },
      [],
    );
    expect(t.token).toEqual({
      methods: ['password'],
      user: { id: 'u', name: 'n', domain: { id: 'default', name: 'Default' }, password_expires_at: null },
      audit_ids: ['a'],
      expires_at: '1970-01-01T00:00:01.000000Z',
      issued_at: '1970-01-01T00:00:00.000000Z',
    });
  });
});

describe('toKeystoneError', () => {
  it('maps domain errors to statuses and titles', () => {
    const cases: Array<[Error, number, string]> = [
      [new InvalidInputError('bad'), 400, 'Bad Request'],
      [new UnauthorizedError(), 401, 'Unauthorized'],
      [new ForbiddenError('no'), 403, 'Forbidden'],
      [new NotFoundError('project', 'x'), 404, 'Not Found'],
      [new ConflictError('dup'), 409, 'Conflict'],
    ];
    for (const [err, status, title] of cases) {
      const r = toKeystoneError(err);
      expect(r.status).toBe(status);
      expect(r.body.error).toEqual({ code: status, title, message: err.message });
      expect(r.internal).toBe(false);
    }
  });
  it('hides unexpected errors', () => {
    const r = toKeystoneError(new Error('database password is hunter2'));
    expect(r.status).toBe(500);
    expect(r.internal).toBe(true);
    expect(r.body.error.message).not.toContain('hunter2');
  });
});
