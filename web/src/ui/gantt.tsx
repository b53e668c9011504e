/**
 * A small Gantt chart in plain HTML and CSS (no chart library): one row per item, bars placed by
 * percentage of a time range on two lanes, an axis with ticks in the viewer's zone, and a line at
 * now. Every bar is a button (keyboard and touch reach it) whose title gives its exact times,
 * local and UTC; choosing one calls `onSelect` so the page can show its details.
 */
import type { ReactNode } from 'react';
import './gantt.css';

/** One bar. */
export interface GanttBar {
  readonly id: string;
  /** 0: the upper, thinner lane (e.g. offers); 1: the lower lane (e.g. leases). */
  readonly lane: 0 | 1;
  /** Milliseconds since the epoch (UTC). */
  readonly start: number;
  readonly end: number;
  /** CSS class of the bar's kind (`offer`, `lease`, `ended`…). */
  readonly kind: string;
  /** The text on the bar (cut when the bar is short) and its accessible name's start. */
  readonly label: string;
}

/** One row. */
export interface GanttRow {
  readonly id: string;
  readonly label: ReactNode;
  readonly bars: readonly GanttBar[];
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** A time as local and UTC text, for titles. */
export function bothZones(ms: number): string {
  const local = new Date(ms).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
  return `${local} (${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC)`;
}

/** Tick instants (local midnights, or every few hours for short ranges) inside [from, to]. */
function ticks(from: number, to: number): Array<{ at: number; label: string }> {
  const span = to - from;
  const stepHours = span <= 1.5 * DAY ? 3 : span <= 4 * DAY ? 12 : 24;
  const everyDays = span > 45 * DAY ? 7 : span > 20 * DAY ? 2 : 1;
  const d = new Date(from);
  d.setMinutes(0, 0, 0);
  if (stepHours === 24) d.setHours(0);
  else d.setHours(Math.ceil(d.getHours() / stepHours) * stepHours);
  const out: Array<{ at: number; label: string }> = [];
  let dayIndex = 0;
  while (d.getTime() <= to && out.length < 200) {
    const at = d.getTime();
    if (at >= from) {
      if (stepHours < 24) {
        const midnight = d.getHours() === 0;
        out.push({
          at,
          label: midnight
            ? d.toLocaleDateString(undefined, { weekday: 'short', day: 'numeric', month: 'short' })
            : d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' }),
        });
      } else {
        // Short ranges name the weekday; long ones give the day, with the month at its start.
        const withMonth = out.length === 0 || d.getDate() <= everyDays;
        const label =
          span <= 8 * DAY
            ? d.toLocaleDateString(undefined, { weekday: 'short', day: 'numeric', month: 'short' })
            : withMonth
              ? d.toLocaleDateString(undefined, { day: 'numeric', month: 'short' })
              : String(d.getDate());
        if (dayIndex % everyDays === 0) out.push({ at, label });
        dayIndex += 1;
      }
    }
    if (stepHours === 24) d.setDate(d.getDate() + 1);
    else d.setHours(d.getHours() + stepHours);
  }
  return out;
}

/** The chart. */
export function Gantt({
  from,
  to,
  now,
  rows,
  selected,
  onSelect,
  empty,
}: {
  from: number;
  to: number;
  now: number;
  rows: readonly GanttRow[];
  selected: string | null;
  onSelect: (bar: GanttBar) => void;
  empty: ReactNode;
}): ReactNode {
  const span = Math.max(1, to - from);
  const pct = (ms: number): number => ((Math.min(to, Math.max(from, ms)) - from) / span) * 100;
  const axis = ticks(from, to);
  const nowShown = now >= from && now <= to;
  return (
    <div className="gantt" role="region" aria-label="Schedule">
      <div className="gantt-inner">
        <div className="gantt-row gantt-axis" aria-hidden="true">
          <div className="gantt-label" />
          <div className="gantt-track">
            {axis.map((t) => (
              <span key={t.at} className="gantt-tick" style={{ left: `${pct(t.at)}%` }}>
                {t.label}
              </span>
            ))}
          </div>
        </div>
        {rows.length === 0 ? <div className="gantt-empty muted">{empty}</div> : null}
        {rows.map((r) => (
          <div className="gantt-row" key={r.id} data-gantt-row={r.id}>
            <div className="gantt-label">{r.label}</div>
            <div className="gantt-track">
              {axis.map((t) => (
                <span key={t.at} className="gantt-grid" style={{ left: `${pct(t.at)}%` }} aria-hidden="true" />
              ))}
              {nowShown ? <span className="gantt-now" style={{ left: `${pct(now)}%` }} aria-hidden="true" /> : null}
              {r.bars
                .filter((b) => b.end > from && b.start < to)
                .map((b) => {
                  const left = pct(b.start);
                  const width = Math.max(0.4, pct(b.end) - left);
                  const title = `${b.label}: ${bothZones(b.start)} → ${bothZones(b.end)}`;
                  return (
                    <button
                      key={b.id}
                      type="button"
                      className={`gantt-bar lane-${b.lane} ${b.kind}${selected === b.id ? ' selected' : ''}`}
                      style={{ left: `${left}%`, width: `${width}%` }}
                      title={title}
                      aria-label={title}
                      aria-pressed={selected === b.id}
                      data-bar={b.kind}
                      onClick={() => onSelect(b)}
                    >
                      <span>{b.label}</span>
                    </button>
                  );
                })}
            </div>
          </div>
        ))}
      </div>
    </div>
  );
}
