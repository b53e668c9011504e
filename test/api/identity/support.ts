/**
 * Helpers shared by the identity API tests: persona tables, password logins, Keystone error
 * body checks.
 */
import { expect } from 'vitest';
import { ADMIN_PASSWORD, call, type Persona, type Personas, type TestResponse, type TestServer } from '../../helpers/harness.ts';

/** The five persona names of every API test. */
export const PERSONAS = ['admin', 'owner', 'lessee', 'other', 'anonymous'] as const;
/** One of {@link PERSONAS}. */
export type PersonaName = (typeof PERSONAS)[number];

/** Expected HTTP status per persona. */
export type StatusTable = Readonly<Record<PersonaName, number>>;

/**
 * Send the same request as every persona and check each status.
 * @param request path and body per persona (so that each may act on its own resource)
 * @returns the responses by persona
 */
export async function expectStatuses(
  ts: TestServer,
  personas: Personas,
  method: string,
  request: (name: PersonaName, p: Persona) => { path: string; body?: unknown; headers?: Record<string, string> },
  expected: StatusTable,
): Promise<Record<PersonaName, TestResponse>> {
  const out = {} as Record<PersonaName, TestResponse>;
  const got: Record<string, number> = {};
  for (const name of PERSONAS) {
    const r = request(name, personas[name]);
    out[name] = await call(ts, personas[name], method, r.path, r.body, r.headers);
    got[name] = out[name].status;
  }
  expect(got).toEqual(expected);
  for (const name of PERSONAS) if (out[name].status >= 400 && method !== 'HEAD') expectKeystoneError(out[name], out[name].status);
  return out;
}

/** Assert a Keystone error body with this status. */
export function expectKeystoneError(res: TestResponse, status: number, message?: RegExp): void {
  expect(res.status).toBe(status);
  expect(res.body).toMatchObject({ error: { code: status, title: expect.any(String), message: expect.any(String) } });
  if (message) expect(res.body.error.message).toMatch(message);
}

/** A password login body (user by name in the Default domain). */
export function passwordAuth(user: string, password: string, scope?: unknown): unknown {
  return {
    auth: {
      identity: { methods: ['password'], password: { user: { name: user, domain: { name: 'Default' }, password } } },
      ...(scope !== undefined ? { scope } : {}),
    },
  };
}

/** The password of each persona's user (see `createPersonas`). */
export const PERSONA_LOGIN: Readonly<Record<Exclude<PersonaName, 'anonymous'>, { user: string; password: string; project: string }>> = {
  admin: { user: 'admin', password: ADMIN_PASSWORD, project: 'admin' },
  owner: { user: 'owner1', password: 'pw-owner1', project: 'o1' },
  lessee: { user: 'lessee1', password: 'pw-lessee1', project: 'l1' },
  other: { user: 'owner2', password: 'pw-owner2', project: 'o2' },
};

/** A Persona object for a raw token (e.g. one issued in a test). */
export function tokenPersona(token: string, name = 'custom'): Persona {
  return { name, token, projectId: null, projectName: null, userId: null, context: null };
}

/** Issue a token by password through the API. @returns the secret and the token body */
export async function login(ts: TestServer, user: string, password: string, scope?: unknown): Promise<{ token: string; body: any }> {
  const res = await call(ts, null, 'POST', '/identity/v3/auth/tokens', passwordAuth(user, password, scope));
  expect(res.status, res.text).toBe(201);
  return { token: res.headers.get('x-subject-token')!, body: res.body };
}
