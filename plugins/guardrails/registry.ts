/**
 * Known checks, and guardrail lists turned from what operators write into what the engine runs.
 *
 * A guardrail, inline, is one object: one or more check ids with their parameters, plus the
 * action keys.
 *
 *   {"default.regexMatch": {"rule": "\\d{16}", "not": true}, "deny": true, "on_error": "allow"}
 *
 * A list may also name saved guardrails (`/v1/guardrails`) by id or slug: each expands to the
 * inline objects it holds. Everything is checked when it is saved or sent (a 400 naming the
 * field: `config.input_guardrails[0]['default.wordCount'].max`), so the engine never meets a bad
 * parameter. Parsed lists are kept per source object (saved configs and records are shared and
 * frozen), so a request with a saved config parses nothing.
 */
import type { Ajv, ValidateFunction } from 'ajv';
import {
  fromAjvErrors,
  GatewayError,
  newAjv,
  schemaProblem,
  ValidationErrors,
  type CheckDefinition,
  type Records,
  type Store,
} from '../../core/index.js';
import { GuardrailErrors } from './errors.js';
import { unsealGuardrailChecks } from './secrets.js';

/** Feedback recorded on a trace when a guardrail passes or fails (`on_success` / `on_fail`). */
export interface Feedback {
  value: number;
  weight: number;
  metadata?: Record<string, unknown>;
}

/** One check of a guardrail, ready to run. */
export interface BoundCheck {
  id: string;
  def: CheckDefinition<unknown>;
  params: unknown;
}

/** One guardrail, ready to run. */
export interface Guardrail {
  /** Its `id` key, the saved guardrail's slug (with `#n` past the first), or its place in the list. */
  id: string;
  checks: BoundCheck[];
  deny: boolean;
  async: boolean;
  redact: boolean;
  onError: 'block' | 'allow';
  timeoutMs: number | undefined;
  onFail: Feedback | undefined;
  onSuccess: Feedback | undefined;
}

/** The keys of a guardrail object that are actions, not checks. */
const ACTION_KEYS = new Set(['deny', 'async', 'redact', 'on_fail', 'on_success', 'on_error', 'timeout', 'id', 'name']);
/** More checks than any real list; keeps a hostile config from costing much per request. */
export const MAX_GUARDRAILS = 32;
const MAX_CHECKS_PER_GUARDRAIL = 16;

const feedbackSchema = {
  type: 'object',
  properties: {
    feedback: {
      type: 'object',
      properties: {
        value: { type: 'integer', minimum: -10, maximum: 10 },
        weight: { type: 'number', minimum: 0, maximum: 1 },
        metadata: { type: 'object', maxProperties: 32 },
      },
      required: ['value'],
      additionalProperties: false,
    },
  },
  required: ['feedback'],
  additionalProperties: false,
};

const actionSchema = {
  type: 'object',
  properties: {
    deny: { type: 'boolean' },
    async: { type: 'boolean' },
    redact: { type: 'boolean' },
    on_fail: feedbackSchema,
    on_success: feedbackSchema,
    on_error: { type: 'string', enum: ['block', 'allow'] },
    timeout: { type: 'integer', minimum: 1, maximum: 60_000 },
    id: { type: 'string', minLength: 1, maxLength: 128 },
    name: { type: 'string', minLength: 1, maxLength: 255 },
  },
};

type Json = Record<string, unknown>;

/** The check registry, shared by the engine, the admin API and the validation of configs. */
export class CheckRegistry {
  readonly #checks = new Map<string, CheckDefinition<unknown>>();
  readonly #validators = new Map<string, ValidateFunction>();
  /** Made when a guardrail first needs a schema compiled (not at every start: see core/validation/ajv.ts). */
  #ajv: Ajv | undefined;
  #actions: ValidateFunction | undefined;
  /** Parsed inline lists by source object (frozen configs, saved records). */
  readonly #parsed = new WeakMap<object, Guardrail[]>();

  constructor(private readonly store: Store) {
  }

  /** Parameter schemas are checked by the shared checker in register(), not again by this instance. */
  #compile(schema: object): ValidateFunction {
    return (this.#ajv ??= newAjv({ allErrors: false, strict: false, validateSchema: false }, { formats: true })).compile(schema);
  }

  register(def: CheckDefinition<never> | CheckDefinition<Json>): void {
    const check = def as unknown as CheckDefinition<unknown>;
    if (!/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(check.id)) throw new Error(`a check id is "<namespace>.<name>": "${check.id}"`);
    // Checked now, compiled when a guardrail first names the check (most of the ~30 never are).
    const problem = schemaProblem(check.parameters);
    if (problem !== null) throw new Error(`check "${check.id}": its parameters schema is not valid JSON Schema: ${problem}`);
    this.#validators.delete(check.id);
    this.#checks.set(check.id, check);
  }

  /** The check's parameter validator, compiled on first use. */
  #validator(id: string, def: CheckDefinition<unknown>): ValidateFunction {
    let validate = this.#validators.get(id);
    if (validate === undefined) {
      validate = this.#compile(def.parameters as object);
      this.#validators.set(id, validate);
    }
    return validate;
  }

  ids(): string[] {
    return [...this.#checks.keys()].sort();
  }

  get(id: string): CheckDefinition<unknown> | undefined {
    return this.#checks.get(id);
  }

  /** Checks a list; null when it is fine. */
  validate(list: unknown, param: string, workspaceId?: string): GatewayError | null {
    const parsed = this.parse(list, param, workspaceId);
    return parsed instanceof GatewayError ? parsed : null;
  }

  /**
   * A list (inline objects and saved ids/slugs) as guardrails, or the 400 that says what is wrong.
   * `workspaceId` scopes saved references; without it, a reference must exist in any workspace.
   */
  parse(list: unknown, param: string, workspaceId?: string): Guardrail[] | GatewayError {
    if (!Array.isArray(list)) return ValidationErrors.invalidType(`${param} must be an array.`, { param });
    const cached = this.#parsed.get(list);
    if (cached !== undefined && !list.some((g) => typeof g === 'string')) return cached;
    const out: Guardrail[] = [];
    for (let i = 0; i < list.length; i++) {
      const item: unknown = list[i];
      const at = `${param}[${i}]`;
      if (typeof item === 'string') {
        const saved = this.saved(item, workspaceId);
        if (saved === undefined) return GuardrailErrors.unknownGuardrail(`${at} names no saved guardrail in this workspace.`, { param: at });
        const inner = this.#parseRecord(saved);
        if (inner instanceof GatewayError) return inner;
        out.push(...inner);
      } else {
        const g = this.#parseOne(item, at, String(i));
        if (g instanceof GatewayError) return g;
        out.push(g);
      }
      if (out.length > MAX_GUARDRAILS) return ValidationErrors.tooManyItems(`${param} holds more than ${MAX_GUARDRAILS} guardrails.`, { param });
    }
    if (Object.isFrozen(list) && !list.some((g) => typeof g === 'string')) this.#parsed.set(list, out);
    return out;
  }

  /** An active saved guardrail by id or slug, in `workspaceId` when given. */
  saved(ref: string, workspaceId?: string): Records.GuardrailRecord | undefined {
    const c = this.store.c.guardrails;
    const record = c.cachedBy('slug', ref) ?? c.get(ref);
    if (record === undefined || record.status !== 'active') return undefined;
    if (workspaceId !== undefined && record.workspace_id !== workspaceId) return undefined;
    return record;
  }

  #parseRecord(record: Records.GuardrailRecord): Guardrail[] | GatewayError {
    const cached = this.#parsed.get(record);
    if (cached !== undefined) return cached;
    const out: Guardrail[] = [];
    // Webhook header values are stored sealed; the checks get them in clear.
    const checks = unsealGuardrailChecks(this.store, record.checks);
    for (let i = 0; i < checks.length; i++) {
      const g = this.#parseOne(checks[i], `guardrail(${record.slug}).checks[${i}]`, i === 0 ? record.slug : `${record.slug}#${i + 1}`);
      if (g instanceof GatewayError) return g;
      out.push(g);
    }
    this.#parsed.set(record, out);
    return out;
  }

  #parseOne(item: unknown, at: string, fallbackId: string): Guardrail | GatewayError {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) {
      return ValidationErrors.invalidType(`${at} must be a guardrail object or the id or slug of a saved guardrail.`, { param: at });
    }
    const obj = item as Json;
    const actions: Json = {};
    const checks: BoundCheck[] = [];
    for (const [key, value] of Object.entries(obj)) {
      if (ACTION_KEYS.has(key)) {
        actions[key] = value;
        continue;
      }
      const param = `${at}[${JSON.stringify(key)}]`;
      const def = this.#checks.get(key);
      if (def === undefined) {
        return key.includes('.')
          ? GuardrailErrors.unknownCheck(`${param}: no check is called "${key.slice(0, 100)}".`, { param })
          : ValidationErrors.unknownParameter(`${at}.${key.slice(0, 100)} is neither a check id (namespace.name) nor an action key.`, { param: `${at}.${key.slice(0, 100)}` });
      }
      const params = value ?? {};
      if (typeof params !== 'object' || Array.isArray(params)) return ValidationErrors.invalidType(`${param} must be an object of parameters.`, { param });
      const validate = this.#validator(key, def);
      if (!validate(params)) return prefixed(fromAjvErrors(validate.errors, params, def.parameters), param);
      const semantic = def.validateParams?.(params, param) ?? null;
      if (semantic !== null) return semantic;
      checks.push({ id: key, def, params });
    }
    if (checks.length === 0) return ValidationErrors.missingRequiredParameter(`${at} names no check.`, { param: at });
    if (checks.length > MAX_CHECKS_PER_GUARDRAIL) return ValidationErrors.tooManyProperties(`${at} has more than ${MAX_CHECKS_PER_GUARDRAIL} checks.`, { param: at });
    const valid = (this.#actions ??= this.#compile(actionSchema));
    if (!valid(actions)) return prefixed(fromAjvErrors(valid.errors, actions, actionSchema), at);
    const redact = actions.redact === true;
    if (redact) {
      // A check finds spans with these parameters when its `find` answers a list (even an empty one) for them.
      const cannot = checks.find((c) => c.def.find === undefined || c.def.find('', c.params) === null);
      if (cannot !== undefined) return ValidationErrors.invalidParameterCombination(`${at}: "redact" needs checks that find spans of text; ${cannot.id} does not with these parameters.`, { param: `${at}.redact` });
    }
    const feedback = (v: unknown): Feedback | undefined => {
      const f = (v as { feedback?: Feedback } | undefined)?.feedback;
      return f === undefined ? undefined : { value: f.value, weight: f.weight ?? 1, ...(f.metadata ? { metadata: f.metadata } : {}) };
    };
    return {
      id: typeof actions.id === 'string' ? actions.id : typeof actions.name === 'string' ? actions.name : fallbackId,
      checks,
      deny: actions.deny === true,
      async: actions.async === true,
      redact,
      onError: actions.on_error === 'allow' ? 'allow' : 'block',
      timeoutMs: typeof actions.timeout === 'number' ? actions.timeout : undefined,
      onFail: feedback(actions.on_fail),
      onSuccess: feedback(actions.on_success),
    };
  }
}

/** An ajv error about a nested object, re-pointed at its place in the whole document. */
function prefixed(err: GatewayError, prefix: string): GatewayError {
  const rel = err.param;
  const full = rel === null || rel === '' ? prefix : rel.startsWith('[') ? prefix + rel : `${prefix}.${rel}`;
  const message = rel === null || rel === '' ? `${prefix}: ${err.message}` : err.message.split(rel).join(full);
  return new GatewayError(err.status, err.type, err.code, message, { param: full });
}
