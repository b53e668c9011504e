/**
 * Loading of the operator's inspection rules (`ESI_INSPECTION_RULES`, a YAML file; format in
 * docs/inspection.md and src/domain/inspection/rules.ts), once at start.
 */
import fs from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { parseInspectionRules, type InspectionRule } from '../domain/inspection/rules.ts';
import type { Config } from './config.ts';

/**
 * The rules of `config.inspectionRulesFile` (none when unset).
 * @throws Error naming the file when it cannot be read or holds invalid rules
 */
export function loadInspectionRules(config: Pick<Config, 'inspectionRulesFile'>): InspectionRule[] {
  const file = config.inspectionRulesFile;
  if (file === null || file === '') return [];
  let doc: unknown;
  try {
    doc = parseYaml(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`Cannot read the inspection rules file ${file}: ${(err as Error).message}`, { cause: err });
  }
  try {
    return parseInspectionRules(doc);
  } catch (err) {
    throw new Error(`Invalid inspection rules file ${file}: ${(err as Error).message}`, { cause: err });
  }
}
