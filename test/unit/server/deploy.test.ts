/**
 * The deployment artefacts of deploy/ (docs/operations.md): the systemd unit, alone and with
 * its network-node drop-in, passes `systemd-analyze verify` without a warning and runs what it says (the example config, the
 * state directory as data directory, no sd_notify); the Containerfile builds from the slim
 * Node 20 image with runtime dependencies only, keeps the data directory on a volume, exposes
 * the default port and checks /healthz. (The image is built in test/system/container-image.test.ts
 * where a builder runs.)
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/server/config.ts';
import { commandTool, describeNeeding } from '../../helpers/tools.ts';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const read = (f: string): string => fs.readFileSync(path.join(ROOT, f), 'utf8');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-deploy-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The `Key=value` lines of a unit's section (a key may repeat). */
function unitSection(text: string, section: string): Array<[string, string]> {
  const body = text.split(/^\[/m).find((s) => s.startsWith(`${section}]`)) ?? '';
  return body
    .split('\n')
    .slice(1)
    .filter((l) => /^[A-Za-z]+=/.test(l))
    .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]);
}

/** Why systemd-analyze cannot verify units here, or null when it can. */
function systemdAnalyzeUnusable(): string | null {
  const r = spawnSync('systemd-analyze', ['--version'], { encoding: 'utf8' });
  return r.status === 0 ? null : `systemd-analyze does not run here: ${(r.stderr || String(r.error)).trim().split('\n')[0]}`;
}

describe('deploy/esi.service', () => {
  const unit = read('deploy/esi.service');
  const service = new Map(unitSection(unit, 'Service'));

  it('runs esi server with /etc/esi/esi.yaml as user esi, its data directory the state directory', () => {
    expect(service.get('ExecStart')).toBe('/usr/bin/node /opt/esi/bin/esi.js server --config /etc/esi/esi.yaml');
    expect(service.get('User')).toBe('esi');
    expect(service.get('StateDirectory')).toBe('esi');
    const example = YAML.parse(read('deploy/esi.yaml')) as { data_dir: string };
    expect(example.data_dir).toBe('/var/lib/esi');
    expect(service.get('ReadWritePaths')?.split(' ')).toContain('/var/lib/esi');
    expect(service.get('ProtectSystem')).toBe('strict');
    expect(service.get('NoNewPrivileges')).toBe('yes');
    // esi does not speak sd_notify: Type=notify would never become active.
    expect(service.get('Type')).toBe('exec');
    expect(spawnSync('grep', ['-rl', 'NOTIFY_SOCKET', 'src'], { cwd: ROOT, encoding: 'utf8' }).stdout).toBe('');
    // esi stops within 20 s of SIGTERM (src/server/commands.ts).
    expect(Number(service.get('TimeoutStopSec'))).toBeGreaterThan(20);
  });

  describeNeeding(
    [commandTool('systemd-analyze', 'systemd')],
    'systemd-analyze verify',
    () => {
      it('finds nothing to say about it', () => {
        // verify checks that ExecStart's program exists: point it at this checkout's.
        const file = path.join(dir, 'esi.service');
        fs.writeFileSync(file, unit.replaceAll('/usr/bin/node', process.execPath).replaceAll('/opt/esi', ROOT));
        const r = spawnSync('systemd-analyze', ['verify', '--man=no', file], { encoding: 'utf8', timeout: 60_000 });
        expect(r.status, r.stderr).toBe(0);
        // It exits 0 for unknown keys and misplaced settings too: its output says so.
        expect(r.stderr.trim()).toBe('');
      });

      it('finds nothing to say about it with the network-node drop-in (deploy/esi-network-node.conf)', () => {
        const unitDir = fs.mkdtempSync(path.join(dir, 'dropin-'));
        const file = path.join(unitDir, 'esi.service');
        fs.writeFileSync(file, unit.replaceAll('/usr/bin/node', process.execPath).replaceAll('/opt/esi', ROOT));
        fs.mkdirSync(path.join(unitDir, 'esi.service.d'));
        fs.copyFileSync(path.join(ROOT, 'deploy/esi-network-node.conf'), path.join(unitDir, 'esi.service.d/network-node.conf'));
        const r = spawnSync('systemd-analyze', ['verify', '--man=no', file], { encoding: 'utf8', timeout: 60_000 });
        expect(r.status, r.stderr).toBe(0);
        expect(r.stderr.trim()).toBe('');
      });
    },
    systemdAnalyzeUnusable(),
  );
});

describe('deploy/Containerfile', () => {
  const file = read('deploy/Containerfile');
  const lines = file.split('\n').filter((l) => !l.startsWith('#'));

  it('runs from node:20-bookworm-slim with runtime dependencies only', () => {
    const froms = lines.filter((l) => l.startsWith('FROM '));
    expect(froms.at(-1)).toBe('FROM node:20-bookworm-slim');
    expect(file).toContain('RUN npm ci --omit=dev');
    // Nothing esi runs may come from a dev dependency (tsx, esbuild, yaml… are dependencies).
    const pkg = JSON.parse(read('package.json')) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
    expect(Object.keys(pkg.dependencies)).toContain('tsx');
    const dev = Object.keys(pkg.devDependencies).filter((d) => !d.startsWith('@types/'));
    const imports = spawnSync('grep', ['-rhoE', "from '[^.'][^']*'", 'src', 'bin'], { cwd: ROOT, encoding: 'utf8' }).stdout;
    for (const d of dev) expect(imports, d).not.toContain(`from '${d}`);
  });

  it('keeps the data directory on a volume, exposes the default port, checks /healthz', () => {
    const defaults = loadConfig({}, {});
    expect(file).toContain('ESI_DATA_DIR=/var/lib/esi');
    expect(lines).toContain('VOLUME ["/var/lib/esi"]');
    expect(lines).toContain(`EXPOSE ${defaults.port}`);
    expect(file).toMatch(/HEALTHCHECK [^\n]*\\\n\s+CMD \[[^\n]*\/healthz/);
    expect(file).toContain('ESI_HOST=0.0.0.0');
    expect(lines.some((l) => /^USER esi$/.test(l))).toBe(true);
  });

  it('copies only what exists, and its ignore file lets exactly that through', () => {
    const copied = lines
      .filter((l) => l.startsWith('COPY ') && !l.includes('--from='))
      .flatMap((l) => l.split(/\s+/).slice(1, -1))
      .map((p) => p.replace(/\/$/, ''));
    const allowed = read('deploy/Containerfile.dockerignore')
      .split('\n')
      .filter((l) => l.startsWith('!'))
      .map((l) => l.slice(1).replace(/\/$/, ''));
    for (const p of copied) {
      expect(fs.existsSync(path.join(ROOT, p)), p).toBe(true);
      expect(allowed, p).toContain(p);
    }
  });
});
