/**
 * The operator's policy file (`--policy-file` / `ESI_POLICY_FILE`): read once at start-up and
 * handed to the domain, which parses it (src/domain/policy/overrides.ts).
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { InvalidInputError } from '../domain/errors.ts';
import { parsePolicyOverrides } from '../domain/policy/index.ts';

/**
 * Read and parse an operator override file.
 * @param path file path; YAML or JSON. An empty file means no overrides.
 * @returns rule name → rule string
 * @throws InvalidInputError (code `InvalidPolicyFile`), naming the file, when it cannot be read
 *   or is not a valid override file
 */
export function loadPolicyOverrides(path: string): Record<string, string> {
  const name = `${basename(path)} (${path})`;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new InvalidInputError(`Policy file ${name} could not be read: ${(err as Error).message}`, 'InvalidPolicyFile');
  }
  return parsePolicyOverrides(text, name);
}
