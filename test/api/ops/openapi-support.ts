/**
 * Helpers of the API documentation tests (openapi.test.ts, openapi-responses.test.ts).
 */
import type { TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { expect } from 'vitest';

/**
 * The schema as @fastify/swagger writes it into an OpenAPI document: JSON, with `const` as a
 * one-value `enum` (Swagger UI reads no `const`) and `patternProperties` (TypeBox's records) as
 * `additionalProperties`.
 */
export function asDocumented(schema: TSchema): unknown {
  return JSON.parse(JSON.stringify(schema), (_k, v: unknown) => {
    if (!v || typeof v !== 'object' || Array.isArray(v)) return v;
    const { const: c, patternProperties, ...rest } = v as Record<string, unknown>;
    return {
      ...rest,
      ...(c !== undefined ? { enum: [c] } : {}),
      ...(patternProperties ? { additionalProperties: Object.values(patternProperties)[0] } : {}),
    };
  });
}

/** Check an answer against a schema, naming the first few violations. */
export function expectValid(schema: TSchema, value: unknown, where: string): void {
  const errors = [...Value.Errors(schema, value)].slice(0, 5).map((e) => `${e.path}: ${e.message}`);
  expect(errors, where).toEqual([]);
}
