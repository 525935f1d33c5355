/**
 * `default.jsonSchema`: the answer is JSON (whole, or in a fenced block) valid against a schema.
 *
 * The schema is the operator's, so it is compiled like untrusted input: its `pattern` and
 * `patternProperties` run on RE2 (ajv's `code.regExp` hook, through `compileSafeRegex`), a schema
 * that needs a backtracking pattern is a 400 when the guardrail is saved or sent, schemas with an
 * `$id` are not kept in the shared ajv instance (`addUsedSchema: false`), and the text of a schema
 * is bounded. `$schema` picks the dialect: 2020-12 and 2019-09 when named, draft-07 otherwise.
 * Compiled validators are kept by schema object (configs are parsed once) and by JSON text
 * (bounded), so a request compiles nothing.
 */
import { createRequire } from 'node:module';
import type { Ajv, ValidateFunction } from 'ajv';
import { addAjvFormats, compileSafeRegex, defineCheck, ValidationErrors } from '../../../core/index.js';
import { parseJsonAnswer } from './json-answer.js';

export interface JsonSchemaParams {
  schema: Record<string, unknown>;
}

/** Longest schema accepted, as JSON text: ample for output contracts, bounded compile time. */
const MAX_SCHEMA_TEXT = 65_536;
/** Errors listed in `data`. */
const MAX_ERRORS = 5;

/** ajv's regular-expression hook: patterns compile on RE2, which refuses what needs backtracking. */
const safeRegExp = Object.assign(
  (pattern: string) => {
    const re = compileSafeRegex(pattern);
    // ajv keys compiled patterns by `toString()`: it must differ per pattern.
    return { test: (s: string) => re.test(s), toString: () => `re2:${pattern}` };
  },
  { code: 'safeRegExp' },
);

/** ajv's module of each dialect, loaded when a schema of that dialect is first compiled (not at every start). */
const MODULES = { draft07: 'ajv', draft2019: 'ajv/dist/2019', draft2020: 'ajv/dist/2020' } as const;
type Dialect = keyof typeof MODULES;
const load = createRequire(import.meta.url);
const dialects: Partial<Record<Dialect, Ajv>> = {};

function makeAjv(dialect: Dialect): Ajv {
  const Class = (load(MODULES[dialect]) as { default: new (options: object) => Ajv }).default;
  // Lenient about keywords it does not know (`nullable`, `x-…`) and unknown formats (ignored), and
  // silent about them: a check does not write to the console.
  const ajv = new Class({ strict: false, logger: false, allErrors: false, addUsedSchema: false, code: { regExp: safeRegExp } });
  addAjvFormats(ajv);
  return ajv;
}

function ajvFor(schema: Record<string, unknown>): Ajv {
  const uri = typeof schema.$schema === 'string' ? schema.$schema : '';
  const dialect: Dialect = uri.includes('2020-12') ? 'draft2020' : uri.includes('2019-09') ? 'draft2019' : 'draft07';
  return (dialects[dialect] ??= makeAjv(dialect));
}

const byObject = new WeakMap<object, ValidateFunction>();
const byText = new Map<string, ValidateFunction>();
const TEXT_CACHE_LIMIT = 256;

/** The compiled validator for `schema`; throws when ajv (or RE2) refuses it. */
export function schemaValidator(schema: Record<string, unknown>): ValidateFunction {
  const known = byObject.get(schema);
  if (known !== undefined) return known;
  const text = JSON.stringify(schema);
  let validate = byText.get(text);
  if (validate === undefined) {
    if (text.length > MAX_SCHEMA_TEXT) throw new Error(`the schema is longer than ${MAX_SCHEMA_TEXT} characters as JSON`);
    validate = ajvFor(schema).compile(schema);
    if (byText.size >= TEXT_CACHE_LIMIT) byText.delete(byText.keys().next().value!);
    byText.set(text, validate);
  }
  byObject.set(schema, validate);
  return validate;
}

export const jsonSchema = defineCheck<JsonSchemaParams>({
  id: 'default.jsonSchema',
  description: 'Passes when the answer (or its fenced ```json block) is JSON that validates against the JSON Schema (draft-07; 2019-09 and 2020-12 when $schema names them). Patterns in the schema run on RE2.',
  parameters: {
    type: 'object',
    properties: { schema: { type: 'object' } },
    required: ['schema'],
    additionalProperties: false,
  },
  phases: ['output'],
  run(ctx, p) {
    const answer = parseJsonAnswer(ctx.text);
    if (!answer.ok) return { verdict: false, explanation: answer.reason, data: { json: false } };
    const validate = schemaValidator(p.schema);
    if (validate(answer.value)) return { verdict: true, explanation: 'The answer matches the schema.', data: { json: true, valid: true } };
    const errors = (validate.errors ?? []).slice(0, MAX_ERRORS).map((e) => ({ path: e.instancePath, keyword: e.keyword, message: e.message ?? '' }));
    return { verdict: false, explanation: 'The answer does not match the schema.', data: { json: true, valid: false, errors } };
  },
  validateParams(p, param) {
    try {
      schemaValidator(p.schema);
      return null;
    } catch (err) {
      return ValidationErrors.invalidValue(`${param}.schema is not a JSON Schema the gateway can compile: ${(err as Error).message}`.slice(0, 300), {
        param: `${param}.schema`,
        cause: err,
      });
    }
  },
});
