/**
 * The fast node renderer: the JSON text of a node in Ironic's shape straight from its display
 * form (`NodeText`): runs of its members — `"field":value` JSON texts, secrets already masked —
 * are cut out by offset and spliced into a template; only timestamps (epoch ms → ISO-8601),
 * legacy provision states, redacted fields, `reservation`, `updated_at`, `conductor` and the
 * links are made here. No split, no parse, no intermediate object, no `JSON.stringify` of the
 * whole.
 *
 * The output is byte-for-byte what `JSON.stringify(renderNodeObject(view, version, base,
 * fields))` (`render.ts`) gives for the same node: same keys in the same order, same values
 * (test/unit/inventory/render-text.test.ts checks this on random nodes). The rules come from
 * there: fields per microversion, legacy provision states, ISO timestamps, redaction notices,
 * link lists on full nodes. Secrets cannot appear: a `NodeText` only holds public forms.
 *
 * One renderer function is generated per (microversion, redaction mask, field list) with
 * `new Function` and cached: a fixed sequence of offset reads, substrings and concatenations,
 * which V8 runs several times faster than a loop over field names. The generated code holds
 * only checked field names, indexes and constant JSON texts.
 */
import { memberOffset, NODE_TEXT_MEMBER_FIELDS, type NodeText } from './node-document.ts';
import {
  REDACT_DRIVER_INFO,
  REDACT_DRIVER_INTERNAL_INFO,
  REDACT_LAST_ERROR,
  REDACT_RESERVATION,
  REDACTION_TEXT,
  type NodeView,
} from '../../domain/inventory/presentation.ts';
import { isoTime, legacyState, nodeFieldsAt, NODE_TIME_FIELDS } from './render-fields.ts';

/** Helpers the generated code calls. */
interface Helpers {
  /** The start of a member (`memberOffset`). */
  readonly o: (offsets: string, index: number) => number;
  /** JSON of a scalar (undefined → null). */
  readonly s: (v: unknown) => string;
  /** A timestamp (epoch ms) as a JSON ISO-8601 string, or null. */
  readonly t: (v: number | null | undefined) => string;
  /** The timestamp whose JSON (epoch ms or null) is `members[from, to)` as a JSON ISO-8601 string, or null. */
  readonly mt: (members: string, from: number, to: number) => string;
  /** The JSON of the provision state whose JSON is `members[from, to)`, at this version (legacy names). */
  readonly ml: (members: string, from: number, to: number, version: number) => string;
}

const timeJson = (v: number | null | undefined): string => (v === undefined || v === null ? 'null' : `"${isoTime(v)!}"`); // isoTime's output needs no escaping

const HELPERS: Helpers = Object.freeze({
  o: memberOffset,
  s: (v: unknown) => (v === undefined || v === null ? 'null' : JSON.stringify(v)),
  t: timeJson,
  mt: (members: string, from: number, to: number) => {
    const v = members.slice(from, to);
    return v === 'null' ? 'null' : timeJson(Number(v));
  },
  ml: (members: string, from: number, to: number, version: number) => {
    const state = legacyState(JSON.parse(members.slice(from, to)), version);
    return state === undefined || state === null ? 'null' : JSON.stringify(state);
  },
});

/** A generated renderer: (node text, conductor, escaped base URL, helpers) → JSON text. */
type Renderer = (t: NodeText, conductor: string | null, base: string, h: Helpers) => string;

const renderers = new Map<string, Renderer>();
/** Distinct renderers kept (versions × redaction masks × field lists asked for). */
const RENDERER_CACHE = 256;
const FIELD_NAME = /^[a-z_]+$/;
/** Index of each member field in `NodeText.members`. */
const MEMBER_INDEX: ReadonlyMap<string, number> = new Map(NODE_TEXT_MEMBER_FIELDS.map((f, i) => [f, i]));

/** A JSON string literal's text as a JS string literal, for the generated code. */
const lit = (text: string): string => JSON.stringify(text);

/** True when a member is shown exactly as stored at this version and redaction. */
function verbatim(field: string, version: number, redaction: number): boolean {
  if (NODE_TIME_FIELDS.has(field)) return false;
  switch (field) {
    case 'provision_state':
      return version >= 39;
    case 'last_error':
      return (redaction & REDACT_LAST_ERROR) === 0;
    case 'driver_info':
      return (redaction & REDACT_DRIVER_INFO) === 0;
    case 'driver_internal_info':
      return (redaction & REDACT_DRIVER_INTERNAL_INFO) === 0;
    default:
      return true;
  }
}

/** Generated expressions of member offsets: the start of member `i` and the end of its text. */
interface OffsetCode {
  start(i: number): string;
  end(i: number): string;
}

/** The generated expression of a field's JSON value when it is not copied verbatim. */
function valueExpression(field: string, version: number, redaction: number, at: OffsetCode): string {
  const index = MEMBER_INDEX.get(field);
  const key = JSON.stringify(field).length + 1; // the value's offset in its member
  switch (field) {
    case 'conductor':
      return 'h.s(conductor)';
    case 'reservation':
      return redaction & REDACT_RESERVATION ? lit(JSON.stringify(REDACTION_TEXT.reservation)) : 'h.s(t.reservation)';
    case 'updated_at':
      return 'h.t(t.updated_at)';
    case 'last_error':
      return lit(JSON.stringify(REDACTION_TEXT.last_error));
    case 'driver_info':
      return lit(JSON.stringify({ content: REDACTION_TEXT.driver_info }));
    case 'driver_internal_info':
      return lit(JSON.stringify({ content: REDACTION_TEXT.driver_internal_info }));
    case 'provision_state':
      return `h.ml(d, ${at.start(index!)} + ${key}, ${at.end(index!)}, ${version})`;
  }
  if (index !== undefined && NODE_TIME_FIELDS.has(field)) return `h.mt(d, ${at.start(index)} + ${key}, ${at.end(index)})`;
  return '"null"'; // not a node field (the API admits none): null, as the object renderer shows it
}

/** The generated expression of the `links` (and, for full nodes, link list) members. */
function linkExpressions(full: boolean, version: number, first: boolean): string[] {
  const list = (key: string, sub: string): string =>
    `${lit(`${first && key === 'links' ? '' : ','}"${key}":[{"href":"`)} + base + ${lit(`/v1/nodes/`)} + u + ${lit(`${sub}","rel":"self"},{"href":"`)} + base + ${lit('/nodes/')} + u + ${lit(`${sub}","rel":"bookmark"}]`)}`;
  const out = [list('links', '')];
  if (full) {
    out.push(list('ports', '/ports'));
    if (version >= 14) out.push(list('states', '/states'));
    if (version >= 24) out.push(list('portgroups', '/portgroups'));
    if (version >= 32) out.push(list('volume', '/volume'));
  }
  return out;
}

/** Generate the renderer of a (version, redaction, fields) combination. */
function compile(version: number, redaction: number, fields: readonly string[] | null): Renderer {
  // A field asked for twice is shown once, where first asked (as an object's key).
  const shown = [...new Set(fields ?? nodeFieldsAt(version))];
  const last = NODE_TEXT_MEMBER_FIELDS.length - 1;
  const decoded = new Set<number>();
  const at: OffsetCode = {
    start: (i) => {
      if (i === 0) return '0';
      decoded.add(i);
      return `o${i}`;
    },
    // A member ends one character (the comma) before the next one starts.
    end: (i) => (i === last ? 'd.length' : `${at.start(i + 1)} - 1`),
  };
  const parts: string[] = [];
  let run: number[] = []; // consecutive members copied verbatim
  const flush = (): void => {
    if (run.length === 0) return;
    parts.push(`${parts.length === 0 ? '' : '"," + '}d.slice(${at.start(run[0]!)}, ${at.end(run[run.length - 1]!)})`);
    run = [];
  };
  for (const field of shown) {
    if (!FIELD_NAME.test(field)) throw new Error(`render-text: bad field name ${field}`);
    const index = MEMBER_INDEX.get(field);
    if (index !== undefined && verbatim(field, version, redaction)) {
      if (run.length > 0 && run[run.length - 1] !== index - 1) flush();
      run.push(index);
      continue;
    }
    flush();
    parts.push(`${lit(`${parts.length === 0 ? '' : ','}${JSON.stringify(field)}:`)} + ${valueExpression(field, version, redaction, at)}`);
  }
  flush();
  const links = linkExpressions(fields === null, version, parts.length === 0);
  const offsets = [...decoded].sort((a, b) => a - b).map((i) => `const o${i} = h.o(x, ${i});`);
  // `u`: the UUID's JSON-escaped text (a canonical UUID needs no escaping, but stay exact).
  const body = [
    'const d = t.members;',
    'const x = t.offsets;',
    ...offsets,
    'const u = h.s(t.uuid).slice(1, -1);',
    `return "{" + ${parts.length > 0 ? parts.join(' + ') : '""'} + ${links.join(' + ')} + "}";`,
  ].join('\n');
  // Field names are checked and every constant is a JSON-encoded literal: no input reaches the code.
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  return new Function('t', 'conductor', 'base', 'h', body) as Renderer;
}

/** The cached renderer of a combination. */
function rendererFor(version: number, redaction: number, fields: readonly string[] | null): Renderer {
  const key = `${version}|${redaction}|${fields === null ? '*' : fields.join(',')}`;
  let r = renderers.get(key);
  if (r === undefined) {
    r = compile(version, redaction, fields);
    if (renderers.size >= RENDERER_CACHE) renderers.delete(renderers.keys().next().value!);
    renderers.set(key, r);
  }
  return r;
}

let lastBase: string | null = null;
let lastEscapedBase = '';

/**
 * The JSON text of a node from its display form: exactly `JSON.stringify(renderNode(…))`.
 * @param view the caller's view (redaction mask, conductor)
 * @param text the node in display form (`view.text`)
 * @param fields fields to show (already version-checked), or null for every field of the
 *   version plus the link lists of a full node
 */
export function nodeTextJson(view: NodeView, text: NodeText, version: number, base: string, fields: readonly string[] | null): string {
  if (base !== lastBase) {
    lastEscapedBase = JSON.stringify(base).slice(1, -1);
    lastBase = base;
  }
  return rendererFor(version, view.redaction, fields)(text, view.conductor ?? null, lastEscapedBase, HELPERS);
}
