/**
 * Request bodies held to their TypeBox schemas, shared by the services' body parsers: each
 * schema is compiled once (TypeBox's compiler, cached per schema object) and a refusal names
 * the first failing place as a dotted path (`network.name`, or `body` for the whole body).
 */
import type { TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';

const compiled = new WeakMap<TSchema, TypeCheck<TSchema>>();

/** The compiled check of `schema` (compiled at its first use, then reused). */
export function compiledCheck<S extends TSchema>(schema: S): TypeCheck<S> {
  let check = compiled.get(schema) as TypeCheck<S> | undefined;
  if (!check) {
    check = TypeCompiler.Compile(schema);
    compiled.set(schema, check);
  }
  return check;
}

/**
 * The first place `value` breaks `check`: its dotted path (`body` for the value itself) and
 * TypeBox's message (undefined when the value passes).
 */
export function firstError<S extends TSchema>(check: TypeCheck<S>, value: unknown): { path: string; message: string | undefined } {
  const first = check.Errors(value).First();
  const path =
    first?.path
      .split('/')
      .filter((p) => p !== '')
      .join('.') || 'body';
  return { path, message: first?.message };
}
