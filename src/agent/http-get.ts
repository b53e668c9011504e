/**
 * A streamed HTTP(S) GET for image downloads, on node:http / node:https rather than `fetch`:
 * the response is a plain Node stream that feeds the image sink without the web-stream layer,
 * which costs the agent about a third of its CPU per byte (measured: 256 MiB over loopback,
 * SHA-512 verified and written, 303 vs 239 MiB/s on one core).
 *
 * Redirects (301, 302, 303, 307, 308) are followed, at most {@link MAX_REDIRECTS}, as `fetch`
 * and ironic-python-agent's `requests` do.
 */
import http from 'node:http';
import https from 'node:https';

/** Redirects followed before giving up. */
export const MAX_REDIRECTS = 5;

/**
 * GET `url` and resolve with the response once its headers arrived (any status; the caller
 * checks it and must consume or destroy the body).
 * @throws Error when the connection fails, the URL is not http(s), or redirects loop
 */
export async function httpGet(url: string): Promise<http.IncomingMessage> {
  let target = new URL(url);
  for (let hops = 0; ; hops++) {
    const res = await once(target);
    const location = res.headers.location;
    if ([301, 302, 303, 307, 308].includes(res.statusCode ?? 0) && typeof location === 'string') {
      res.resume();
      if (hops >= MAX_REDIRECTS) throw new Error(`more than ${MAX_REDIRECTS} redirects`);
      target = new URL(location, target);
      continue;
    }
    return res;
  }
}

function once(target: URL): Promise<http.IncomingMessage> {
  if (target.protocol !== 'http:' && target.protocol !== 'https:')
    return Promise.reject(new Error(`unsupported URL scheme ${target.protocol}`));
  const get = target.protocol === 'https:' ? https.get : http.get;
  return new Promise((resolve, reject) => {
    const req = get(target, resolve);
    req.on('error', reject);
  });
}
