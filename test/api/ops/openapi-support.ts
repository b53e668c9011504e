/**
 * Helpers of the API documentation tests (openapi.test.ts, openapi-responses.test.ts).
 */
import type { TSchema } from '@sinclair/typebox';

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
