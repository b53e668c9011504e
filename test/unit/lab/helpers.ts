/**
 * Helpers of the lab tests: HTTP calls to a running lab with or without credentials.
 */
import type { Lab } from '../../../src/lab/index.ts';

/** Authorization of a test request: Basic with the given pair, a session token, or none. */
export type TestAuth = { basic: [string, string] } | { token: string } | null;

/** The lab's default credentials as Basic auth. */
export const ADMIN: TestAuth = { basic: ['admin', 'password'] };

/** A parsed answer of the lab. */
export interface TestResponse {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

/**
 * Sends `method path` to `lab` with `auth` and a JSON `body` (a string is sent as is), and
 * parses a JSON answer.
 */
export async function call(
  lab: Lab,
  method: string,
  path: string,
  auth: TestAuth = ADMIN,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<TestResponse> {
  const h: Record<string, string> = { ...headers };
  if (auth !== null && 'basic' in auth) h.authorization = `Basic ${Buffer.from(auth.basic.join(':')).toString('base64')}`;
  if (auth !== null && 'token' in auth) h['x-auth-token'] = auth.token;
  if (body !== undefined) h['content-type'] = 'application/json';
  const res = await fetch(lab.url + path, {
    method,
    headers: h,
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  let parsed: unknown = null;
  if (text !== '' && (res.headers.get('content-type') ?? '').startsWith('application/json')) parsed = JSON.parse(text);
  return { status: res.status, headers: res.headers, body: parsed, text };
}

/** The `MessageId`s of a Redfish error body. */
export function messageIds(body: any): string[] {
  return (body?.error?.['@Message.ExtendedInfo'] ?? []).map((m: { MessageId: string }) => m.MessageId);
}
