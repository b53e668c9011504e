/**
 * The same field shows the same column name in every `esi` list (issue 19, item 5): python-
 * esileapclient's rule — the field name in title case, words split at `_`, with `ID`, `UUID`,
 * `URL` and `MAC` in capitals (`offer_uuid` → `Offer UUID`) — and no field under two names.
 * A nested field (`usage.nodes_now`) is named by its last part.
 */
import { describe, expect, it } from 'vitest';
import * as resources from '../../../src/cli/resources.ts';
import { POLICY_FIELDS } from '../../../src/cli/commands/lease-policy.ts';
import { QUOTA_FIELDS } from '../../../src/cli/commands/quota.ts';
import { DELIVERY_FIELDS, WEBHOOK_FIELDS } from '../../../src/cli/commands/webhook.ts';

type Sets = Record<string, ReadonlyArray<readonly [string, string]>>;

const SETS: Sets = {
  OFFER_FIELDS: resources.OFFER_FIELDS,
  OFFER_LONG_FIELDS: resources.OFFER_LONG_FIELDS,
  LEASE_FIELDS: resources.LEASE_FIELDS,
  LEASE_LONG_FIELDS: resources.LEASE_LONG_FIELDS,
  NODE_FIELDS: resources.NODE_FIELDS,
  NODE_LONG_FIELDS: resources.NODE_LONG_FIELDS,
  EVENT_FIELDS: resources.EVENT_FIELDS,
  POLICY_FIELDS,
  QUOTA_FIELDS,
  WEBHOOK_FIELDS,
  DELIVERY_FIELDS,
};

const CAPITALS = new Set(['id', 'uuid', 'url', 'mac']);

/** esileapclient's column name of a field. */
function columnName(field: string): string {
  const last = field.split('.').at(-1)!;
  return last
    .split('_')
    .map((w) => (CAPITALS.has(w) ? w.toUpperCase() : w.charAt(0).toUpperCase() + w.slice(1)))
    .join(' ');
}

describe('column names', () => {
  it('every list names each field by the one rule', () => {
    const wrong = Object.entries(SETS).flatMap(([set, fields]) =>
      fields.filter(([f, label]) => label !== columnName(f)).map(([f, label]) => `${set}: ${f} is "${label}", not "${columnName(f)}"`),
    );
    expect(wrong).toEqual([]);
  });

  it('no field has two names and no name two fields across commands', () => {
    const byField = new Map<string, Set<string>>();
    const byLabel = new Map<string, Set<string>>();
    for (const fields of Object.values(SETS)) {
      for (const [f, label] of fields) {
        const leaf = f.split('.').at(-1)!;
        (byField.get(leaf) ?? byField.set(leaf, new Set()).get(leaf)!).add(label);
        (byLabel.get(label) ?? byLabel.set(label, new Set()).get(label)!).add(leaf);
      }
    }
    expect([...byField].filter(([, l]) => l.size > 1)).toEqual([]);
    expect([...byLabel].filter(([, f]) => f.size > 1)).toEqual([]);
  });
});
