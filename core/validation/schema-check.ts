/**
 * Checks a JSON Schema against JSON Schema's own meta-schema, for schemas that come from plugins
 * (option schemas, admin routes, guardrail check parameters).
 *
 * Every ajv instance compiles the meta-schema (about 60 ms) before it checks its first schema, and
 * by default checks every schema it compiles. The gateway has several instances, each set up for
 * its own job (defaults, coercion, all errors or the first), so at boot that was paid once per
 * instance. They now compile with `validateSchema: false`, and this one instance, made on first
 * use, does the checking for all of them.
 *
 * @example
 *   const problem = schemaProblem({ type: 'object', properties: { n: { type: 'integr' } } });
 *   // 'data/properties/n/type must be equal to one of the allowed values, …'
 */
import { Ajv } from 'ajv';

let checker: Ajv | undefined;

/** Why `schema` is not a valid JSON Schema (draft-07), or null when it is. */
export function schemaProblem(schema: unknown): string | null {
  if (typeof schema === 'boolean') return null;
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return 'a schema is an object or a boolean';
  checker ??= new Ajv({ allErrors: true, strict: false });
  return checker.validateSchema(schema) ? null : checker.errorsText(checker.errors);
}
