/**
 * Key management for secrets at rest: the {@link SecretBox} of one process.
 *
 * The key comes from the configuration (`ESI_SECRET_KEY`, base64 of 32 bytes) or, when none is
 * configured, from `<data-dir>/secret.key`, which is created with a fresh random key (mode
 * 0600) on first start. Processes that share one PostgreSQL database must share the key: set
 * `ESI_SECRET_KEY` on each of them (or copy the key file).
 */
import fs from 'node:fs';
import path from 'node:path';
import { generateSecretKey, SecretBox } from '../domain/secrets.ts';
import type { Config } from './config.ts';

/** Path of the generated key file. */
export function secretKeyPath(config: Config): string {
  return path.join(config.dataDir, 'secret.key');
}

/**
 * The process's secret box.
 * @throws Error when the key file exists but does not hold a valid key, or cannot be written
 */
export function loadSecretBox(config: Config): SecretBox {
  if (config.secretKey !== null) return SecretBox.fromBase64(config.secretKey);
  const file = secretKeyPath(config);
  fs.mkdirSync(config.dataDir, { recursive: true });
  try {
    fs.writeFileSync(file, `${generateSecretKey()}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  try {
    return SecretBox.fromBase64(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`secret key file ${file} is invalid: ${(err as Error).message}`, { cause: err });
  }
}
