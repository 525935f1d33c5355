/**
 * Request body validation for the model routes.
 *
 *   body ──▶ is it an object? ──▶ compiled ajv schema (first error) ──▶ cross-field rules ──▶ null
 *                  │                         │                                │
 *             invalid_body           ajv error → GatewayError        invalid_parameter_combination
 *
 * Runs on every request, so all schemas compile once in {@link createRequestValidator} and the
 * success path is one compiled function plus a few property reads. Errors are built only on the
 * failure path. The body is never modified (no coercion, defaults or removal), which lets the
 * gateway forward the original bytes untouched.
 */

import type { ErrorObject, SchemaObject, ValidateFunction } from 'ajv';
import type { GatewayError } from '../errors.js';
import { chatCompletionsSchema, checkChatCompletionsRules } from './chat-completions.js';
import { checkCompletionsRules, completionsSchema } from './completions.js';
import { embeddingsSchema } from './embeddings.js';
import { ValidationErrors } from './errors.js';
import { countTokensSchema, messagesSchema } from './messages.js';
import { moderationsSchema } from './moderations.js';
import { checkResponsesRules, responsesSchema } from './responses.js';
import { fingerprint, precompiled, type ValidatorSource } from './precompiled.js';
import { newAjv } from './ajv.js';

export { ValidationErrors } from './errors.js';

import type { ModelRoute } from '../routes.js';

export type { ModelRoute };

export interface RequestValidator {
  (route: ModelRoute, body: unknown): GatewayError | null;
}

type Body = Record<string, unknown>;
type CrossFieldRule = (body: Body) => GatewayError | null;

interface CompiledRoute {
  schema: SchemaObject;
  validate: ValidateFunction;
  rules: CrossFieldRule | null;
}

const ROUTES: Record<ModelRoute, { schema: SchemaObject; rules: CrossFieldRule | null }> = {
  'chat.completions': { schema: chatCompletionsSchema, rules: checkChatCompletionsRules },
  completions: { schema: completionsSchema, rules: checkCompletionsRules },
  embeddings: { schema: embeddingsSchema, rules: null },
  moderations: { schema: moderationsSchema, rules: null },
  responses: { schema: responsesSchema, rules: checkResponsesRules },
  messages: { schema: messagesSchema, rules: null },
  'messages.count_tokens': { schema: countTokensSchema, rules: null },
};

/**
 * The ajv options of the request schemas, generated (cli/build-validators.ts) or compiled. They
 * are the contract with the forwarding path: the body must come out unchanged (no coercion,
 * defaults or removal). No meta-schema check: these are the gateway's own schemas, compiled by its
 * tests (a meta-schema compile costs about 60 ms).
 */
export const REQUEST_AJV_OPTIONS = {
  allErrors: false,
  coerceTypes: false,
  useDefaults: false,
  removeAdditional: false,
  strict: false,
  validateSchema: false,
} as const;

/** The request schema of each model route. */
export function requestSchemas(): Record<ModelRoute, SchemaObject> {
  const schemas = {} as Record<ModelRoute, SchemaObject>;
  for (const route of Object.keys(ROUTES) as ModelRoute[]) schemas[route] = ROUTES[route].schema;
  return schemas;
}

/** A route's name as an identifier (the generated module's export): `chat.completions` → `chat_completions`. */
export function exportName(route: ModelRoute): string {
  return route.replace(/\./g, '_');
}

/** The per-request validator, and where its schemas' code came from. */
export interface RouteValidator extends RequestValidator {
  readonly source: ValidatorSource;
}

/**
 * The per-request validator over every route's schema (call at boot): the code generated at build
 * time when it matches these schemas (see precompiled.ts), otherwise compiled here once.
 * `precompiled: false` compiles regardless (the tests compare the two).
 *
 * @example
 *   const validateRequest = createRequestValidator();
 *   const err = validateRequest('chat.completions', body);
 *   if (err) return err; // 400 with code and param, e.g. value_above_maximum / temperature
 */
export function createRequestValidator(options: { precompiled?: boolean } = {}): RouteValidator {
  const schemas = requestSchemas();
  const generated = options.precompiled === false ? undefined : precompiled<Record<string, ValidateFunction>>('request', fingerprint(REQUEST_AJV_OPTIONS, schemas));
  const ajv = generated === undefined ? newAjv(REQUEST_AJV_OPTIONS) : undefined;
  const compiled = {} as Record<ModelRoute, CompiledRoute>;
  for (const route of Object.keys(ROUTES) as ModelRoute[]) {
    const { schema, rules } = ROUTES[route];
    compiled[route] = { schema, validate: generated?.[exportName(route)] ?? ajv!.compile(schema), rules };
  }

  return Object.assign(validateRequest, { source: (generated === undefined ? 'compiled' : 'generated') as ValidatorSource });

  function validateRequest(route: ModelRoute, body: unknown): GatewayError | null {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      return ValidationErrors.invalidBody('The request body must be a JSON object.', { param: null });
    }
    const entry = compiled[route];
    if (!entry.validate(body)) return fromAjvErrors(entry.validate.errors, body, entry.schema);
    return entry.rules === null ? null : entry.rules(body as Body);
  }
}

/**
 * Turns ajv's errors into one gateway error. With `allErrors: false` ajv stops at the first
 * failure, and the failure that stopped it is the *last* entry: `anyOf` first records each
 * failed branch, then its own error.
 */
export function fromAjvErrors(
  errors: ErrorObject[] | null | undefined,
  body: unknown,
  schema: SchemaObject,
): GatewayError {
  // A failure under `then`/`else` is reported twice: the real error, then an `if` summary ("must
  // match then schema") that names only the enclosing object. The summaries go.
  const real = errors?.filter((e) => e.keyword !== 'if');
  if (real && real.length > 0) errors = real;
  if (!errors || errors.length === 0) return ValidationErrors.invalidValue('The request body is invalid.');
  let err = errors[errors.length - 1] as ErrorObject;
  // propertyNames records the inner failure (with the offending key) first, then a summary.
  if (err.keyword === 'propertyNames' && errors.length > 1) err = errors[errors.length - 2] as ErrorObject;

  const params = err.params as Record<string, unknown>;
  const field = toParam(body, err.instancePath);
  const limit = params.limit;

  switch (err.keyword) {
    case 'required': {
      const missing = String(params.missingProperty);
      const param = field === null ? missing : field + keySegment(missing);
      return ValidationErrors.missingRequiredParameter(`${param} is required.`, { param });
    }
    case 'type':
    case 'anyOf':
    case 'oneOf': {
      // Unions (`prompt`, `input`) describe themselves; a plain type list is described from ajv.
      const expected = schemaDescription(schema, err.schemaPath) ?? describeTypes(params.type);
      return ValidationErrors.invalidType(`${field} must be ${expected}.`, { param: field });
    }
    case 'minimum':
      return ValidationErrors.valueBelowMinimum(`${field} must be >= ${limit}.`, { param: field });
    case 'exclusiveMinimum':
      return ValidationErrors.valueBelowMinimum(`${field} must be > ${limit}.`, { param: field });
    case 'maximum':
      return ValidationErrors.valueAboveMaximum(`${field} must be <= ${limit}.`, { param: field });
    case 'exclusiveMaximum':
      return ValidationErrors.valueAboveMaximum(`${field} must be < ${limit}.`, { param: field });
    case 'minItems':
      return ValidationErrors.tooFewItems(`${field} must have at least ${limit} ${plural(limit, 'item')}.`, {
        param: field,
      });
    case 'maxItems':
      return ValidationErrors.tooManyItems(`${field} must have at most ${limit} ${plural(limit, 'item')}.`, {
        param: field,
      });
    case 'maxLength': {
      // A propertyNames failure carries the key; the key may be huge, so name the object instead.
      const subject = err.propertyName === undefined ? field : `Keys of ${field}`;
      return ValidationErrors.stringTooLong(`${subject} must be at most ${limit} characters long.`, { param: field });
    }
    case 'minLength':
      // No "string_too_short" code: the only minLength bound is "non-empty", an invalid value.
      return ValidationErrors.invalidValue(
        limit === 1 ? `${field} must not be empty.` : `${field} must be at least ${limit} characters long.`,
        { param: field },
      );
    case 'maxProperties':
      return ValidationErrors.tooManyProperties(
        `${field} must have at most ${limit} ${plural(limit, 'property', 'properties')}.`,
        { param: field },
      );
    case 'enum':
      return ValidationErrors.invalidValue(`${field} must be one of ${describeValues(params.allowedValues)}.`, {
        param: field,
      });
    case 'const':
      return ValidationErrors.invalidValue(`${field} must be ${describeValues([params.allowedValue])}.`, {
        param: field,
      });
    case 'additionalProperties': {
      // Admin bodies are closed: a typo must not be silently ignored.
      const extra = String(params.additionalProperty);
      const param = field === null ? extra : field + keySegment(extra);
      return ValidationErrors.unknownParameter(`${param} is not a known field.`, { param });
    }
    case 'format':
      return ValidationErrors.invalidValue(`${field} must be a valid ${String(params.format)}.`, { param: field });
    case 'pattern':
      return ValidationErrors.invalidValue(`${field} has an invalid format.`, { param: field });
    default:
      return ValidationErrors.invalidValue(`${field ?? 'The request body'} is invalid.`, { param: field });
  }
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
/** Keys are echoed in `param`; a client-chosen key can be arbitrarily long, so it is capped. */
const MAX_KEY_IN_PARAM = 64;

/**
 * JSON pointer (`/messages/2/role`) to JS path (`messages[2].role`). A pointer cannot tell an
 * array index from an object key that looks like a number (`logit_bias/50256`), so the body is
 * walked alongside: arrays get `[i]`, identifiers `.key`, anything else `["key"]`.
 */
function toParam(body: unknown, pointer: string): string | null {
  if (pointer === '') return null;
  let path = '';
  let node: unknown = body;
  for (const raw of pointer.slice(1).split('/')) {
    const segment = raw.includes('~') ? raw.replace(/~1/g, '/').replace(/~0/g, '~') : raw;
    if (Array.isArray(node)) {
      path += `[${segment}]`;
      node = node[Number(segment)];
    } else {
      const key = keySegment(segment);
      path += path === '' && key.startsWith('.') ? key.slice(1) : key;
      node = typeof node === 'object' && node !== null ? (node as Body)[segment] : undefined;
    }
  }
  return path;
}

function keySegment(key: string): string {
  if (key.length > MAX_KEY_IN_PARAM) return `[${JSON.stringify(`${key.slice(0, MAX_KEY_IN_PARAM)}…`)}]`;
  return IDENTIFIER.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  integer: 'an integer',
  boolean: 'a boolean',
  array: 'an array',
  object: 'an object',
  null: 'null',
};

function describeTypes(types: unknown): string {
  const list = Array.isArray(types) ? types.map(String) : String(types).split(',');
  return joinOr(list.map((name) => TYPE_NAMES[name] ?? name));
}

/** Allowed values are schema constants (short), never client data, so they are safe to echo. */
function describeValues(values: unknown): string {
  const list = Array.isArray(values) ? values : [values];
  return joinOr(list.map((value) => JSON.stringify(value)));
}

function joinOr(items: string[]): string {
  if (items.length <= 1) return items[0] ?? '';
  return `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`;
}

function plural(count: unknown, one: string, many = `${one}s`): string {
  return count === 1 ? one : many;
}

/**
 * The `description` of the schema holding the failed keyword, found by walking `schemaPath`
 * (`#/properties/input/anyOf` → the `input` schema). Union schemas carry one so the message can
 * say what the value must be. Error path only, so the walk costs nothing on valid requests.
 */
function schemaDescription(schema: SchemaObject, schemaPath: string): string | undefined {
  let node: unknown = schema;
  for (const segment of schemaPath.split('/').slice(1, -1)) {
    node = typeof node === 'object' && node !== null ? (node as Record<string, unknown>)[segment] : undefined;
  }
  const description = typeof node === 'object' && node !== null ? (node as { description?: unknown }).description : undefined;
  return typeof description === 'string' ? description : undefined;
}
