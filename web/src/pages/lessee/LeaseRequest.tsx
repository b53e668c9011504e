/**
 * "N nodes matching these properties": the all-or-none lease request by hardware
 * (`POST /lease/v1/lease_requests`, esi's addition to esi-leap; docs/leasing.md) from the
 * marketplace. When nothing fits, the API answers 409 with the earliest window in which the whole
 * request fits, in words; the form shows the message and offers that window in one click.
 */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent, type ReactNode } from 'react';
import { ApiError, call } from '../../lib/api.ts';
import { localInputToUtc, parseUtc, toLocalInput } from '../../lib/times.ts';
import { ErrorNote } from '../../ui/common.tsx';

/** The earliest window named in a 409 of the lease request API, as UTC times, or null. */
export function earliestWindow(error: unknown): { start: string; end: string } | null {
  if (!(error instanceof ApiError) || error.status !== 409) return null;
  const m = /earliest window for the whole request is (\S+) to (\S+?)\.?$/m.exec(error.message);
  return m ? { start: m[1]!, end: m[2]! } : null;
}

/** The lease request form. */
export function LeaseRequest({ resourceClass }: { resourceClass: string }): ReactNode {
  const qc = useQueryClient();
  const now = Date.now();
  const [count, setCount] = useState('1');
  const [cls, setCls] = useState(resourceClass);
  const [where, setWhere] = useState('');
  const [start, setStart] = useState(toLocalInput(now));
  const [end, setEnd] = useState(toLocalInput(now + 86_400_000));
  const request = useMutation({
    mutationFn: async () =>
      call<{ leases: unknown[] }>('POST', '/lease/v1/lease_requests', {
        body: {
          start_time: localInputToUtc(start),
          end_time: localInputToUtc(end),
          groups: [{ count: Number(count), ...(cls ? { resource_class: cls } : {}), ...(where ? { properties: where } : {}) }],
        },
      }),
    onSuccess: async () => {
      await qc.invalidateQueries({ queryKey: ['leases'] });
      await qc.invalidateQueries({ queryKey: ['offers'] });
    },
  });
  const earliest = earliestWindow(request.error);
  return (
    <form
      className="inline-form request-form"
      aria-label="Lease nodes by hardware"
      onSubmit={(e: FormEvent) => {
        e.preventDefault();
        request.mutate();
      }}
    >
      <label>
        Nodes
        <input type="number" min={1} max={1000} required value={count} onChange={(e) => setCount(e.target.value)} />
      </label>
      <label>
        Resource class
        <input value={cls} onChange={(e) => setCls(e.target.value)} placeholder="any" />
      </label>
      <label>
        Properties
        <input value={where} onChange={(e) => setWhere(e.target.value)} placeholder="memory_mb >= 49152 and gpus >= 1" />
      </label>
      <label>
        Start
        <input type="datetime-local" step="1" required value={start} onChange={(e) => setStart(e.target.value)} />
      </label>
      <label>
        End
        <input type="datetime-local" step="1" required value={end} onChange={(e) => setEnd(e.target.value)} />
      </label>
      <button type="submit" disabled={request.isPending}>
        {request.isPending ? 'Requesting…' : 'Lease all or none'}
      </button>
      {request.isSuccess ? <p className="notice">Leased {request.data.body.leases.length} node(s).</p> : null}
      <ErrorNote error={request.error} />
      {earliest ? (
        <button
          type="button"
          className="ghost"
          onClick={() => {
            setStart(toLocalInput(parseUtc(earliest.start)));
            setEnd(toLocalInput(parseUtc(earliest.end)));
            request.reset();
          }}
        >
          Use the earliest window
        </button>
      ) : null}
    </form>
  );
}
