/**
 * Renders `docs/policy.md` from the policy matrix (`matrix/*.yaml`): an introduction on how to
 * read and regenerate it, the personas, one table per matrix file (endpoint rows × persona
 * columns), and the list of known failures.
 *
 * Pure: `renderPolicyDoc(sections)` returns the document text. `policy-doc.ts` writes it; the
 * matrix test compares it with the file so that the document never drifts from what is tested.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PERSONA_DESCRIPTIONS, PERSONAS, type MatrixRow, type MatrixSection } from './matrix.ts';

/** Where the generated document lives. */
export const DOC_FILE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../docs/policy.md');

/** Escape a table cell. */
function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

/** One status cell: successes in bold, a known failure marked with ⚠. */
function statusCell(row: MatrixRow, p: (typeof PERSONAS)[number]): string {
  const s = row.expect[p];
  const shown = s < 300 ? `**${s}**` : String(s);
  return row.knownFailures[p] ? `${shown} ⚠` : shown;
}

/** The table of one service. */
function table(rows: readonly MatrixRow[]): string[] {
  const head = `| endpoint | ${PERSONAS.join(' | ')} | what it shows |`;
  const rule = `|---|${PERSONAS.map(() => ':-:').join('|')}|---|`;
  const body = rows.map(
    (r) => `| \`${r.method} ${cell(r.path)}\` | ${PERSONAS.map((p) => statusCell(r, p)).join(' | ')} | ${cell(r.note)} |`,
  );
  return [head, rule, ...body];
}

/** The known failures, grouped by reason: the reason, then each endpoint with its callers. */
function knownFailures(rows: readonly MatrixRow[]): string[] {
  const byReason = new Map<string, string[]>();
  for (const r of rows) {
    const personas = new Map<string, string[]>();
    for (const p of PERSONAS) {
      const reason = r.knownFailures[p];
      if (reason) personas.set(reason, [...(personas.get(reason) ?? []), p]);
    }
    for (const [reason, who] of personas) {
      byReason.set(reason, [...(byReason.get(reason) ?? []), `  - \`${r.method} ${cell(r.path)}\` (\`${r.id}\`): ${who.join(', ')}`]);
    }
  }
  if (byReason.size === 0) return ['None: the server does everything this document says.'];
  return [...byReason].flatMap(([reason, lines]) => [`- ${cell(reason)}`, ...lines]);
}

/**
 * The whole document for the matrix.
 * @returns Markdown text ending with a newline
 */
export function renderPolicyDoc(sections: readonly MatrixSection[]): string {
  const rows = sections.flatMap((s) => s.rows);
  const cells = rows.length * PERSONAS.length;
  const out: string[] = [
    '# Who may do what: the policy matrix',
    '',
    '<!-- Generated from test/api/policy/matrix/*.yaml by `npm run docs:policy`; do not edit by hand. -->',
    '',
    'This is the default policy of esi (`src/domain/policy/defaults.ts`) as it shows at the API: for',
    `each endpoint and each of ${PERSONAS.length} callers, the HTTP status esi answers — ${rows.length} endpoints,`,
    `${cells} answers. The same table (\`test/api/policy/matrix/\`) drives`,
    '`test/api/policy/matrix.test.ts`, which builds a world of nodes, leases, images, networks and',
    'servers, sends every request as every caller on SQLite and on PostgreSQL, and checks:',
    '',
    '- the status below;',
    "- the error body is in the format of that API (Ironic's `error_message`, esi-leap's",
    "  `faultstring`, Neutron's `NeutronError`, Keystone's `error`, Glance's and Nova's faults);",
    '- a refused write changed nothing (an admin re-reads the object before and after);',
    '- a 403 never names an object the caller may not see, no error names more than the request did,',
    '  and lists marked so show nothing the caller may not see.',
    '',
    '## How to read it',
    '',
    '- Rows are endpoints; `{node_o1}`, `{offer_o1}`… stand for objects of the test world (named',
    '  after their owner: `o1`, `o2`, `l1`…), `{fresh}` for a new object made for each caller, `{uniq}`',
    '  and `{slot.start}` for new names and free time windows.',
    '- **2xx** (bold): allowed. `404`: the caller may not see the object — answered exactly as for an',
    '  object that does not exist (docs/architecture.md). `403`: the caller may see the object (or the action',
    '  needs a role the caller lacks, whatever the object) but may not do this. `401`: no valid token.',
    '  A `400`/`409` for a caller who is allowed means the policy passed and the request itself was',
    '  refused (the note says why).',
    '- ⚠ marks a known failure: esi does not answer this yet (listed at the end with the reason). The',
    '  test expects these to fail and reports when one starts to pass.',
    '',
    'Regenerate after changing the matrix: `npm run docs:policy`. Run the checks:',
    '`npx vitest run --project api-sqlite --project api-pg test/api/policy/`.',
    '',
    '## Callers',
    '',
    '| column | who |',
    '|---|---|',
    ...PERSONAS.map((p) => `| ${p} | ${PERSONA_DESCRIPTIONS[p]} |`),
    '',
  ];
  for (const s of sections) out.push(`## ${s.title}`, '', `Rows: \`test/api/policy/matrix/${s.name}.yaml\`.`, '', ...table(s.rows), '');
  out.push('## Known failures', '', ...knownFailures(rows), '');
  return out.join('\n');
}
