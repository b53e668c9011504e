/**
 * deploy/Containerfile builds, and the image serves: `docker build`, then a container on a free
 * port with its data directory on a volume answers GET /healthz and turns healthy (its
 * HEALTHCHECK). Runs where a container builder answers (`docker info`); elsewhere it is skipped
 * with the reason printed.
 */
import { spawnSync } from 'node:child_process';
import { afterAll, expect, it } from 'vitest';
import { freePort, ROOT } from '../helpers/esi-process.ts';
import { describeOnMachine } from '../helpers/tools.ts';
import { waitFor } from '../helpers/wait-for.ts';

/** Why no image can be built here (no docker, or no daemon answering), or null. */
function noBuilder(): string | null {
  const r = spawnSync('docker', ['info', '--format', '{{.ServerVersion}}'], { encoding: 'utf8', timeout: 30_000 });
  if (r.error) return `no docker command (${r.error.message})`;
  return r.status === 0 ? null : `docker info fails: ${(r.stderr || r.stdout).trim().split('\n').at(-1)}`;
}

const TAG = `esi-test:${process.pid}`;
const NAME = `esi-test-${process.pid}`;
const docker = (...args: string[]) => spawnSync('docker', args, { cwd: ROOT, encoding: 'utf8', timeout: 1_200_000 });

describeOnMachine(noBuilder(), 'the container image of deploy/Containerfile', () => {
  afterAll(() => {
    docker('rm', '-f', NAME);
    docker('volume', 'rm', '-f', NAME);
    docker('image', 'rm', '-f', TAG);
  });

  it('builds, serves /healthz on its port and turns healthy', async () => {
    const build = docker('build', '-f', 'deploy/Containerfile', '-t', TAG, '.');
    expect(build.status, build.stderr).toBe(0);
    const port = await freePort();
    const run = docker(
      'run',
      '-d',
      '--name',
      NAME,
      '-p',
      `127.0.0.1:${port}:8585`,
      '-v',
      `${NAME}:/var/lib/esi`,
      '-e',
      'ESI_ADMIN_PASSWORD=pw',
      TAG,
    );
    expect(run.status, run.stderr).toBe(0);
    await waitFor(
      async () => {
        const r = await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => null);
        return r?.status ?? 0;
      },
      (s) => s === 200,
      { timeoutMs: 120_000, intervalMs: 1000, what: 'the container to answer /healthz', show: () => docker('logs', NAME).stderr },
    );
    await waitFor(
      () => docker('inspect', '--format', '{{.State.Health.Status}}', NAME).stdout.trim(),
      (s) => s === 'healthy',
      { timeoutMs: 180_000, intervalMs: 2000, what: 'the container to be healthy', show: (s) => s },
    );
    const files = docker('exec', NAME, 'ls', '/var/lib/esi').stdout;
    expect(files).toContain('admin-openrc');
  });
});
