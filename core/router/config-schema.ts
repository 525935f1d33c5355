/**
 * The routing config: its JSON Schema (draft-07) and the one validator every entry point shares,
 * saved configs (`POST /v1/configs`) and the per-request `x-gateway-config` alike.
 *
 * A config is a tree of nodes. A node with `targets` is a group (it has a `strategy` saying how to
 * pick among its children); a node without is a leaf (one provider endpoint):
 *
 *   { strategy: {mode: fallback}, retry, request_timeout, cache, override_params, targets: [
 *       { strategy: {mode: loadbalance}, targets: [ {provider, api_key, weight}, {virtual_key, weight} ] },
 *       { provider, custom_host, override_params } ] }
 *
 * Groups are closed (`additionalProperties: false`): a typo such as `stratgey` is a 400, not a
 * silently ignored field. Leaves stay open, because provider adapters read provider-specific
 * fields from them (`azure_*`, `aws_*`, `vertex_*`, `resource_name`, `api_version`, …), and a
 * config copied from the common gateway config shape must keep working; the fields we know are
 * still typed.
 *
 * Validation runs in three steps, each on the error path only as far as needed:
 *   1. a depth check without recursion (so a hostile, very deep tree never reaches ajv's
 *      recursive validator),
 *   2. the schema (ajv, first error, converted by core/validation's `fromAjvErrors`),
 *   3. the rules a schema cannot say: conditional routing names existing targets, a strategy
 *      has targets to pick from, a node has something to call.
 * Every error is a 400 whose `param` is the path inside the config, e.g. `config.targets[1].weight`.
 */
import type { ErrorObject, ValidateFunction } from 'ajv';
import { GatewayError, isGatewayError } from '../errors.js';
import { compileSafeRegex } from '../safe-regex.js';
import { nonFiniteNumber } from '../validation/finite-numbers.js';
import { fromAjvErrors, ValidationErrors } from '../validation/index.js';
import { newAjv } from '../validation/ajv.js';

/**
 * Deepest nesting of `targets` (the root is depth 0, so a leaf may sit at depth 4: e.g. fallback
 * over a conditional over load-balanced pools of fallback pairs). Real configs use one or two
 * levels. The bound keeps ajv's recursion and the router's per-request walks small, and is
 * checked before ajv runs. (The admin audit masks whatever lies deeper than it inspects.)
 */
export const MAX_CONFIG_DEPTH = 4;
/** Children of one group: far more than any sensible fallback chain or pool. */
export const MAX_TARGETS = 100;
/**
 * Deepest nesting inside one conditional-routing query (`$and`/`$or` and operand values count):
 * the matcher walks queries recursively on every request, so a hostile depth is refused here.
 */
export const MAX_QUERY_DEPTH = 16;

const statusCode = { type: 'integer', minimum: 100, maximum: 599 };
const statusCodes = { type: 'array', items: statusCode, maxItems: 100 };
const targetName = { type: 'string', minLength: 1, maxLength: 255 };

const strategy = {
  type: 'object',
  description: 'How a group picks among its targets.',
  properties: {
    mode: { type: 'string', enum: ['single', 'fallback', 'loadbalance', 'conditional'] },
    on_status_codes: { ...statusCodes, description: 'fallback: move on only on these upstream statuses.' },
    conditions: {
      type: 'array',
      maxItems: 100,
      description: 'conditional: the first condition whose query matches picks the target named by `then`.',
      items: {
        type: 'object',
        properties: {
          query: { type: 'object', description: 'Operators $eq $ne $gt $gte $lt $lte $in $nin $regex $and $or over metadata.*, params.*, url.pathname.' },
          then: targetName,
        },
        required: ['query', 'then'],
        additionalProperties: false,
      },
    },
    default: { ...targetName, description: 'conditional: the target used when no condition matches.' },
  },
  required: ['mode'],
  additionalProperties: false,
};

function guardrailList(description: string) {
  return {
    type: 'array',
    maxItems: 32,
    description: `${description} Items: inline guardrail objects ({"default.regexMatch": {...}, "deny": true}) or saved guardrail ids or slugs.`,
    items: { anyOf: [{ type: 'string', minLength: 1, maxLength: 255 }, { type: 'object', maxProperties: 32 }] },
  };
}

/** Fields any node may carry; children inherit or merge them (see DESIGN.md "Routing config"). */
const shared = {
  name: { ...targetName, description: 'Names the node for conditional routing.' },
  weight: { type: 'number', minimum: 0, description: 'loadbalance weight; default 1, 0 is never picked.' },
  index: { type: 'integer', minimum: 0 },
  retry: {
    type: 'object',
    properties: {
      attempts: { type: 'integer', minimum: 0, maximum: 10, description: 'Retries after the first call.' },
      on_status_codes: statusCodes,
      use_retry_after_header: { type: 'boolean' },
    },
    additionalProperties: false,
  },
  request_timeout: { type: 'integer', minimum: 1, maximum: 3_600_000, description: 'Per-attempt timeout in ms.' },
  cache: {
    type: 'object',
    properties: {
      mode: { type: 'string', enum: ['simple', 'semantic'] },
      max_age: { type: 'integer', minimum: 0, description: 'Seconds.' },
    },
    required: ['mode'],
    additionalProperties: false,
  },
  override_params: { type: 'object', description: 'Body fields merged over the request (a child merges over its parent).' },
  custom_host: { type: 'string', format: 'uri', maxLength: 2048, description: 'Upstream base URL; passes the SSRF guard when used.' },
  forward_headers: { type: 'array', maxItems: 64, items: { type: 'string', minLength: 1, maxLength: 256 } },
  // Guardrails (the `guardrails` plugin checks the objects inside when it is in the pipeline).
  input_guardrails: guardrailList('Checks on the request before it is sent; a child replaces its parent\'s list.'),
  output_guardrails: guardrailList('Checks on the answer; a child replaces its parent\'s list.'),
  default_input_guardrails: guardrailList('Appended to the input guardrails of every leaf below.'),
  default_output_guardrails: guardrailList('Appended to the output guardrails of every leaf below.'),
};

const str = (maxLength = 1024) => ({ type: 'string', maxLength });

/** Provider fields leaves commonly carry; others are allowed (leaves are open) but untyped. */
const providerFields = {
  azure_resource_name: str(),
  azure_deployment_name: str(),
  azure_api_version: str(64),
  azure_model_name: str(),
  azure_auth_mode: { type: 'string', enum: ['default', 'entra', 'managed'] },
  resource_name: str(),
  deployment_id: str(),
  api_version: str(64),
  aws_access_key_id: str(),
  aws_secret_access_key: str(8192),
  aws_session_token: str(8192),
  aws_region: str(64),
  vertex_project_id: str(),
  vertex_region: str(64),
  vertex_service_account_json: { type: 'object' },
};

/**
 * The schema of a routing config (draft-07; the root is a node).
 *
 * @example
 *   ajv.compile(routingConfigSchema) // or validateRoutingConfig(config) for the full rules
 */
export const routingConfigSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  title: 'Routing config',
  $ref: '#/definitions/node',
  definitions: {
    node: {
      type: 'object',
      // A node with `targets` is a group, otherwise a leaf: `if` picks the schema, so errors come
      // from the one that applies instead of a oneOf that cannot say which branch was meant.
      if: { required: ['targets'] },
      then: { $ref: '#/definitions/group' },
      else: { $ref: '#/definitions/leaf' },
    },
    group: {
      type: 'object',
      properties: {
        strategy,
        targets: { type: 'array', minItems: 1, maxItems: MAX_TARGETS, items: { $ref: '#/definitions/node' } },
        ...shared,
      },
      required: ['targets'],
      additionalProperties: false,
    },
    leaf: {
      type: 'object',
      properties: {
        provider: { type: 'string', minLength: 1, maxLength: 255, description: 'Provider id, e.g. openai.' },
        api_key: { type: 'string', minLength: 1, maxLength: 8192, description: 'Provider key; sealed at rest, masked in reads.' },
        virtual_key: { type: 'string', minLength: 1, maxLength: 255, description: 'Slug of a virtual key of the same workspace.' },
        // Not a leaf field: typed here so a stray `strategy: null` is a 400 naming it (the rules
        // then ask for the targets a strategy needs) rather than a TypeError in those rules.
        strategy,
        ...shared,
        ...providerFields,
      },
      additionalProperties: true,
    },
  },
} as const;

type Node = Record<string, unknown>;

let compiled: ValidateFunction | undefined;

/** Compiled on first use, once per process: the schema never changes. */
function validator(): ValidateFunction {
  if (compiled !== undefined) return compiled;
  // The gateway's own schema, compiled by its tests: no meta-schema compile (~60 ms) on the first request with a config.
  const ajv = newAjv({ allErrors: false, useDefaults: false, coerceTypes: false, strict: false, validateSchema: false }, { formats: true });
  return (compiled = ajv.compile(routingConfigSchema));
}

/**
 * Checks a routing config against the schema and the routing rules. Returns null when it is
 * usable, else a 400 naming the path of the first problem under `param` (`prefix` is its root:
 * `config` for saved configs; the routing plugin may pass `x-gateway-config`).
 *
 * @example
 *   const err = validateRoutingConfig({ strategy: { mode: 'loadbalance' }, targets: [{ provider: 'openai', weight: -1 }] });
 *   err?.param // 'config.targets[0].weight'
 */
export function validateRoutingConfig(config: unknown, prefix = 'config'): GatewayError | null {
  if (typeof config !== 'object' || config === null || Array.isArray(config)) {
    return ValidationErrors.invalidType(`${prefix} must be an object.`, { param: prefix });
  }
  const tooDeep = checkDepth(config as Node, prefix);
  if (tooDeep !== null) return tooDeep;
  // An inline config's `"weight": 1e999` parses to Infinity, which `type: number` accepts.
  const nonFinite = nonFiniteNumber(config, prefix);
  if (nonFinite !== null) return nonFinite;
  const validate = validator();
  if (!validate(config)) return withPrefix(fromAjvErrors(withoutIfErrors(validate.errors), config, routingConfigSchema), prefix);
  return checkRules(config as Node, prefix);
}

/** Iterative, so depth is measured without the recursion it protects against. */
function checkDepth(root: Node, prefix: string): GatewayError | null {
  const stack: Array<{ node: unknown; depth: number; path: string }> = [{ node: root, depth: 0, path: prefix }];
  while (stack.length > 0) {
    const { node, depth, path } = stack.pop()!;
    if (typeof node !== 'object' || node === null) continue;
    const targets = (node as Node).targets;
    if (!Array.isArray(targets)) continue;
    if (depth + 1 > MAX_CONFIG_DEPTH) {
      return ValidationErrors.invalidValue(`${path}.targets nests deeper than ${MAX_CONFIG_DEPTH} levels.`, { param: `${path}.targets` });
    }
    // Only the first MAX_TARGETS children count: more is a schema error reported by ajv.
    targets.slice(0, MAX_TARGETS).forEach((child, i) => stack.push({ node: child, depth: depth + 1, path: `${path}.targets[${i}]` }));
  }
  return null;
}

/**
 * ajv reports a failure under `then`/`else` twice: the real error, then an `if` summary ("must
 * match then schema"). fromAjvErrors reads the last error, so the summary goes.
 */
function withoutIfErrors(errors: ErrorObject[] | null | undefined): ErrorObject[] | null | undefined {
  return errors?.filter((e) => e.keyword !== 'if');
}

/** `targets[1].weight` → `config.targets[1].weight`, in the param and at the start of the message. */
function withPrefix(err: GatewayError, prefix: string): GatewayError {
  const inner = err.param;
  const param = inner === null ? prefix : inner.startsWith('[') ? `${prefix}${inner}` : `${prefix}.${inner}`;
  const message = inner !== null && err.message.startsWith(inner) ? param + err.message.slice(inner.length) : err.message;
  return new GatewayError(err.status, err.type, err.code, message, { param });
}

/** The rules a schema cannot state. Runs on a schema-valid tree, so shapes are known. */
function checkRules(node: Node, path: string): GatewayError | null {
  const targets = node.targets as Node[] | undefined;
  const strategy = node.strategy as { mode: string; conditions?: Array<{ then: string }>; default?: string } | undefined;
  if (targets === undefined) {
    // Leaves are open, so a group-only field can reach one; with nothing to pick from it means
    // the targets were forgotten.
    if (strategy !== undefined) {
      return ValidationErrors.missingRequiredParameter(`${path}.targets is required with a strategy.`, { param: `${path}.targets` });
    }
    if (node.provider === undefined && node.virtual_key === undefined) {
      return ValidationErrors.missingRequiredParameter(`${path} needs targets, a provider or a virtual_key.`, { param: `${path}.provider` });
    }
    return null;
  }

  const names = new Set<string>();
  for (const [i, child] of targets.entries()) {
    const name = child.name as string | undefined;
    if (name === undefined) continue;
    if (names.has(name)) {
      return ValidationErrors.invalidValue(`${path}.targets[${i}].name repeats a sibling's name; conditional routing could not tell them apart.`, {
        param: `${path}.targets[${i}].name`,
      });
    }
    names.add(name);
  }

  // Queries are checked wherever they appear, so a pattern saved under another mode cannot turn
  // into a problem when the mode is later switched to conditional.
  for (const [i, condition] of (strategy?.conditions ?? []).entries()) {
    const badQuery = checkQuery((condition as { query?: unknown }).query, `${path}.strategy.conditions[${i}].query`);
    if (badQuery !== null) return badQuery;
  }

  if (strategy?.mode === 'conditional') {
    const conditions = strategy.conditions;
    if (conditions === undefined || conditions.length === 0) {
      return ValidationErrors.missingRequiredParameter(`${path}.strategy.conditions is required for conditional routing.`, {
        param: `${path}.strategy.conditions`,
      });
    }
    for (const [i, condition] of conditions.entries()) {
      if (!names.has(condition.then)) {
        return ValidationErrors.invalidValue(`${path}.strategy.conditions[${i}].then must name one of the targets (by their name).`, {
          param: `${path}.strategy.conditions[${i}].then`,
        });
      }
    }
    if (strategy.default !== undefined && !names.has(strategy.default)) {
      return ValidationErrors.invalidValue(`${path}.strategy.default must name one of the targets (by their name).`, { param: `${path}.strategy.default` });
    }
  }

  if (strategy?.mode === 'loadbalance' && targets.every((child) => child.weight === 0)) {
    return ValidationErrors.invalidValue(`${path}.targets all have weight 0, so none could ever be picked.`, { param: `${path}.targets` });
  }

  for (const [i, child] of targets.entries()) {
    const err = checkRules(child, `${path}.targets[${i}]`);
    if (err !== null) return err;
  }
  return null;
}

/** A query key in a `param`: shown when it is a plain field path, else elided (it is caller input). */
function keySegment(key: string): string {
  return /^[A-Za-z0-9_.$-]{1,64}$/.test(key) ? key : '[key]';
}

/**
 * A conditional-routing query: bounded depth (iteratively, before the recursive matcher ever sees
 * it), and every `$regex` a string that the linear-time engine compiles (see core/safe-regex.ts).
 */
function checkQuery(query: unknown, path: string): GatewayError | null {
  const stack: Array<{ value: unknown; depth: number; path: string }> = [{ value: query, depth: 0, path }];
  while (stack.length > 0) {
    const { value, depth, path: at } = stack.pop()!;
    if (typeof value !== 'object' || value === null) continue;
    if (depth > MAX_QUERY_DEPTH) {
      return ValidationErrors.invalidValue(`${path} nests deeper than ${MAX_QUERY_DEPTH} levels.`, { param: path });
    }
    if (Array.isArray(value)) {
      value.forEach((item, i) => stack.push({ value: item, depth: depth + 1, path: `${at}[${i}]` }));
      continue;
    }
    for (const [key, operand] of Object.entries(value as Record<string, unknown>)) {
      const here = `${at}.${keySegment(key)}`;
      if (key === '$regex') {
        if (typeof operand !== 'string') return ValidationErrors.invalidType(`${here} must be a string.`, { param: here });
        try {
          compileSafeRegex(operand, { param: here });
        } catch (err) {
          if (isGatewayError(err)) return err as GatewayError;
          throw err;
        }
        continue;
      }
      stack.push({ value: operand, depth: depth + 1, path: here });
    }
  }
  return null;
}
