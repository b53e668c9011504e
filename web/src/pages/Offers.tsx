/**
 * The marketplace: offers the viewer may claim (`GET /lease/v1/offers` with availabilities),
 * filtered by resource class, hardware properties (the lease requests' expression language,
 * evaluated in the page over each offer's resource properties) and time window, each offer's free windows drawn on a timeline, and
 * a claim form (`POST /lease/v1/offers/{id}/claim` with start and end). Errors of a claim (a
 * window outside the offer, a conflict, a quota) are shown beside its form in the API's words.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent, type ReactNode } from 'react';
import { useSearchParams } from 'react-router';
import { call, get } from '../lib/api.ts';
import { localInputToUtc, parseUtc, toLocalInput } from '../lib/times.ts';
import { ErrorNote, PageHeader, Time, Rows } from '../ui/common.tsx';
import { LeaseRequest } from './lessee/LeaseRequest.tsx';
import { matches, parseExpression, type Expr } from '../../../src/domain/leasing/expression.ts';

/** An offer as the marketplace reads it. */
interface Offer {
  uuid: string;
  resource: string | null;
  resource_uuid: string;
  resource_class: string | null;
  resource_properties: Record<string, unknown>;
  project: string | null;
  project_id: string;
  start_time: string;
  end_time: string;
  status: string;
  availabilities: Array<[string, string]>;
}

/** Free windows of an offer inside [from, to] as bars (percentages of the range). */
function Timeline({ offer, from, to }: { offer: Offer; from: number; to: number }): ReactNode {
  const span = Math.max(1, to - from);
  return (
    <div className="timeline" role="img" aria-label={`${offer.availabilities.length} free window(s)`}>
      {offer.availabilities.map(([s, e], i) => {
        const a = Math.max(from, parseUtc(s));
        const b = Math.min(to, parseUtc(e));
        if (b <= a) return null;
        return <span key={i} className="free" style={{ left: `${((a - from) / span) * 100}%`, width: `${((b - a) / span) * 100}%` }} />;
      })}
    </div>
  );
}

/** The claim form of one offer. */
function Claim({ offer, onDone }: { offer: Offer; onDone: () => void }): ReactNode {
  const qc = useQueryClient();
  const first = offer.availabilities[0];
  const startDefault = Math.max(Date.now(), first ? parseUtc(first[0]) : Date.now());
  const [start, setStart] = useState(toLocalInput(startDefault));
  const [end, setEnd] = useState(toLocalInput(Math.min(startDefault + 86_400_000, first ? parseUtc(first[1]) : startDefault + 86_400_000)));
  const claim = useMutation({
    mutationFn: async () =>
      call('POST', `/lease/v1/offers/${offer.uuid}/claim`, {
        body: { start_time: localInputToUtc(start), end_time: localInputToUtc(end) },
      }),
    onSuccess: async () => {
      await qc.invalidateQueries({ queryKey: ['offers'] });
      await qc.invalidateQueries({ queryKey: ['leases'] });
      onDone();
    },
  });
  const errorId = `claim-error-${offer.uuid}`;
  return (
    <form
      className="inline-form"
      aria-describedby={claim.error ? errorId : undefined}
      onSubmit={(e: FormEvent) => {
        e.preventDefault();
        claim.mutate();
      }}
    >
      <label>
        Start
        <input type="datetime-local" step="1" required value={start} onChange={(e) => setStart(e.target.value)} />
      </label>
      <label>
        End
        <input type="datetime-local" step="1" required value={end} onChange={(e) => setEnd(e.target.value)} />
      </label>
      <button type="submit" disabled={claim.isPending}>
        {claim.isPending ? 'Claiming…' : 'Claim'}
      </button>
      <ErrorNote error={claim.error} id={errorId} />
    </form>
  );
}

/** The marketplace page; filters live in the URL (shareable). */
export function Offers(): ReactNode {
  const [params, setParams] = useSearchParams();
  const resourceClass = params.get('resource_class') ?? '';
  const where = params.get('where') ?? '';
  // The same hardware expressions as lease requests (src/domain/leasing/expression.ts).
  let expr: Expr | null = null;
  let whereError: unknown = null;
  try {
    expr = where.trim() === '' ? null : parseExpression(where);
  } catch (e) {
    whereError = e;
  }
  const days = Number(params.get('days') ?? '14') || 14;
  const [claiming, setClaiming] = useState<string | null>(null);
  const from = Date.now();
  const to = from + days * 86_400_000;
  const query = new URLSearchParams({ status: 'available' });
  if (resourceClass) query.set('resource_class', resourceClass);
  const offers = useQuery({
    queryKey: ['offers', resourceClass],
    queryFn: async ({ signal }) => (await get<{ offers: Offer[] }>(`/lease/v1/offers?${query.toString()}`, signal)).offers,
  });
  const shown = (offers.data ?? []).filter(
    (o) =>
      expr === null ||
      matches(expr, {
        name: o.resource,
        resourceClass: o.resource_class,
        traits: Array.isArray(o.resource_properties.traits) ? (o.resource_properties.traits as string[]) : [],
        properties: o.resource_properties,
      }),
  );
  const set = (k: string, v: string): void => {
    const next = new URLSearchParams(params);
    if (v) next.set(k, v);
    else next.delete(k);
    setParams(next, { replace: true });
  };
  return (
    <main>
      <PageHeader title="Marketplace">
        <label>
          Resource class
          <input value={resourceClass} onChange={(e) => set('resource_class', e.target.value)} placeholder="any" />
        </label>
        <label>
          Hardware filter
          <input
            value={where}
            onChange={(e) => set('where', e.target.value)}
            placeholder="memory_mb >= 4096 and cpus >= 2"
            aria-invalid={whereError !== null}
            aria-describedby={whereError !== null ? 'where-error' : undefined}
          />
          <ErrorNote error={whereError} id="where-error" />
        </label>
        <label>
          Window
          <select value={String(days)} onChange={(e) => set('days', e.target.value)}>
            <option value="1">next day</option>
            <option value="7">next week</option>
            <option value="14">next 2 weeks</option>
            <option value="30">next 30 days</option>
          </select>
        </label>
      </PageHeader>
      <details className="panel">
        <summary>Lease several nodes by hardware (all or none)</summary>
        <LeaseRequest resourceClass={resourceClass} />
      </details>
      <ErrorNote error={offers.error} />
      <table className="grid" aria-busy={offers.isPending}>
        <thead>
          <tr>
            <th scope="col">Node</th>
            <th scope="col">Class</th>
            <th scope="col">Offered</th>
            <th scope="col">Free ({days} days)</th>
            <th scope="col">
              <span className="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          <Rows
            pending={offers.isPending}
            items={shown}
            columns={5}
            empty="No offers match."
            row={(o) => (
              <tr key={o.uuid} data-offer={o.resource ?? o.resource_uuid}>
                <td>{o.resource ?? o.resource_uuid}</td>
                <td>{o.resource_class ?? '—'}</td>
                <td>
                  <Time value={o.start_time} /> – <Time value={o.end_time} />
                </td>
                <td>
                  <Timeline offer={o} from={from} to={to} />
                </td>
                <td>
                  {claiming === o.uuid ? (
                    <Claim offer={o} onDone={() => setClaiming(null)} />
                  ) : (
                    <button type="button" onClick={() => setClaiming(o.uuid)}>
                      Claim…
                    </button>
                  )}
                </td>
              </tr>
            )}
          />
        </tbody>
      </table>
    </main>
  );
}
