/**
 * `esi node provision --wait` as a log sees it (issue 19, "messages arrive in the order things
 * happen"): stdout and stderr merged into one pipe (`2>&1`, not a terminal). The progress lines
 * come first, in the order of the deploy's phases, a finished image write drawn at 100 % before
 * the next phase; the result comes last, after every progress line, and nothing follows it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { osImage } from '../../helpers/os-image.ts';
import { esiMerged, personaEnv } from '../cli/support.ts';
import { waitNode, type ConductorEnv } from '../conductor/support.ts';
import { agentNode, startDeployEnv, uploadImage } from './support.ts';

const LONG = 60_000;

/** The deploy's phases in the order they happen (src/cli/commands/node-provision.ts deployPhase). */
const PHASES = [
  /^booting the deploy agent$/,
  /^waiting for the deploy agent to call back$/,
  /^deploying$/,
  /^writing the image(: .*)?$/,
  /^converting the image \(qcow2 to raw\)$/,
  /^booting the instance$/,
];

describe('esi node provision --wait, stdout and stderr in one stream', () => {
  let env: ConductorEnv;

  beforeAll(async () => {
    env = await startDeployEnv(1);
    const { node } = await agentNode(env, 'node-0', { name: 'B' });
    await waitNode(env, node.uuid, (n) => n.provision_state === 'available' && n.reservation === null, LONG);
    await uploadImage(env, osImage('lessee-os', 8, 'qcow2'), 'my-os', { as: env.p.lessee, diskFormat: 'qcow2' });
  }, LONG);
  afterAll(async () => {
    await env?.close();
  });

  it(
    'prints the progress lines in the order of the phases, then the result, and nothing after it',
    async () => {
      const r = await esiMerged(
        ['node', 'provision', 'B', '--image', 'my-os', '--wait', '120', '-f', 'json'],
        personaEnv(env.ts, 'lessee'),
      );
      expect(r.code, r.output).toBe(0);
      const lines = r.output.trimEnd().split('\n');
      const resultAt = lines.indexOf('{');
      expect(resultAt, r.output).toBeGreaterThan(0);
      // Before the result: progress lines only; from it on: the result only.
      const progress = lines.slice(0, resultAt);
      for (const line of progress) expect(line, r.output).toMatch(/^esi: B: /);
      expect(JSON.parse(lines.slice(resultAt).join('\n'))).toMatchObject({ node: 'B', provision_state: 'active' });
      expect(progress[0]).toBe('esi: B: booting the deploy agent');
      // Each line's phase is the same as, or later than, the one before it.
      const ranks = progress.map((line) => {
        const text = line.slice('esi: B: '.length);
        const rank = PHASES.findIndex((re) => re.test(text));
        expect(rank, `unknown phase in "${line}"`).toBeGreaterThanOrEqual(0);
        return rank;
      });
      for (let i = 1; i < ranks.length; i++) expect(ranks[i], r.output).toBeGreaterThanOrEqual(ranks[i - 1]!);
      // An image write the output showed ends at 100 % before any later phase, its percentages rising.
      const writes = progress.filter((l) => /: writing the image: \d+%/.test(l)).map((l) => Number(/(\d+)%/.exec(l)![1]));
      for (let i = 1; i < writes.length; i++) expect(writes[i]).toBeGreaterThan(writes[i - 1]!);
      if (writes.length > 0 && progress.some((l) => /: (converting the image|booting the instance)/.test(l))) {
        expect(writes.at(-1), r.output).toBe(100);
      }
    },
    2 * LONG,
  );
});
