/**
 * Making and removing owner lease policies (esi's addition to esi-leap,
 * `POST /lease/v1/lease_policies` and `DELETE /lease/v1/lease_policies/{uuid}`): a longest lease
 * and a gap between leases, for one node (by name or UUID) or every node of the project. The
 * API's refusal (a node that is not the project's, a bad number) shows beside the form.
 */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent, type ReactNode } from 'react';
import { call } from '../../lib/api.ts';
import { ErrorNote } from '../../ui/common.tsx';

/** Hours as seconds, or null for an empty field (no limit). */
const hours = (v: string): number | null => (v.trim() === '' ? null : Math.round(Number(v) * 3600));

/** The form that makes a lease policy. */
export function PolicyForm(): ReactNode {
  const qc = useQueryClient();
  const [node, setNode] = useState('');
  const [maxHours, setMaxHours] = useState('');
  const [gapHours, setGapHours] = useState('');
  const make = useMutation({
    mutationFn: async () =>
      call('POST', '/lease/v1/lease_policies', {
        body: {
          ...(node.trim() !== '' ? { resource_uuid: node.trim() } : {}),
          max_lease_seconds: hours(maxHours),
          min_gap_seconds: hours(gapHours),
        },
      }),
    onSuccess: async () => qc.invalidateQueries({ queryKey: ['lease-policies'] }),
  });
  return (
    <form
      className="inline-form"
      aria-label="Make a lease policy"
      onSubmit={(e: FormEvent) => {
        e.preventDefault();
        make.mutate();
      }}
    >
      <label>
        Node (empty: all my nodes)
        <input value={node} onChange={(e) => setNode(e.target.value)} placeholder="name or UUID" />
      </label>
      <label>
        Longest lease (hours)
        <input type="number" min={0} step="any" value={maxHours} onChange={(e) => setMaxHours(e.target.value)} placeholder="no limit" />
      </label>
      <label>
        Gap between leases (hours)
        <input type="number" min={0} step="any" value={gapHours} onChange={(e) => setGapHours(e.target.value)} placeholder="none" />
      </label>
      <button type="submit" disabled={make.isPending}>
        Make policy
      </button>
      <ErrorNote error={make.error} id="policy-error" />
    </form>
  );
}

/** A policy's remove button. */
export function RemovePolicy({ uuid, label }: { uuid: string; label: string }): ReactNode {
  const qc = useQueryClient();
  const remove = useMutation({
    mutationFn: async () => call('DELETE', `/lease/v1/lease_policies/${uuid}`),
    onSuccess: async () => qc.invalidateQueries({ queryKey: ['lease-policies'] }),
  });
  return (
    <>
      <button
        type="button"
        className="ghost"
        onClick={() => remove.mutate()}
        disabled={remove.isPending}
        aria-label={`Remove the policy of ${label}`}
      >
        Remove
      </button>
      <ErrorNote error={remove.error} />
    </>
  );
}
