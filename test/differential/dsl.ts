/**
 * Small constructors that keep the differential tables (table-*.ts) one line per request:
 * `get('/v1/nodes/{node}', '1.31')`, `post('/v1/ports', '1.82', body, { bind: { port: 'uuid' } })`,
 * `at(['1.1', '1.82'], (v) => get(…, v))` to repeat a request at several microversions, and
 * `waitFor('/v1/nodes/{node}', 'provision_state', 'manageable')`.
 */
import type { Method, RequestStep, WaitStep } from './runner.ts';

/** Optional parts of a request step. */
export type StepOptions = Omit<Partial<RequestStep>, 'method' | 'path' | 'version' | 'body'>;

/** The highest microversion of Ironic 21.4. */
export const LATEST = '1.82';

/** A request step. */
export function req(method: Method, path: string, version: string | null, body?: unknown, options: StepOptions = {}): RequestStep {
  return { method, path, version, ...(body !== undefined ? { body } : {}), ...options };
}

/** `GET path` at a version. */
export function get(path: string, version: string | null = LATEST, options: StepOptions = {}): RequestStep {
  return req('GET', path, version, undefined, options);
}

/** `POST path` with a JSON body. */
export function post(path: string, version: string | null, body: unknown, options: StepOptions = {}): RequestStep {
  return req('POST', path, version, body, options);
}

/** `PUT path` with a JSON body (undefined: none). */
export function put(path: string, version: string | null, body: unknown, options: StepOptions = {}): RequestStep {
  return req('PUT', path, version, body, options);
}

/** `PATCH path` with a JSON-patch body. */
export function patch(path: string, version: string | null, body: unknown, options: StepOptions = {}): RequestStep {
  return req('PATCH', path, version, body, options);
}

/** `DELETE path`. */
export function del(path: string, version: string | null = LATEST, options: StepOptions = {}): RequestStep {
  return req('DELETE', path, version, undefined, options);
}

/** The same request at each version. */
export function at(versions: readonly (string | null)[], make: (v: string | null) => RequestStep): RequestStep[] {
  return versions.map(make);
}

/** Wait (both sides) until `GET path` at the latest version shows `field` = `value`. */
export function waitFor(path: string, field: string, value: string | null): WaitStep {
  return { wait: path, field, value, version: LATEST };
}

/** A JSON-patch `replace` (or another op) of one path. */
export function op(o: 'add' | 'replace' | 'remove', path: string, value?: unknown): Record<string, unknown> {
  return value === undefined ? { op: o, path } : { op: o, path, value };
}

/** A UUID no object of either side has. */
export const ABSENT_UUID = '0d1f6a1e-5c4e-4b43-9a0e-7c3f5b2f0e11';
