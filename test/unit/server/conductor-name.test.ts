/**
 * The conductor's name (issue 21): the given one (`--conductor-name`, `ESI_CONDUCTOR_HOSTNAME`,
 * `conductor_hostname`), else `<host>-<id>` with the id persisted in `<data-dir>/conductor-id`
 * (mode 0600, reused); and the start-up watch that tells a name's crashed process (heartbeat
 * still) from another live one (heartbeat advancing).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/server/config.ts';
import { conductorIdPath, persistedConductorId, withConductorName } from '../../../src/server/conductor-name.ts';
import { StartupError } from '../../../src/server/preflight.ts';
import { ConductorNameInUse, claimConductorName, nameWatchFor } from '../../../src/domain/inventory/conductor-name.ts';
import type { ConductorRepository, StoredConductor } from '../../../src/domain/inventory/ports.ts';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-conductor-name-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
const freshDir = (): string => fs.mkdtempSync(path.join(root, 'd-'));

describe('conductor name', () => {
  it('defaults to <host>-<id>, the id created once in <data-dir>/conductor-id (0600) and reused', () => {
    const dataDir = freshDir();
    const config = loadConfig({ dataDir }, {});
    expect(config.conductor.name).toBeNull();
    const first = withConductorName(config).conductor.hostname;
    expect(first).toMatch(new RegExp(`^${os.hostname().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}-[0-9a-f]{8}$`));
    const file = conductorIdPath(dataDir);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(withConductorName(loadConfig({ dataDir }, {})).conductor.hostname).toBe(first);
    expect(withConductorName(loadConfig({ dataDir: freshDir() }, {})).conductor.hostname).not.toBe(first);
  });

  it('is the given one from --conductor-name, ESI_CONDUCTOR_HOSTNAME or the config file, without an id file', () => {
    const dataDir = freshDir();
    expect(withConductorName(loadConfig({ dataDir, conductorName: ' c-1 ' }, { ESI_CONDUCTOR_HOSTNAME: 'env' })).conductor.hostname).toBe(
      'c-1',
    );
    expect(withConductorName(loadConfig({ dataDir }, { ESI_CONDUCTOR_HOSTNAME: 'env' })).conductor.hostname).toBe('env');
    const file = path.join(dataDir, 'esi.yaml');
    fs.writeFileSync(file, 'conductor_hostname: from-file\n');
    expect(withConductorName(loadConfig({ dataDir, config: file }, {})).conductor).toMatchObject({
      name: 'from-file',
      hostname: 'from-file',
    });
    expect(fs.existsSync(conductorIdPath(dataDir))).toBe(false);
  });

  it('refuses a name with spaces or "/", and an id file without a valid id', () => {
    expect(() => loadConfig({ conductorName: 'a b' }, {})).toThrow(ConfigError);
    expect(() => loadConfig({ conductorName: 'a/b' }, {})).toThrow(/--conductor-name/);
    const dataDir = freshDir();
    fs.writeFileSync(conductorIdPath(dataDir), 'not an id\n');
    expect(() => persistedConductorId(dataDir)).toThrow(StartupError);
    expect(() => persistedConductorId(dataDir)).toThrow(/remove it/);
  });
});

/** A conductor table of one row (dead after 6 s, its age by the "database" clock NOW). */
function table(updatedAt: number | null): ConductorRepository & { row: StoredConductor | null } {
  const row = (at: number): StoredConductor => ({
    hostname: 'dup',
    conductor_group: '',
    drivers: [],
    created_at: 0,
    updated_at: at,
    dead_after_ms: 6000,
    age_ms: NOW - at,
  });
  const repo = {
    row: updatedAt === null ? null : row(updatedAt),
    upsert: async () => {},
    heartbeat: async () => 0,
    remove: async () => {},
    list: async () => (repo.row ? [{ ...repo.row }] : []),
  };
  return repo;
}

const NOW = 1_000_000;

describe('claimConductorName', () => {
  const watch = { ...nameWatchFor(1000), sleep: async (_ms: number) => {} };

  it('takes a name nobody registered, or silent for longer than its dead-after, at once', async () => {
    expect(await claimConductorName(table(null), 'dup', { ...watch, sleep: () => Promise.reject(new Error('waited')) })).toBe(
      'unregistered',
    );
    expect(await claimConductorName(table(NOW - 6001), 'dup', { ...watch, sleep: () => Promise.reject(new Error('waited')) })).toBe('dead');
  });

  it('takes a recent registration over when its heartbeat stays still for the watch (a crashed process)', async () => {
    let waited = 0;
    const claim = await claimConductorName(table(NOW - 500), 'dup', { ...watch, sleep: async (ms) => void (waited += ms) });
    expect(claim).toBe('silent');
    expect(waited).toBe(watch.watchMs);
    expect(watch.watchMs).toBeGreaterThan(1000);
  });

  it('refuses, naming the conductor and the fix, when the heartbeat advances (another live process)', async () => {
    const repo = table(NOW - 500);
    let reads = 0;
    const beating = {
      ...watch,
      sleep: async () => {
        if (++reads === 2 && repo.row) repo.row = { ...repo.row, updated_at: NOW, age_ms: 0 };
      },
    };
    const refused = claimConductorName(repo, 'dup', beating);
    await expect(refused).rejects.toBeInstanceOf(ConductorNameInUse);
    expect(reads).toBe(2);
    const err = new ConductorNameInUse('dup');
    expect(err.message).toMatch(/"dup" is in use by another live process/);
    expect(err.message).toMatch(/--conductor-name/);
    expect(err.message).toMatch(/--data-dir/);
  });

  it('takes a registration removed while watched (its process stopped)', async () => {
    const repo = table(NOW - 500);
    expect(await claimConductorName(repo, 'dup', { ...watch, sleep: async () => void (repo.row = null) })).toBe('dead');
  });
});
