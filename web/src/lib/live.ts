/**
 * The live channel: esi's change stream (`GET /dashboard/v1/changes`, server-sent events read
 * with fetch so the token travels in `X-Auth-Token`, not in the URL) tells the page which node,
 * lease or offer changed — ids only, and only those the viewer may see. Each change makes the
 * page refetch that one resource through the normal API (which applies the caller's policy
 * again) and patch it into the lists it shows; a resource the viewer may no longer see (404) is
 * removed from them. No list is polled.
 *
 * On a lost connection the stream reconnects by itself (back-off 0.5 s doubling to 10 s) with
 * `Last-Event-ID`, and the page shows a banner meanwhile; a `reset` event (the server no longer
 * holds the changes since that id) refetches everything.
 */
import type { QueryClient } from '@tanstack/react-query';
import { ApiError, get } from './api.ts';

/** One change as the stream sends it. */
export interface Change {
  readonly kind: string;
  readonly id: string;
  readonly op: string;
  readonly seq?: number;
}

/** How the channel is doing, for the banner. */
export type LiveState = 'connecting' | 'live' | 'lost';

/** The single-resource URL and list keys of each kind the page shows. */
const KINDS: Record<string, { readonly one: (id: string) => string; readonly key: string; readonly listKey: string; readonly id: string }> =
  {
    node: { one: (id) => `/baremetal/v1/nodes/${id}`, key: 'node', listKey: 'nodes', id: 'uuid' },
    lease: { one: (id) => `/lease/v1/leases/${id}`, key: 'lease', listKey: 'leases', id: 'uuid' },
    offer: { one: (id) => `/lease/v1/offers/${id}`, key: 'offer', listKey: 'offers', id: 'uuid' },
  };

/**
 * Apply one change to the query cache: refetch the resource, replace it in every cached list of
 * its kind (lists are arrays of objects under the `[listKey, …]` keys), or drop it when the
 * viewer may no longer see it; lists that may gain it (a create, or a resource now visible)
 * are refetched.
 */
export async function applyChange(qc: QueryClient, change: Change): Promise<void> {
  const kind = KINDS[change.kind];
  if (kind === undefined) return;
  let fresh: Record<string, unknown> | null = null;
  if (change.op !== 'delete') {
    try {
      fresh = await get<Record<string, unknown>>(kind.one(change.id));
    } catch (e) {
      if (!(e instanceof ApiError) || e.status !== 404) throw e;
    }
  }
  qc.setQueryData([kind.key, change.id], fresh ?? undefined);
  let missing = false;
  for (const [key, list] of qc.getQueriesData<Array<Record<string, unknown>>>({ queryKey: [kind.listKey] })) {
    if (!Array.isArray(list)) continue;
    const at = list.findIndex((r) => r[kind.id] === change.id);
    if (fresh === null) {
      if (at >= 0)
        qc.setQueryData(
          key,
          list.filter((_, i) => i !== at),
        );
    } else if (at >= 0) {
      qc.setQueryData(
        key,
        list.map((r, i) => (i === at ? { ...r, ...fresh } : r)),
      );
    } else missing = true;
  }
  // A resource the lists do not hold yet (new, or newly visible): lists with filters decide.
  if (fresh !== null && missing) await qc.invalidateQueries({ queryKey: [kind.listKey] });
}

/** Parse the events of a server-sent-events text chunk sequence. */
export function sseParser(onEvent: (event: string, data: string, id: string | null) => void): (chunk: string) => void {
  let buffer = '';
  return (chunk) => {
    buffer += chunk;
    let cut: number;
    while ((cut = buffer.search(/\r?\n\r?\n/)) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut).replace(/^\r?\n\r?\n/, '');
      let event = 'message';
      let id: string | null = null;
      const data: string[] = [];
      for (const line of block.split(/\r?\n/)) {
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'event') event = value;
        else if (field === 'data') data.push(value);
        else if (field === 'id') id = value;
      }
      if (data.length > 0 || event !== 'message') onEvent(event, data.join('\n'), id);
    }
  };
}

/**
 * Keep the live channel open for one token until `signal` aborts.
 * @param onState called on every change of the channel's state
 * @param onExpired called when the server ends the stream because the token expired or was revoked
 */
export async function runLive(
  qc: QueryClient,
  token: string,
  signal: AbortSignal,
  onState: (s: LiveState) => void,
  onExpired: () => void,
): Promise<void> {
  let lastId: string | null = null;
  let delay = 500;
  while (!signal.aborted) {
    onState(lastId === null ? 'connecting' : 'lost');
    try {
      const headers: Record<string, string> = { 'X-Auth-Token': token, Accept: 'text/event-stream' };
      if (lastId !== null) headers['Last-Event-ID'] = lastId;
      const res = await fetch('/dashboard/v1/changes', { headers, signal });
      if (res.status === 401) return onExpired();
      if (!res.ok || res.body === null) throw new Error(`HTTP ${res.status}`);
      onState('live');
      delay = 500;
      const decoder = new TextDecoder();
      let expired = false;
      const feed = sseParser((event, data, id) => {
        if (id !== null) lastId = id;
        if (event === 'expired') expired = true;
        else if (event === 'reset') void qc.invalidateQueries();
        else if (event === 'change') {
          try {
            void applyChange(qc, JSON.parse(data) as Change).catch(() => qc.invalidateQueries());
          } catch {
            // A malformed event: ignore it.
          }
        }
      });
      const reader = res.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        feed(decoder.decode(value, { stream: true }));
      }
      if (expired) return onExpired();
    } catch {
      if (signal.aborted) return;
    }
    onState('lost');
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 10_000);
    // Whatever was missed while away: the server replays from Last-Event-ID, or says reset.
  }
}
