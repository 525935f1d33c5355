/**
 * Checks a JSON Schema against JSON Schema's own meta-schema, for schemas that come from plugins
 * (option schemas, admin routes, guardrail check parameters).
 *
 * Every ajv instance compiles the meta-schema (about 60 ms) before it checks its first schema, and
 * by default checks every schema it compiles. The gateway has several instances, each set up for
 * its own job (defaults, coercion, all errors or the first), so at boot that was paid once per
 * instance. They now compile with `validateSchema: false`, and this one checker does the checking
 * for all of them: the draft-07 meta-schema's code generated at build time (precompiled.ts), or an
 * ajv instance made on first use where that code is missing or the schema names another `$schema`.
 *
 * @example
 *   const problem = schemaProblem({ type: 'object', properties: { n: { type: 'integr' } } });
 *   // 'data/properties/n/type must be equal to one of the allowed values, …'
 */
import { createRequire } from 'node:module';
import type { Ajv, ErrorObject, ValidateFunction } from 'ajv';
import { fingerprint, precompiled } from './precompiled.js';
import { newAjv } from './ajv.js';

/** The checker's ajv options, generated (cli/build-validators.ts) or compiled. */
export const CHECKER_AJV_OPTIONS = { allErrors: true, strict: false } as const;

/** The meta-schema ajv checks schemas against when they name none (the `$id` it has, with and without `#`). */
export const DRAFT_07 = 'http://json-schema.org/draft-07/schema';

let checker: Ajv | undefined;
let generated: ValidateFunction | null | undefined;

/** The draft-07 meta-schema as ajv ships it. */
export function draft07(): object {
  return createRequire(import.meta.url)('ajv/dist/refs/json-schema-draft-07.json') as object;
}

/** The generated meta-schema validator; null when there is none for this ajv. */
function generatedChecker(): ValidateFunction | null {
  if (generated === undefined) generated = precompiled<ValidateFunction>('meta', fingerprint(CHECKER_AJV_OPTIONS, draft07())) ?? null;
  return generated;
}

/** ajv's `errorsText`, for the generated checker's errors. */
function errorsText(errors: ErrorObject[] | null | undefined): string {
  if (!errors || errors.length === 0) return 'No errors';
  return errors.map((e) => `data${e.instancePath} ${e.message}`).join(', ');
}

/** Why `schema` is not a valid JSON Schema (draft-07), or null when it is. `compiled`: skip the generated checker (the tests compare the two). */
export function schemaProblem(schema: unknown, options: { compiled?: boolean } = {}): string | null {
  if (typeof schema === 'boolean') return null;
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return 'a schema is an object or a boolean';
  const named = (schema as { $schema?: unknown }).$schema;
  const meta = options.compiled === true ? null : generatedChecker();
  if (meta !== null && (named === undefined || named === DRAFT_07 || named === `${DRAFT_07}#`)) return meta(schema) ? null : errorsText(meta.errors);
  checker ??= newAjv(CHECKER_AJV_OPTIONS);
  return checker.validateSchema(schema) ? null : checker.errorsText(checker.errors);
}
