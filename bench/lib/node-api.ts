/**
 * The admin's view of an in-process esi for the fleet benchmarks (deploy-fleet, inspection): a
 * JSON API caller with a project-scoped admin token and Ironic microversion 1.82, and a wait for
 * a set of nodes to reach a state.
 *
 * The caller runs in esi's process, so it uses node:http with keep-alive connections (~1 ms of
 * CPU a request) rather than `fetch` (~10 ms): 50 deploy requests sent "at once" through
 * `fetch` would leave the last ~0.5 s after the first, all of it charged to the control plane.
 */
import http from 'node:http';
import type { RunningServer } from '../../src/server/main.ts';

/** Calls esi's API as the admin: JSON in and out; throws on a 4xx/5xx with the answer's start. */
export type AdminApi = (method: string, path: string, body?: unknown) => Promise<any>;

/**
 * An {@link AdminApi} for `server`, with the admin token's secret (for raw requests such as
 * image uploads).
 */
export async function adminApi(server: RunningServer, password: string): Promise<{ api: AdminApi; token: string }> {
  const issued = await server.services.identity.tokens.authenticatePassword(
    { userName: 'admin', domainId: 'default', password },
    { kind: 'project', projectName: 'admin', domainId: 'default' },
  );
  const headers = { 'x-auth-token': issued.secret, 'content-type': 'application/json', 'x-openstack-ironic-api-version': '1.82' };
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const api: AdminApi = (method, path, body) =>
    new Promise((resolve, reject) => {
      const payload = body !== undefined ? JSON.stringify(body) : undefined;
      const req = http.request(
        `${server.url}${path}`,
        {
          method,
          agent,
          headers: { ...headers, ...(payload !== undefined ? { 'content-length': String(Buffer.byteLength(payload)) } : {}) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            const status = res.statusCode ?? 0;
            if (status >= 400) reject(new Error(`${method} ${path}: ${status} ${text.slice(0, 300)}`));
            else {
              try {
                resolve(text ? JSON.parse(text) : null);
              } catch (err) {
                reject(err instanceof Error ? err : new Error(String(err)));
              }
            }
          });
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  return { api, token: issued.secret };
}

/**
 * Polls the node list every 200 ms until every node of `uuids` satisfies `ok`.
 * @returns those nodes as the API shows them
 * @throws Error naming `what` when a node fails (`… failed`, `error`) or `timeoutMs` passes
 */
export async function waitNodes(
  api: AdminApi,
  uuids: readonly string[],
  ok: (n: any) => boolean,
  what: string,
  timeoutMs: number,
): Promise<any[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const list = (await api('GET', '/baremetal/v1/nodes?detail=True&limit=1000')).nodes.filter((n: any) => uuids.includes(n.uuid));
    const failed = list.filter((n: any) => / failed$|^error$/.test(n.provision_state));
    if (failed.length > 0) throw new Error(`${what}: ${failed.length} node(s) failed, e.g. ${failed[0].name}: ${failed[0].last_error}`);
    if (list.every(ok)) return list;
    if (Date.now() > deadline) throw new Error(`${what}: not done within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
