/**
 * Scrapes of `GET /metrics` for the operations tests, parsed by the Prometheus project's own
 * text-format parser (`prometheus_client.parser`, Debian's python3-prometheus-client) rather
 * than by a parser of ours: what the tests check is what Prometheus reads.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect } from 'vitest';
import { SYSTEM_PYTHON } from '../../helpers/ironic-peer.ts';

/** One sample of a scrape: metric family, its type, sample name, labels, value. */
export interface Sample {
  readonly family: string;
  readonly type: string;
  readonly name: string;
  readonly labels: Record<string, string>;
  readonly value: number;
}

/** Parse exposition text with `prometheus_client.parser` (the Prometheus project's Python client). */
export async function parse(text: string): Promise<Sample[]> {
  const script = [
    'import json, math, sys',
    'from prometheus_client.parser import text_string_to_metric_families',
    'out = []',
    'for f in text_string_to_metric_families(sys.stdin.read()):',
    '    for s in f.samples:',
    '        v = s.value if math.isfinite(s.value) else str(s.value)',
    '        out.append({"family": f.name, "type": f.type, "name": s.name, "labels": s.labels, "value": v})',
    'print(json.dumps(out))',
  ].join('\n');
  const run = promisify(execFile)(SYSTEM_PYTHON, ['-c', script], { maxBuffer: 64 * 1024 * 1024 });
  run.child.stdin!.end(text);
  return JSON.parse((await run).stdout) as Sample[];
}

/** `GET {url}/metrics` (no token, as Prometheus), checked to be the text format 0.0.4, parsed. */
export async function scrape(url: string): Promise<Sample[]> {
  const r = await fetch(`${url}/metrics`);
  expect(r.status).toBe(200);
  expect(r.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parse(await r.text());
}

/** The sum of the samples called `name` whose labels include `labels` (0 when none). */
export const value = (samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number =>
  samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);

/** The samples called `name` whose labels include `labels`. */
export const samples = (all: readonly Sample[], name: string, labels: Record<string, string> = {}): Sample[] =>
  all.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
