/**
 * One node's history for the operator (`/dashboard/admin/nodes/{id}/history`): the node's name
 * (`GET /baremetal/v1/nodes/{id}?fields=uuid,name,maintenance,fault`) and its recorded events,
 * oldest first, with severity, type, conductor and user
 * (`GET /baremetal/v1/nodes/{id}/history?detail=true`, following the `next` link on "More").
 */
import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { Link, useParams } from 'react-router';
import { get } from '../../lib/api.ts';
import { ErrorNote, PageHeader, Time, Rows } from '../../ui/common.tsx';

/** One history event (detailed). */
interface HistoryEvent {
  uuid: string;
  created_at: string;
  severity: string;
  event: string;
  event_type?: string;
  conductor?: string | null;
  user?: string | null;
}

/** A page of history as Ironic answers it. */
interface HistoryPage {
  history: HistoryEvent[];
  next?: string;
}

/** The path and query of an absolute `next` link (the API is on this origin). */
function pathOf(link: string): string {
  const u = new URL(link, location.origin);
  return u.pathname + u.search;
}

/** The history page. */
export function NodeHistory(): ReactNode {
  const { id = '' } = useParams();
  const node = useQuery({
    queryKey: ['node-name', id],
    queryFn: async ({ signal }) =>
      get<{ uuid: string; name: string | null; maintenance: boolean; fault: string | null }>(
        `/baremetal/v1/nodes/${id}?fields=uuid,name,maintenance,fault`,
        signal,
      ),
  });
  const history = useInfiniteQuery({
    queryKey: ['node-history', id],
    initialPageParam: `/baremetal/v1/nodes/${id}/history?detail=true`,
    queryFn: async ({ pageParam, signal }) => get<HistoryPage>(pageParam, signal),
    getNextPageParam: (last) => (last.next ? pathOf(last.next) : undefined),
  });
  const events = (history.data?.pages ?? []).flatMap((p) => p.history);
  const label = node.data?.name ?? node.data?.uuid ?? id;
  return (
    <main className="admin">
      <PageHeader title={`History of ${label}`}>
        <Link to="/dashboard/admin/nodes">All nodes</Link>
        <Link to={`/dashboard/nodes/${id}`}>Node page</Link>
      </PageHeader>
      <ErrorNote error={node.error ?? history.error} />
      <table className="grid" aria-busy={history.isPending}>
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Severity</th>
            <th scope="col">Type</th>
            <th scope="col">Event</th>
            <th scope="col">Conductor</th>
            <th scope="col">User</th>
          </tr>
        </thead>
        <tbody>
          <Rows
            pending={history.isPending}
            items={events}
            columns={6}
            empty="No events recorded."
            row={(e) => (
              <tr key={e.uuid}>
                <td>
                  <Time value={e.created_at} />
                </td>
                <td>
                  <span className={`badge ${e.severity === 'ERROR' ? 'bad' : 'plain'}`}>{e.severity}</span>
                </td>
                <td>{e.event_type ?? '—'}</td>
                <td className="wrap">{e.event}</td>
                <td className="mono">{e.conductor ?? '—'}</td>
                <td className="mono">{e.user ?? '—'}</td>
              </tr>
            )}
          />
        </tbody>
      </table>
      {history.hasNextPage ? (
        <button type="button" onClick={() => void history.fetchNextPage()} disabled={history.isFetchingNextPage}>
          {history.isFetchingNextPage ? 'Loading…' : 'More events'}
        </button>
      ) : null}
    </main>
  );
}
