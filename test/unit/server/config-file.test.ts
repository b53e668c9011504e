/**
 * The config file (src/server/config-file.ts) and its example, deploy/esi.yaml: a key esi does
 * not know is refused naming it and the nearest known key; the example lists exactly the known
 * keys, each at its default (data_dir excepted: it names the service's state directory), so it
 * stays true as settings are added.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { CONFIG_FILE_KEYS, levenshtein, nearestKey } from '../../../src/server/config-file.ts';
import { ConfigError, loadConfig } from '../../../src/server/config.ts';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const EXAMPLE = path.join(ROOT, 'deploy/esi.yaml');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-config-file-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Write `text` to a config file and load it with an empty environment. */
function loadWith(text: string): ReturnType<typeof loadConfig> {
  const file = path.join(dir, `c${Math.random().toString(36).slice(2)}.yaml`);
  fs.writeFileSync(file, text);
  return loadConfig({ config: file }, {});
}

describe('config file keys', () => {
  it('refuses an unknown key, naming it and the nearest known key', () => {
    expect(() => loadWith('prot: 9000\n')).toThrow(ConfigError);
    expect(() => loadWith('prot: 9000\n')).toThrow(/unknown key "prot" \(did you mean "port"\?\)/);
  });

  it('names every unknown key; a key far from all known ones gets no suggestion', () => {
    let message = '';
    try {
      loadWith('host: 0.0.0.0\ndata-dir: /srv/esi\nfrobnicate: 1\n');
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain('unknown keys "data-dir" (did you mean "data_dir"?), "frobnicate";');
    expect(message).not.toContain('\n');
  });

  it('reads known keys, and null as unset', () => {
    const c = loadWith('port: 9001\nregion: null\nlab_qemu_cpus: 4\n');
    expect(c.port).toBe(9001);
    expect(c.identity.region).toBe('RegionOne');
    expect(c.lab.qemu.vcpus).toBe(4);
  });

  it('refuses a file that is not a YAML mapping, in one line', () => {
    expect(() => loadWith('- a\n- b\n')).toThrow(/must be a YAML mapping/);
    expect(() => loadWith('a: [\n')).toThrow(/is not valid YAML: [^\n]*$/);
  });

  it('nearestKey and levenshtein', () => {
    expect(levenshtein('kitten', 'sitting')).toBe(3);
    expect(levenshtein('', 'abc')).toBe(3);
    expect(nearestKey('LOG-LEVEL')).toBe('log_level');
    expect(nearestKey('metric')).toBe('metrics');
    expect(nearestKey('something_else')).toBeNull();
  });
});

describe('deploy/esi.yaml, the example config file', () => {
  const example = YAML.parse(fs.readFileSync(EXAMPLE, 'utf8')) as Record<string, unknown>;

  it('lists every known key, and only known keys', () => {
    expect(Object.keys(example).sort()).toEqual([...CONFIG_FILE_KEYS].sort());
  });

  it('gives each key its default (data_dir: the state directory of deploy/esi.service)', () => {
    expect(example.data_dir).toBe('/var/lib/esi');
    expect(loadConfig({ config: EXAMPLE }, {})).toEqual(loadConfig({ dataDir: '/var/lib/esi' }, {}));
  });

  it('every known key is read by the configuration, from ESI_<KEY> in the environment', () => {
    const sources = ['config.ts', 'config-lab.ts'].map((f) => fs.readFileSync(path.join(ROOT, 'src/server', f), 'utf8')).join('\n');
    for (const key of CONFIG_FILE_KEYS) {
      expect(sources, key).toMatch(new RegExp(`'${key}'|file\\.${key}\\b`));
      const env = `ESI_${key.toUpperCase()}`;
      expect(sources, env).toContain(env);
    }
  });
});
