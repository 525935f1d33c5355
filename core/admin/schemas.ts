/**
 * Schema fragments every admin area shares, so the same field means the same thing everywhere:
 * pagination, ids, times, the list envelope, usage and rate limits, policy conditions.
 *
 * Convention (one for the whole admin API, where the reference is inconsistent): list envelope
 * `{object:"list", total, data}`; 0-based `current_page` with `page_size` (default 50, max 500);
 * snake_case; ISO 8601 times; UUIDv7 ids and slugs; update and delete answer 200 `{}`.
 */
export type JsonSchema = Record<string, unknown>;

export const PAGE_SIZE_DEFAULT = 50;
export const PAGE_SIZE_MAX = 500;

export const pagination: Record<string, JsonSchema> = {
  current_page: { type: 'integer', minimum: 0, default: 0, description: '0-based page number.' },
  page_size: { type: 'integer', minimum: 0, maximum: PAGE_SIZE_MAX, default: PAGE_SIZE_DEFAULT, description: `Items per page (max ${PAGE_SIZE_MAX}).` },
};

export const uuid: JsonSchema = { type: 'string', format: 'uuid' };
export const dateTime: JsonSchema = { type: 'string', format: 'date-time' };
export const nullable = (schema: JsonSchema): JsonSchema => ({ ...schema, nullable: true });
export const name255: JsonSchema = { type: 'string', minLength: 1, maxLength: 255 };
export const slug: JsonSchema = { type: 'string', pattern: '^[a-zA-Z0-9_-]+$', minLength: 1, maxLength: 255 };
/** A workspace named by id or slug. */
export const workspaceRef: JsonSchema = { type: 'string', minLength: 1, maxLength: 255, description: 'Workspace id or slug.' };
export const stringMap: JsonSchema = { type: 'object', additionalProperties: { type: 'string' } };

export const rateLimit: JsonSchema = {
  type: 'object',
  properties: {
    type: { type: 'string', enum: ['requests', 'tokens'] },
    unit: { type: 'string', enum: ['rpm', 'rph', 'rpd'] },
    value: { type: 'integer', minimum: 0 },
  },
  required: ['type', 'unit', 'value'],
  additionalProperties: false,
};

export const usageLimits: JsonSchema = {
  type: 'object',
  properties: {
    credit_limit: { type: 'number', minimum: 0, nullable: true },
    type: { type: 'string', enum: ['cost', 'tokens'] },
    alert_threshold: { type: 'number', minimum: 0, nullable: true },
    periodic_reset: { type: 'string', enum: ['monthly', 'weekly'], nullable: true },
    periodic_reset_days: { type: 'integer', minimum: 1, maximum: 365, nullable: true },
    next_usage_reset_at: { type: 'string', format: 'date-time', nullable: true },
  },
  additionalProperties: false,
};

export const conditions: JsonSchema = {
  type: 'array',
  minItems: 1,
  items: {
    type: 'object',
    properties: { key: { type: 'string', minLength: 1, maxLength: 255 }, value: { type: 'string', maxLength: 1024 } },
    required: ['key', 'value'],
    additionalProperties: false,
  },
};

export const groupBy: JsonSchema = {
  type: 'array',
  minItems: 1,
  items: { type: 'object', properties: { key: { type: 'string', minLength: 1, maxLength: 255 } }, required: ['key'], additionalProperties: false },
};

/** `{}`: the answer of every update and delete. */
export const empty: JsonSchema = { type: 'object', properties: {}, additionalProperties: false };

/** `{object:"list", total, data:[item]}` */
export function listOf(item: JsonSchema): JsonSchema {
  return {
    type: 'object',
    properties: { object: { type: 'string', const: 'list' }, total: { type: 'integer' }, data: { type: 'array', items: item } },
    required: ['object', 'total', 'data'],
  };
}

/** An object schema for responses: every listed field, nullable where the record allows. */
export function record(properties: Record<string, JsonSchema>, required: string[] = Object.keys(properties)): JsonSchema {
  return { type: 'object', properties, required };
}

export const str: JsonSchema = { type: 'string' };
export const strOrNull: JsonSchema = { type: 'string', nullable: true };
export const int: JsonSchema = { type: 'integer' };
export const num: JsonSchema = { type: 'number' };
export const bool: JsonSchema = { type: 'boolean' };
export const anyObject: JsonSchema = { type: 'object', additionalProperties: true };
export const strings: JsonSchema = { type: 'array', items: { type: 'string' } };
