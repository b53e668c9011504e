/**
 * The fast node renderer (src/api/baremetal/render-text.ts) against the straightforward one
 * (`renderNodeObject` in render.ts): for random nodes, microversions, redaction masks,
 * conductors, base URLs and field selections, the JSON text rendered from a node's display form
 * (`nodeTextOf`, what the store keeps) is byte-for-byte `JSON.stringify` of the object
 * rendering — so the same keys, order and values, secrets masked alike. Also the display form
 * itself (no secret, one member per field) and the helpers the fast path relies on: the
 * arithmetic `isoTime` and the page assembly from encoded nodes.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nodeCollectionBuffer, nodeCollectionJson, renderNode, renderNodeObject } from '../../../src/api/baremetal/render.ts';
import { isoTime, nodeFieldsAt } from '../../../src/api/baremetal/render-fields.ts';
import { nodeTextJson } from '../../../src/api/baremetal/render-text.ts';
import { INTERFACE_FIELDS, NODE_FIELDS, type Node } from '../../../src/domain/inventory/model.ts';
import {
  memberOffset,
  NODE_TEXT_MEMBER_FIELDS,
  NODE_TEXT_REVISION,
  nodeDocumentOf,
  nodeTextOf,
  splitDocument,
  textSlice,
  type DisplayView,
} from '../../../src/api/baremetal/node-document.ts';
import type { NodeView } from '../../../src/domain/inventory/presentation.ts';
import { publicForm } from '../../../src/domain/inventory/public-forms.ts';
import { MASK } from '../../../src/domain/inventory/masking.ts';

/** A marker no masking rule can produce: it must never appear in a rendering. */
const SECRET = 'S3CR3T-never-shown';

/** Strings of every kind: any code point (lone surrogates too), JSON-hostile characters, secret-looking text. */
const anyString = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.constantFrom('', 'fake', '"quoted"\\', '\u0000\u001f\u2028é漢', 'password=hunter2 user=x', '--password abc', '<password>x</password>'),
);
/** Keys, many of them secret by the masking rules. */
const key = fc.oneof(
  fc.string({ maxLength: 8 }),
  fc.constantFrom(
    'password',
    'redfish_password',
    'auth_token',
    'configdrive',
    'image_url',
    'agent_secret_token',
    'private_key',
    'user',
    'address',
  ),
);
const jsonLeaf = fc.oneof(anyString, fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null));
const { tree: jsonTree } = fc.letrec<{ tree: unknown }>((tie) => ({
  tree: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    jsonLeaf,
    fc.array(tie('tree'), { maxLength: 3 }),
    fc.dictionary(key, tie('tree'), { maxKeys: 4 }),
  ),
}));
const jsonObject: fc.Arbitrary<Record<string, unknown>> = fc.dictionary(key, jsonTree, { maxKeys: 6 });
/** Secret values under secret keys (as a driver_info holds them once sealed, or in clear in instance_info). */
const withSecrets = jsonObject.map((o) => ({ ...o, redfish_password: SECRET, nested: { ipmi_password: SECRET } }));
const nullable = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: null, freq: 3 });
const time = nullable(
  fc.oneof(
    fc.integer({ min: 0, max: 253_402_300_799_999 }),
    fc.integer({ min: -62_135_596_800_000, max: 0 }),
    fc.constantFrom(0, 1_795_337_043_000, 1_795_337_043_616),
  ),
);
const state = fc.constantFrom('available', 'inspect wait', 'inspecting', 'active', 'enroll', 'deploy failed');

const nodeArb: fc.Arbitrary<Node> = fc
  .record({
    id: fc.nat(),
    version: fc.nat(),
    uuid: fc.oneof(fc.uuid(), anyString),
    name: nullable(anyString),
    description: nullable(anyString),
    driver: anyString,
    chassis_uuid: nullable(fc.uuid()),
    resource_class: nullable(anyString),
    conductor_group: anyString,
    shard: nullable(anyString),
    owner: nullable(anyString),
    lessee: nullable(anyString),
    instance_uuid: nullable(fc.uuid()),
    allocation_uuid: nullable(fc.uuid()),
    traits: fc.array(anyString, { maxLength: 3 }),
    driver_info: withSecrets,
    driver_internal_info: fc.oneof(
      jsonObject,
      jsonObject.map((o) => ({ ...o, agent_secret_token: SECRET })),
    ),
    instance_info: fc.oneof(
      jsonObject,
      withSecrets.map((o) => ({ ...o, configdrive: SECRET, image_url: SECRET })),
    ),
    properties: jsonObject,
    extra: jsonObject,
    network_data: jsonObject,
    power_state: nullable(fc.constantFrom('power on', 'power off', 'error')),
    target_power_state: nullable(anyString),
    provision_state: state,
    target_provision_state: nullable(state),
    provision_updated_at: time,
    last_error: nullable(anyString),
    fault: nullable(anyString),
    reservation: nullable(anyString),
    maintenance: fc.boolean(),
    maintenance_reason: nullable(anyString),
    protected: fc.boolean(),
    protected_reason: nullable(anyString),
    retired: fc.boolean(),
    retired_reason: nullable(anyString),
    automated_clean: nullable(fc.boolean()),
    console_enabled: fc.boolean(),
    clean_step: jsonObject,
    deploy_step: jsonObject,
    raid_config: jsonObject,
    target_raid_config: jsonObject,
    inspection_started_at: time,
    inspection_finished_at: time,
    boot_mode: nullable(anyString),
    secure_boot: nullable(fc.boolean()),
    ...Object.fromEntries(INTERFACE_FIELDS.map((f) => [f, nullable(anyString)])),
    created_at: time.map((t) => t ?? 0),
    updated_at: time,
  })
  .map((n) => n as unknown as Node);

const base = fc.constantFrom('http://127.0.0.1:6385/baremetal', 'https://esi.example', 'http://h/"q"\\p/é');
const version = fc.integer({ min: 1, max: 82 });
const redaction = fc.integer({ min: 0, max: 15 });
const conductor = fc.option(anyString, { nil: null });
const allShownFields = [...NODE_FIELDS, 'conductor'];

describe('render-text: the fast renderer equals the straightforward one', () => {
  it('full nodes, every version, redaction mask and conductor: byte for byte', () => {
    fc.assert(
      fc.property(nodeArb, version, redaction, conductor, base, (node, v, mask, c, b) => {
        const view: NodeView = { node, redaction: mask, conductor: c };
        const expected = JSON.stringify(renderNodeObject(view, v, b, null));
        const text = nodeTextOf(node);
        const textView: DisplayView = { node: textSlice(text), text, redaction: mask, conductor: c };
        const fast = nodeTextJson(textView, text, v, b, null);
        expect(fast).toBe(expected);
        expect(fast).not.toContain(SECRET);
      }),
      { numRuns: 400 },
    );
  });

  it('field selections', () => {
    fc.assert(
      fc.property(nodeArb, version, redaction, conductor, base, fc.subarray(allShownFields), (node, v, mask, c, b, pick) => {
        // Version-checked fields as the API admits them; repeats and an unknown name as the renderer may still meet them.
        const fields = [...pick.filter((f) => nodeFieldsAt(v).includes(f)), ...pick.slice(0, 2), 'not_a_field'];
        const view: NodeView = { node, redaction: mask, conductor: c };
        const text = nodeTextOf(node);
        const textView: DisplayView = { node: textSlice(text), text, redaction: mask, conductor: c };
        for (const f of [fields, null]) {
          const expected = JSON.stringify(renderNodeObject(view, v, b, f));
          expect(nodeTextJson(textView, text, v, b, f)).toBe(expected);
          // renderNode dispatches a view with a display form to the fast renderer.
          expect(JSON.stringify(renderNode(textView, v, b, f))).toBe(expected);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('the display form holds every field once, secrets only masked', () => {
    fc.assert(
      fc.property(nodeArb, (node) => {
        const text = nodeTextOf(node);
        expect(JSON.stringify(text)).not.toContain(SECRET);
        const starts = NODE_TEXT_MEMBER_FIELDS.map((_, i) => memberOffset(text.offsets, i));
        const members = starts.map((start, i) => text.members.slice(start, i + 1 < starts.length ? starts[i + 1]! - 1 : undefined));
        members.forEach((m, i) => expect(m.startsWith(`${JSON.stringify(NODE_TEXT_MEMBER_FIELDS[i])}:`)).toBe(true));
        expect(members.join(',')).toBe(text.members);
        expect(splitDocument(nodeDocumentOf(node))).toEqual({ members: text.members, offsets: text.offsets });
        const parsed = JSON.parse(`{${text.members}}`);
        expect(Object.keys(parsed)).toEqual(NODE_TEXT_MEMBER_FIELDS);
        expect(parsed.driver_info).toEqual(JSON.parse(JSON.stringify(publicForm('driver_info', node.driver_info))));
        expect(parsed.driver_info.redfish_password).toBe(MASK);
        expect(parsed.properties).toEqual(JSON.parse(JSON.stringify(node.properties)));
        expect([text.reservation, text.updated_at]).toEqual([node.reservation, node.updated_at]);
      }),
      { numRuns: 100 },
    );
    expect(NODE_TEXT_REVISION).toMatch(/^[0-9a-f]{16}$/);
  });
});

/** The reference formatting `isoTime` replaced (Python `isoformat()` of an aware UTC datetime). */
function referenceIsoTime(ms: number): string {
  const d = new Date(ms);
  const frac = d.getUTCMilliseconds();
  const head = d.toISOString().slice(0, 19);
  return frac === 0 ? `${head}+00:00` : `${head}.${String(frac * 1000).padStart(6, '0')}+00:00`;
}

describe('isoTime', () => {
  it('equals the Date-based formatting for every representable millisecond', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.integer({ min: -8.64e15, max: 8.64e15 }),
          fc.integer({ min: 0, max: 253_402_300_799_999 }),
          fc.double({ min: -1e13, max: 1e13, noNaN: true }),
        ),
        (ms) => {
          expect(isoTime(ms)).toBe(referenceIsoTime(ms));
        },
      ),
      { numRuns: 2000 },
    );
    expect(isoTime(0)).toBe('1970-01-01T00:00:00+00:00');
    expect(isoTime(1471559329653)).toBe('2016-08-18T22:28:49.653000+00:00');
    expect(isoTime(253_402_300_799_999)).toBe('9999-12-31T23:59:59.999000+00:00');
    expect(isoTime(null)).toBeNull();
    expect(isoTime(undefined)).toBeNull();
    expect(() => isoTime(Number.NaN)).toThrow(RangeError);
  });
});

describe('nodeCollectionBuffer', () => {
  it('is the UTF-8 encoding of the joined envelope, encoded and text items, multi-byte text included', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.string({ unit: 'binary', maxLength: 40 }), fc.boolean()), { maxLength: 8 }),
        fc.option(fc.string({ unit: 'binary' }), { nil: undefined }),
        (items, next) => {
          const reported = new Map<number, string>();
          const encoded = nodeCollectionBuffer(
            items.map(([s, asBuffer]) => (asBuffer ? Buffer.from(s) : s)),
            next,
            (i, bytes) => reported.set(i, Buffer.from(bytes).toString()),
          );
          expect(
            encoded.equals(
              Buffer.from(
                nodeCollectionJson(
                  items.map(([s]) => s),
                  next,
                ),
              ),
            ),
          ).toBe(true);
          // Every text item is reported once with exactly its bytes.
          expect([...reported.keys()].sort()).toEqual(items.flatMap(([, asBuffer], i) => (asBuffer ? [] : [i])));
          for (const [i, text] of reported) expect(text).toBe(Buffer.from(items[i]![0]).toString());
        },
      ),
      { numRuns: 400 },
    );
  });
});
