/**
 * `esi wait-ready [--url URL] [--timeout S]`: wait until an esi server answers its readiness
 * probe (`GET /readyz` 200: database answering, migrations applied, its conductor heartbeating;
 * docs/operations.md), so that a script — the README's tour — can start the server in the
 * background and go on only once it can serve: by then the first start has written
 * `<data-dir>/admin-openrc`.
 *
 * The URL is `--url`, else the scheme, host and port of `OS_AUTH_URL`, else
 * `http://127.0.0.1:8585` (`npm start`'s default). One line is printed per change of what the
 * server answers (not reachable, not ready and why), and `esi is ready at <url>` at the end;
 * exit status 1 after the timeout (default 120 s) with the last answer.
 */
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';

/** What one probe found: ready, or why not (in words). */
async function probe(url: string): Promise<{ ready: boolean; why: string }> {
  try {
    const r = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(5000) });
    if (r.status === 200) return { ready: true, why: 'ready' };
    if (r.status === 503) {
      const body = (await r.json().catch(() => null)) as { checks?: Record<string, { ok: boolean; detail: string }> } | null;
      const failed = Object.entries(body?.checks ?? {})
        .filter(([, c]) => !c.ok)
        .map(([name, c]) => `${name}: ${c.detail}`);
      return { ready: false, why: `not ready (${failed.join('; ') || 'no reason given'})` };
    }
    return { ready: false, why: `answered ${r.status} on /readyz (is this an esi server?)` };
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code;
    return { ready: false, why: cause === 'ECONNREFUSED' ? 'not listening yet' : `not reachable (${cause ?? (err as Error).message})` };
  }
}

/** The server's base URL: `--url`, else `OS_AUTH_URL`'s origin, else npm start's default. */
export function serverUrl(given: string | undefined, env: NodeJS.ProcessEnv): string {
  if (given) return given.replace(/\/+$/, '');
  const auth = env.OS_AUTH_URL;
  if (auth) {
    try {
      return new URL(auth).origin;
    } catch {
      // Not a URL: fall through to the default.
    }
  }
  return 'http://127.0.0.1:8585';
}

function seconds(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('must be a positive number of seconds');
  return n;
}

/** Register `wait-ready`. */
export function registerWaitReadyCommand(program: Command): void {
  program
    .command('wait-ready')
    .description('wait until an esi server is ready to serve (GET /readyz)')
    .option('--url <url>', "the server (default: OS_AUTH_URL's origin, else http://127.0.0.1:8585)")
    .option('--timeout <seconds>', 'give up after this long', seconds, 120)
    .addHelpText('after', '\nExample:\n  npm start -- --lab 5 & esi wait-ready && source data/admin-openrc')
    .action(async (o: { url?: string; timeout: number }) => {
      const url = serverUrl(o.url, process.env);
      const deadline = Date.now() + o.timeout * 1000;
      let last = '';
      for (;;) {
        const r = await probe(url);
        if (r.ready) {
          process.stdout.write(`esi is ready at ${url}\n`);
          return;
        }
        if (r.why !== last) process.stderr.write(`waiting for ${url}: ${r.why}\n`);
        last = r.why;
        if (Date.now() >= deadline) throw new Error(`${url} was not ready after ${o.timeout} s: ${r.why}`);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    });
}
