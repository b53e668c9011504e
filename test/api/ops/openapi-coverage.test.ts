/**
 * How much of the API the document describes (issue 19, item 4: "an OpenAPI 3 document … that
 * matches what the routes accept and return"): every POST, PUT and PATCH operation names its
 * request body (or says it reads none, `x-esi-no-body`), and every operation names its success
 * answer (a JSON schema, a non-JSON media type, or "without a body"), and every GET operation
 * names the query parameters it reads (or says it reads none, `x-esi-no-query`).
 *
 * Operations not yet described are listed, one per line, in `openapi-gaps.txt`; the test fails
 * both ways: on an operation that lacks a description and is not listed (a new route must come
 * documented), and on a listed one that is now described (the list stays exact, so it only
 * shrinks).
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { call, createPersonas, startTestServer, type TestServer } from '../../helpers/harness.ts';

let ts: TestServer;
let doc: { paths: Record<string, Record<string, any>> };

beforeAll(async () => {
  ts = await startTestServer();
  const p = await createPersonas(ts);
  const r = await call(ts, p.anonymous, 'GET', '/openapi.json');
  expect(r.status, r.text).toBe(200);
  doc = r.body;
});
afterAll(async () => ts?.close());

/** `METHOD path body`, `METHOD path answer` and `GET path query` for each part of an operation not described. */
function gaps(): string[] {
  const out: string[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const m = method.toUpperCase();
      if (['post', 'put', 'patch'].includes(method) && op.requestBody === undefined && op['x-esi-no-body'] !== true)
        out.push(`${m} ${path} body`);
      // The success answer: 2XX, or the status a route names (101, 300).
      const ok = Object.entries<any>(op.responses ?? {}).find(([code]) => !/^[45]/.test(code))?.[1];
      if (ok?.content === undefined && ok?.description === 'Success') out.push(`${m} ${path} answer`);
      const query = (op.parameters ?? []).some((x: { in?: string }) => x.in === 'query');
      if (method === 'get' && !query && op['x-esi-no-query'] !== true) out.push(`${m} ${path} query`);
    }
  }
  return out.sort();
}

/** The listed gaps (blank lines and `#` comments left out). */
function listed(): string[] {
  return readFileSync(new URL('./openapi-gaps.txt', import.meta.url), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .sort();
}

it('documents the body and the answer of every new operation (those not listed in openapi-gaps.txt)', () => {
  const known = new Set(listed());
  expect(gaps().filter((g) => !known.has(g))).toEqual([]);
});

it('lists no operation that is described now (openapi-gaps.txt only shrinks)', () => {
  const now = new Set(gaps());
  expect(listed().filter((g) => !now.has(g))).toEqual([]);
});
