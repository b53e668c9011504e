/**
 * Options shared by every benchmark, parsed from `npm run bench -- …` by `bench/run.ts`.
 */

/** Default PostgreSQL for `--pg` (the development server; a fresh schema is used and dropped). */
export const DEFAULT_PG_URL = 'postgres://postgres@127.0.0.1:5432/test';

/** What a benchmark run should do. */
export interface BenchOptions {
  /** Smaller fleets and fewer samples, for a smoke run (figures are then only indicative). */
  readonly quick: boolean;
  /** Also measure esi on PostgreSQL at this URL, or null for SQLite only. */
  readonly pgUrl: string | null;
  /** Measure the real Ironic beside esi (on by default; skipped with a message if not installed). */
  readonly ironic: boolean;
  /** Fleet sizes to measure, ascending; null for the benchmark's defaults. */
  readonly sizes: readonly number[] | null;
  /**
   * Numbers of virtual machines deployed at once by the real-machine benchmarks (`--nodes 1,4`),
   * ascending; null or absent for the benchmark's defaults.
   */
  readonly nodes?: readonly number[] | null;
  /** Progress lines (stderr), so stdout keeps only the report. */
  readonly log: (line: string) => void;
}

/** A benchmark: its name (for `--only`), a one-line description and its entry point. */
export interface Benchmark {
  readonly name: string;
  readonly description: string;
  run(options: BenchOptions): Promise<void>;
}
