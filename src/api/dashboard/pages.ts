/**
 * The web dashboard's pages (web/, a React single-page app built by Vite into web/dist at
 * `npm install`): esi serves them itself, on its one port.
 *
 * | route                            | answer |
 * |----------------------------------|--------|
 * | `GET /` from a browser           | the app's `index.html` (a client asking for JSON gets esi's service list, src/server/app.ts) |
 * | `GET /dashboard`, `/dashboard/{view}[/{item}[/{part}[/{sub}]]]` | `index.html`: every view has its own URL, routed in the browser |
 * | `GET /dashboard/assets/{file}`   | the hashed bundle files, cached for a year (`immutable`) |
 *
 * The pages are public (they hold no data: everything is read through the APIs with the user's
 * token) and carry a strict Content-Security-Policy (scripts and connections to this origin
 * only, no framing). The dashboard's own API (`/dashboard/v1/…`) is not a page: unknown paths
 * there are 404s, not the app. When web/dist is missing (the bundle was not built), the pages
 * answer 503 saying how to build it.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fromRoot } from '../../project-root.ts';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** Where Vite writes the bundle (web/dist of the project). */
export const DEFAULT_WEB_ROOT = fromRoot('web', 'dist');

/** Headers of every page: what the app may load and connect to, and no framing. */
const PAGE_HEADERS = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'self'; form-action 'self'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-cache',
} as const;

const NOT_BUILT =
  '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>esi</title></head><body><main><h1>The dashboard is not built</h1>' +
  '<p>Build it with <code>npm run build:web</code> (npm install does it) and reload. The APIs work without it.</p></main></body></html>';

/** True when the request is a browser's navigation (it prefers HTML to JSON). */
export function wantsPage(request: FastifyRequest): boolean {
  const accept = request.headers.accept ?? '';
  return accept.includes('text/html');
}

/**
 * Register the page routes on the root instance.
 * @param webRoot the built bundle's directory (index.html and assets/)
 * @returns `sendPage(reply)`, which answers with the app's index.html (for `GET /` from a browser)
 */
export async function registerDashboardPages(
  app: FastifyInstance,
  webRoot: string = DEFAULT_WEB_ROOT,
): Promise<(reply: FastifyReply) => FastifyReply> {
  const built = existsSync(join(webRoot, 'index.html'));
  await app.register(fastifyStatic, { root: webRoot, serve: false, decorateReply: true });

  const sendPage = (reply: FastifyReply): FastifyReply => {
    void reply.headers(PAGE_HEADERS);
    if (!built) return reply.code(503).type('text/html; charset=utf-8').send(NOT_BUILT);
    return reply.sendFile('index.html', webRoot, { cacheControl: false });
  };

  const page = {
    config: { public: true, doc: { summary: 'The web dashboard (a view of the single-page app)', answer: 'html' as const, noQuery: true } },
  };
  app.get('/dashboard', page, async (_req, reply) => sendPage(reply));
  // A view's URL has up to four segments below /dashboard (`/dashboard/admin/nodes/{uuid}/history`).
  const view = async (req: FastifyRequest<{ Params: Record<string, string> }>, reply: FastifyReply): Promise<FastifyReply> => {
    if (req.params.view === 'v1')
      return reply
        .code(404)
        .type('application/json')
        .send({ error: { code: 404, title: 'Not Found', message: 'No such dashboard API resource.' } });
    return sendPage(reply);
  };
  app.get('/dashboard/:view', page, view);
  app.get('/dashboard/:view/:item', page, view);
  app.get('/dashboard/:view/:item/:part', page, view);
  app.get('/dashboard/:view/:item/:part/:sub', page, view);
  app.get<{ Params: { file: string } }>(
    '/dashboard/assets/:file',
    { config: { public: true, doc: { summary: 'A file of the dashboard bundle (hashed name)', answer: 'binary', noQuery: true } } },
    async (req, reply) => {
      const file = req.params.file;
      if (!/^[A-Za-z0-9._-]+$/.test(file) || file.startsWith('.'))
        return reply
          .code(404)
          .type('application/json')
          .send({ error: { code: 404, title: 'Not Found', message: 'No such file.' } });
      void reply.header('x-content-type-options', 'nosniff');
      return reply.sendFile(file, join(webRoot, 'assets'), { immutable: true, maxAge: '365d' });
    },
  );
  return sendPage;
}
