/**
 * Progress of a long node operation on the terminal (`esi node provision --wait`, …): a phase
 * name and, when the phase moves bytes (an image written, a disk erased), a bar with bytes done
 * of the total.
 *
 * On a terminal (stderr is a TTY) this is a cli-progress bar redrawn in place; otherwise (logs,
 * pipes, tests) one line per phase change and one per 10 % of bytes, e.g.
 * `esi: B: writing the image: 40% (12.0 MiB of 30.0 MiB)`. Output goes to stderr so that stdout
 * keeps only the command's result.
 *
 * A byte phase that ends — the next phase begins, or the operation succeeds ({@link
 * ProgressView.finish}) — is drawn at 100 % (a poll every 500 ms rarely sees the last bytes), so
 * that a finished write never stays at 0 % or 32 %; an operation that fails ({@link
 * ProgressView.stop}) leaves the bar where it was.
 */
import cliProgress from 'cli-progress';

/** What a watched operation reports on each poll. */
export interface ProgressState {
  /** Human phase, e.g. `booting the deploy agent`. */
  readonly phase: string;
  /** Bytes done in this phase, when it moves bytes. */
  readonly bytes?: number;
  /** Bytes in all, when known. */
  readonly total?: number | null;
}

/** Size in binary units, e.g. `12.0 MiB`. */
export function formatBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${n} B` : `${v.toFixed(1)} ${units[i]}`;
}

/** Draws {@link ProgressState}s for one subject (see the module documentation). */
export class ProgressView {
  readonly #tty: boolean;
  #bar: cliProgress.SingleBar | null = null;
  #phase = '';
  #lastTenth = -1;
  /** The total of the current phase's bytes, when it moves a known number of them. */
  #total: number | null = null;

  /**
   * @param subject what is being worked on, e.g. the node's name
   * @param stream where to draw (default stderr)
   */
  constructor(
    private readonly subject: string,
    private readonly stream: NodeJS.WriteStream = process.stderr,
  ) {
    this.#tty = Boolean(stream.isTTY);
  }

  /** Show a new state (repeated states are drawn once). */
  update(s: ProgressState): void {
    const hasBytes = typeof s.bytes === 'number';
    if (s.phase !== this.#phase) {
      // The next phase began: the previous one's bytes are all done.
      this.#complete();
      this.#endBar();
      this.#phase = s.phase;
      this.#lastTenth = -1;
      this.#total = null;
      if (!this.#tty || !hasBytes) this.#line(s.phase);
    }
    if (!hasBytes) return;
    const total = typeof s.total === 'number' && s.total > 0 ? s.total : null;
    this.#total = total;
    if (this.#tty) {
      if (this.#bar === null) {
        this.#bar = new cliProgress.SingleBar(
          {
            format: `${this.subject}: ${s.phase} [{bar}] {percentage}% {done} of {all}`,
            stream: this.stream,
            hideCursor: true,
            clearOnComplete: false,
          },
          cliProgress.Presets.shades_classic,
        );
        this.#bar.start(total ?? 1, 0, { done: formatBytes(0), all: total ? formatBytes(total) : '?' });
      }
      this.#bar.setTotal(total ?? Math.max(1, s.bytes));
      this.#bar.update(s.bytes, { done: formatBytes(s.bytes), all: total ? formatBytes(total) : '?' });
      return;
    }
    const tenth = total ? Math.floor((10 * s.bytes) / total) : Math.floor(s.bytes / (100 * 1024 * 1024));
    if (tenth > this.#lastTenth) {
      this.#lastTenth = tenth;
      this.#line(
        total
          ? `${s.phase}: ${Math.floor((100 * s.bytes) / total)}% (${formatBytes(s.bytes)} of ${formatBytes(total)})`
          : `${s.phase}: ${formatBytes(s.bytes)}`,
      );
    }
  }

  /** The operation succeeded: draw the current byte phase at 100 %, then end the drawing. */
  finish(): void {
    this.#complete();
    this.stop();
  }

  /** End the drawing where it is (a failure or timeout; after {@link finish} it does nothing). */
  stop(): void {
    this.#endBar();
    this.#total = null;
  }

  /** Draw the current byte phase at 100 % if it has a known total and was not drawn there yet. */
  #complete(): void {
    const total = this.#total;
    if (total === null) return;
    this.#total = null;
    if (this.#bar !== null) {
      this.#bar.setTotal(total);
      this.#bar.update(total, { done: formatBytes(total), all: formatBytes(total) });
    } else if (!this.#tty && this.#lastTenth < 10) {
      this.#lastTenth = 10;
      this.#line(`${this.#phase}: 100% (${formatBytes(total)} of ${formatBytes(total)})`);
    }
  }

  #endBar(): void {
    this.#bar?.stop();
    this.#bar = null;
  }

  #line(text: string): void {
    this.stream.write(`esi: ${this.subject}: ${text}\n`);
  }
}
