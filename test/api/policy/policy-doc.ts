/**
 * Writes `docs/policy.md` from `test/api/policy/matrix/*.yaml` (`npm run docs:policy`).
 * With `--check`, writes nothing and exits 1 when the file differs from what would be written.
 */
import fs from 'node:fs';
import { DOC_FILE, renderPolicyDoc } from './doc.ts';
import { loadSections } from './matrix.ts';

const text = renderPolicyDoc(loadSections());
if (process.argv.includes('--check')) {
  const current = fs.existsSync(DOC_FILE) ? fs.readFileSync(DOC_FILE, 'utf8') : '';
  if (current !== text) {
    console.error(`${DOC_FILE} is out of date: run npm run docs:policy`);
    process.exit(1);
  }
} else {
  fs.writeFileSync(DOC_FILE, text);
  console.log(`wrote ${DOC_FILE}`);
}
