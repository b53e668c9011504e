/**
 * Leases the viewer holds or granted (`GET /lease/v1/leases`), with a countdown to each active
 * lease's end and the way to end one early (`DELETE /lease/v1/leases/{id}`).
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState, type ReactNode } from 'react';
import { call, get } from '../lib/api.ts';
import { Badge, countdown, ErrorNote, PageHeader, Time, Rows } from '../ui/common.tsx';

/** A lease as the list reads it. */
interface Lease {
  uuid: string;
  resource: string | null;
  resource_uuid: string;
  project: string | null;
  owner: string | null;
  start_time: string;
  end_time: string;
  status: string;
}

/** The leases page. */
export function Leases(): ReactNode {
  const qc = useQueryClient();
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, []);
  const leases = useQuery({
    queryKey: ['leases'],
    queryFn: async ({ signal }) => (await get<{ leases: Lease[] }>('/lease/v1/leases', signal)).leases,
  });
  const end = useMutation({
    mutationFn: async (id: string) => call('DELETE', `/lease/v1/leases/${id}`),
    onSuccess: async () => qc.invalidateQueries({ queryKey: ['leases'] }),
  });
  return (
    <main>
      <PageHeader title="Leases" />
      <ErrorNote error={leases.error ?? end.error} />
      <table className="grid" aria-busy={leases.isPending}>
        <thead>
          <tr>
            <th scope="col">Node</th>
            <th scope="col">Lessee</th>
            <th scope="col">Owner</th>
            <th scope="col">Start</th>
            <th scope="col">End</th>
            <th scope="col">Status</th>
            <th scope="col">
              <span className="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          <Rows
            pending={leases.isPending}
            items={leases.data}
            columns={7}
            empty="No leases."
            row={(l) => (
              <tr key={l.uuid} data-lease={l.resource ?? l.resource_uuid}>
                <td>{l.resource ?? l.resource_uuid}</td>
                <td>{l.project ?? '—'}</td>
                <td>{l.owner ?? '—'}</td>
                <td>
                  <Time value={l.start_time} />
                </td>
                <td>
                  <Time value={l.end_time} />
                  {l.status === 'active' ? <span className="muted"> ({countdown(l.end_time, now)} left)</span> : null}
                </td>
                <td>
                  <Badge value={l.status} />
                </td>
                <td>
                  {['created', 'active'].includes(l.status) ? (
                    <button type="button" className="danger" onClick={() => end.mutate(l.uuid)} disabled={end.isPending}>
                      End lease
                    </button>
                  ) : null}
                </td>
              </tr>
            )}
          />
        </tbody>
      </table>
    </main>
  );
}
