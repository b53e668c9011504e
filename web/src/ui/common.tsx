/**
 * Small building blocks shared by the pages: times in the viewer's zone with UTC on hover, an
 * error in words beside what caused it, a status badge, a loading placeholder that keeps the
 * table's shape (no flash of an empty table).
 */
import type { ReactNode } from 'react';
import { ApiError } from '../lib/api.ts';

/** A time in the viewer's zone; hovering shows UTC (ISO-8601). */
export function Time({ value }: { value: string | null | undefined }): ReactNode {
  if (!value) return <span className="muted">—</span>;
  const d = new Date(/[zZ]|[+-]\d\d:?\d\d$/.test(value) ? value : `${value}Z`);
  if (Number.isNaN(d.getTime())) return <span>{value}</span>;
  return (
    <time dateTime={d.toISOString()} title={`${d.toISOString().replace('.000Z', 'Z')} (UTC)`}>
      {d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })}
    </time>
  );
}

/** An error message in words (the API's own), for a form field or an action. */
export function ErrorNote({ error, id }: { error: unknown; id?: string }): ReactNode {
  if (error === null || error === undefined) return null;
  const text = error instanceof ApiError ? error.message : error instanceof Error ? error.message : String(error);
  return (
    <p className="error" role="alert" id={id}>
      {text}
    </p>
  );
}

/** A state as a badge (provision state, power state, lease status). */
export function Badge({ value }: { value: string | null | undefined }): ReactNode {
  const v = value ?? 'none';
  const tone = /error|fail/.test(v) ? 'bad' : /active|power on|available|on$/.test(v) ? 'good' : /wait|ing$/.test(v) ? 'busy' : 'plain';
  return <span className={`badge ${tone}`}>{v}</span>;
}

/** Rows of grey bars shaped like the table to come, while its data loads. */
export function LoadingRows({ columns, rows = 5 }: { columns: number; rows?: number }): ReactNode {
  return (
    <>
      {Array.from({ length: rows }, (_, r) => (
        <tr key={r} aria-hidden="true">
          {Array.from({ length: columns }, (_, c) => (
            <td key={c}>
              <span className="skeleton" />
            </td>
          ))}
        </tr>
      ))}
    </>
  );
}

/**
 * A table body in its three shapes: grey rows while its data loads ({@link LoadingRows}), one
 * line in words when there is nothing, else a row per item (`row` renders each).
 */
export function Rows<T>({
  pending,
  items,
  columns,
  empty,
  row,
  loadingRows,
}: {
  pending: boolean;
  items: readonly T[] | undefined;
  columns: number;
  empty: string;
  row: (item: T) => ReactNode;
  loadingRows?: number;
}): ReactNode {
  if (pending) return <LoadingRows columns={columns} {...(loadingRows !== undefined ? { rows: loadingRows } : {})} />;
  if ((items ?? []).length === 0)
    return (
      <tr>
        <td colSpan={columns} className="muted">
          {empty}
        </td>
      </tr>
    );
  return <>{(items ?? []).map(row)}</>;
}

/** A page's title and its actions. */
export function PageHeader({ title, children }: { title: string; children?: ReactNode }): ReactNode {
  return (
    <header className="page-header">
      <h1>{title}</h1>
      <div className="actions">{children}</div>
    </header>
  );
}

/** Time left until `iso`, as `2 d 3 h`, `3 h 12 min`, `45 s`; `ended` when past. */
export function countdown(iso: string, now: number): string {
  const ms = Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(iso) ? iso : `${iso}Z`) - now;
  if (!(ms > 0)) return 'ended';
  const s = Math.floor(ms / 1000);
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (d > 0) return `${d} d ${h} h`;
  if (h > 0) return `${h} h ${m} min`;
  if (m > 0) return `${m} min ${s % 60} s`;
  return `${s} s`;
}
